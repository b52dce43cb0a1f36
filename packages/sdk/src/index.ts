// @paygate/sdk: the merchant's client for the paygate gateway (signed calls, verified answers,
// retries within limits) and the handler of what the gateway sends back (notifications,
// validation requests, subscription events). Start at README.md.
export {
  PaygateClient,
  type PaygateClientOptions, type Outcome, type Refused, type FindOrderOutcome, type Complete,
  type SaleInput, type SaleFrontendInput, type RefundInput, type RefundFrontendInput, type PayoutInput, type PayoutFrontendInput,
  type DirectPayoutInput, type TokenizeInput, type InitPayInInput, type InitCheckoutInput, type InitPayOutInput, type InitPayOutOrderInput,
  type PlanCreateInput, type PlanUpdateInput, type PlanListInput, type SubscriptionCreateInput, type SubscriptionListInput,
  type SubscriptionActivateInput,
} from './client.js';
export {
  createWebhookHandler, parseWebhook, WebhookError,
  type WebhookHandler, type WebhookHandlerOptions, type WebhookEvent, type WebhookInput, type WebhookResponse, type Refusal,
  type ValidationVerdict, type FastifyLikeReply, type FastifyLikeRequest,
} from './webhooks.js';
export {
  PaygateError, AnswerSignatureError, ClockSkewError, GatewayUnreachableError, GatewayHttpError, UnexpectedAnswerError, type NetworkFailure,
} from './errors.js';
export type { RetryNotice } from './transport.js';
export {
  signBody, verifyBody, bodySigningString, signHeader, requestAuthentication, answerAuthentication, bodyHeaderSignature,
  subscriptionEventAuthentication, encryptCardField,
} from './signing.js';
export * from './generated/api.js';
