// Readers of Adyen's answers (Checkout v71, Payout v68) into the few fields the connector uses;
// each returns null for an answer of another shape (then read as an unknown outcome, never guessed).
import type { AdyenPayment } from './status-map.js';

type Obj = Record<string, unknown>;

function obj(value: unknown): Obj | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Obj) : null;
}

function text(value: unknown, max_chars = 500): string | null {
  return typeof value === 'string' && value.length <= max_chars ? value : null;
}

/** A /payments or /payments/details answer (PaymentResponse, PaymentDetailsResponse). */
export function readPayment(json: unknown): AdyenPayment | null {
  const o = obj(json);
  const resultCode = text(o?.resultCode, 40);
  if (!o || resultCode === null) return null;
  const action = obj(o.action);
  const amount = obj(o.amount);
  const redirect = action && action.type === 'redirect' ? text(action.url, 4000) : null;
  return {
    pspReference: text(o.pspReference, 64),
    resultCode,
    refusalReason: text(o.refusalReason, 200),
    refusalReasonCode: text(o.refusalReasonCode, 20),
    redirect_url: redirect !== null && /^https?:\/\//.test(redirect) ? redirect : null,
    amount_minor: typeof amount?.value === 'number' && Number.isSafeInteger(amount.value) ? amount.value : null,
    currency: typeof amount?.currency === 'string' && /^[A-Z]{3}$/.test(amount.currency) ? amount.currency : null,
  };
}

/** A capture, cancel or refund taken (201, status "received"): its own pspReference. */
export function readModification(json: unknown): { readonly psp_reference: string } | null {
  const o = obj(json);
  const psp = text(o?.pspReference, 64);
  return o && psp !== null && o.status === 'received' ? { psp_reference: psp } : null;
}

/** storeDetailAndSubmitThirdParty's answer: the payout's pspReference and resultCode. */
export function readSubmit(
  json: unknown,
): { readonly psp_reference: string; readonly result_code: string; readonly refusal: string | null } | null {
  const o = obj(json);
  const psp = text(o?.pspReference, 64);
  const code = text(o?.resultCode, 100);
  return o && psp !== null && code !== null ? { psp_reference: psp, result_code: code, refusal: text(o.refusalReason, 200) } : null;
}

/** confirmThirdParty's answer (ModifyResponse): its response text. */
export function readModify(json: unknown): { readonly response: string } | null {
  const response = text(obj(json)?.response, 200);
  return response === null ? null : { response };
}

/** A ServiceError's errorCode and message, for error details (never the request's data). */
export function readServiceError(json: unknown): string | null {
  const o = obj(json);
  const code = text(o?.errorCode, 20);
  const message = text(o?.message, 200);
  if (code === null && message === null) return null;
  return [code, message].filter((x) => x !== null).join(' ');
}
