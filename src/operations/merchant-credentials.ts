// The operator's actions on a merchant's credentials (docs/security.md §5): roll its secret with
// a grace for the old one, disable or enable it, and send it a test notification. The operator
// API (http/routes/operator-merchants.ts) and the back office call these; each answers a value.
//
// Rolling: the merchant deploys a new secret whenever it can, so the old one stays accepted for a
// grace the operator chooses (up to a day); requests signed with either are accepted meanwhile and
// answered with the one they used (http/signed-route.ts). What the gateway sends on its own initiative
// (notifications, validation requests) is signed with the current secret from the roll on.
import { newMerchantSecret } from '../domain/merchants.js';
import { buildTestNotificationPayload } from '../notifications/payload.js';
import { sendNotification } from '../notifications/sender.js';
import { urlHostNotPublic } from '../outbound/addresses.js';
import { DESTINATION_NOT_ALLOWED, type OutboundPolicy, precheckUrl } from '../outbound/post.js';
import type { OperationDeps } from './deps.js';
import { secretPurpose } from './merchant-directory.js';

/** The longest grace of a rolled secret: long enough to deploy the new one, short enough that a leaked one dies soon. */
export const SECRET_GRACE_MAX_S = 24 * 3600;

export type RollSecretOutcome =
  { kind: 'rolled'; secret: string; previous_valid_until_ms: number } | { kind: 'not_found' } | { kind: 'invalid_grace'; max_s: number };

/**
 * Gives the merchant a new secret, generated as a new merchant's is; the old one stays accepted
 * for grace_s seconds of the gateway clock (a whole number from 0, which ends it at once, to
 * SECRET_GRACE_MAX_S). Only one previous secret is kept: rolling again during a grace ends the
 * older secret's at once. This instance applies it at once; others within
 * PAYGATE_MERCHANT_CACHE_MS (their kept copies).
 */
export async function rollMerchantSecret(deps: OperationDeps, merchant_id: string, grace_s: number): Promise<RollSecretOutcome> {
  if (!Number.isSafeInteger(grace_s) || grace_s < 0 || grace_s > SECRET_GRACE_MAX_S)
    return { kind: 'invalid_grace', max_s: SECRET_GRACE_MAX_S };
  const secret = newMerchantSecret();
  const previous_valid_until_ms = deps.clock.now_ms() + grace_s * 1000;
  const rolled = await deps.store.merchants.rollSecret(
    merchant_id,
    deps.sealer.seal(secret, secretPurpose(merchant_id)),
    previous_valid_until_ms,
  );
  if (!rolled) return { kind: 'not_found' };
  deps.merchants.invalidate();
  deps.logger.info({ merchant_id, grace_s, previous_valid_until_ms }, 'merchant secret rolled');
  return { kind: 'rolled', secret, previous_valid_until_ms };
}

/**
 * Disables the merchant (its signed and v1.3 calls are answered as an unknown merchant's, its open
 * cashier sessions take no new payment) or enables it again. Its notifications already queued
 * still go out and its payments in flight still finish. False when there is no such merchant.
 */
export async function setMerchantDisabled(deps: OperationDeps, merchant_id: string, disabled: boolean): Promise<boolean> {
  const changed = await deps.store.merchants.setDisabled(merchant_id, disabled ? deps.clock.now_ms() : null);
  if (!changed) return false;
  deps.merchants.invalidate();
  deps.logger.info({ merchant_id, disabled }, disabled ? 'merchant disabled' : 'merchant enabled');
  return true;
}

export type TestNotificationOutcome =
  | { kind: 'delivered'; http_status: number; reply_excerpt: string; duration_ms: number }
  | { kind: 'failed'; http_status: number | null; reason: string; reply_excerpt: string | null; duration_ms: number }
  | { kind: 'not_found' }
  | { kind: 'url_not_allowed'; reason: string };

/**
 * The policy of notifications and validation requests (main.ts, validation-request.ts), for a
 * call made on a person's request (a test notification, the endpoint checker): its own
 * connection, closed after the one request.
 */
