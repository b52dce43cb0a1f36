// What the back office's pages show of each record: only the fields they read, picked from the
// domain's records (domain/*-record.ts), so each field has one definition and a page imports
// domain/ and pages/ only. The few shapes below that are not records (a view an operation
// composes, a connector's form) are declared here, each saying what it is.
import type { AuthorizationActionRow } from '../../domain/authorization-record.js';
import type { Viewer } from '../../domain/backoffice-access.js';
import type { DisputeRow } from '../../domain/dispute-record.js';
import type { MerchantSummary } from '../../domain/merchants.js';
import type { AuditLogRow, BackofficeUserRow } from '../../domain/backoffice-record.js';
import type { ProcessorEventRow } from '../../domain/gateway-record.js';
import type { NotificationAttemptRow, NotificationRow } from '../../domain/notification-record.js';
import type { SubscriptionPlanRow, SubscriptionRow } from '../../domain/subscription-record.js';
import type { StatusChangeRow, TransactionRow } from '../../domain/transaction-record.js';

/** What every page of a signed-in person needs: who they are and the token for its forms (not a record). */
export interface PageParts {
  readonly viewer: Viewer;
  readonly csrf: string;
  /** The ?notice= the page was redirected with (shown only when the page knows it). */
  readonly notice: unknown;
}

export type TransactionShown = Readonly<
  Pick<
    TransactionRow,
    | 'trace_id'
    | 'merchant_id'
    | 'transaction_type'
    | 'status'
    | 'amount_minor'
    | 'currency'
    | 'order_id'
    | 'cashier_order_id'
    | 'pin'
    | 'card_masked'
    | 'card_brand'
    | 'gateway_id'
    | 'payment_method'
    | 'payment_processor'
    | 'psp_transaction_id'
    | 'reference_id'
    | 'refund_reserved_minor'
    | 'error_code'
    | 'error_details'
    | 'description'
    | 'created_at_ms'
    | 'updated_at_ms'
  >
>;

/** An authorization's capture or void (decisions §16), asked or done. */
export type AuthorizationActionShown = Readonly<
  Pick<
    AuthorizationActionRow,
    'action' | 'authorized_minor' | 'amount_minor' | 'state' | 'origin' | 'agent' | 'requested_at_ms' | 'updated_at_ms'
  >
>;

/** A dispute (chargeback) of a payment, as a processor reported it. */
export type DisputeShown = Readonly<
  Pick<
    DisputeRow,
    | 'psp_dispute_id'
    | 'trace_id'
    | 'merchant_id'
    | 'stage'
    | 'amount_minor'
    | 'currency'
    | 'reason'
    | 'evidence_due_at_ms'
    | 'opened_at_ms'
    | 'updated_at_ms'
  >
>;

export type StatusChangeShown = Readonly<Pick<StatusChangeRow, 'from_status' | 'to_status' | 'reason' | 'at_ms'>>;

/** An attempt as the store reads it back: http_status and reply_excerpt may be absent. */
export type AttemptShown = Readonly<
  Pick<NotificationAttemptRow, 'attempt_no' | 'started_at_ms' | 'outcome' | 'reason'> &
    Partial<Pick<NotificationAttemptRow, 'http_status' | 'reply_excerpt'>>
>;

/**
 * A notification as operations/notification-views.ts composes it (not a record as stored): its
 * fields, with the URL without secrets, what it reports and its attempts.
 */
export type NotificationShown = Readonly<Pick<NotificationRow, 'id' | 'state' | 'url' | 'attempts' | 'next_attempt_at_ms'>> & {
  /** A transaction's status, or a subscription event and its status. */
  readonly reports: string;
  readonly attempt_list: readonly AttemptShown[];
};

export type ProcessorEventShown = Readonly<
  Pick<ProcessorEventRow, 'received_at_ms' | 'gateway_id' | 'event_type' | 'event_id' | 'outcome' | 'trace_id'>
>;

export type SubscriptionShown = Readonly<
  Pick<
    SubscriptionRow,
    | 'subscription_id'
    | 'merchant_id'
    | 'cid'
    | 'plan_id'
    | 'amount_minor'
    | 'currency'
    | 'billing_cycle'
    | 'status'
    | 'cycles_charged'
    | 'next_charge_at_ms'
    | 'last_error'
    | 'last_trace_id'
    | 'created_at_ms'
    | 'ended_at_ms'
  >
>;

export type PlanShown = Readonly<
  Pick<
    SubscriptionPlanRow,
    'plan_id' | 'merchant_id' | 'name' | 'billing_cycle' | 'trial_period' | 'trial_period_cycle' | 'status' | 'created_at_ms'
  >
>;

/** A merchant with the counts of its applications, frontends and gateways (the domain's summary). */
export type MerchantLine = MerchantSummary;

/**
 * A gateway as operations/gateways.ts shows it (not the stored record): its currencies as a list,
 * its plain settings opened, its secret ones named only, and its webhook URL.
 */
export interface GatewayShown {
  readonly gateway: string;
  /** The name shown for it everywhere but its own page's ID line. */
  readonly label: string;
  readonly merchant_id: string;
  readonly connector: string;
  readonly currencies: readonly string[];
  readonly enabled: boolean;
  readonly settings: Readonly<Record<string, string>>;
  readonly secret_settings: readonly string[];
  readonly webhook_url: string | null;
  readonly updated_at_ms: number;
}

/** The labels of the gateways a page names, by id (read by the operation that reads the page's records). */
export type GatewayLabels = ReadonlyMap<string, string>;

/** A connector's settings, as a gateway's form asks for them (a connector's definition, not a record). */
export interface GatewayFormShown {
  readonly name: string;
  readonly default_currencies: readonly string[] | null;
  readonly settings: readonly {
    readonly name: string;
    readonly required: boolean;
    readonly secret: boolean;
    readonly default?: string | undefined;
  }[];
}

export type UserLine = Readonly<Pick<BackofficeUserRow, 'user_id' | 'email' | 'role' | 'merchant_id' | 'disabled_at_ms' | 'created_at_ms'>>;

export type AuditLine = Readonly<
  Pick<AuditLogRow, 'id' | 'at_ms' | 'email' | 'role' | 'action' | 'target' | 'merchant_id' | 'outcome' | 'address' | 'detail'>
>;
