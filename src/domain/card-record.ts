// A stored card (the vault behind card_token), as the gateway keeps it: its number only sealed,
// with the fingerprint that finds it again. Defined here, so the domain depends on nothing;
// store/schema.ts builds its table from it.
// Object types, not interfaces, as Kysely's rows are: a record is also a Readonly<Record<string, unknown>>.

export type CardVaultRow = {
  card_token: string;
  merchant_id: string;
  pin: string;
  pan_sealed: string;
  pan_fingerprint: string;
  card_masked: string;
  card_exp: string;
  card_brand: string | null;
  created_at_ms: number;
};
