// Subscriptions and plans as the back office shows them (docs/backoffice.md): the newest
// subscriptions and the plans not deleted, and one subscription with its status history, its
// event notifications and whether its renewals are held (a disabled merchant's).
import { maySee, type Viewer } from '../domain/backoffice-access.js';
import type { SubscriptionChangeRow, SubscriptionPlanRow, SubscriptionRow } from '../domain/subscription-record.js';
import type { OperationDeps } from './deps.js';
import { type ShownNotification, shownNotifications } from './notification-views.js';

/** Longer ids are none of the gateway's (they are made by it, well under this). */
const SUBSCRIPTION_ID_MAX_CHARS = 128;

/** The newest subscriptions and plans of one merchant or (null) all, `limit` of each. */
export async function subscriptionsAndPlans(
  deps: Pick<OperationDeps, 'store'>,
  merchant_id: string | null,
  limit: number,
): Promise<{ readonly subscriptions: SubscriptionRow[]; readonly plans: SubscriptionPlanRow[] }> {
  const [subscriptions, plans] = await Promise.all([
    deps.store.subscriptions.listAll(merchant_id, limit),
    deps.store.subscriptions.listAllPlans(merchant_id, limit),
  ]);
  return { subscriptions, plans };
}

/** The subscription a path names, if this viewer may see it; else null. */
export async function visibleSubscription(
  deps: Pick<OperationDeps, 'store'>,
  viewer: Viewer,
  subscription_id: string,
): Promise<SubscriptionRow | null> {
  const found = subscription_id.length <= SUBSCRIPTION_ID_MAX_CHARS ? await deps.store.subscriptions.getAny(subscription_id) : null;
  return found === null || !maySee(viewer, found.merchant_id) ? null : found;
}

/** The card a subscription charges, as a confirmation names it (masked, with its brand and customer PIN); null when the vault has it no more. */
export async function subscriptionCard(
  deps: Pick<OperationDeps, 'store'>,
  found: SubscriptionRow,
): Promise<{ readonly card: string; readonly pin: string } | null> {
  const card = await deps.store.cards.get(found.merchant_id, found.card_token);
  return card === null ? null : { card: `${card.card_masked}${card.card_brand ? ` (${card.card_brand})` : ''}`, pin: card.pin };
}

export interface SubscriptionDetail {
  readonly subscription: SubscriptionRow;
  readonly changes: readonly Pick<SubscriptionChangeRow, 'from_status' | 'to_status' | 'event' | 'reason' | 'at_ms'>[];
  readonly notifications: readonly ShownNotification[];
  /** An active subscription of a disabled merchant: its renewals wait, unchanged, for it to be enabled (docs/subscriptions.md §5.6). */
  readonly renewals_held: boolean;
}

/** One subscription with its history and events, if this viewer may see it; else null. */
export async function subscriptionDetail(
  deps: Pick<OperationDeps, 'store' | 'merchants'>,
  viewer: Viewer,
  subscription_id: string,
): Promise<SubscriptionDetail | null> {
  const found = await visibleSubscription(deps, viewer, subscription_id);
  if (found === null) return null;
  const [changes, events] = await Promise.all([
    deps.store.subscriptions.listChanges(found.subscription_id),
    deps.store.notifications.listOfSubscription(found.subscription_id),
  ]);
  const renewals_held = found.status === 'active' && (await deps.merchants.find(found.merchant_id))?.disabled === true;
  return { subscription: found, changes, notifications: await shownNotifications(deps, events), renewals_held };
}
