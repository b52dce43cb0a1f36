// The authorizations aggregate (decisions §16): the capture or void of each authorization, one
// row per authorization, written before the processor is asked; and the authorizations the
// expiry voids. The state machine of the action is in domain/authorization-record.ts; the
// authorization's own status goes through transitions/transaction.ts like any other.
import type { AuthorizationActionRow, AuthorizationActionState } from '../domain/authorization-record.js';
import type { TransactionRow } from '../domain/transaction-record.js';

export type NewAuthorizationAction = Omit<AuthorizationActionRow, 'attempts'>;
export type AuthorizationActionPatch = Partial<Pick<AuthorizationActionRow, 'state' | 'psp_action_id' | 'attempts' | 'updated_at_ms'>>;

export interface AuthorizationStore {
  /** Inserts the action unless the authorization has one already: false then (read it with getAction). */
  reserveAction(row: NewAuthorizationAction): Promise<boolean>;
  getAction(trace_id: number): Promise<AuthorizationActionRow | null>;
  /** Changes the action only while it is still in `from_state` (compare-and-set). */
  updateAction(trace_id: number, from_state: AuthorizationActionState, patch: AuthorizationActionPatch): Promise<boolean>;
  /** Removes an action the processor refused (nothing happened there), only while in `from_state`. */
  deleteAction(trace_id: number, from_state: AuthorizationActionState): Promise<boolean>;
  /** Actions not done whose last change is before `updated_before_ms`, oldest first: the due-work sweep asks the processor about them. */
  listUnsettled(updated_before_ms: number, limit: number): Promise<AuthorizationActionRow[]>;
  /** Authorizations still `authorized`, created before `created_before_ms`, with no capture or void asked: the expiry voids them. */
  listExpired(created_before_ms: number, limit: number): Promise<TransactionRow[]>;
}
