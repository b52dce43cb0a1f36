// Schema migrations, run at start on both stores. Kysely's Migrator takes a lock, so several
// instances starting together on one PostgreSQL apply each migration once. Each migration is its
// own file in this folder, so a new migration is a new file; this file only lists them in order
// under the keys existing databases have recorded in Kysely's migration table: a key must never
// change, as Kysely refuses a database that records a migration it no longer finds.
import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import type { Dialect } from '../store.js';
import { initial } from './0001_initial.js';
import { payouts } from './0002_payouts.js';
import { subscriptions } from './0003_subscriptions.js';
import { cashier } from './0004_cashier.js';
import { dueWorkIndexes } from './0005_due_work_indexes.js';
import { oneActiveSubscription } from './0006_one_active_subscription.js';
import { notificationBound } from './0007_notification_bound.js';
import { pendingNotificationIndexes } from './0008_pending_notification_indexes.js';
import { sparseIndexes } from './0009_sparse_indexes.js';
import { connectors } from './0010_connectors.js';
import { routing } from './0011_routing.js';
import { v13BodySignature } from './0012_v13_body_signature.js';
import { displayNames } from './0013_display_names.js';
import { merchantCredentials } from './0014_merchant_credentials.js';
import { backoffice } from './0015_backoffice.js';
import { backofficeIdleTimeout } from './0016_backoffice_idle_timeout.js';
import { processorEventLists } from './0017_processor_event_lists.js';
import { authorizations } from './0018_authorizations.js';
import { payoutMethodRules } from './0019_payout_method_rules.js';
import { sandboxAdminToken } from './0020_sandbox_admin_token.js';
import { gatewayLabels } from './0021_gateway_labels.js';
import { requestLog } from './0022_request_log.js';
import { masterKeyRotation } from './0023_master_key_rotation.js';
import { randomTraceIds } from './0024_random_trace_ids.js';
import { lighterWrites } from './0025_lighter_writes.js';
import { sqliteOneTraceIndex } from './0026_sqlite_one_trace_index.js';

class InlineMigrations implements MigrationProvider {
  constructor(private readonly dialect: Dialect) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return {
      '0001_initial': initial(this.dialect),
      '0002_payouts': payouts(),
      '0003_subscriptions': subscriptions(this.dialect),
      '0004_cashier': cashier(),
      '0005_due_work_indexes': dueWorkIndexes(),
      '0006_one_active_subscription': oneActiveSubscription(),
      '0007_notification_bound': notificationBound(),
      '0008_pending_notification_indexes': pendingNotificationIndexes(),
      '0009_sparse_indexes': sparseIndexes(),
      '0010_connectors': connectors(),
      '0011_routing': routing(),
      '0012_v13_body_signature': v13BodySignature(),
      '0013_display_names': displayNames(),
      '0014_merchant_credentials': merchantCredentials(),
      '0015_backoffice': backoffice(this.dialect),
      '0016_backoffice_idle_timeout': backofficeIdleTimeout(),
      '0017_processor_event_lists': processorEventLists(),
      '0018_authorizations': authorizations(),
      '0019_payout_method_rules': payoutMethodRules(),
      '0020_sandbox_admin_token': sandboxAdminToken(),
      '0021_gateway_labels': gatewayLabels(),
      '0022_request_log': requestLog(this.dialect),
      '0023_master_key_rotation': masterKeyRotation(),
      '0024_random_trace_ids': randomTraceIds(),
      '0025_lighter_writes': lighterWrites(this.dialect),
      '0026_sqlite_one_trace_index': sqliteOneTraceIndex(this.dialect),
    };
  }
}

export async function migrateToLatest(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await migrateTo(db, dialect, null);
}

/** Up to and including `target` (null: the latest); tests use it to build a database as an older release left it. */
export async function migrateTo(db: Kysely<unknown>, dialect: Dialect, target: string | null): Promise<void> {
  const migrator = new Migrator({ db, provider: new InlineMigrations(dialect) });
  const { error, results } = target === null ? await migrator.migrateToLatest() : await migrator.migrateTo(target);
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '?'} failed: ${(error as Error).message ?? String(error)}`);
  }
}
