// POST /api/capture and POST /api/void (decisions §16): the capture (whole or partial) or the void
// of an authorization, in the application_key form (version 1.2) or the frontend form (1.1),
// signed by the body rule. Answered with the authorization's transaction; the work is
// operations/authorization.ts.
import { Type } from '@sinclair/typebox';
import { actOnAuthorization, type AuthorizationActionOutcome, describeAuthorizationRefusal } from '../../operations/authorization.js';
import type { AuthorizationActionKind } from '../../domain/authorization-record.js';
import { fieldError, reply, type Reply, Status } from '../envelope.js';
import { bodySchema, literal } from '../fields.js';
import { identityOf, type SignedContext, type SignedInput, type SignedRoute, unknownCredentials } from '../route.js';
import { ProcessAnswer } from './process.js';
import { processedReply } from './process-replies.js';

const CAPTURE_FIELDS = {
  merchant_id: 'required',
  reference_id: 'required',
  amount: 'optional',
  timestamp: 'required',
  signature: 'required',
} as const;
const VOID_FIELDS = { merchant_id: 'required', reference_id: 'required', timestamp: 'required', signature: 'required' } as const;

const CaptureApplicationKey = bodySchema({ ...CAPTURE_FIELDS, application_key: 'required' }, { version: literal('1.2') });
const CaptureFrontend = bodySchema({ ...CAPTURE_FIELDS, frontend: 'required' }, { version: literal('1.1') });
const VoidApplicationKey = bodySchema({ ...VOID_FIELDS, application_key: 'required' }, { version: literal('1.2') });
const VoidFrontend = bodySchema({ ...VOID_FIELDS, frontend: 'required' }, { version: literal('1.1') });

interface ActionBody {
  readonly reference_id: string;
  readonly amount?: number | undefined;
}

/** The form is chosen by which identity the body carries, as on /api/process. */
function actionInput(by_key: ReturnType<typeof bodySchema>, by_frontend: ReturnType<typeof bodySchema>): SignedInput<ActionBody> {
  return {
    schema: Type.Union([by_key.schema, by_frontend.schema]),
    parse(body) {
      if (typeof body.application_key === 'string') return by_key.parse(body) as ReturnType<SignedInput<ActionBody>['parse']>;
      if (typeof body.frontend === 'string') return by_frontend.parse(body) as ReturnType<SignedInput<ActionBody>['parse']>;
      return { ok: false, reply: fieldError('Missing required field: application_key or frontend') };
    },
  };
}

async function handle(context: SignedContext, action: AuthorizationActionKind, body: ActionBody): Promise<Reply> {
  if (!identityOf(context.merchant, context.body)) return unknownCredentials();
  const outcome = await actOnAuthorization(context.deps, {
    merchant_id: context.merchant.merchant_id,
    trace_id: Number(body.reference_id),
    action,
    amount_minor: body.amount ?? null,
    origin: 'merchant',
    agent: null,
  });
  return replyOf(action, Number(body.reference_id), outcome);
}

function replyOf(action: AuthorizationActionKind, trace_id: number, outcome: AuthorizationActionOutcome): Reply {
  switch (outcome.kind) {
    case 'processed':
      return processedReply(outcome);
    case 'reference_not_found':
      return reply(Status.TRANSACTION_NOT_FOUND, 'Transaction not found');
    case 'in_progress':
      return reply(Status.IN_PROGRESS, `A ${action} of this authorization is still being processed; retry shortly`);
    case 'no_processor':
      return reply(Status.NO_GATEWAY, "Gateway unavailable: the authorization's processor is not available here");
    case 'refused':
      return reply(Status.AUTHORIZATION_REFUSED, describeAuthorizationRefusal(action, outcome, trace_id));
  }
}

export function captureRoute(): SignedRoute<ActionBody> {
  return {
    kind: 'signed',
    method: 'POST',
    url: '/api/capture',
    summary: 'Capture an authorization, whole or in part (the rest is released); answered with the authorization',
    answer_version: '1.2',
    input: actionInput(CaptureApplicationKey, CaptureFrontend),
    response: ProcessAnswer,
    handle: (context, body) => handle(context, 'capture', body),
  };
}

export function voidRoute(): SignedRoute<ActionBody> {
  return {
    kind: 'signed',
    method: 'POST',
    url: '/api/void',
    summary: 'Void an authorization: the held funds are released; answered with the authorization',
    answer_version: '1.2',
    input: actionInput(VoidApplicationKey, VoidFrontend),
    response: ProcessAnswer,
    handle: (context, body) => handle(context, 'void', body),
  };
}
