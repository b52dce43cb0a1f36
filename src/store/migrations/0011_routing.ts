// Migration 0011_routing: routing rules, the BIN table and cascade attempts. Its own file so each
// migration reads on its own; its key is recorded in databases, never rename it.
import { type Kysely, type Migration, sql } from 'kysely';

/**
 * 0011: routing rules per merchant and the BIN table their card-country conditions read
 * (docs/connectors.md §9), and cascade attempts: a retry of a merchant's sale on another gateway
 * is its own transaction, tied to the first by cascade_root (partial index: only retries have one).
 */
export function routing(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('routing_rules')
        .addColumn('rule_id', 'text', (c) => c.primaryKey())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.merchant_id'))
        .addColumn('gateway_id', 'text', (c) => c.notNull().references('gateways.gateway_id'))
        .addColumn('priority', 'integer', (c) => c.notNull())
        .addColumn('currencies', 'text')
        .addColumn('amount_min_minor', 'bigint')
        .addColumn('amount_max_minor', 'bigint')
        .addColumn('card_brands', 'text')
        .addColumn('bin_countries', 'text')
        .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
        .addCheckConstraint(
          'routing_rules_amounts',
          sql`amount_min_minor IS NULL OR amount_max_minor IS NULL OR amount_min_minor <= amount_max_minor`,
        )
        .execute();
      await db.schema.createIndex('routing_rules_merchant').on('routing_rules').columns(['merchant_id', 'priority']).execute();
      await db.schema
        .createTable('bin_ranges')
        .addColumn('prefix', 'text', (c) => c.primaryKey())
        .addColumn('country', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .alterTable('transactions')
        .addColumn('cascade_level', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('transactions').addColumn('cascade_root', 'bigint').execute();
      await sql`CREATE INDEX transactions_cascade ON transactions (cascade_root, cascade_level) WHERE cascade_root IS NOT NULL`.execute(db);
    },
  };
}
