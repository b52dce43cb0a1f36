// The sandbox connector: the test processor of decisions.md §7. Outcomes are chosen by CVV (and
// for two cases by amount) so a merchant's developer can reach every path on purpose. It keeps no
// state of its own and runs in sandbox mode only. It decides outcomes and names its challenge
// pages; the pages themselves are the HTTP layer's (http/routes/sandbox.ts, pages/sandbox/), and
// finishing a challenge is an operation (operations/sandbox-challenge.ts). Its cashier hints are
// beside it in this folder.
import { randomBytes } from 'node:crypto';
import { expiryInFuture, luhnValid } from '../../domain/cards.js';
import type { Clock } from '../../domain/clock.js';
import {
  type AuthorizationActionResult,
  type CaptureRequest,
  type CardPayoutRequest,
  type CardSaleRequest,
  checkDataFields,
  type Connector,
  type ConnectorDefinition,
  type DataFieldSpec,
  type DirectPayoutCheck,
  type DirectPayoutRequest,
  type LookupRequest,
  type LookupResult,
  type ProcessorResult,
  type RefundRequest,
  type VoidRequest,
  type WalletDepositRequest,
  type DeclineKind,
} from '../connector.js';
import { SANDBOX_CASHIER_TEXTS } from './cashier-texts.js';
import type { CashierPayee, PayeeMapping } from '../../domain/payee.js';

export interface SandboxTimings {
  readonly challenge_timeout_ms: number;
  readonly async_settle_ms: number;
  readonly issuer_timeout_ms: number;
}

/** What a sandbox gateway takes (decisions.md §8: at least USD, EUR, GBP, JPY and BHD). */
export const SANDBOX_CURRENCIES = ['USD', 'EUR', 'GBP', 'JPY', 'BHD', 'CAD', 'AUD', 'CHF', 'SEK', 'PLN', 'KWD'] as const;

const APPROVED = '0';
const FAILED = '1';

/** A fixed failure; a decline says whether a cascade may try it elsewhere (soft) or not (hard). */
type Fixed = { kind: 'rejected'; details: string; decline: DeclineKind } | { kind: 'error'; details: string };

/** Approved, then disputed in full by the simulated issuer SANDBOX_CHARGEBACK_AFTER_MS later on the sandbox clock (decisions §16). */
export const SANDBOX_CHARGEBACK_CVV = '259';
export const SANDBOX_CHARGEBACK_AFTER_MS = 60_000;

/** CVVs with a fixed synchronous failure. Any CVV not listed here or below is approved. */
export const SANDBOX_CVV_FAILURES: Readonly<Record<string, Fixed>> = {
  '000': { kind: 'rejected', details: 'Do not honor', decline: 'soft' },
  '801': { kind: 'rejected', details: 'Insufficient funds', decline: 'soft' },
  '900': { kind: 'rejected', details: 'Lost card', decline: 'hard' },
  '901': { kind: 'rejected', details: 'Stolen card', decline: 'hard' },
  '444': { kind: 'error', details: 'Processor error' },
};

/**
 * The sandbox direct payout's data_ fields (decisions.md §7, docs/payouts.md): an account number
 * (required), a bank code, and the method: a bank transfer (default) or the sandbox e-wallet,
 * which sends the customer to a wallet page to confirm.
 */
export const SANDBOX_DIRECT_FIELDS: readonly DataFieldSpec[] = [
  { name: 'data_account_number', required: true, max_length: 34, rule: 'an account number or wallet id of 1 to 34 characters' },
  {
    name: 'data_bank_code',
    required: false,
    max_length: 11,
    pattern: /^[A-Za-z0-9]{1,11}$/,
    rule: 'a bank code of up to 11 letters and digits',
  },
  { name: 'data_method', required: false, max_length: 7, values: ['bank', 'ewallet'], rule: 'bank or ewallet' },
];

