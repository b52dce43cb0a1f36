// A merchant's staff look after their API credentials here (docs/backoffice.md): what identifies
// them (merchant_id, application keys, frontends), rolling the secret with a grace for the old one
// that they pick (at most 24 hours; the new one is shown once, on the answer to the form), and a
// test notification to their notification URL, with the merchant's reply shown. Operators roll
// a merchant's secret through the operator API (docs/security.md §5), not here.
import {
  checkEndpointFromBackOffice,
  rollSecretFromBackOffice,
  testNotificationFromBackOffice,
} from '../../operations/backoffice-actions.js';
import { credentialsView, SECRET_GRACE_MAX_S } from '../../operations/merchant-credentials.js';
import { characterLength, textProblem } from '../../domain/text.js';
import type { Html } from '../../pages/html.js';
import {
  credentialsBody,
  deliveredNotice,
  endpointReportNotice,
  graceLabel,
  graceRefusedNotice,
  newSecretNotice,
  notDeliveredNotice,
  URL_MAX_CHARS,
  urlRefusedNotice,
} from '../../pages/backoffice/credentials.js';
import { CONFIRM_FIELD } from '../../pages/backoffice/authorizations.js';
import { confirmationBody, secretRollConfirmation } from '../../pages/backoffice/confirmations.js';
import { type BackOfficeRoute, formValue, type PageContext, partsOf } from './plugin.js';

const MERCHANT = ['merchant'] as const;
/** The graces offered, in seconds; the operation takes any whole number up to SECRET_GRACE_MAX_S. */
export const GRACE_CHOICES_S = [0, 15 * 60, 3600, 4 * 3600, 12 * 3600, SECRET_GRACE_MAX_S] as const;

async function credentialsPage(
  context: PageContext,
  result: Html | null = null,
  http_status = 200,
  url_value: string | null = null,
): Promise<unknown> {
  const credentials = await credentialsView(context.deps, context.viewer.merchant_id!);
  if (credentials === null) return context.notFound();
  const body = credentialsBody(context.csrf, credentials, GRACE_CHOICES_S, url_value ?? credentials.last_notification_url, result);
  return context.page('API credentials', '/backoffice/credentials', body, http_status);
}

function field(context: PageContext, name: string): string {
  return formValue(context.request, name).trim();
}

/** The URL of the test and check forms, or null when it is no http(s) URL within the limit. */
function formUrl(url: string): string | null {
  return url === '' || characterLength(url) > URL_MAX_CHARS || textProblem(url) !== null || !/^https?:\/\//i.test(url) ? null : url;
}

export function credentialRoutes(): BackOfficeRoute[] {
  return [
    { method: 'GET', url: '/credentials', roles: MERCHANT, handle: (context) => credentialsPage(context) },
    {
      method: 'POST',
      url: '/credentials/roll',
      roles: MERCHANT,
      async handle(context) {
        const grace_text = field(context, 'grace_seconds');
        const grace_s = /^[0-9]{1,6}$/.test(grace_text) ? Number(grace_text) : Number.NaN;
        // The old secret stops after the grace: the first form only asks (pages/backoffice/confirmations.ts).
        if (formValue(context.request, CONFIRM_FIELD) !== 'yes') {
          if (!(grace_s >= 0 && grace_s <= SECRET_GRACE_MAX_S))
            return credentialsPage(context, graceRefusedNotice(SECRET_GRACE_MAX_S), 400);
          const confirmation = secretRollConfirmation(
            context.viewer.merchant_id!,
            grace_s,
            graceLabel(grace_s),
            context.deps.clock.now_ms() + grace_s * 1000,
          );
          return context.page(confirmation.heading, '/backoffice/credentials', confirmationBody(partsOf(context), confirmation));
        }
        const outcome = await rollSecretFromBackOffice(context.deps, context, grace_s);
        switch (outcome.kind) {
          case 'rolled':
            // Shown on this answer only; every back-office answer is no-store, and no redirect carries it.
            return credentialsPage(context, newSecretNotice(outcome.secret, outcome.previous_valid_until_ms));
          case 'invalid_grace':
            return credentialsPage(context, graceRefusedNotice(outcome.max_s), 400);
          case 'not_found':
            return context.notFound();
        }
      },
    },
    {
      method: 'POST',
      url: '/credentials/test-notification',
      roles: MERCHANT,
      async handle(context) {
        const url = field(context, 'url');
        const shown = url.slice(0, URL_MAX_CHARS);
        if (formUrl(url) === null) return credentialsPage(context, urlRefusedNotice(null), 400, shown);
        const outcome = await testNotificationFromBackOffice(context.deps, context, url);
        switch (outcome.kind) {
          case 'delivered':
            return credentialsPage(context, deliveredNotice(outcome.http_status, outcome.duration_ms, outcome.reply_excerpt), 200, shown);
          case 'failed':
            return credentialsPage(context, notDeliveredNotice(outcome.reason, outcome.http_status, outcome.reply_excerpt), 200, shown);
          case 'url_not_allowed':
            return credentialsPage(context, urlRefusedNotice(outcome.reason), 400, shown);
          case 'not_found':
            return context.notFound();
        }
      },
    },
    {
      method: 'POST',
      url: '/credentials/check-endpoint',
      roles: MERCHANT,
      async handle(context) {
        const url = field(context, 'url');
        const shown = url.slice(0, URL_MAX_CHARS);
        if (formUrl(url) === null) return credentialsPage(context, urlRefusedNotice(null), 400, shown);
        const outcome = await checkEndpointFromBackOffice(context.deps, context, url);
        switch (outcome.kind) {
          case 'report':
            return credentialsPage(context, endpointReportNotice(url, outcome.report), 200, shown);
          case 'url_not_allowed':
            return credentialsPage(context, urlRefusedNotice(outcome.reason), 400, shown);
          case 'not_found':
            return context.notFound();
        }
      },
    },
  ];
}
