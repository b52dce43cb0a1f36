// The sandbox's routes: its 3-D Secure and e-wallet pages, the clock control (decisions.md §8),
// the chargeback and reversal of a payment (§16) and the flow triggers (sandbox-triggers.ts).
// main.ts registers them only where the sandbox connector may run, so none of them exist when
// PAYGATE_ENV=live. Finishing a challenge and moving the clock are operations
// (operations/sandbox-challenge.ts, sandbox-clock.ts); the pages are in pages/sandbox/. The
// pages cannot be framed by other sites (see challengeFrameOrigins).
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { requireAdmin } from '../admin-auth.js';
import { isPlainObject, type PlainRoute } from '../route.js';
import type { AdjustableClock } from '../../domain/clock.js';
import { framingHeaders } from '../../domain/frame-origins.js';
import type { OperationDeps } from '../../operations/deps.js';
import {
  type ChallengeAction,
  type ChallengeKind,
  type ChallengeView,
  challengeFrameOrigins,
  completeChallenge,
  findChallenge,
} from '../../operations/sandbox-challenge.js';
import { advanceSandboxClock } from '../../operations/sandbox-clock.js';
import { runSandboxTrigger, type SandboxTrigger } from '../../operations/sandbox-triggers.js';
import { sandboxTriggerRoutes } from './sandbox-triggers.js';
import { notFoundPage } from '../../pages/not-found.js';
import { threeDsPage } from '../../pages/sandbox/three-ds.js';
import { walletPage } from '../../pages/sandbox/wallet.js';

