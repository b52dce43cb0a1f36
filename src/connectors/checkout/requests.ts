// The bodies the Checkout.com connector sends (connector.ts calls these): a card sale's (or
// authorization's) and a card payout's POST /payments, an authorization's capture and void, the
// customer's fields cut to what Checkout.com takes, and the idempotency key of every request that
// moves money. Apart from the connector so that what goes on the wire
// reads in one place, as hyperswitch keeps a connector's request building in its transformers.
import type { CaptureRequest, CardPayoutRequest, CardSaleRequest, Customer, VoidRequest } from '../connector.js';
import type { CkoAddress, CkoCaptureRequest, CkoCardPayoutRequest, CkoPaymentRequest, CkoVoidRequest } from './wire.js';

/** The gateway's settings a request carries (a part of connector.ts's CheckoutSettings). */
export interface RequestSettings {
  readonly processing_channel_id: string;
  readonly funds_transfer_type: string;
  readonly three_ds: 'never' | 'always';
}

/**
 * The key of a sale, an authorization, a refund or a payout. A capture's and a void's key is the
 * one the gateway gives (CaptureRequest.idempotency_key), sent as it is.
 */
export function idempotencyKey(gateway_id: string, trace_id: number, operation: 'sale' | 'authorize' | 'refund' | 'payout'): string {
  // The gateway's id keeps two installations that share one Checkout.com account (a staging and a
  // production database, both with trace_id 1) from ever meeting on one key.
  return `paygate-${gateway_id}-${trace_id}-${operation}`;
}

function addressOf(customer: Customer): CkoAddress | undefined {
  const address: Record<string, string> = {};
  if (customer.address) address.address_line1 = customer.address.slice(0, 200);
  if (customer.city) address.city = customer.city.slice(0, 50);
  if (customer.state) address.state = customer.state.slice(0, 50);
  if (customer.zip) address.zip = customer.zip.slice(0, 50);
  if (customer.country && /^[A-Z]{2}$/.test(customer.country)) address.country = customer.country;
  return Object.keys(address).length > 0 ? address : undefined;
}

/**
 * A payee's address as a card payout takes it (tighter than a payment's): each part only when it
 * fits, since a part cut short would name another place.
 */
function holderAddressOf(customer: Customer): CkoAddress | undefined {
  const address: Record<string, string> = {};
  if (customer.address && customer.address.length <= 50) address.address_line1 = customer.address;
  if (customer.city && customer.city.length <= 25) address.city = customer.city;
  if (customer.state && /^[A-Za-z0-9]{2,3}$/.test(customer.state)) address.state = customer.state;
  if (customer.zip && customer.zip.length <= 10) address.zip = customer.zip;
  if (customer.country && /^[A-Z]{2}$/.test(customer.country)) address.country = customer.country;
  return address.country !== undefined ? address : undefined;
}

function nameOf(customer: Customer): string | undefined {
  const name = [customer.first_name, customer.last_name].filter((part) => part !== null && part !== '').join(' ');
  return name === '' ? undefined : name.slice(0, 255);
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}\.[^\s@]{2,}$/;

/** A card sale's POST /payments: the card as the payment source. */
export function saleBody(request: CardSaleRequest, settings: RequestSettings): CkoPaymentRequest {
  const { card, customer } = request;
  return {
    source: {
      type: 'card',
      number: card.pan,
      expiry_month: card.expiry.month,
      expiry_year: card.expiry.year,
      ...(card.cvv !== null ? { cvv: card.cvv } : {}),
      ...(nameOf(customer) !== undefined ? { name: nameOf(customer)! } : {}),
      ...(addressOf(customer) !== undefined ? { billing_address: addressOf(customer)! } : {}),
    },
    amount: request.amount_minor,
    currency: request.currency,
    // A stored card charged by the merchant (a renewal) is recurring and merchant-initiated.
    payment_type: request.initiated_by === 'merchant' ? 'Recurring' : 'Regular',
    ...(request.initiated_by === 'merchant' ? { merchant_initiated: true } : {}),
    reference: request.reference,
    // false: Checkout.com only authorizes, and holds the funds until the capture or the void.
    capture: request.capture,
    ...(customer.email && EMAIL.test(customer.email)
      ? { customer: { email: customer.email, ...(nameOf(customer) ? { name: nameOf(customer)! } : {}) } }
      : {}),
    // 3-D Secure asked for when the gateway says so; Checkout.com may ask for it anyway (its risk
    // rules), and then answers with its own page whatever this says.
    ...(request.return_to !== null ? { '3ds': { enabled: settings.three_ds === 'always' } } : {}),
    processing_channel_id: settings.processing_channel_id,
    ...(request.return_to !== null ? { success_url: request.return_to.success_url, failure_url: request.return_to.failure_url } : {}),
    ...(customer.ip && IPV4.test(customer.ip) ? { payment_ip: customer.ip } : {}),
    metadata: { paygate_trace_id: request.trace_id },
  };
}

/** A card payout's POST /payments: from the gateway's currency account to the card. */
export function payoutBody(request: CardPayoutRequest, settings: RequestSettings, currency_account_id: string): CkoCardPayoutRequest {
  const { card, customer } = request;
  const holder_address = holderAddressOf(customer);
  return {
    source: { type: 'currency_account', id: currency_account_id },
    destination: {
      type: 'card',
      number: card.pan,
      expiry_month: card.expiry.month,
      expiry_year: card.expiry.year,
      account_holder: {
        type: 'individual',
        first_name: (customer.first_name ?? 'Card').slice(0, 35),
        last_name: (customer.last_name ?? 'Holder').slice(0, 35),
        ...(holder_address !== undefined ? { billing_address: holder_address } : {}),
      },
    },
    amount: request.amount_minor,
    currency: request.currency,
    reference: request.reference,
    instruction: { funds_transfer_type: settings.funds_transfer_type },
    processing_channel_id: settings.processing_channel_id,
    metadata: { paygate_trace_id: request.trace_id },
  };
}

/**
 * An authorization's capture: `amount` (less than authorized is a partial capture) and `Final`, so
 * that the rest is released at once and no second capture can follow (decisions §16: one capture
 * per authorization). Our trace_id in its metadata, as on every request.
 */
export function captureBody(request: CaptureRequest): CkoCaptureRequest {
  return {
    amount: request.amount_minor,
    capture_type: 'Final',
    reference: request.reference,
    metadata: { paygate_trace_id: request.trace_id },
  };
}

/** An authorization's void: the whole hold released. */
export function voidBody(request: VoidRequest): CkoVoidRequest {
  return { reference: request.reference, metadata: { paygate_trace_id: request.trace_id } };
}
