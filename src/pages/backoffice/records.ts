// What the back office's pages show of each record: only the fields they read. The store's rows
// and the operations' views fit these by their shape, so the pages need neither (a page imports
// domain/ and pages/ only); once the records live in domain/, these can name them instead.
import type { Viewer } from '../../domain/backoffice-access.js';

/** What every page of a signed-in person needs: who they are and the token for its forms. */
export interface PageParts {
  readonly viewer: Viewer;
  readonly csrf: string;
  /** The ?notice= the page was redirected with (shown only when the page knows it). */
  readonly notice: unknown;
}

export interface TransactionShown {
  readonly trace_id: number;
  readonly merchant_id: string;
  readonly transaction_type: string;
  readonly status: string;
  readonly amount_minor: number;
  readonly currency: string;
  readonly order_id: string;
  readonly cashier_order_id: string | null;
  readonly pin: string | null;
  readonly card_masked: string | null;
  readonly card_brand: string | null;
  readonly gateway_id: string;
  readonly payment_method: string | null;
  readonly payment_processor: string | null;
  readonly psp_transaction_id: string | null;
  readonly reference_id: number | null;
  readonly refund_reserved_minor: number;
  readonly error_code: string | null;
  readonly error_details: string | null;
  readonly description: string | null;
  readonly created_at_ms: number;
  readonly updated_at_ms: number;
}

export interface StatusChangeShown {
  readonly from_status: string;
  readonly to_status: string;
  readonly reason: string;
  readonly at_ms: number;
}

export interface AttemptShown {
  readonly attempt_no: number;
  readonly started_at_ms: number;
  readonly http_status?: number | null | undefined;
  readonly outcome: string;
  readonly reply_excerpt?: string | null | undefined;
  readonly reason: string;
}

export interface NotificationShown {
  readonly id: number;
  readonly reports: string;
  readonly state: string;
  readonly url: string;
  readonly attempts: number;
  readonly next_attempt_at_ms: number;
  readonly attempt_list: readonly AttemptShown[];
}

export interface ProcessorEventShown {
  readonly received_at_ms: number;
  readonly gateway_id: string;
  readonly event_type: string;
  readonly event_id: string;
  readonly outcome: string;
  readonly trace_id: number | null;
}

export interface SubscriptionShown {
  readonly subscription_id: string;
  readonly merchant_id: string;
  readonly cid: string;
  readonly plan_id: string;
  readonly amount_minor: number;
  readonly currency: string;
  readonly billing_cycle: string;
  readonly status: string;
  readonly cycles_charged: number;
  readonly next_charge_at_ms: number | null;
  readonly last_error: string | null;
  readonly last_trace_id: number | null;
  readonly created_at_ms: number;
  readonly ended_at_ms: number | null;
}

export interface PlanShown {
  readonly plan_id: string;
  readonly merchant_id: string;
  readonly name: string;
  readonly billing_cycle: string;
  readonly trial_period: number;
  readonly trial_period_cycle: string | null;
  readonly status: string;
  readonly created_at_ms: number;
}

export interface MerchantLine {
  readonly merchant_id: string;
  readonly created_at_ms: number;
  readonly disabled_at_ms: number | null;
  readonly application_count: number;
  readonly frontend_count: number;
  readonly gateway_count: number;
}

export interface GatewayShown {
  readonly gateway: string;
  readonly merchant_id: string;
  readonly connector: string;
  readonly currencies: readonly string[];
  readonly enabled: boolean;
  readonly settings: Readonly<Record<string, string>>;
  readonly secret_settings: readonly string[];
  readonly webhook_url: string | null;
  readonly updated_at_ms: number;
}

/** A connector's settings, as a gateway's form asks for them. */
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

export interface UserLine {
  readonly user_id: string;
  readonly email: string;
  readonly role: string;
  readonly merchant_id: string | null;
  readonly disabled_at_ms: number | null;
  readonly created_at_ms: number;
}

export interface AuditLine {
  readonly id: number;
  readonly at_ms: number;
  readonly email: string;
  readonly role: string | null;
  readonly action: string;
  readonly target: string | null;
  readonly merchant_id: string | null;
  readonly outcome: string;
  readonly address: string;
  readonly detail: string | null;
}
