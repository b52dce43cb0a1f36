// POST /api/process: card sale (variants A and B), refund (variant C) and card payout
// (variants D, encrypted, and E, plain). Parses and picks the variant, then hands over to
// operations/sale.ts, operations/refund.ts or operations/payout.ts; a sale or refund with
// payment_method paypal (decisions §17) to wallet-process.ts.
import { Type } from '@sinclair/typebox';
import { type EncryptedCard, openEncryptedCard } from '../../domain/card-encryption.js';
import { CardData, formatExpiry, parseExpiry } from '../../domain/cards.js';
import { type PayoutOutcome, processCardPayout } from '../../operations/payout.js';
import { processRefund } from '../../operations/refund.js';
import { processSale } from '../../operations/sale.js';
import { requestFingerprint, type TransactionAnswer } from '../../operations/lifecycle.js';
import { customerFrom } from '../../connectors/connector.js';
import { fieldError, reply, type Reply, Status } from '../envelope.js';
import { gatewayRefusalReply } from '../gateway-refusal.js';
import { bodySchema, type BodyOf, literal } from '../fields.js';
import { identityOf, type SignedContext, type SignedInput, type SignedRoute, unknownCredentials } from '../route.js';
import {
  CUSTOMER,
  DUPLICATE,
  IN_PROGRESS,
  PROCESSED,
  processedReply,
  refundReply,
  saleReply,
  VARIABLES,
  variablesOf,
} from './process-replies.js';
import {
  handleWalletRefund,
  handleWalletSale,
  parseWalletProcess,
  paymentMethodOf,
  WALLET_PROCESS_SCHEMAS,
  type WalletProcessInput,
} from './wallet-process.js';

const SALE_FIELDS = {
  amount: 'required',
  currency: 'required',
  card_number: 'required',
  cvv: 'required',
  card_exp: 'required',
  ...CUSTOMER,
  state: 'optional',
  application_key: 'required',
  merchant_id: 'required',
  return_url: 'required',
  notification_url: 'required',
  order_id: 'required',
  gateway: 'optional',
  reference_id: 'optional',
  timestamp: 'required',
  signature: 'required',
  ...VARIABLES,
} as const;

export const SaleApplicationKey = bodySchema(SALE_FIELDS, { transaction_type: literal('sale'), version: literal('1.2') });
/** An authorization (decisions §16): a sale's fields, the funds held until a capture or void. */
export const AuthorizeApplicationKey = bodySchema(SALE_FIELDS, { transaction_type: literal('authorize'), version: literal('1.2') });

const SALE_FRONTEND_FIELDS = {
  amount: 'required',
  currency: 'required',
  card_number: 'required',
  cvv: 'optional',
  card_exp: 'required',
  ...CUSTOMER,
  state: 'required',
  frontend: 'required',
  merchant_id: 'required',
  return_url: 'required',
  notification_url: 'required',
  order_id: 'required',
  gateway: 'optional',
  timestamp: 'required',
  signature: 'required',
  ...VARIABLES,
} as const;

export const SaleFrontend = bodySchema(SALE_FRONTEND_FIELDS, { transaction_type: literal('sale'), version: literal('1.1') });
export const AuthorizeFrontend = bodySchema(SALE_FRONTEND_FIELDS, { transaction_type: literal('authorize'), version: literal('1.1') });

const REFUND_FIELDS = {
  amount: 'required',
  currency: 'required',
  card_number: 'required',
  card_exp: 'required',
  pin: 'required',
  email: 'required',
  requester_ip: 'required',
  country: 'required',
  first_name: 'required',
  last_name: 'required',
  state: 'required',
  zip: 'required',
  merchant_id: 'required',
  order_id: 'required',
  reference_id: 'required',
  timestamp: 'required',
  signature: 'required',
  dob: 'optional',
  phone: 'optional',
  address: 'optional',
  city: 'optional',
  return_url: 'optional',
  notification_url: 'optional',
} as const;

export const RefundFrontend = bodySchema(
  { ...REFUND_FIELDS, frontend: 'required' },
  { transaction_type: literal('refund'), version: literal('1.1') },
);
/** Not in the spec: the refund also accepted in the application_key form (version 1.2), documented in docs/api.md. */
export const RefundApplicationKey = bodySchema(
  { ...REFUND_FIELDS, application_key: 'required' },
  { transaction_type: literal('refund'), version: literal('1.2') },
);

