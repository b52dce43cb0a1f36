// A dispute (chargeback) of a payment, as the gateway keeps it (decisions §16): opened by the
// processor's first dispute event, which moves the payment to `chargeback` and notifies the
// merchant; its later events (evidence due, won, lost) are recorded here and shown in the back
// office, and the payment's status stays `chargeback`. One row per dispute at the processor.
// Object types, not interfaces, as Kysely's rows are.

/** Where a dispute is, in our terms; each connector maps its processor's stages to these. */
export const DISPUTE_STAGES = ['opened', 'evidence_required', 'under_review', 'won', 'lost', 'accepted', 'canceled'] as const;
export type DisputeStage = (typeof DISPUTE_STAGES)[number];

/** Stages after which nothing more is expected of the merchant. */
export const CLOSED_DISPUTE_STAGES: ReadonlySet<DisputeStage> = new Set<DisputeStage>(['won', 'lost', 'accepted', 'canceled']);

export type DisputeRow = {
  gateway_id: string;
  /** The processor's id of the dispute (the sandbox's own for its simulated ones). */
  psp_dispute_id: string;
  /** The disputed payment. */
  trace_id: number;
  merchant_id: string;
  stage: DisputeStage;
  amount_minor: number;
  currency: string;
  reason: string | null;
  /** When evidence is due at the processor; null when it did not say. */
  evidence_due_at_ms: number | null;
  opened_at_ms: number;
  updated_at_ms: number;
};
