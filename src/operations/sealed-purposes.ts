// What each sealed column of the store is sealed for (the purpose bound as GCM associated data,
// crypto/sealer.ts), so the master-key rotation re-seals a value with the purpose it was sealed
// with and a sample can be opened to check a key. Each purpose is the one its own operation uses:
// a column added with a new purpose must be added here (and to store/master-key-store.ts
// SEALED_TABLES), or the rotation could not re-seal it.
import { gatewaySettingsPurpose } from '../connectors/registry.js';
import type { SealedRow, SealedTable } from '../store/master-key-store.js';
import { panPurpose } from './card-vault.js';
import { CASHIER_CUSTOMER_PURPOSE } from './cashier-session.js';
import { secretPurpose } from './merchant-directory.js';
import { PAYOUT_CUSTOMER_PURPOSE } from './payout.js';
import { SANDBOX_TOKEN_PURPOSE } from './sandbox-admin-token.js';

export function purposeOf(table: SealedTable, column: string, row: SealedRow): string {
  switch (table) {
    case 'merchants':
      // secret_sealed and previous_secret_sealed alike.
      return secretPurpose(String(row.key[0]));
    case 'gateways':
      return gatewaySettingsPurpose(String(row.key[0]));
    case 'card_vault':
      return panPurpose(row.merchant_id ?? '');
    case 'transactions':
      return PAYOUT_CUSTOMER_PURPOSE;
    case 'cashier_sessions':
    case 'cashier_customers':
      return CASHIER_CUSTOMER_PURPOSE;
    case 'sandbox_admin_token':
      return SANDBOX_TOKEN_PURPOSE;
  }
  throw new Error(`no purpose known for ${String(table)}.${column}`);
}