/**
 * Variant D ciphertext: decisions.md §5 lets the encrypted fields take up to 256 characters
 * (the card lengths apply to the decrypted values). Whether it decrypts is judged later, with
 * one answer for every failure; here only its size.
 */
const CIPHERTEXT = Type.Optional(
  Type.String({ minLength: 1, maxLength: 256, description: 'base64 ciphertext (spec §5.3) of up to 256 characters' }),
);

/** Variant D: payout to a card, encrypted card data, application_key form, version 1.2. */
export const PayoutEncrypted = bodySchema(
  {
    amount: 'required',
    currency: 'required',
    ...CUSTOMER,
    state: 'required',
    gateway: 'required',
    application_key: 'required',
    merchant_id: 'required',
    return_url: 'required',
    notification_url: 'required',
    order_id: 'required',
    reference_id: 'optional',
    timestamp: 'required',
    signature: 'required',
    ...VARIABLES,
  },
  {
    transaction_type: literal('payout'),
    version: literal('1.2'),
    // decisions.md §3: under the *_encrypted names and under the plain names alike.
    card_number_encrypted: CIPHERTEXT,
    card_exp_encrypted: CIPHERTEXT,
    cvv_encrypted: CIPHERTEXT,
    card_number: CIPHERTEXT,
    card_exp: CIPHERTEXT,
    cvv: CIPHERTEXT,
  },
);

/** Variant E: payout to a card, plain card data, frontend form, version 1.1. */
export const PayoutFrontend = bodySchema(
  {
    amount: 'required',
    currency: 'required',
    card_number: 'required',
    card_exp: 'required',
    cvv: 'optional',
    ...CUSTOMER,
    state: 'required',
    frontend: 'required',
    merchant_id: 'required',
    return_url: 'required',
    notification_url: 'required',
    order_id: 'required',
    gateway: 'required',
    timestamp: 'required',
    signature: 'required',
    ...VARIABLES,
  },
  { transaction_type: literal('payout'), version: literal('1.1') },
);

type SaleBody = BodyOf<typeof SaleApplicationKey>;
type SaleFrontendBody = BodyOf<typeof SaleFrontend>;
type RefundBody = BodyOf<typeof RefundFrontend>;
type RefundAppBody = BodyOf<typeof RefundApplicationKey>;

type PayoutEncryptedBody = BodyOf<typeof PayoutEncrypted>;
type PayoutFrontendBody = BodyOf<typeof PayoutFrontend>;

type ProcessInput =
  | { readonly variant: 'sale'; readonly body: SaleBody | SaleFrontendBody; readonly transaction_type: 'sale' | 'authorize' }
  | { readonly variant: 'refund'; readonly body: RefundBody | RefundAppBody }
  | { readonly variant: 'payout_encrypted'; readonly body: PayoutEncryptedBody; readonly card: EncryptedCard }
  | { readonly variant: 'payout'; readonly body: PayoutFrontendBody }
  | WalletProcessInput;

export const ProcessAnswer = Type.Object({
  status: Type.Integer(),
  description: Type.String({ maxLength: 256 }),
  trace_id: Type.Optional(Type.Integer()),
  transaction_id: Type.Optional(Type.String({ maxLength: 50 })),
  transaction_status: Type.Optional(Type.String({ maxLength: 16 })),
  payment_processor: Type.Optional(Type.String({ maxLength: 25 })),
  redirect_url: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])),
  error_code: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()])),
  error_details: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])),
  card_token: Type.Optional(
    Type.String({ maxLength: 32, description: 'approved sales and authorizations, authorized or captured (decisions.md §9, §16)' }),
  ),
  version: Type.String(),
  timestamp: Type.Integer(),
  signature: Type.String(),
});

