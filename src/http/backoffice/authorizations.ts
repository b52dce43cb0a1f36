// An authorization's Capture and Void in the back office (decisions §16, docs/backoffice.md), for
// operators and for the merchant's own staff, as refunds are. Each form is posted twice: first
// without `confirm`, answered with the confirmation page (amount, masked card, customer; nothing
// moves), then with it, when the action is made (operations/backoffice-authorization.ts) and the
// page redirects to the transaction. Another merchant's authorization is the page that does not exist.
import type { AuthorizationActionKind } from '../../domain/authorization-record.js';
import { parseMajorAmount } from '../../domain/money.js';
import {
  actOnAuthorizationInBackOffice,
  type BackOfficeAuthorizationResult,
  checkAuthorizationAction,
} from '../../operations/backoffice-authorization.js';
import { CONFIRM_FIELD, confirmAuthorizationBody } from '../../pages/backoffice/authorizations.js';
import { gatewayLabel } from '../../operations/transaction-views.js';
import { type BackOfficeRoute, formValue, type PageContext, partsOf } from './plugin.js';
import { detailPage, pathTransaction } from './transactions.js';

const WORDS: Readonly<Record<AuthorizationActionKind, { readonly noun: string; readonly done: string }>> = {
  capture: { noun: 'capture', done: 'captured' },
  void: { noun: 'void', done: 'voided' },
};

function answer(context: PageContext, trace_id: number, action: AuthorizationActionKind, result: BackOfficeAuthorizationResult): unknown {
  switch (result.kind) {
    case 'processed': {
      const notice = result.status === 'authorized' ? 'action_sent' : WORDS[action].done;
      return context.redirect(`/backoffice/transactions/${trace_id}?notice=${notice}`);
    }
    case 'invalid':
      return detailPage(context, result.detail, {
        message: `Amount: expected a positive amount in ${result.detail.row.currency} with at most its decimals.`,
        http_status: 400,
      });
    case 'refused':
      return detailPage(context, result.detail, {
        message: /[.!?]$/.test(result.message) ? result.message : `${result.message}.`,
        http_status: 409,
      });
    case 'in_progress':
      return detailPage(context, result.detail, {
        message: `A ${WORDS[action].noun} of this authorization is still being processed; reload in a moment.`,
        http_status: 409,
      });
    case 'failed':
      return detailPage(context, result.detail, {
        message: `The ${WORDS[action].noun} could not be made here (the authorization's processor is not available).`,
        http_status: 409,
      });
  }
}

function actionRoute(action: AuthorizationActionKind): BackOfficeRoute {
  return {
    method: 'POST',
    url: `/transactions/:trace_id/${action}`,
    roles: ['operator', 'merchant'],
    async handle(context) {
      const { trace_id, row } = await pathTransaction(context);
      if (row === null) return context.notFound(`transaction ${trace_id}`);
      let amount_minor: number | null = null;
      try {
        amount_minor = action === 'void' ? row.amount_minor : parseMajorAmount(formValue(context.request, 'amount'), row.currency);
      } catch {
        /* a currency the gateway does not know: the operation answers invalid */
      }
      if (formValue(context.request, CONFIRM_FIELD) !== 'yes') {
        const checked = await checkAuthorizationAction(context.deps, row, action, amount_minor);
        if (checked.kind !== 'confirm') return answer(context, row.trace_id, action, checked);
        return context.page(
          `Confirm the ${WORDS[action].noun}`,
          '/backoffice/transactions',
          confirmAuthorizationBody(partsOf(context), row, action, checked.amount_minor, await gatewayLabel(context.deps, row.gateway_id)),
        );
      }
      return answer(context, row.trace_id, action, await actOnAuthorizationInBackOffice(context.deps, context, row, action, amount_minor));
    },
  };
}

export function authorizationRoutes(): BackOfficeRoute[] {
  return [actionRoute('capture'), actionRoute('void')];
}