const PAGE_HEADERS = {
  'cache-control': 'no-store',
  // The token is in the URL: never leak it to the merchant's site through Referer.
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

function sendPage(
  response: FastifyReply,
  code: number,
  body: string,
  frame: readonly string[] | null,
  form_targets: string[] = [],
): FastifyReply {
  const form_action = ["'self'", ...form_targets].join(' ');
  const framing = framingHeaders(frame);
  return response
    .code(code)
    .headers({
      ...PAGE_HEADERS,
      ...framing.headers,
      'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; form-action ${form_action}; base-uri 'none'; ${framing.frame_ancestors}`,
    })
    .type('text/html; charset=utf-8')
    .send(body);
}

/** After Approve / Decline / Confirm / Cancel: on to return_url (the merchant's page, or the cashier's result page). */
function sendRedirect(response: FastifyReply, to: string, frame: readonly string[] | null): FastifyReply {
  const framing = framingHeaders(frame);
  return response
    .code(303)
    .headers({ ...PAGE_HEADERS, ...framing.headers, 'content-security-policy': `default-src 'none'; ${framing.frame_ancestors}` })
    .redirect(to, 303);
}

function originOf(url: string | null): string[] {
  if (!url) return [];
  try {
    return [new URL(url).origin];
  } catch {
    return [];
  }
}

/** What tells the sandbox's two challenge pages apart: the 3-D Secure page and the e-wallet page. */
interface ChallengePageSpec {
  readonly kind: ChallengeKind;
  /** The pages' path, without the token. */
  readonly path: string;
  /** The form's two buttons, as their action values. */
  readonly actions: readonly [ChallengeAction, ChallengeAction];
  readonly page: (view: ChallengeView, action_url: string) => string;
  readonly summaries: { readonly get: string; readonly post: string };
}

const CHALLENGE_PAGES: readonly ChallengePageSpec[] = [
  {
    kind: 'card',
    path: '/sandbox/3ds',
    actions: ['approve', 'decline'],
    page: threeDsPage,
    summaries: {
      get: 'Sandbox 3-D Secure page (Approve / Decline)',
      post: 'Sandbox 3-D Secure answer (form field action=approve|decline); redirects to return_url',
    },
  },
  {
    kind: 'wallet',
    path: '/sandbox/wallet',
    actions: ['confirm', 'cancel'],
    page: walletPage,
    summaries: {
      get: 'Sandbox e-wallet page of a direct payout (Confirm / Cancel)',
      post: 'Sandbox e-wallet answer (form field action=confirm|cancel); redirects to return_url',
    },
  },
];

/** A challenge page (GET) and its form's answer (POST): on to return_url, or the page again. */
function challengeRoutes(deps: OperationDeps, spec: ChallengePageSpec): PlainRoute[] {
  const show = async (response: FastifyReply, token: string, code: number): Promise<FastifyReply> => {
    const view = await findChallenge(deps, token, spec.kind);
    if (!view) return sendPage(response, 404, notFoundPage(), null);
    return sendPage(
      response,
      code,
      spec.page(view, `${spec.path}/${token}`),
      await challengeFrameOrigins(deps, view.row),
      originOf(view.row.return_url),
    );
  };
  return [
    {
      kind: 'plain',
      method: 'GET',
      url: `${spec.path}/:token`,
      summary: spec.summaries.get,
      produces: 'text/html',
      async handle(request, response) {
        return show(response, (request.params as { token: string }).token, 200);
      },
    },
    {
      kind: 'plain',
      method: 'POST',
      url: `${spec.path}/:token`,
      summary: spec.summaries.post,
      produces: 'text/html',
      async handle(request, response) {
        const { token } = request.params as { token: string };
        const form = isPlainObject(request.body) ? request.body : {};
        const action = spec.actions.find((known) => known === form.action);
        if (action === undefined) return show(response, token, 400);
        const outcome = await completeChallenge(deps, token, action);
        if (outcome.kind === 'not_found') return sendPage(response, 404, notFoundPage(), null);
        const frame = await challengeFrameOrigins(deps, outcome.row);
        if (outcome.row.return_url) return sendRedirect(response, outcome.row.return_url, frame);
        const view = await findChallenge(deps, token, spec.kind);
        return sendPage(response, 200, view ? spec.page(view, `${spec.path}/${token}`) : notFoundPage(), frame);
      },
    },
  ];
}

export function sandboxRoutes(deps: OperationDeps, clock: AdjustableClock): PlainRoute[] {
  return [
    ...CHALLENGE_PAGES.flatMap((spec) => challengeRoutes(deps, spec)),
    {
      kind: 'plain',
      method: 'POST',
      url: '/sandbox/clock',
      summary: 'Move the sandbox clock forward (Authorization: Bearer PAYGATE_ADMIN_TOKEN)',
      produces: 'application/json',
      body: Type.Object({ advance_seconds: Type.Integer({ minimum: 0, maximum: 10 * 365 * 86_400 }) }),
      response: Type.Object({ now: Type.Integer() }),
      async handle(request, response) {
        if (!requireAdmin(request, response, deps.config.admin_token)) return response;
        const body = request.body;
        const advance = isPlainObject(body) ? body.advance_seconds : undefined;
        if (typeof advance !== 'number' || !Number.isSafeInteger(advance) || advance < 0 || advance > 10 * 365 * 86_400) {
          return response.code(400).send({ status: 10, description: 'Invalid field: advance_seconds (expected 0 to 315360000 seconds)' });
        }
        const { now_ms } = await advanceSandboxClock(deps, clock, advance);
        return response.send({ now: Math.floor(now_ms / 1000) });
      },
    },
    ...(['chargeback', 'reversal'] as const).map((trigger) => triggerRoute(deps, trigger)),
    ...sandboxTriggerRoutes(deps),
  ];
}

const TRIGGER_WORDS: Readonly<Record<SandboxTrigger, string>> = {
  chargeback: 'Chargeback made',
  reversal: 'Refund made at the processor',
};

/** POST /sandbox/transactions/{trace_id}/chargeback and /reversal (decisions §16). */
function triggerRoute(deps: OperationDeps, trigger: SandboxTrigger): PlainRoute {
  return {
    kind: 'plain',
    method: 'POST',
    url: `/sandbox/transactions/:trace_id/${trigger}`,
    summary:
      trigger === 'chargeback'
        ? 'Sandbox: make a chargeback of an approved payment now, notified (Authorization: Bearer PAYGATE_ADMIN_TOKEN)'
        : 'Sandbox: make a refund at the processor outside the gateway (a reversal) now, notified (Authorization: Bearer PAYGATE_ADMIN_TOKEN)',
    produces: 'application/json',
    body: Type.Object({ amount: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })) }),
    response: Type.Object({
      status: Type.Integer(),
      description: Type.String(),
      trace_id: Type.Optional(Type.Integer()),
      transaction_status: Type.Optional(Type.String()),
      refund_trace_id: Type.Optional(Type.Integer()),
    }),
    async handle(request, response) {
      if (!requireAdmin(request, response, deps.config.admin_token)) return response;
      const raw = (request.params as { trace_id?: string }).trace_id ?? '';
      const body = request.body;
      const amount = isPlainObject(body) ? body.amount : undefined;
      if (amount !== undefined && (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 1)) {
        return response
          .code(400)
          .send({ status: 10, description: 'Invalid field: amount (expected a whole number of minor units, at least 1)' });
      }
      if (!/^[0-9]{1,15}$/.test(raw)) return response.code(404).send({ status: 13, description: 'Transaction not found' });
      const outcome = await runSandboxTrigger(deps, trigger, Number(raw), amount ?? null);
      switch (outcome.kind) {
        case 'not_found':
          return response.code(404).send({ status: 13, description: 'Transaction not found' });
        case 'not_approved':
          return response.code(409).send({
            status: 19,
            description: `Transition refused: transaction ${raw} is not an approved payment (transaction_type ${outcome.transaction_type}, status ${outcome.status})`,
          });
        case 'invalid_amount':
          return response.code(400).send({ status: 10, description: `Invalid field: amount (at most ${outcome.max_minor})` });
        case 'done':
          return response.send({
            status: 0,
            description: `${TRIGGER_WORDS[trigger]}: transaction ${raw} is ${outcome.transaction_status}`,
            trace_id: outcome.trace_id,
            transaction_status: outcome.transaction_status,
            ...(outcome.refund_trace_id === null ? {} : { refund_trace_id: outcome.refund_trace_id }),
          });
      }
    },
  };
}