/** The sandbox pays its own e-wallet and bank accounts (an IBAN as the account number, the BIC as the bank code). */
const SANDBOX_PAYEE: PayeeMapping = {
  methods: ['bank_account', 'ewallet'],
  data(payee: CashierPayee): Record<string, string> {
    switch (payee.method) {
      case 'ewallet':
        return { data_account_number: payee.wallet_id, data_method: 'ewallet' };
      case 'bank_account':
        return { data_account_number: payee.iban, ...(payee.bic !== null ? { data_bank_code: payee.bic } : {}), data_method: 'bank' };
      case 'paypal':
        return {};
    }
  },
};

/**
 * Merchant-initiated (stored-card, subscription renewal) sales have no CVV; these amounts fail
 * them so a subscription's retries and deactivation can be tested. Any other amount is approved.
 */
export const SANDBOX_MIT_AMOUNT_FAILURES: Readonly<Record<number, Fixed>> = {
  1402: { kind: 'rejected', details: 'Insufficient funds', decline: 'soft' },
  1444: { kind: 'error', details: 'Processor error' },
};

/** This amount fails a first merchant-initiated try and approves its retry: a renewal that recovers. */
export const SANDBOX_MIT_RECOVERS_ON_RETRY_AMOUNT = 1403;

/** A fixed failure as the sandbox answers it: a processor id, error_code 1, its [TEST] words. */
function failed(failure: Fixed): ProcessorResult {
  return failure.kind === 'rejected'
    ? { kind: 'rejected', psp_transaction_id: pspId(), error_code: FAILED, error_details: test(failure.details), decline: failure.decline }
    : { kind: 'error', psp_transaction_id: pspId(), error_code: FAILED, error_details: test(failure.details) };
}

function pspId(): string {
  return `sbx_${randomBytes(10).toString('hex')}`;
}

function test(text: string): string {
  return `[TEST] ${text}`;
}

export class SandboxConnector implements Connector {
  readonly name = 'sandbox';
  readonly details_prefix = '[TEST] ';
  readonly decides_in_process = true;
  readonly cashier_texts = SANDBOX_CASHIER_TEXTS;

  constructor(
    private readonly clock: Clock,
    private readonly public_url: () => string,
    private readonly timings: SandboxTimings,
  ) {}

  private cardProblem(request: { card: CardSaleRequest['card'] }): ProcessorResult | null {
    if (!luhnValid(request.card.pan)) {
      return {
        kind: 'rejected',
        psp_transaction_id: null,
        error_code: FAILED,
        error_details: test('Invalid card number'),
        decline: 'hard',
      };
    }
    if (!expiryInFuture(request.card.expiry, this.clock.now_ms())) {
      return { kind: 'rejected', psp_transaction_id: null, error_code: FAILED, error_details: test('Card expired'), decline: 'hard' };
    }
    return null;
  }

