// The messages the gateway sends to a merchant's own URLs, as JSON schemas: the status
// notification (spec §6.2, docs/notifications.md §2), the validation request (decisions.md §11),
// the subscription event (docs/subscriptions.md §6) and the merchant's reply to each (spec §6.3).
// /openapi.json publishes them under `webhooks` (http/openapi.ts), so that a client generates the
// types of what it receives from the same document as the types of what it sends (the merchant
// SDK, packages/sdk). The builders (payload.ts, subscription-event.ts,
// operations/validation-request.ts) are held to these by the SDK's tests, which check every real
// message a gateway sends against them with additional properties refused.
import { type TSchema, Type } from '@sinclair/typebox';
import { TRANSACTION_STATUSES, TRANSACTION_TYPES } from '../domain/transaction-state.js';
import { SUBSCRIPTION_TRANSITIONS } from '../domain/subscription-state.js';

const literals = (values: readonly string[], description: string) =>
  Type.Union(
    values.map((value) => Type.Literal(value)),
    { description },
  );

const SUBSCRIPTION_EVENTS = ['subscription.created', ...Object.keys(SUBSCRIPTION_TRANSITIONS)];
const SIGNATURE = Type.String({
  pattern: '^[0-9a-f]{96}$',
  description: "decisions.md §1 body signature, made with the merchant's current secret",
});
const TIMESTAMP = Type.Integer({ description: 'unix seconds; fixed when the message was made, so a resend is byte-identical' });

/** Fields of every transaction notification, whichever identity field it carries. */
const NOTIFICATION_FIELDS = {
  transaction_type: literals(TRANSACTION_TYPES, 'sale, authorize (an authorization, captured later: decisions §16), refund or payout'),
  transaction_status: literals(TRANSACTION_STATUSES, 'the status after the change (docs/statuses.md)'),
  transaction_id: Type.String({ maxLength: 50, description: "the processor's id; may be empty" }),
  trace_id: Type.Integer({ description: "the gateway's transaction id; 0 only in an operator's test notification" }),
  order_id: Type.String({ maxLength: 50, description: "the merchant's order_id (a cashier order's own)" }),
  merchant_id: Type.String({ maxLength: 50 }),
  pin: Type.String({ maxLength: 50 }),
  amount: Type.Integer({ description: 'minor units' }),
  currency: Type.String({ maxLength: 3 }),
  charge_amount: Type.Integer({ description: 'the amount processed, minor units: read this one (spec §6.1 rule 4)' }),
  charge_currency: Type.String({ maxLength: 3 }),
  payment_method: Type.String({ maxLength: 50 }),
  payment_processor: Type.String({ maxLength: 50 }),
  gateway: Type.Optional(Type.String({ maxLength: 32 })),
  is_cascade: Type.Optional(Type.Literal(1, { description: "a retry of the merchant's sale on another gateway" })),
  cascade_level: Type.Optional(Type.Integer({ minimum: 1 })),
  card_number: Type.Optional(Type.String({ maxLength: 19, description: 'masked: 411111******1111' })),
  card_type: Type.Optional(Type.String({ maxLength: 10 })),
  card_exp: Type.Optional(Type.String({ maxLength: 8 })),
  card_token: Type.Optional(
    Type.String({ maxLength: 32, description: 'approved card sales and authorizations, authorized or captured (decisions.md §9, §16)' }),
  ),
  auth_token: Type.Optional(Type.String({ maxLength: 32, description: "the cashier session's auth_token" })),
  error_code: Type.Optional(Type.String({ maxLength: 32 })),
  error_details: Type.Optional(Type.String({ maxLength: 256 })),
  reference_id: Type.Optional(Type.Integer({ description: "a refund's payment (a sale or a captured authorization)" })),
  variable1: Type.Optional(Type.String({ maxLength: 256 })),
  variable2: Type.Optional(Type.String({ maxLength: 256 })),
  variable3: Type.Optional(Type.String({ maxLength: 256 })),
  test: Type.Optional(Type.Literal('1', { description: "present only in an operator's test notification (docs/security.md §5)" })),
  timestamp: TIMESTAMP,
  signature: SIGNATURE,
};

/** spec §6.2 "notification": a transaction started in the frontend form. */
export const NotificationFrontend = Type.Object(
  {
    ...NOTIFICATION_FIELDS,
    frontend: Type.String({ maxLength: 256 }),
    version: Type.Literal('1.1'),
  },
  { additionalProperties: false },
);

/** spec §6.2 "notification webhook": every other transaction. */
export const NotificationApplicationKey = Type.Object(
  {
    ...NOTIFICATION_FIELDS,
    application_key: Type.String({ maxLength: 32 }),
    version: Type.Literal('1.2'),
  },
  { additionalProperties: false },
);

