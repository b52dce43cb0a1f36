// Valid request bodies a merchant would send, for tests to vary one field at a time.
import { randomBytes } from 'node:crypto';
import type { CreatedMerchant } from '../../src/domain/merchants.js';
import { nowSeconds } from './client.js';

export const VISA = '4111111111111111';
export const MASTERCARD = '5555555555554444';

export function orderId(prefix = 'order'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

/** The customer fields of a sale (spec §4.1), one valid set: the bench's sales send them too. */
export const SALE_CUSTOMER = {
  dob: '1990-04-12',
  email: 'jane@example.com',
  phone: 441234567890,
  requester_ip: '203.0.113.7',
  address: '1 Main Street',
  city: 'London',
  country: 'GB',
  first_name: 'Jane',
  last_name: 'Doe',
  zip: 'SW1A 1AA',
};

const CUSTOMER = { pin: 'cust-42', ...SALE_CUSTOMER };

/** Variant A: sale, application_key form, version 1.2. */
export function saleA(merchant: CreatedMerchant, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    merchant_id: merchant.merchant_id,
    application_key: merchant.application_key,
    transaction_type: 'sale',
    order_id: orderId(),
    amount: 1999,
    currency: 'USD',
    card_number: VISA,
    card_exp: '12/2035',
    cvv: '568',
    ...CUSTOMER,
    return_url: 'https://merchant.example/return',
    notification_url: 'https://merchant.example/notify',
    timestamp: nowSeconds(),
    version: '1.2',
    ...overrides,
  };
}

/** Variant B: sale, frontend form, version 1.1. */
export function saleB(merchant: CreatedMerchant, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    merchant_id: merchant.merchant_id,
    frontend: merchant.frontend,
    transaction_type: 'sale',
    order_id: orderId(),
    amount: 2500,
    currency: 'EUR',
    card_number: MASTERCARD,
    card_exp: '06/2034',
    cvv: '568',
    ...CUSTOMER,
    state: 'LN',
    return_url: 'https://merchant.example/return',
    notification_url: 'https://merchant.example/notify',
    timestamp: nowSeconds(),
    version: '1.1',
    ...overrides,
  };
}

/** Variant C: refund, frontend form, version 1.1, of the given sale. */
export function refundC(
  merchant: CreatedMerchant,
  reference_id: unknown,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    merchant_id: merchant.merchant_id,
    frontend: merchant.frontend,
    transaction_type: 'refund',
    order_id: orderId('refund'),
    reference_id,
    amount: 500,
    currency: 'USD',
    card_number: VISA,
    card_exp: '12/2035',
    pin: 'cust-42',
    email: 'jane@example.com',
    requester_ip: '203.0.113.7',
    country: 'GB',
    first_name: 'Jane',
    last_name: 'Doe',
    state: 'LN',
    zip: 'SW1A 1AA',
    notification_url: 'https://merchant.example/notify',
    timestamp: nowSeconds(),
    version: '1.1',
    ...overrides,
  };
}
