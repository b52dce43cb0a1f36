// What a master-key rotation keeps in the store and reads of it (migration 0023; docs/security.md
// §1): which key new values are sealed under with the fingerprint key sealed under it, every
// sealed column of every table (SEALED_TABLES), read a batch at a time by primary key and written
// back only if unchanged meanwhile, and the rotation's progress per table. The store knows which
// columns hold sealed values; what a value's purpose is and how it is re-sealed is the
// operation's (operations/master-key-rotation.ts).

/** One row, id 1 (migration 0023). */
export interface MasterKeyState {
  /** The fingerprint key, sealed under the current master key. */
  readonly fingerprint_key_sealed: string;
  /** The key id every instance seals new values under. */
  readonly sealing_key_id: string;
  readonly updated_at_ms: number;
}

/** Where sealed values live: each table's primary key, its sealed columns and, where a purpose names it, the merchant. */
export const SEALED_TABLES = {
  merchants: { key: ['merchant_id'], columns: ['secret_sealed', 'previous_secret_sealed'], merchant: 'merchant_id' },
  gateways: { key: ['gateway_id'], columns: ['settings_sealed'], merchant: 'merchant_id' },
  card_vault: { key: ['card_token'], columns: ['pan_sealed'], merchant: 'merchant_id' },
  transactions: { key: ['trace_id'], columns: ['customer_sealed'], merchant: 'merchant_id' },
  cashier_sessions: { key: ['session_id'], columns: ['customer_sealed'], merchant: 'merchant_id' },
  cashier_customers: { key: ['merchant_id', 'pin'], columns: ['profile_sealed'], merchant: 'merchant_id' },
  sandbox_admin_token: { key: ['id'], columns: ['token_sealed'], merchant: null },
} as const satisfies Record<string, { key: readonly string[]; columns: readonly string[]; merchant: string | null }>;

export type SealedTable = keyof typeof SEALED_TABLES;
export const SEALED_TABLE_NAMES = Object.keys(SEALED_TABLES) as SealedTable[];

/** A row's primary key, in SEALED_TABLES order (text or integer columns). */
export type RowKey = readonly (string | number)[];

export interface SealedRow {
  readonly key: RowKey;
  readonly merchant_id: string | null;
  /** Sealed column → its value (null when the row has none there). */
  readonly values: Readonly<Record<string, string | null>>;
}

/** How many values of a column are sealed under one key: a key id, 'v1' (before key ids) or 'other'. */
export interface SealedCount {
  readonly table: SealedTable;
  readonly column: string;
  readonly key_id: string;
  readonly count: number;
}

export interface RotationProgress {
  readonly table: SealedTable;
  readonly target_key_id: string;
  /** The last primary key done; null before the first batch. */
  readonly after: RowKey | null;
  readonly resealed: number;
  readonly done: boolean;
  readonly updated_at_ms: number;
}

export interface MasterKeyStore {
  state(): Promise<MasterKeyState | null>;
  /** Writes the state unless there is one; false when another process wrote one first. */
  insertState(state: MasterKeyState): Promise<boolean>;
  /** Replaces the state when its sealed fingerprint key is still `expected` (compare and set); false otherwise. */
  replaceState(expected_fingerprint_key_sealed: string, state: MasterKeyState): Promise<boolean>;
  /** Up to `limit` rows holding a sealed value, by primary key, after `after` (null: from the first). */
  sealedBatch(table: SealedTable, after: RowKey | null, limit: number): Promise<SealedRow[]>;
  /** The first sealed value of the table, or null: a sample to check a key against. */
  firstSealed(table: SealedTable): Promise<SealedRow | null>;
  /** Writes `sealed` where the column still holds `expected`; false when it changed meanwhile. */
  replaceSealed(table: SealedTable, key: RowKey, column: string, expected: string, sealed: string): Promise<boolean>;
  /** Every sealed value counted by the key that sealed it (a scan of each table: for the rotation, never a request). */
  countSealed(): Promise<SealedCount[]>;
  rotationProgress(): Promise<RotationProgress[]>;
  saveRotationProgress(progress: RotationProgress): Promise<void>;
}