export function notificationPolicy(deps: Pick<OperationDeps, 'config'>): OutboundPolicy {
  return {
    timeout_ms: deps.config.limits.outbound_timeout_ms,
    max_reply_bytes: deps.config.limits.outbound_reply_max_bytes,
    allow_private: deps.config.environment === 'sandbox' || deps.config.limits.allow_private_urls,
  };
}

/** Why the gateway would not call `url` under `policy`, or null: as a notification_url is checked when a request brings it (`localhost` by name too). */
export function refusedUrl(url: string, policy: OutboundPolicy): string | null {
  const checked = precheckUrl(url, policy.allow_private);
  if ('reason' in checked) return checked.reason;
  return !policy.allow_private && urlHostNotPublic(url) ? DESTINATION_NOT_ALLOWED : null;
}

/**
 * POSTs a test notification to `url` now, not through the outbox (nothing is stored): the body of
 * payload.ts buildTestNotificationPayload, signed with the merchant's current secret exactly as a
 * real notification (sender.ts), under the same outbound rules (time-out, reply cap, no redirects,
 * private addresses refused in live mode). Delivered means what it means for a real one: HTTP 2xx
 * with a reply signed with the current secret and status 0.
 */
export async function sendTestNotification(deps: OperationDeps, merchant_id: string, url: string): Promise<TestNotificationOutcome> {
  // Read now, not from a kept copy: the secret may have been rolled on another instance.
  const merchant = await deps.merchants.findFresh(merchant_id);
  if (!merchant) return { kind: 'not_found' };
  const policy = notificationPolicy(deps);
  const refused = refusedUrl(url, policy);
  if (refused !== null) return { kind: 'url_not_allowed', reason: refused };
  const payload = buildTestNotificationPayload(merchant, Math.floor(deps.clock.now_ms() / 1000));
  const result = await sendNotification({ url, payload_json: JSON.stringify(payload) }, merchant.secret, policy);
  deps.logger.info(
    { merchant_id, outcome: result.outcome, reason: result.reason, http_status: result.http_status, duration_ms: result.duration_ms },
    'test notification',
  );
  // A name that resolved to a refused address: the same refusal as an address given as such.
  if (result.outcome === 'undeliverable') return { kind: 'url_not_allowed', reason: result.reason };
  if (result.outcome === 'delivered') {
    return {
      kind: 'delivered',
      http_status: result.http_status ?? 200,
      reply_excerpt: result.reply_excerpt ?? '',
      duration_ms: result.duration_ms,
    };
  }
  return {
    kind: 'failed',
    http_status: result.http_status,
    reason: result.reason,
    reply_excerpt: result.reply_excerpt,
    duration_ms: result.duration_ms,
  };
}

/** What a merchant's staff see of their credentials: never a secret, only what identifies them and the grace of a rolled one. */
export interface CredentialsView {
  readonly merchant_id: string;
  readonly applications: readonly string[];
  readonly frontends: readonly { readonly name: string; readonly currency: string }[];
  /** Until when the previous secret is still accepted; null when it no longer is (or there is none). */
  readonly previous_secret_until_ms: number | null;
  /** The notification URL of the merchant's latest transactions that had one ('' when none): the test's default. */
  readonly last_notification_url: string;
}

/** Recent transactions looked at for the notification URL offered by default. */
const RECENT_FOR_URL = 20;

/** A merchant's credentials as its staff see them; null when there is no such merchant. */
export async function credentialsView(deps: Pick<OperationDeps, 'store' | 'clock'>, merchant_id: string): Promise<CredentialsView | null> {
  const record = await deps.store.merchants.get(merchant_id);
  if (record === null) return null;
  const recent = await deps.store.transactions.search({ merchant_id }, null, RECENT_FOR_URL);
  const grace_until = record.previous_secret_until_ms;
  const in_grace = grace_until !== null && record.previous_secret_sealed !== null && grace_until > deps.clock.now_ms();
  return {
    merchant_id,
    applications: record.applications,
    frontends: record.frontends,
    previous_secret_until_ms: in_grace ? grace_until : null,
    last_notification_url: recent.find((row) => row.notification_url !== null)?.notification_url ?? '',
  };
}
