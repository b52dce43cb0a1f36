// What the sandbox's challenge pages (3-D Secure, e-wallet) show: the transaction's few fields
// they print and whether the challenge is still open. A view of its own, so the pages need
// neither the store's row type nor the operation that finds the challenge
// (operations/sandbox-challenge.ts, whose ChallengeView fits it).

/** The fields of the challenged transaction the pages read. */
export interface ChallengeTransaction {
  readonly merchant_id: string;
  readonly transaction_type: string;
  readonly order_id: string;
  /** The order_id the merchant knows when paid in the hosted cashier. */
  readonly cashier_order_id: string | null;
  readonly status: string;
  readonly amount_minor: number;
  readonly currency: string;
  readonly card_masked: string | null;
  /** A direct payout's data_ fields as JSON (the wallet page shows the account, masked). */
  readonly data_json: string | null;
}

export interface ChallengePageView {
  readonly row: ChallengeTransaction;
  /** open: buttons work; waiting: the issuer never answers (sandbox 588/713); closed: already final or expired. */
  readonly state: 'open' | 'waiting' | 'closed';
}
