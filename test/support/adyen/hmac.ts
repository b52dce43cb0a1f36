// The HMAC signature of an Adyen notification item, as Adyen documents it for standard
// notifications: HMAC-SHA256, keyed with the hex-decoded HMAC key, over
// pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success
// (absent fields as empty text), Base64; carried in the item's additionalData.hmacSignature.
// Test code: the fake signs with it, and the tests forge with it; the connector has its own.
import { createHmac } from 'node:crypto';

export interface SignedFields {
  readonly pspReference: string;
  readonly originalReference?: string;
  readonly merchantAccountCode: string;
  readonly merchantReference: string;
  readonly amount: { readonly value: number; readonly currency: string };
  readonly eventCode: string;
  readonly success: string;
}

export function notificationHmac(item: SignedFields, hmac_key_hex: string): string {
  const payload = [
    item.pspReference,
    item.originalReference ?? '',
    item.merchantAccountCode,
    item.merchantReference,
    String(item.amount.value),
    item.amount.currency,
    item.eventCode,
    item.success,
  ].join(':');
  return createHmac('sha256', Buffer.from(hmac_key_hex, 'hex')).update(payload, 'utf8').digest('base64');
}
