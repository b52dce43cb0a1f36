// Valid payout request bodies (spec §4.1 variants D and E, §4.2 direct), for tests to vary.
import { encryptCardField } from '../../src/domain/card-encryption.js';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { orderId, VISA } from './bodies.js';
import { nowSeconds } from './client.js';

const CUSTOMER = {
  pin: 'cust-77',
  dob: '1985-02-03',
  email: 'payee@example.com',
  phone: 441234567899,
  requester_ip: '198.51.100.4',
  address: '2 High Street',
  city: 'Leeds',
  country: 'GB',
  first_name: 'Pat',
  last_name: 'Payee',
  state: 'WY',
  zip: 'LS1 4AP',
};

export interface PlainCard {
  readonly card_number: string;
  readonly card_exp: string;
  readonly cvv?: string;
}

export const PAYOUT_CARD: PlainCard = { card_number: VISA, card_exp: '12/2035' };

/**
 * Variant D: payout, application_key form, version 1.2, the card encrypted (spec §5.3) with the
 * merchant's secret and the body's own timestamp. `names` picks the *_encrypted or the plain names.
 */
export function payoutD(
  merchant: CreatedMerchant,
  overrides: Record<string, unknown> = {},
  card: PlainCard = PAYOUT_CARD,
  names: 'encrypted' | 'plain' = 'encrypted',
): Record<string, unknown> {
  const timestamp = typeof overrides.timestamp === 'number' ? overrides.timestamp : nowSeconds();
  const suffix = names === 'encrypted' ? '_encrypted' : '';
  const encrypted: Record<string, string> = {
    [`card_number${suffix}`]: encryptCardField(card.card_number, merchant.secret, timestamp),
    [`card_exp${suffix}`]: encryptCardField(card.card_exp, merchant.secret, timestamp),
  };
  if (card.cvv !== undefined) encrypted[`cvv${suffix}`] = encryptCardField(card.cvv, merchant.secret, timestamp);
  return {
    merchant_id: merchant.merchant_id,
    application_key: merchant.application_key,
    transaction_type: 'payout',
    order_id: orderId('payout'),
    amount: 5000,
    currency: 'USD',
    ...encrypted,
    ...CUSTOMER,
    gateway: merchant.gateway,
    return_url: 'https://merchant.example/return',
    notification_url: 'https://merchant.example/notify',
    timestamp,
    version: '1.2',
    ...overrides,
  };
}

/** Variant E: payout, frontend form, version 1.1, plain card data. */
export function payoutE(merchant: CreatedMerchant, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    merchant_id: merchant.merchant_id,
    frontend: merchant.frontend,
    transaction_type: 'payout',
    order_id: orderId('payout'),
    amount: 5000,
    currency: 'USD',
    card_number: VISA,
    card_exp: '12/2035',
    ...CUSTOMER,
    gateway: merchant.gateway,
    return_url: 'https://merchant.example/return',
    notification_url: 'https://merchant.example/notify',
    timestamp: nowSeconds(),
    version: '1.1',
    ...overrides,
  };
}

/** POST /api/direct: a sandbox bank payout unless data_method says ewallet. */
export function direct(merchant: CreatedMerchant, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    merchant_id: merchant.merchant_id,
    application_key: merchant.application_key,
    transaction_type: 'payout',
    order_id: orderId('direct'),
    amount: 7500,
    currency: 'EUR',
    pin: 'cust-77',
    country: 'DE',
    gateway: merchant.gateway,
    return_url: 'https://merchant.example/return',
    notification_url: 'https://merchant.example/notify',
    data_account_number: 'DE89370400440532013000',
    data_bank_code: 'COBADEFF',
    timestamp: nowSeconds(),
    version: '1.2',
    ...overrides,
  };
}

/** Deletes the keys whose override was undefined (a test's way to say "field absent"). */
export function without(body: Record<string, unknown>, ...keys: string[]): Record<string, unknown> {
  const copy = { ...body };
  for (const key of keys) delete copy[key];
  return copy;
}