const processInput: SignedInput<ProcessInput> = {
  schema: Type.Union([
    SaleApplicationKey.schema,
    SaleFrontend.schema,
    AuthorizeApplicationKey.schema,
    AuthorizeFrontend.schema,
    RefundFrontend.schema,
    RefundApplicationKey.schema,
    PayoutEncrypted.schema,
    PayoutFrontend.schema,
    ...WALLET_PROCESS_SCHEMAS,
  ]),
  parse(body) {
    const type = body.transaction_type;
    if (type === undefined || type === null) return { ok: false, reply: fieldError('Missing required field: transaction_type') };
    const by_key = typeof body.application_key === 'string';
    if (!by_key && typeof body.frontend !== 'string') {
      return { ok: false, reply: fieldError('Missing required field: application_key or frontend') };
    }
    const method = paymentMethodOf(body);
    if (typeof method !== 'string') return { ok: false, reply: method.reply };
    if (method === 'paypal') return parseWalletProcess(body, by_key);
    if (type === 'sale' || type === 'authorize') {
      // The same fields: an authorization is a sale whose capture comes later (decisions §16).
      const parsed = by_key
        ? SaleApplicationKey.parse({ ...body, transaction_type: 'sale' })
        : SaleFrontend.parse({ ...body, transaction_type: 'sale' });
      return parsed.ok ? { ok: true, value: { variant: 'sale', body: parsed.value, transaction_type: type } } : parsed;
    }
    if (type === 'refund') {
      const parsed = by_key ? RefundApplicationKey.parse(body) : RefundFrontend.parse(body);
      return parsed.ok ? { ok: true, value: { variant: 'refund', body: parsed.value } } : parsed;
    }
    if (type === 'payout') {
      if (!by_key) {
        const parsed = PayoutFrontend.parse(body);
        return parsed.ok ? { ok: true, value: { variant: 'payout', body: parsed.value } } : parsed;
      }
      const parsed = PayoutEncrypted.parse(body);
      if (!parsed.ok) return parsed;
      const card = encryptedCardFields(parsed.value);
      return 'reply' in card
        ? { ok: false, reply: card.reply }
        : { ok: true, value: { variant: 'payout_encrypted', body: parsed.value, card } };
    }
    return { ok: false, reply: fieldError('Invalid field: transaction_type (expected sale, authorize, refund or payout)') };
  },
};

/** Variant D's ciphertexts, each under its *_encrypted name or its plain name (once, or twice the same). */
function encryptedCardFields(body: PayoutEncryptedBody): EncryptedCard | { reply: Reply } {
  const values: Partial<Record<'card_number' | 'card_exp' | 'cvv', string>> = {};
  for (const name of ['card_number', 'card_exp', 'cvv'] as const) {
    const encrypted = body[`${name}_encrypted`] ?? undefined;
    const plain = body[name] ?? undefined;
    if (encrypted !== undefined && plain !== undefined && encrypted !== plain) {
      return {
        reply: fieldError(`Invalid field: ${name} (given twice with different values, as ${name} and ${name}_encrypted; send it once)`),
      };
    }
    values[name] = encrypted ?? plain;
  }
  if (values.card_number === undefined) return { reply: fieldError('Missing required field: card_number_encrypted') };
  if (values.card_exp === undefined) return { reply: fieldError('Missing required field: card_exp_encrypted') };
  return { card_number: values.card_number, card_exp: values.card_exp, cvv: values.cvv ?? null };
}

/**
 * The one answer to an encrypted payout whose card data cannot be read, whatever the cause:
 * bad base64, wrong length, bad padding, wrong key or timestamp, or a plaintext that is not a
 * card number, expiry or CVV. Nothing in it varies, so it reveals nothing (no padding oracle).
 */
export const CARD_DATA_UNREADABLE = reply(
  Status.CARD_DATA_UNREADABLE,
  "Card data unreadable: the encrypted card fields do not decrypt to a card with this merchant's secret and the request timestamp (spec section 5.3)",
);

function cardOf(body: { card_number: string; card_exp: string; cvv?: string | undefined }): CardData {
  // The schema's pattern has already checked MM/YYYY, so parseExpiry cannot fail here.
  return new CardData(body.card_number, parseExpiry(body.card_exp)!, body.cvv ?? null);
}

export { variablesOf };

async function handleSale(
  context: SignedContext,
  body: SaleBody | SaleFrontendBody,
  transaction_type: 'sale' | 'authorize',
): Promise<Reply> {
  const identity = identityOf(context.merchant, context.body);
  if (!identity) return unknownCredentials();
  const outcome = await processSale(context.deps, {
    merchant: context.merchant,
    identity,
    api_version: body.version,
    order_id: body.order_id,
    amount_minor: body.amount,
    currency: body.currency,
    card: cardOf(body),
    customer: customerFrom(context.body),
    pin: body.pin,
    gateway: body.gateway,
    return_url: body.return_url,
    notification_url: body.notification_url,
    request_fingerprint: requestFingerprint(context.deps, context.body),
    variables: variablesOf(context.body),
    initiated_by: 'customer',
    mit_retry: false,
    transaction_type,
  });
  return saleReply(outcome);
}

