// The sandbox test processor of decisions.md §7. Outcomes are chosen by CVV (and for two
// cases by amount) so a merchant's developer can reach every path on purpose.
import { randomBytes } from 'node:crypto';
import { expiryInFuture, luhnValid } from '../../domain/cards.js';
import type { Clock } from '../../domain/clock.js';
import {
  type CardPayoutRequest, type CardSaleRequest, checkDataFields, type DataFieldSpec, type DirectPayoutCheck, type DirectPayoutRequest,
  type PayoutStatusRequest, type Processor, type ProcessorResult, type RefundRequest, type WalletDepositRequest,
} from '../processor.js';

export interface SandboxTimings {
  readonly challenge_timeout_ms: number;
  readonly async_settle_ms: number;
  readonly issuer_timeout_ms: number;
}

const APPROVED = '0';
const FAILED = '1';

type Fixed = { kind: 'rejected' | 'error'; details: string };

/** CVVs with a fixed synchronous failure. Any CVV not listed here or below is approved. */
export const SANDBOX_CVV_FAILURES: Readonly<Record<string, Fixed>> = {
  '000': { kind: 'rejected', details: 'Do not honor' },
  '801': { kind: 'rejected', details: 'Insufficient funds' },
  '900': { kind: 'rejected', details: 'Lost card' },
  '901': { kind: 'rejected', details: 'Stolen card' },
  '444': { kind: 'error', details: 'Processor error' },
};

/**
 * The sandbox direct payout's data_ fields (decisions.md §7, docs/payouts.md): an account number
 * (required), a bank code, and the method: a bank transfer (default) or the sandbox e-wallet,
 * which sends the customer to a wallet page to confirm.
 */
export const SANDBOX_DIRECT_FIELDS: readonly DataFieldSpec[] = [
  { name: 'data_account_number', required: true, max_length: 34, rule: 'an account number or wallet id of 1 to 34 characters' },
  { name: 'data_bank_code', required: false, max_length: 11, pattern: /^[A-Za-z0-9]{1,11}$/, rule: 'a bank code of up to 11 letters and digits' },
  { name: 'data_method', required: false, max_length: 7, values: ['bank', 'ewallet'], rule: 'bank or ewallet' },
];

/**
 * Merchant-initiated (stored-card, subscription renewal) sales have no CVV; these amounts fail
 * them so a subscription's retries and deactivation can be tested. Any other amount is approved.
 */
export const SANDBOX_MIT_AMOUNT_FAILURES: Readonly<Record<number, Fixed>> = {
  1402: { kind: 'rejected', details: 'Insufficient funds' },
  1444: { kind: 'error', details: 'Processor error' },
};

/** This amount fails a first merchant-initiated try and approves its retry: a renewal that recovers. */
export const SANDBOX_MIT_RECOVERS_ON_RETRY_AMOUNT = 1403;

function pspId(): string {
  return `sbx_${randomBytes(10).toString('hex')}`;
}

function test(text: string): string {
  return `[TEST] ${text}`;
}

export class SandboxProcessor implements Processor {
  readonly name = 'sandbox';

  constructor(private readonly clock: Clock, private readonly public_url: () => string, private readonly timings: SandboxTimings) {}

