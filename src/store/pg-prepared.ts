// Named (server-side prepared) statements for the PostgreSQL store (issue 29, item 2). Kysely sends
// every statement as text; PostgreSQL then parses and plans it anew each time, and a sale's
// statements (a reservation that inserts and reads back in one CTE, a status change with its
// status row and notification) cost more to plan than to run: measured, PostgreSQL's own CPU per
// sale fell from 4.37 to 2.15 ms when each connection prepared them once. So each pooled
// connection names the statements it is sent with parameters, the first PREPARED_PER_CONNECTION
// distinct texts (the store's statements have a few dozen shapes; the rest run unnamed), and
// node-postgres prepares a name once per connection and then only binds and executes it.
//
// A prepared statement whose tables change under it (a newer instance's migration added a column)
// fails once with "cached plan must not change result type" (SQLSTATE 0A000) and nothing of it
// ran. Outside a transaction it is sent again, unnamed, and its name is dropped so that the next
// use prepares it afresh; inside one, the transaction is already aborted, so the error goes to the
// caller (nothing was committed; the request fails and may be sent again) and the name is dropped
// the same way.
import type pg from 'pg';

/** Distinct statement texts prepared per connection, at most (the server keeps each one's plan). */
export const PREPARED_PER_CONNECTION = 256;

const RESULT_TYPE_CHANGED = '0A000';

type QueryFunction = (...args: unknown[]) => unknown;

/** Makes `client` prepare the statements it is sent with parameters (see above). */
export function prepareStatements(client: pg.PoolClient): void {
  const names = new Map<string, string>();
  let next_name = 0;
  let in_transaction = false;
  const query = client.query.bind(client) as QueryFunction;
  const named = (text: string): string | undefined => {
    const known = names.get(text);
    if (known !== undefined || names.size >= PREPARED_PER_CONNECTION) return known;
    const name = `paygate_${next_name++}`;
    names.set(text, name);
    return name;
  };
  (client as unknown as { query: QueryFunction }).query = (text: unknown, values?: unknown, callback?: unknown) => {
    if (typeof text === 'string' && callback === undefined) {
      // Kysely opens and ends transactions with these texts (and savepoints, which keep it open).
      const command = text.slice(0, 12).toLowerCase();
      if (command.startsWith('begin') || command.startsWith('start transa')) in_transaction = true;
      else if (command.startsWith('commit') || (command.startsWith('rollback') && !command.startsWith('rollback to')))
        in_transaction = false;
      const name = Array.isArray(values) && values.length > 0 ? named(text) : undefined;
      if (name !== undefined) {
        const outside_transaction = !in_transaction;
        return (query({ name, text, values }) as Promise<unknown>).catch((error: unknown) => {
          if ((error as { code?: unknown } | null)?.code !== RESULT_TYPE_CHANGED) throw error;
          names.delete(text);
          if (!outside_transaction) throw error;
          return query(text, values);
        });
      }
    }
    return query(text, values, callback);
  };
}
