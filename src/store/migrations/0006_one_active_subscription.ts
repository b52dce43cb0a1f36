// Migration 0006_one_active_subscription: the database refuses a second active subscription of
// one customer, price and card. Its own file so each migration reads on its own; its key is
// recorded in databases, never rename it.
import { type Kysely, type Migration, sql } from 'kysely';

/**
 * 0006: one active subscription per customer, plan price and card (merchant_id, cid, plan_id,
 * price_id, card_token), so a retried create cannot start a second series of charges; enforced
 * by the database for concurrent requests and several instances. Inactive, cancelled and expired
 * subscriptions are outside the index.
 */
export function oneActiveSubscription(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // A database from before this index may hold such duplicates: the oldest of each set stays
      // active, the later ones become inactive (not charged, still readable and cancellable), so
      // the index can be created and the gateway starts.
      await sql`UPDATE subscriptions SET status = 'inactive', next_charge_at_ms = NULL
        WHERE status = 'active' AND EXISTS (
          SELECT 1 FROM subscriptions older
          WHERE older.status = 'active' AND older.merchant_id = subscriptions.merchant_id AND older.cid = subscriptions.cid
            AND older.plan_id = subscriptions.plan_id AND older.price_id = subscriptions.price_id
            AND older.card_token = subscriptions.card_token
            AND (older.created_at_ms < subscriptions.created_at_ms
              OR (older.created_at_ms = subscriptions.created_at_ms AND older.subscription_id < subscriptions.subscription_id)))`.execute(
        db,
      );
      await sql`CREATE UNIQUE INDEX subscriptions_one_active ON subscriptions (merchant_id, cid, plan_id, price_id, card_token) WHERE status = 'active'`.execute(
        db,
      );
    },
  };
}