  async sale(request: CardSaleRequest): Promise<ProcessorResult> {
    const problem = this.cardProblem(request);
    if (problem) return problem;
    const cvv = request.card.cvv ?? '';
    const timed_out = { to: 'rejected', error_code: FAILED, error_details: test('Transaction timed out') } as const;
    if (request.initiated_by === 'customer') {
      if (request.card.cvv === null) {
        return {
          kind: 'rejected',
          psp_transaction_id: null,
          error_code: FAILED,
          error_details: test('CVV required for a customer-initiated sale'),
          decline: 'hard',
        };
      }
      if (cvv === '333' || cvv === '300') {
        return {
          kind: 'challenge',
          psp_transaction_id: pspId(),
          error_code: APPROVED,
          error_details: test('3-D Secure authentication required'),
          mode: 'interactive',
          later: { after_ms: this.timings.challenge_timeout_ms, ...timed_out },
        };
      }
      if (cvv === '588' && request.amount_minor === 713) {
        return {
          kind: 'challenge',
          psp_transaction_id: pspId(),
          error_code: APPROVED,
          error_details: test('3-D Secure authentication required'),
          mode: 'unresponsive',
          later: { after_ms: this.timings.issuer_timeout_ms, ...timed_out },
        };
      }
      if (cvv === '222' || cvv === '223') {
        const approve = cvv === '222';
        return {
          kind: 'pending',
          psp_transaction_id: pspId(),
          error_code: APPROVED,
          error_details: test('Processing asynchronously'),
          later: {
            after_ms: this.timings.async_settle_ms,
            to: approve ? 'approved' : 'rejected',
            error_code: approve ? APPROVED : FAILED,
            error_details: test(approve ? 'Approved' : 'Declined by the asynchronous processor'),
          },
        };
      }
      const failure = SANDBOX_CVV_FAILURES[cvv];
      if (failure) return failed(failure);
      if (cvv === SANDBOX_CHARGEBACK_CVV) {
        return { ...this.approved(request), chargeback_after_ms: SANDBOX_CHARGEBACK_AFTER_MS };
      }
    } else {
      // A stored-card charge has no CVV: its failures are chosen by the amount (docs/subscriptions.md).
      if (request.amount_minor === SANDBOX_MIT_RECOVERS_ON_RETRY_AMOUNT && !request.mit_retry) {
        return {
          kind: 'rejected',
          psp_transaction_id: pspId(),
          error_code: FAILED,
          error_details: test('Insufficient funds (approved on retry)'),
        };
      }
      const failure = SANDBOX_MIT_AMOUNT_FAILURES[request.amount_minor];
      if (failure) return failed(failure);
    }
    return this.approved(request);
  }

  private approved(request: CardSaleRequest): Extract<ProcessorResult, { kind: 'approved' }> {
    return {
      kind: 'approved',
      psp_transaction_id: pspId(),
      charge_amount_minor: request.amount_minor,
      charge_currency: request.currency,
      error_code: APPROVED,
      error_details: test(request.capture ? 'Approved' : 'Authorized'),
    };
  }

  /** An authorization's capture and void are answered at once (decisions §16): the sandbox holds no funds. */
  readonly authorizations = {
    capture: async (request: CaptureRequest): Promise<AuthorizationActionResult> => ({
      kind: 'done',
      psp_action_id: `${request.psp_transaction_id}-capture`,
    }),
    void: async (request: VoidRequest): Promise<AuthorizationActionResult> => ({
      kind: 'done',
      psp_action_id: `${request.psp_transaction_id}-void`,
    }),
  };

  async refund(request: RefundRequest): Promise<ProcessorResult> {
    return {
      kind: 'approved',
      psp_transaction_id: pspId(),
      charge_amount_minor: request.amount_minor,
      charge_currency: request.currency,
      error_code: APPROVED,
      error_details: test('Refund approved'),
    };
  }

  private payoutByAmount(amount_minor: number, currency: string): ProcessorResult {
    if (amount_minor === 1400)
      return { kind: 'rejected', psp_transaction_id: pspId(), error_code: FAILED, error_details: test('Payout rejected') };
    if (amount_minor === 1500)
      return { kind: 'error', psp_transaction_id: pspId(), error_code: FAILED, error_details: test('Processor error') };
    if (amount_minor === 1313) {
      return {
        kind: 'pending',
        psp_transaction_id: pspId(),
        error_code: APPROVED,
        error_details: test('Payout processing'),
        later: { after_ms: this.timings.async_settle_ms, to: 'approved', error_code: APPROVED, error_details: test('Payout approved') },
      };
    }
    return {
      kind: 'approved',
      psp_transaction_id: pspId(),
      charge_amount_minor: amount_minor,
      charge_currency: currency,
      error_code: APPROVED,
      error_details: test('Payout approved'),
    };
  }

