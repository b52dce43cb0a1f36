// The disputes aggregate (decisions §16): each dispute (chargeback) a processor reported of a
// payment, with its stage, amount, reason and deadline, for the back office's transaction page
// and its Disputes view. The payment's status (`chargeback`) goes through the state machine.
import type { DisputeRow, DisputeStage } from '../domain/dispute-record.js';

export type DisputePatch = Partial<
  Pick<DisputeRow, 'stage' | 'amount_minor' | 'currency' | 'reason' | 'evidence_due_at_ms' | 'updated_at_ms'>
>;

export interface DisputeFilter {
  /** null: every merchant's (an operator). */
  readonly merchant_id: string | null;
  /** Only these stages; empty: all. */
  readonly stages: readonly DisputeStage[];
}

export interface DisputeStore {
  /** Inserts the dispute unless the processor's id is known already: false then. */
  insertIfAbsent(row: DisputeRow): Promise<boolean>;
  get(gateway_id: string, psp_dispute_id: string): Promise<DisputeRow | null>;
  update(gateway_id: string, psp_dispute_id: string, patch: DisputePatch): Promise<void>;
  /** A payment's disputes, oldest first, at most `limit`. */
  listForTransaction(trace_id: number, limit: number): Promise<DisputeRow[]>;
  /** Disputes by deadline (soonest first, those without one last), at most `limit`. */
  list(filter: DisputeFilter, limit: number): Promise<DisputeRow[]>;
}
