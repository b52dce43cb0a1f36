// The capture and the void of an authorization by a person in the back office (decisions §16,
// docs/backoffice.md): the API's own action (operations/authorization.ts actOnAuthorization, origin
// 'agent', the signed-in person's e-mail as the agent), so a capture or void is made once however
// often it is asked, from here or by the merchant's API call, and its audit line. Two steps: the
// check before the confirmation is shown (nothing moves), then the action once confirmed. A form
// sent again (a double click, a reload) finds the action made and changes nothing.
import type { AuthorizationActionKind } from '../domain/authorization-record.js';
import { merchantScope } from '../domain/backoffice-access.js';
import { money } from '../domain/backoffice-format.js';
import type { TransactionRow } from '../domain/transaction-record.js';
import type { TransactionStatus } from '../domain/transaction-state.js';
import { actOnAuthorization, type AuthorizationRefusal, describeAuthorizationRefusal } from './authorization.js';
import { type Actor, recordAudit } from './audit.js';
import type { OperationDeps } from './deps.js';
import { freshTransactionDetail, type TransactionDetail, transactionDetail } from './transaction-views.js';

/**
 * Why the form cannot go ahead, with the authorization's detail to draw again: the amount
 * unreadable (invalid), the action refused (its words from describeAuthorizationRefusal), still
 * being asked by another request, or its processor not available here.
 */
export type AuthorizationFormProblem =
  | { readonly kind: 'invalid'; readonly detail: TransactionDetail }
  | { readonly kind: 'refused'; readonly message: string; readonly detail: TransactionDetail }
  | { readonly kind: 'in_progress'; readonly detail: TransactionDetail }
  | { readonly kind: 'failed'; readonly detail: TransactionDetail };

/** Before the confirmation: the amount to show, or the problem. */
export type AuthorizationCheck = { readonly kind: 'confirm'; readonly amount_minor: number } | AuthorizationFormProblem;

/** Once confirmed: processed (the page redirects), or the problem. */
export type BackOfficeAuthorizationResult =
  { readonly kind: 'processed'; readonly status: TransactionStatus; readonly replayed: boolean } | AuthorizationFormProblem;

/** The amount the action moves: a capture's as asked (null: unreadable), a void's the whole authorization. */
function amountOf(row: TransactionRow, action: AuthorizationActionKind, amount_minor: number | null): number | null {
  if (action === 'void') return row.amount_minor;
  return amount_minor !== null && Number.isSafeInteger(amount_minor) && amount_minor >= 1 ? amount_minor : null;
}

/**
 * The check made before the confirmation is shown, with the operation's own rules and words: an
 * `authorized` authorization, at most its amount, no capture or void asked of it already. Nothing
 * changes and nothing is audited: nobody has confirmed anything yet.
 */
export async function checkAuthorizationAction(
  deps: OperationDeps,
  row: TransactionRow,
  action: AuthorizationActionKind,
  amount_minor: number | null,
): Promise<AuthorizationCheck> {
  const amount = amountOf(row, action, amount_minor);
  if (amount === null) return { kind: 'invalid', detail: await transactionDetail(deps, row) };
  const refused = async (refusal: AuthorizationRefusal): Promise<AuthorizationFormProblem> => ({
    kind: 'refused',
    message: describeAuthorizationRefusal(action, refusal, row.trace_id),
    detail: await transactionDetail(deps, row),
  });
  // In the operation's order: an action asked already is named first (what became of the authorization).
  const asked = row.transaction_type === 'authorize' ? await deps.store.authorizations.getAction(row.trace_id) : null;
  if (asked !== null) {
    const same = asked.action === action && asked.amount_minor === amount;
    if (same && asked.state !== 'done') return { kind: 'in_progress', detail: await transactionDetail(deps, row) };
    return refused({ reason: 'other_action', action: asked.action, amount_minor: asked.amount_minor });
  }
  if (row.transaction_type !== 'authorize' || row.status !== 'authorized') {
    return refused({ reason: 'not_authorized', transaction_type: row.transaction_type, status: row.status });
  }
  if (amount > row.amount_minor) return refused({ reason: 'exceeds_authorized', authorized_minor: row.amount_minor });
  return { kind: 'confirm', amount_minor: amount };
}

/**
 * The confirmed capture or void of `row` (visible to the actor: the caller checked), through the
 * API's action with the actor as its agent, and its audit line, written after the action with its
 * outcome (none while another request is still asking the processor). amount_minor is the
 * capture's, null when the form's amount could not be read in the currency; a void ignores it.
 */
export async function actOnAuthorizationInBackOffice(
  deps: OperationDeps,
  actor: Actor,
  row: TransactionRow,
  action: AuthorizationActionKind,
  amount_minor: number | null,
): Promise<BackOfficeAuthorizationResult> {
  const audit = (outcome: 'done' | 'refused' | 'failed', detail: string) =>
    recordAudit(deps, actor.viewer, actor.address, { action, target: String(row.trace_id), merchant_id: row.merchant_id, outcome, detail });
  const amount = amountOf(row, action, amount_minor);
  if (amount === null) {
    await audit('refused', 'invalid amount');
    return { kind: 'invalid', detail: await transactionDetail(deps, row) };
  }
  const outcome = await actOnAuthorization(deps, {
    // An operator acts on any merchant's authorization; a merchant's staff only on their own.
    merchant_id: merchantScope(actor.viewer),
    trace_id: row.trace_id,
    action,
    amount_minor: action === 'capture' ? amount : null,
    origin: 'agent',
    agent: actor.viewer.email,
  });
  const described = money(amount, row.currency);
  switch (outcome.kind) {
    case 'processed': {
      const status = String(outcome.answer.transaction_status ?? '') as TransactionStatus;
      const again = outcome.replayed ? ' (form sent again: nothing more done)' : '';
      await audit('done', `${described}: authorization now ${status}${again}`);
      return { kind: 'processed', status, replayed: outcome.replayed };
    }
    case 'refused': {
      const message = describeAuthorizationRefusal(action, outcome, row.trace_id);
      await audit('refused', `${described}: ${message}`);
      return { kind: 'refused', message, detail: await freshTransactionDetail(deps, row) };
    }
    case 'in_progress':
      return { kind: 'in_progress', detail: await transactionDetail(deps, row) };
    case 'reference_not_found':
    case 'no_processor':
      await audit('failed', `${described}: ${outcome.kind}`);
      return { kind: 'failed', detail: await freshTransactionDetail(deps, row) };
  }
}