  /**
   * The sandbox keeps no state. A payout is answered as if it had received it (the amount decides,
   * decisions.md §7), so an interrupted payout can be settled; a sale or refund it was asked for
   * died with the process that was asking (the sandbox runs inside it), so it has none.
   */
  async lookup(request: LookupRequest): Promise<LookupResult> {
    // An authorization the gateway recorded is held, neither captured nor voided: a capture or
    // void whose process died was never made (the sandbox runs inside that process).
    if (request.transaction_type === 'authorize' && request.psp_transaction_id !== null) {
      return {
        kind: 'found',
        result: {
          kind: 'approved',
          psp_transaction_id: request.psp_transaction_id,
          charge_amount_minor: request.amount_minor,
          charge_currency: request.currency,
          error_code: APPROVED,
          error_details: test('Authorized'),
        },
        payment: { hold: 'open', captured_minor: null, refunds: null },
      };
    }
    if (request.transaction_type !== 'payout') return { kind: 'not_found' };
    return { kind: 'found', result: this.payoutByAmount(request.amount_minor, request.currency) };
  }

  async cardPayout(request: CardPayoutRequest): Promise<ProcessorResult> {
    return this.cardProblem(request) ?? this.payoutByAmount(request.amount_minor, request.currency);
  }

  /** The customer confirms or cancels on the sandbox wallet page; nobody answering rejects it after 15 minutes. */
  async walletDeposit(_request: WalletDepositRequest): Promise<ProcessorResult> {
    return {
      kind: 'challenge',
      psp_transaction_id: pspId(),
      error_code: APPROVED,
      error_details: test('Confirm the payment in the sandbox e-wallet'),
      mode: 'interactive',
      later: {
        after_ms: this.timings.challenge_timeout_ms,
        to: 'rejected',
        error_code: FAILED,
        error_details: test('Transaction timed out'),
      },
    };
  }

  readonly direct = {
    fields: SANDBOX_DIRECT_FIELDS,
    check: (data: Readonly<Record<string, string>>): DirectPayoutCheck => {
      const problem = checkDataFields(SANDBOX_DIRECT_FIELDS, data);
      if (problem) return { ok: false, problem };
      return { ok: true, payment_method: data.data_method === 'ewallet' ? 'ewallet' : 'bank' };
    },
    payout: (request: DirectPayoutRequest) => this.directPayout(request),
    payee: SANDBOX_PAYEE,
  };

  private async directPayout(request: DirectPayoutRequest): Promise<ProcessorResult> {
    // The amount decides first (1400 rejected, 1500 error), for the wallet too; otherwise a
    // customer at the merchant's site confirms an e-wallet payout on the sandbox wallet page.
    const by_amount = this.payoutByAmount(request.amount_minor, request.currency);
    if (request.method !== 'ewallet' || !request.customer_present || by_amount.kind === 'rejected' || by_amount.kind === 'error') {
      return by_amount;
    }
    return {
      kind: 'challenge',
      psp_transaction_id: pspId(),
      error_code: APPROVED,
      error_details: test('Confirm the payout in the sandbox e-wallet'),
      mode: 'interactive',
      later: {
        after_ms: this.timings.challenge_timeout_ms,
        to: 'rejected',
        error_code: FAILED,
        error_details: test('Transaction timed out'),
      },
    };
  }

  challengeUrl(token: string, kind: 'card' | 'wallet'): string {
    return `${this.public_url()}/sandbox/${kind === 'card' ? '3ds' : 'wallet'}/${token}`;
  }
}

/**
 * The sandbox as a connector: no settings, every capability, sandbox mode only. A new sandbox
 * gateway takes the currencies of SANDBOX_CURRENCIES (decisions.md §8).
 */
export const sandboxDefinition: ConnectorDefinition = {
  name: 'sandbox',
  environments: ['sandbox'],
  capabilities: {
    card_sale: true,
    refund: true,
    card_payout: true,
    direct_payout: true,
    wallet_deposit: true,
    merchant_initiated: true,
    authorize_capture: true,
    disputes: true,
    three_d_secure: true,
    webhooks: false,
  },
  settings: [],
  default_currencies: SANDBOX_CURRENCIES,
  create: (_settings, context) =>
    new SandboxConnector(context.clock, context.public_url, {
      challenge_timeout_ms: context.options.challenge_timeout_ms,
      async_settle_ms: context.options.sandbox_async_settle_ms,
      issuer_timeout_ms: context.options.sandbox_issuer_timeout_ms,
    }),
};
