// SQLite, in a test: counts every UPDATE of a transactions row from now on, through a connection
// of the test's own and a trigger it adds to the database. PostgreSQL has no need of it: a row's
// xmin names the transaction that last wrote it.
import BetterSqlite3 from 'better-sqlite3';

export interface TransactionUpdates {
  /** UPDATEs of the row of `trace_id` since the trigger was added. */
  of(trace_id: number): number;
  /** UPDATEs of any transactions row since then. */
  all(): number;
  close(): void;
}

export function countTransactionUpdates(sqlite_path: string): TransactionUpdates {
  const db = new BetterSqlite3(sqlite_path);
  db.exec(
    'create table if not exists test_transaction_updates (trace_id integer not null); ' +
      'create trigger if not exists test_count_transaction_updates after update on transactions ' +
      'begin insert into test_transaction_updates values (new.trace_id); end;',
  );
  const count = (where: string, ...parameters: number[]) =>
    (db.prepare(`select count(*) as n from test_transaction_updates ${where}`).get(...parameters) as { n: number }).n;
  return { of: (trace_id) => count('where trace_id = ?', trace_id), all: () => count(''), close: () => db.close() };
}
