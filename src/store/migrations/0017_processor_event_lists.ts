// Migration 0017_processor_event_lists: the indexes the back office's webhook-event lists read.
// Its own file so each migration reads on its own; its key is recorded in databases, never
// rename it.
import { type Kysely, type Migration, sql } from 'kysely';

/**
 * 0017: the back office lists processor webhook events newest first, a transaction's and a
 * gateway's (all, or of one outcome), 50 at most. The table's key (gateway_id, event_id) serves
 * none of them: without these each list would read and sort every event of its gateway, and a
 * transaction's would read the whole table. Each index ends with (received_at_ms, event_id), the
 * lists' order, so a list reads its 50 rows and stops. The transaction's is partial: an
 * unmatched event has no trace_id and is never listed by one.
 */
export function processorEventLists(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`CREATE INDEX processor_events_trace ON processor_events (trace_id, received_at_ms, event_id)
        WHERE trace_id IS NOT NULL`.execute(db);
      await db.schema
        .createIndex('processor_events_gateway')
        .on('processor_events')
        .columns(['gateway_id', 'received_at_ms', 'event_id'])
        .execute();
      await db.schema
        .createIndex('processor_events_gateway_outcome')
        .on('processor_events')
        .columns(['gateway_id', 'outcome', 'received_at_ms', 'event_id'])
        .execute();
    },
  };
}
