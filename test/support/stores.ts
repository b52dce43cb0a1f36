export type StoreKind = 'sqlite' | 'postgres';

/** The stores this run covers (set by global-setup): SQLite always, PostgreSQL when reachable (always in CI). */
export function storeKinds(): StoreKind[] {
  return (process.env.PAYGATE_TEST_STORES ?? 'sqlite').split(',') as StoreKind[];
}
