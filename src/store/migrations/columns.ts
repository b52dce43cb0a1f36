// Column helpers the migrations share, kept apart so each migration file holds only its own
// schema change. Changing one would change what a released migration does on a new database,
// so add a new helper rather than alter one.
import type { Dialect } from '../store.js';

/** The auto-increment id column's type: bigserial on PostgreSQL, integer (with AUTOINCREMENT) on SQLite. */
export function autoId(dialect: Dialect) {
  return dialect === 'postgres' ? ('bigserial' as const) : ('integer' as const);
}
