// A merchant's settings that an operator sets through the operator API and the cashier reads:
// the shop name shown per frontend or application (docs/cashier.md), whether its v1.3 requests
// must carry Gt-Body-Signature (docs/security.md §3), and the origins allowed to frame an
// application's init-pay-in cashier. Each answers false (or null) when the merchant, frontend
// or application does not exist.
import type { OperationDeps } from './deps.js';

type StoreDeps = Pick<OperationDeps, 'store'>;

/** A frontend or application key of a merchant. */
export interface MerchantIdentity {
  readonly kind: 'frontend' | 'application_key';
  readonly value: string;
}

/** The shop name the cashier shows for this frontend or application; null when none is set. */
export function displayName(deps: StoreDeps, merchant_id: string, identity: MerchantIdentity): Promise<string | null> {
  return deps.store.merchants.getDisplayName(merchant_id, identity);
}

/** Sets (or, with null, clears) the shop name of a frontend or application. */
export function setDisplayName(
  deps: StoreDeps,
  merchant_id: string,
  identity: MerchantIdentity,
  display_name: string | null,
): Promise<boolean> {
  return deps.store.merchants.setDisplayName(merchant_id, identity, display_name);
}

export function setV13BodySignatureRequired(deps: StoreDeps, merchant_id: string, required: boolean): Promise<boolean> {
  return deps.store.merchants.setV13BodySignatureRequired(merchant_id, required);
}

/** The origins allowed to frame the application's init-pay-in cashier; null when no such application. */
export function frameOrigins(deps: StoreDeps, merchant_id: string, application_key: string): Promise<string[] | null> {
  return deps.store.merchants.getFrameOrigins(merchant_id, application_key);
}

export function setFrameOrigins(
  deps: StoreDeps,
  merchant_id: string,
  application_key: string,
  origins: readonly string[],
): Promise<boolean> {
  return deps.store.merchants.setFrameOrigins(merchant_id, application_key, origins);
}
