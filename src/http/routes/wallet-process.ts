// POST /api/process with `payment_method` `paypal` (decisions §17): a sale paid from the buyer's
// PayPal account instead of a card, and the refund of one. The sale has a card sale's fields
// without the card's; it is answered `pending_async` with the buyer's approval link as
// redirect_url, and the gateway captures once the buyer is back (operations/wallet-sale.ts). The
// refund has a card refund's fields without the card's: a wallet sale has no card to compare.
// Kept apart from process.ts, which picks these variants by payment_method and hands over here.
import { Type } from '@sinclair/typebox';
import { customerFrom } from '../../connectors/connector.js';
import { requestFingerprint } from '../../operations/lifecycle.js';
import { processRefund } from '../../operations/refund.js';
import { processWalletSale } from '../../operations/wallet-sale.js';
import { fieldError, type Reply } from '../envelope.js';
import { bodySchema, type BodyOf, type FieldsRefused, literal } from '../fields.js';
import { CUSTOMER, refundReply, saleReply, VARIABLES, variablesOf } from './process-replies.js';
import { identityOf, type SignedContext, unknownCredentials } from '../route.js';

/** The payment methods /api/process takes: a card (the default, also when payment_method is absent) and PayPal. */
export const PROCESS_PAYMENT_METHODS = ['card', 'paypal'] as const;
export type ProcessPaymentMethod = (typeof PROCESS_PAYMENT_METHODS)[number];

const PAYPAL = Type.Literal('paypal', { description: 'exactly "paypal": the buyer pays from their PayPal account (decisions §17)' });

const WALLET_SALE_FIELDS = {
  amount: 'required',
  currency: 'required',
  ...CUSTOMER,
  state: 'optional',
  merchant_id: 'required',
  return_url: 'required',
  notification_url: 'required',
  order_id: 'required',
  gateway: 'optional',
  timestamp: 'required',
  signature: 'required',
  ...VARIABLES,
} as const;

/** A PayPal sale in the application_key form (version 1.2). */
export const PayPalSaleApplicationKey = bodySchema(
  { ...WALLET_SALE_FIELDS, application_key: 'required' },
  { transaction_type: literal('sale'), version: literal('1.2'), payment_method: PAYPAL },
);
/** A PayPal sale in the frontend form (version 1.1). */
export const PayPalSaleFrontend = bodySchema(
  { ...WALLET_SALE_FIELDS, frontend: 'required' },
  { transaction_type: literal('sale'), version: literal('1.1'), payment_method: PAYPAL },
);

const WALLET_REFUND_FIELDS = {
  amount: 'required',
  currency: 'required',
  pin: 'required',
  merchant_id: 'required',
  order_id: 'required',
  reference_id: 'required',
  timestamp: 'required',
  signature: 'required',
  email: 'optional',
  requester_ip: 'optional',
  country: 'optional',
  first_name: 'optional',
  last_name: 'optional',
  state: 'optional',
  zip: 'optional',
  return_url: 'optional',
  notification_url: 'optional',
} as const;

/** The refund of a PayPal sale, in either form: no card fields, the sale is named by reference_id. */
export const PayPalRefundApplicationKey = bodySchema(
  { ...WALLET_REFUND_FIELDS, application_key: 'required' },
  { transaction_type: literal('refund'), version: literal('1.2'), payment_method: PAYPAL },
);
export const PayPalRefundFrontend = bodySchema(
  { ...WALLET_REFUND_FIELDS, frontend: 'required' },
  { transaction_type: literal('refund'), version: literal('1.1'), payment_method: PAYPAL },
);

export type WalletSaleBody = BodyOf<typeof PayPalSaleApplicationKey> | BodyOf<typeof PayPalSaleFrontend>;
export type WalletRefundBody = BodyOf<typeof PayPalRefundApplicationKey> | BodyOf<typeof PayPalRefundFrontend>;

export type WalletProcessInput =
  | { readonly variant: 'wallet_sale'; readonly body: WalletSaleBody }
  | { readonly variant: 'wallet_refund'; readonly body: WalletRefundBody };

/** The schemas of these variants, for /openapi.json. */
export const WALLET_PROCESS_SCHEMAS = [
  PayPalSaleApplicationKey.schema,
  PayPalSaleFrontend.schema,
  PayPalRefundApplicationKey.schema,
  PayPalRefundFrontend.schema,
];

/**
 * The payment method a request to /api/process names: absent or "card" is a card, "paypal"
 * PayPal; anything else is refused rather than silently charged to a card.
 */
export function paymentMethodOf(body: Readonly<Record<string, unknown>>): ProcessPaymentMethod | { readonly reply: Reply } {
  const value = body.payment_method;
  if (value === undefined || value === null || value === '' || value === 'card') return 'card';
  if (value === 'paypal') return 'paypal';
  return { reply: fieldError(`Invalid field: payment_method (expected ${PROCESS_PAYMENT_METHODS.join(' or ')})`) };
}

/** The PayPal variants of /api/process, by transaction_type and form. */
export function parseWalletProcess(
  body: Readonly<Record<string, unknown>>,
  by_key: boolean,
): { ok: true; value: WalletProcessInput } | { ok: false; reply: Reply } | FieldsRefused {
  const type = body.transaction_type;
  if (type === 'sale') {
    const parsed = by_key ? PayPalSaleApplicationKey.parse(body) : PayPalSaleFrontend.parse(body);
    return parsed.ok ? { ok: true, value: { variant: 'wallet_sale', body: parsed.value } } : parsed;
  }
  if (type === 'refund') {
    const parsed = by_key ? PayPalRefundApplicationKey.parse(body) : PayPalRefundFrontend.parse(body);
    return parsed.ok ? { ok: true, value: { variant: 'wallet_refund', body: parsed.value } } : parsed;
  }
  return { ok: false, reply: fieldError('Invalid field: transaction_type (payment_method paypal takes sale or refund)') };
}

export async function handleWalletSale(context: SignedContext, body: WalletSaleBody): Promise<Reply> {
  const identity = identityOf(context.merchant, context.body);
  if (!identity) return unknownCredentials();
  const outcome = await processWalletSale(context.deps, {
    merchant: context.merchant,
    identity,
    api_version: body.version,
    order_id: body.order_id,
    amount_minor: body.amount,
    currency: body.currency,
    customer: customerFrom(context.body),
    pin: body.pin,
    gateway: body.gateway,
    return_url: body.return_url,
    notification_url: body.notification_url,
    request_fingerprint: requestFingerprint(context.deps, context.body),
    variables: variablesOf(context.body),
    // The buyer names their account at PayPal, not here.
    wallet_id: '',
  });
  return saleReply(outcome);
}

export async function handleWalletRefund(context: SignedContext, body: WalletRefundBody): Promise<Reply> {
  const identity = identityOf(context.merchant, context.body);
  if (!identity) return unknownCredentials();
  const outcome = await processRefund(context.deps, {
    merchant: context.merchant,
    identity,
    api_version: body.version,
    order_id: body.order_id,
    reference_id: Number(body.reference_id),
    amount_minor: body.amount,
    currency: body.currency,
    card: null,
    pin: body.pin,
    return_url: body.return_url ?? null,
    notification_url: body.notification_url ?? null,
    request_fingerprint: requestFingerprint(context.deps, context.body),
  });
  return refundReply(outcome);
}
