// The admin token a sandbox made for itself (migration 0020), sealed: one per database, so every
// instance on it admits the same token. Live mode never reads or writes it.

export interface SandboxAdminStore {
  /** The sealed token, or null when none was made yet. */
  getAdminToken(): Promise<string | null>;
  /** Stores the sealed token unless one is there already; false when another process stored one first. */
  insertAdminToken(token_sealed: string, created_at_ms: number): Promise<boolean>;
}
