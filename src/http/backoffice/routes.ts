// Every page of the back office, in one list (docs/backoffice.md has the map): a newcomer finds
// here which module answers which URL, and the access-matrix test walks this same list.
import { adminRoutes } from './admin.js';
import { authorizationRoutes } from './authorizations.js';
import { credentialRoutes } from './credentials.js';
import { disputeRoutes } from './disputes.js';
import { overviewRoutes } from './overview.js';
import { payoutRoutes } from './payouts.js';
import { requestLogRoutes } from './request-log.js';
import type { BackOfficeRoute } from './plugin.js';
import { subscriptionRoutes } from './subscriptions.js';
import { transactionRoutes } from './transactions.js';

export function backOfficeRoutes(): BackOfficeRoute[] {
  return [
    ...overviewRoutes(),
    ...transactionRoutes(),
    ...authorizationRoutes(),
    ...disputeRoutes(),
    ...payoutRoutes(),
    ...subscriptionRoutes(),
    ...requestLogRoutes(),
    ...adminRoutes(),
    ...credentialRoutes(),
  ];
}