  private cardProblem(request: { card: CardSaleRequest['card'] }): ProcessorResult | null {
    if (!luhnValid(request.card.pan)) {
      return { kind: 'rejected', psp_transaction_id: null, error_code: FAILED, error_details: test('Invalid card number') };
    }
    if (!expiryInFuture(request.card.expiry, this.clock.now_ms())) {
      return { kind: 'rejected', psp_transaction_id: null, error_code: FAILED, error_details: test('Card expired') };
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
        return { kind: 'rejected', psp_transaction_id: null, error_code: FAILED, error_details: test('CVV required for a customer-initiated sale') };
      }
      if (cvv === '333' || cvv === '300') {
        return {
          kind: 'challenge', psp_transaction_id: pspId(), error_code: APPROVED, error_details: test('3-D Secure authentication required'),
          mode: 'interactive', later: { after_ms: this.timings.challenge_timeout_ms, ...timed_out },
        };
      }
      if (cvv === '588' && request.amount_minor === 713) {
        return {
          kind: 'challenge', psp_transaction_id: pspId(), error_code: APPROVED, error_details: test('3-D Secure authentication required'),
          mode: 'unresponsive', later: { after_ms: this.timings.issuer_timeout_ms, ...timed_out },
        };
      }
      if (cvv === '222' || cvv === '223') {
        const approve = cvv === '222';
        return {
          kind: 'pending', psp_transaction_id: pspId(), error_code: APPROVED, error_details: test('Processing asynchronously'),
          later: {
            after_ms: this.timings.async_settle_ms,
            to: approve ? 'approved' : 'rejected',
            error_code: approve ? APPROVED : FAILED,
            error_details: test(approve ? 'Approved' : 'Declined by the asynchronous processor'),
          },
        };
      }
      const failure = SANDBOX_CVV_FAILURES[cvv];
      if (failure) return { kind: failure.kind, psp_transaction_id: pspId(), error_code: FAILED, error_details: test(failure.details) };
    } else {
      // A stored-card charge has no CVV: its failures are chosen by the amount (docs/subscriptions.md).
      if (request.amount_minor === SANDBOX_MIT_RECOVERS_ON_RETRY_AMOUNT && !request.mit_retry) {
        return { kind: 'rejected', psp_transaction_id: pspId(), error_code: FAILED, error_details: test('Insufficient funds (approved on retry)') };
      }
      const failure = SANDBOX_MIT_AMOUNT_FAILURES[request.amount_minor];
      if (failure) return { kind: failure.kind, psp_transaction_id: pspId(), error_code: FAILED, error_details: test(failure.details) };
    }
    return {
      kind: 'approved', psp_transaction_id: pspId(), charge_amount_minor: request.amount_minor, charge_currency: request.currency,
      error_code: APPROVED, error_details: test('Approved'),
    };
  }

  async refund(request: RefundRequest): Promise<ProcessorResult> {
    return {
      kind: 'approved', psp_transaction_id: pspId(), charge_amount_minor: request.amount_minor, charge_currency: request.currency,
      error_code: APPROVED, error_details: test('Refund approved'),
    };
  }

  private payoutByAmount(amount_minor: number, currency: string): ProcessorResult {
    if (amount_minor === 1400) return { kind: 'rejected', psp_transaction_id: pspId(), error_code: FAILED, error_details: test('Payout rejected') };
    if (amount_minor === 1500) return { kind: 'error', psp_transaction_id: pspId(), error_code: FAILED, error_details: test('Processor error') };
    if (amount_minor === 1313) {
      return {
        kind: 'pending', psp_transaction_id: pspId(), error_code: APPROVED, error_details: test('Payout processing'),
        later: { after_ms: this.timings.async_settle_ms, to: 'approved', error_code: APPROVED, error_details: test('Payout approved') },
      };
    }
    return { kind: 'approved', psp_transaction_id: pspId(), charge_amount_minor: amount_minor, charge_currency: currency, error_code: APPROVED, error_details: test('Payout approved') };
  }

  /** The sandbox keeps no state: it answers as if it had received the payout (the amount decides, decisions.md §7). */
  async payoutStatus(request: PayoutStatusRequest): Promise<ProcessorResult | null> {
    return this.payoutByAmount(request.amount_minor, request.currency);
  }

  async cardPayout(request: CardPayoutRequest): Promise<ProcessorResult> {
    return this.cardProblem(request) ?? this.payoutByAmount(request.amount_minor, request.currency);
  }

  /** The customer confirms or cancels on the sandbox wallet page; nobody answering rejects it after 15 minutes. */
  async walletDeposit(_request: WalletDepositRequest): Promise<ProcessorResult> {
    return {
      kind: 'challenge', psp_transaction_id: pspId(), error_code: APPROVED, error_details: test('Confirm the payment in the sandbox e-wallet'),
      mode: 'interactive',
      later: { after_ms: this.timings.challenge_timeout_ms, to: 'rejected', error_code: FAILED, error_details: test('Transaction timed out') },
    };
  }

  readonly direct_payout_fields = SANDBOX_DIRECT_FIELDS;

  checkDirectPayout(data: Readonly<Record<string, string>>): DirectPayoutCheck {
    const problem = checkDataFields(SANDBOX_DIRECT_FIELDS, data);
    if (problem) return { ok: false, problem };
    return { ok: true, payment_method: data.data_method === 'ewallet' ? 'ewallet' : 'bank' };
  }

  async directPayout(request: DirectPayoutRequest): Promise<ProcessorResult> {
    // The amount decides first (1400 rejected, 1500 error), for the wallet too; otherwise a
    // customer at the merchant's site confirms an e-wallet payout on the sandbox wallet page.
    const by_amount = this.payoutByAmount(request.amount_minor, request.currency);
    if (request.method !== 'ewallet' || !request.customer_present || by_amount.kind === 'rejected' || by_amount.kind === 'error') {
      return by_amount;
    }
    return {
      kind: 'challenge', psp_transaction_id: pspId(), error_code: APPROVED, error_details: test('Confirm the payout in the sandbox e-wallet'),
      mode: 'interactive',
      later: { after_ms: this.timings.challenge_timeout_ms, to: 'rejected', error_code: FAILED, error_details: test('Transaction timed out') },
    };
  }

  challengeUrl(token: string, kind: 'card' | 'wallet'): string {
    return `${this.public_url()}/sandbox/${kind === 'card' ? '3ds' : 'wallet'}/${token}`;
  }
}
