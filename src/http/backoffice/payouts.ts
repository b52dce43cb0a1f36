// Payouts waiting for a decision (docs/backoffice.md, docs/payouts.md): those `requested` (a
// gateway that holds payouts), oldest decisions first, each approved (sent to the processor) or
// rejected with a reason, through the payout state machine (operations/payout-review.ts). Each
// decision moves money or stops it, so its form first answers with a confirmation page (amount,
// card, customer, gateway) and is made only when that page's button sends it again (confirm=yes).
import { merchantScope } from '../../domain/backoffice-access.js';
import { characterLength, hasContent, textProblem } from '../../domain/text.js';
import { decidePayout } from '../../operations/backoffice-actions.js';
import { visiblePayout, waitingPayouts } from '../../operations/payout-views.js';
import { gatewayLabel } from '../../operations/transaction-views.js';
import { CONFIRM_FIELD } from '../../pages/backoffice/authorizations.js';
import { confirmationBody, payoutDecisionConfirmation } from '../../pages/backoffice/confirmations.js';
import { REASON_MAX_CHARS, waitingPayoutsBody } from '../../pages/backoffice/payouts.js';
import { type BackOfficeRoute, formValue, type PageContext, partsOf } from './plugin.js';

const PAGE_ROWS = 50;

async function waitingPage(context: PageContext, problem: string | null = null, http_status = 200): Promise<unknown> {
  const { rows, gateway_labels } = await waitingPayouts(context.deps, merchantScope(context.viewer), PAGE_ROWS);
  return context.page('Payouts', '/backoffice/payouts', waitingPayoutsBody(partsOf(context), rows, gateway_labels, problem), http_status);
}

function noLonger(context: PageContext, trace_id: number, status: string, action: 'approve' | 'reject'): Promise<unknown> {
  return waitingPage(
    context,
    `Payout ${trace_id} is ${status} now: it can no longer be ${action === 'approve' ? 'approved' : 'rejected'} here.`,
    409,
  );
}

function decisionRoute(action: 'approve' | 'reject'): BackOfficeRoute {
  return {
    method: 'POST',
    url: `/payouts/:trace_id/${action}`,
    roles: ['operator', 'merchant'],
    async handle(context) {
      const { trace_id } = context.request.params as { trace_id: string };
      const row = await visiblePayout(context.deps, context.viewer, trace_id);
      if (row === null) return context.notFound(`payout ${trace_id}`);
      const reason = formValue(context.request, 'reason').trim();
      if (action === 'reject' && (!hasContent(reason) || characterLength(reason) > REASON_MAX_CHARS || textProblem(reason) !== null)) {
        return waitingPage(
          context,
          `Reason: a reason of 1 to ${REASON_MAX_CHARS} characters is needed to reject payout ${row.trace_id}.`,
          400,
        );
      }
      if (formValue(context.request, CONFIRM_FIELD) !== 'yes') {
        // What would be refused is refused here already; otherwise the confirmation, nothing done.
        if (row.status !== 'requested') return noLonger(context, row.trace_id, row.status, action);
        const confirmation = payoutDecisionConfirmation(row, action, reason, await gatewayLabel(context.deps, row.gateway_id));
        return context.page(confirmation.heading, '/backoffice/payouts', confirmationBody(partsOf(context), confirmation));
      }
      const outcome = await decidePayout(context.deps, context, row, action, reason);
      if (outcome.kind === 'changed')
        return context.redirect(`/backoffice/payouts?notice=${action === 'approve' ? 'approved' : 'rejected'}`);
      const status = outcome.kind === 'refused' || outcome.kind === 'processor_unavailable' ? outcome.status : 'unknown';
      return noLonger(context, row.trace_id, status, action);
    },
  };
}

export function payoutRoutes(): BackOfficeRoute[] {
  return [
    { method: 'GET', url: '/payouts', roles: ['operator', 'merchant'], handle: (context) => waitingPage(context) },
    decisionRoute('approve'),
    decisionRoute('reject'),
  ];
}