export const TransactionNotification = Type.Union([NotificationApplicationKey, NotificationFrontend], {
  description: 'A transaction status notification (spec §6.2), body-signed; deduplicate on trace_id + transaction_status',
});

const VALIDATION_FIELDS = {
  merchant_id: Type.String({ maxLength: 50 }),
  pin: Type.String({ maxLength: 50 }),
  order_id: Type.String({ maxLength: 50 }),
  transaction_type: literals(['sale', 'payout'], 'sale (a deposit) or payout (a withdrawal)'),
  transaction_status: literals(['pending', 'requested'], 'pending for a deposit, requested for a payout'),
  amount: Type.Integer({ description: 'minor units' }),
  currency: Type.String({ maxLength: 3 }),
  payment_method: Type.String({ maxLength: 50 }),
  auth_token: Type.String({ maxLength: 32 }),
  timestamp: Type.Integer({ description: 'unix seconds, when the request was sent' }),
  signature: SIGNATURE,
};

/** decisions.md §11, before a cashier deposit (init-pay-in, 1.2) or withdrawal (init-pay-out, 1.1) is accepted. */
export const ValidationRequest = Type.Union(
  [
    Type.Object(
      { ...VALIDATION_FIELDS, application_key: Type.String({ maxLength: 32 }), version: Type.Literal('1.2') },
      { additionalProperties: false },
    ),
    Type.Object(
      { ...VALIDATION_FIELDS, frontend: Type.String({ maxLength: 256 }), version: Type.Literal('1.1') },
      { additionalProperties: false },
    ),
  ],
  { description: 'A validation request (decisions.md §11), body-signed: reply status 0 to accept, a positive status to refuse' },
);

/** docs/subscriptions.md §6; authenticated by the Gt-Authentication header, not a body signature. */
export const SubscriptionEventNotification = Type.Object(
  {
    event: literals(SUBSCRIPTION_EVENTS, 'what happened'),
    merchant_id: Type.String({ maxLength: 50 }),
    application_key: Type.String({ maxLength: 32 }),
    subscription_id: Type.String({ maxLength: 32 }),
    plan_id: Type.String({ maxLength: 32 }),
    cid: Type.String({ maxLength: 32 }),
    subscription_status: literals(['active', 'inactive', 'expired', 'canceled'], 'the status after the event'),
    price: Type.Object(
      { price_id: Type.String({ maxLength: 32 }), amount: Type.Integer(), currency: Type.String({ maxLength: 3 }) },
      { additionalProperties: false },
    ),
    cycles_charged: Type.Integer(),
    next_charge_at: Type.Union([Type.Integer(), Type.Null()], { description: 'unix seconds, or null when nothing will be charged' }),
    cycle: Type.Optional(Type.Integer({ description: "renewed, payment_failed, deactivated: the charge's billing cycle" })),
    trace_id: Type.Optional(Type.Integer({ description: "renewed, payment_failed, deactivated: the charge's sale" })),
    error_details: Type.Optional(Type.String({ maxLength: 256 })),
    version: Type.Literal('1.3'),
    timestamp: TIMESTAMP,
  },
  { additionalProperties: false, description: 'A subscription event (docs/subscriptions.md §6)' },
);

/** spec §6.3: the merchant's reply, body-signed (a subscription event's may carry Gt-Authentication instead). */
export const MerchantReply = Type.Object({
  status: Type.Integer({ description: '0 accepted / delivered; positive: refused, not resent; negative: resent' }),
  description: Type.String({ maxLength: 256 }),
  version: Type.String({ maxLength: 16 }),
  timestamp: Type.Integer(),
  signature: Type.Optional(SIGNATURE),
});

export interface MerchantWebhook {
  readonly summary: string;
  readonly body: TSchema;
  /** Headers the gateway sends besides Content-Type. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** What /openapi.json lists under `webhooks`, by a stable name. */
export const MERCHANT_WEBHOOKS: Readonly<Record<string, MerchantWebhook>> = {
  transactionNotification: {
    summary: 'POST notification_url: a transaction changed status (spec §6.2, docs/notifications.md)',
    body: TransactionNotification,
  },
  validationRequest: {
    summary: 'POST validation_url: may this cashier deposit or withdrawal go ahead? (decisions.md §11)',
    body: ValidationRequest,
  },
  subscriptionEvent: {
    summary: "POST a subscription's notification_url: a subscription event (docs/subscriptions.md §6)",
    body: SubscriptionEventNotification,
    headers: {
      'Gt-Authentication':
        'sha384hex(event + merchant_id + application_key + cid + plan_id + subscription_id + subscription_status + timestamp + secret)',
    },
  },
};
