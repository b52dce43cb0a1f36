// Subscriptions and plans as the back office shows them (docs/backoffice.md): the newest
// subscriptions with their status, price and next charge, the plans that are not deleted, and one
// subscription with its status history and its event notifications (sent again from there).
// One change is made here, after its confirmation page: cancelling, through the API's own cancel path, so that an operator can
// stop the charges of a merchant that cannot (a disabled one) and a merchant's staff can answer a
// customer who asks; the merchant's systems hear of it by the subscription.canceled event.
// Everything else about subscriptions changes through the API (spec §3).
import { merchantScope } from '../../domain/backoffice-access.js';
import { cancelFromBackOffice } from '../../operations/backoffice-actions.js';
import { subscriptionCard, subscriptionDetail, subscriptionsAndPlans, visibleSubscription } from '../../operations/subscription-views.js';
import { CONFIRM_FIELD } from '../../pages/backoffice/authorizations.js';
import { confirmationBody, subscriptionCancelConfirmation } from '../../pages/backoffice/confirmations.js';
import { subscriptionDetailBody, subscriptionsBody } from '../../pages/backoffice/subscriptions.js';
import { type BackOfficeRoute, formValue, partsOf } from './plugin.js';

const LIST_ROWS = 100;

export function subscriptionRoutes(): BackOfficeRoute[] {
  return [
    {
      method: 'GET',
      url: '/subscriptions',
      roles: ['operator', 'merchant'],
      async handle(context) {
        const { subscriptions, plans } = await subscriptionsAndPlans(context.deps, merchantScope(context.viewer), LIST_ROWS);
        return context.page('Subscriptions', '/backoffice/subscriptions', subscriptionsBody(partsOf(context), subscriptions, plans));
      },
    },
    {
      method: 'GET',
      url: '/subscriptions/:subscription_id',
      roles: ['operator', 'merchant'],
      async handle(context) {
        const { subscription_id } = context.request.params as { subscription_id: string };
        const detail = await subscriptionDetail(context.deps, context.viewer, subscription_id);
        if (detail === null) return context.notFound(`subscription ${subscription_id}`);
        const found = detail.subscription;
        return context.page(
          `Subscription ${found.subscription_id}`,
          '/backoffice/subscriptions',
          subscriptionDetailBody(partsOf(context), detail),
        );
      },
    },
    {
      method: 'POST',
      url: '/subscriptions/:subscription_id/cancel',
      roles: ['operator', 'merchant'],
      async handle(context) {
        const { subscription_id } = context.request.params as { subscription_id: string };
        const found = await visibleSubscription(context.deps, context.viewer, subscription_id);
        if (found === null) return context.notFound(`subscription ${subscription_id}`);
        // Cancelling stops the charges: the first form answers with what stops, nothing done. One
        // that is no longer active goes on at once, to be told it was cancelled already or ended.
        if (formValue(context.request, CONFIRM_FIELD) !== 'yes' && (found.status === 'active' || found.status === 'inactive')) {
          const confirmation = subscriptionCancelConfirmation(found, await subscriptionCard(context.deps, found));
          return context.page(confirmation.heading, '/backoffice/subscriptions', confirmationBody(partsOf(context), confirmation));
        }
        const outcome = await cancelFromBackOffice(context.deps, context, found);
        const notice = outcome.kind === 'canceled' ? (outcome.already ? 'already' : 'canceled') : outcome.kind === 'ended' ? 'ended' : null;
        if (notice === null) return context.notFound(`subscription ${subscription_id}`);
        return context.redirect(`/backoffice/subscriptions/${encodeURIComponent(found.subscription_id)}?notice=${notice}`);
      },
    },
  ];
}