async function handleRefund(context: SignedContext, body: RefundBody | RefundAppBody): Promise<Reply> {
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
    card: cardOf(body),
    pin: body.pin,
    return_url: body.return_url ?? null,
    notification_url: body.notification_url ?? null,
    request_fingerprint: requestFingerprint(context.deps, context.body),
  });
  return refundReply(outcome);
}

/** Status 0 description of a payout answer; the outcome itself is in transaction_status. */
export function payoutDescription(answer: TransactionAnswer): string {
  return answer.transaction_status === 'requested' ? 'Payout requested: held for operator approval' : PROCESSED;
}

/** The reply to a payout outcome (card or direct); `shape` adjusts the answer fields per endpoint. */
export function payoutReply(outcome: PayoutOutcome, shape: (answer: TransactionAnswer) => TransactionAnswer = (answer) => answer): Reply {
  switch (outcome.kind) {
    case 'processed':
      return processedReply({ answer: shape(outcome.answer), own_commit: outcome.own_commit }, payoutDescription(outcome.answer));
    case 'duplicate_order':
      return DUPLICATE;
    case 'in_progress':
      return IN_PROGRESS;
    case 'no_gateway':
      return gatewayRefusalReply(outcome.refusal);
  }
}

async function handleEncryptedPayout(context: SignedContext, body: PayoutEncryptedBody, encrypted: EncryptedCard): Promise<Reply> {
  const identity = identityOf(context.merchant, context.body);
  if (!identity) return unknownCredentials();
  const card = openEncryptedCard(encrypted, context.secret, body.timestamp);
  if (!card) return CARD_DATA_UNREADABLE;
  // Idempotency compares content, but ciphertexts change with every timestamp (it is the IV):
  // the fingerprint is taken over the decrypted card instead, under the plain names.
  const content: Record<string, unknown> = { ...context.body };
  for (const name of ['card_number', 'card_exp', 'cvv']) {
    delete content[name];
    delete content[`${name}_encrypted`];
  }
  content.card_number = card.pan;
  content.card_exp = formatExpiry(card.expiry);
  if (card.cvv !== null) content.cvv = card.cvv;
  const outcome = await processCardPayout(context.deps, {
    merchant: context.merchant,
    identity,
    api_version: body.version,
    order_id: body.order_id,
    amount_minor: body.amount,
    currency: body.currency,
    card,
    customer: customerFrom(context.body),
    pin: body.pin,
    gateway: body.gateway,
    return_url: body.return_url,
    notification_url: body.notification_url,
    request_fingerprint: requestFingerprint(context.deps, content),
    variables: variablesOf(context.body),
  });
  return payoutReply(outcome);
}

async function handlePlainPayout(context: SignedContext, body: PayoutFrontendBody): Promise<Reply> {
  const identity = identityOf(context.merchant, context.body);
  if (!identity) return unknownCredentials();
  const outcome = await processCardPayout(context.deps, {
    merchant: context.merchant,
    identity,
    api_version: body.version,
    order_id: body.order_id,
    amount_minor: body.amount,
    currency: body.currency,
    card: cardOf(body),
    customer: customerFrom(context.body),
    pin: body.pin,
    gateway: body.gateway,
    return_url: body.return_url,
    notification_url: body.notification_url,
    request_fingerprint: requestFingerprint(context.deps, context.body),
    variables: variablesOf(context.body),
  });
  return payoutReply(outcome);
}

export function processRoute(): SignedRoute<ProcessInput> {
  return {
    kind: 'signed',
    method: 'POST',
    url: '/api/process',
    summary:
      'Card sale or authorization (application_key form 1.2, frontend form 1.1), refund, card payout (encrypted 1.2, plain 1.1), and a sale or refund with payment_method paypal',
    answer_version: '1.2',
    input: processInput,
    response: ProcessAnswer,
    handle: (context, input) => {
      switch (input.variant) {
        case 'sale':
          return handleSale(context, input.body, input.transaction_type);
        case 'refund':
          return handleRefund(context, input.body);
        case 'payout_encrypted':
          return handleEncryptedPayout(context, input.body, input.card);
        case 'payout':
          return handlePlainPayout(context, input.body);
        case 'wallet_sale':
          return handleWalletSale(context, input.body);
        case 'wallet_refund':
          return handleWalletRefund(context, input.body);
      }
    },
  };
}
