// The bodies the connector sends to Adyen (Checkout v71 and Payout v68), the data_ fields of its
// bank payouts with their checks (an IBAN's mod-97 check digits among them), and the idempotency
// keys. Card data goes into the body and nowhere else (never a log, never an error text).
import type {
  AuthorizationActionRequest,
  CaptureRequest,
  CardSaleRequest,
  DataFieldSpec,
  DirectPayoutCheck,
  DirectPayoutRequest,
  RefundRequest,
} from '../connector.js';
import { checkDataFields } from '../connector.js';
import { type CashierPayee, type PayeeHolder, type PayeeMapping, validIban } from '../../domain/payee.js';

export interface AdyenIds {
  readonly merchant_account: string;
}

export function idempotencyKey(
  gateway_id: string,
  trace_id: number,
  operation: 'sale' | 'authorize' | 'refund' | 'payout' | 'confirm' | 'details',
): string {
  // The gateway's id keeps two installations that share one Adyen account apart (both have trace_id 1).
  return `paygate-${gateway_id}-${trace_id}-${operation}`;
}

function amountOf(amount_minor: number, currency: string) {
  return { value: amount_minor, currency };
}

/** POST /payments: a sale, or with capture false an authorization (additionalData.manualCapture). */
export function saleBody(request: CardSaleRequest, ids: AdyenIds, fallback_return_url: string): Record<string, unknown> {
  const { card, customer } = request;
  const holder = [customer.first_name, customer.last_name].filter((part) => part !== null).join(' ');
  return {
    amount: amountOf(request.amount_minor, request.currency),
    reference: request.reference,
    merchantAccount: ids.merchant_account,
    returnUrl: request.return_to?.success_url ?? fallback_return_url,
    paymentMethod: {
      type: 'scheme',
      number: card.pan,
      expiryMonth: String(card.expiry.month).padStart(2, '0'),
      expiryYear: String(card.expiry.year),
      ...(card.cvv !== null ? { cvc: card.cvv } : {}),
      ...(holder !== '' ? { holderName: holder.slice(0, 80) } : {}),
    },
    shopperInteraction: request.initiated_by === 'customer' ? 'Ecommerce' : 'ContAuth',
    channel: 'Web',
    metadata: { trace_id: String(request.trace_id) },
    ...(customer.email !== null ? { shopperEmail: customer.email.slice(0, 300) } : {}),
    ...(customer.ip !== null ? { shopperIP: customer.ip.slice(0, 1000) } : {}),
    ...(customer.country !== null && /^[A-Z]{2}$/.test(customer.country) ? { countryCode: customer.country } : {}),
    ...(request.capture ? {} : { additionalData: { manualCapture: 'true' } }),
  };
}

export function captureBody(request: CaptureRequest, ids: AdyenIds): Record<string, unknown> {
  return { amount: amountOf(request.amount_minor, request.currency), merchantAccount: ids.merchant_account, reference: request.reference };
}

export function cancelBody(request: AuthorizationActionRequest, ids: AdyenIds): Record<string, unknown> {
  return { merchantAccount: ids.merchant_account, reference: request.reference };
}

export function refundBody(request: RefundRequest, ids: AdyenIds): Record<string, unknown> {
  return { amount: amountOf(request.amount_minor, request.currency), merchantAccount: ids.merchant_account, reference: request.reference };
}

export const BANK_PAYOUT_METHOD = 'bank_account';

/**
 * The data_ fields of a bank payout. Adyen's storeDetailAndSubmitThirdParty requires the
 * shopper's e-mail and date of birth (and nationality, entity type) besides the bank account, so
 * the payout takes them too: data_email and data_date_of_birth are required; data_nationality
 * defaults to data_country_code and data_entity_type to NaturalPerson.
 */
export const BANK_PAYOUT_FIELDS: readonly DataFieldSpec[] = [
  { name: 'data_iban', required: true, max_length: 34, pattern: /^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$/, rule: 'an IBAN, capitals, no spaces' },
  { name: 'data_owner_name', required: true, max_length: 100, pattern: /^[^\p{Cc}]+$/u, rule: "the account holder's name" },
  {
    name: 'data_bic',
    required: false,
    max_length: 11,
    pattern: /^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$/,
    rule: 'a BIC of 8 or 11 characters',
  },
  { name: 'data_country_code', required: true, max_length: 2, pattern: /^[A-Z]{2}$/, rule: 'ISO 3166-1 alpha-2, capitals' },
  { name: 'data_email', required: true, max_length: 254, pattern: /^[^\s@]+@[^\s@]+\.[^\s@]+$/, rule: "the payee's e-mail address" },
  {
    name: 'data_date_of_birth',
    required: true,
    max_length: 10,
    pattern: /^(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$/,
    rule: 'YYYY-MM-DD',
  },
  { name: 'data_nationality', required: false, max_length: 2, pattern: /^[A-Z]{2}$/, rule: 'ISO 3166-1 alpha-2, capitals' },
  { name: 'data_entity_type', required: false, max_length: 13, values: ['NaturalPerson', 'Company'], rule: 'NaturalPerson or Company' },
];

/**
 * A bank account from the hosted cashier: the holder's e-mail and date of birth, which Adyen
 * requires with a payout, from what the cashier knows of the customer; the account's country is
 * the IBAN's own.
 */
export const BANK_PAYEE: PayeeMapping = {
  methods: ['bank_account'],
  data(payee: CashierPayee, holder: PayeeHolder): Record<string, string> {
    if (payee.method !== 'bank_account') return {};
    return {
      data_iban: payee.iban,
      data_owner_name: payee.owner_name,
      ...(payee.bic !== null ? { data_bic: payee.bic } : {}),
      data_country_code: payee.iban.slice(0, 2),
      ...(holder.email !== null ? { data_email: holder.email } : {}),
      ...(holder.dob !== null ? { data_date_of_birth: holder.dob } : {}),
      data_nationality: holder.country,
    };
  },
};

export function checkBankPayout(data: Readonly<Record<string, string>>): DirectPayoutCheck {
  const problem = checkDataFields(BANK_PAYOUT_FIELDS, data);
  if (problem) return { ok: false, problem };
  if (!validIban(data.data_iban!))
    return { ok: false, problem: { field: 'data_iban', kind: 'invalid', rule: 'an IBAN whose check digits verify' } };
  return { ok: true, payment_method: BANK_PAYOUT_METHOD };
}

/** POST /storeDetailAndSubmitThirdParty: the bank account stored and the payout submitted (the submitter's key). */
export function submitPayoutBody(request: DirectPayoutRequest, ids: AdyenIds): Record<string, unknown> {
  const d = request.data;
  return {
    merchantAccount: ids.merchant_account,
    amount: amountOf(request.amount_minor, request.currency),
    reference: request.reference,
    shopperEmail: d.data_email,
    shopperReference: `paygate-payout-${request.trace_id}`,
    recurring: { contract: 'PAYOUT' },
    dateOfBirth: d.data_date_of_birth,
    nationality: d.data_nationality || d.data_country_code,
    entityType: d.data_entity_type || 'NaturalPerson',
    bank: {
      iban: d.data_iban,
      ownerName: d.data_owner_name,
      countryCode: d.data_country_code,
      ...(d.data_bic ? { bic: d.data_bic } : {}),
    },
  };
}

/** POST /confirmThirdParty: the submitted payout confirmed (the reviewer's key). */
export function confirmPayoutBody(psp_reference: string, ids: AdyenIds): Record<string, unknown> {
  return { merchantAccount: ids.merchant_account, originalReference: psp_reference };
}
