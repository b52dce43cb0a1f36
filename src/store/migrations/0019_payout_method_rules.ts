// Migration 0019_payout_method_rules: a routing rule may name the payout methods it routes
// (issue 27: a PayPal account or a bank account). Its own file so each migration reads on its own;
// its key is recorded in databases, never rename it.
import type { Kysely, Migration } from 'kysely';

/** 0019: routing_rules.payout_methods, comma-separated; null (every existing rule) names none. */
export function payoutMethodRules(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('routing_rules').addColumn('payout_methods', 'text').execute();
    },
  };
}
