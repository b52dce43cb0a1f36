// What the instance that last started on this database recorded about itself (migration 0021):
// the public URL its webhook URLs are built on and the mode it runs in. The CLI runs elsewhere,
// with its own environment: it reads this so the webhook_url it prints is the one the running
// gateway serves, and so it can say when its mode differs from the gateway's.

export interface InstanceRecord {
  /** PUBLIC_URL, or the address the instance listened on. */
  readonly public_url: string;
  /** True when public_url is the operator's PUBLIC_URL, false when it is the bound address. */
  readonly public_url_configured: boolean;
  /** sandbox or live, as the instance read PAYGATE_ENV. */
  readonly environment: string;
  readonly started_at_ms: number;
}

export interface InstanceStore {
  /** Writes this instance's record over the previous one (the last to start wins). */
  recordInstance(record: InstanceRecord): Promise<void>;
  /** The record of the instance that last started; null before any did (or on a database no gateway of this release started on). */
  lastInstance(): Promise<InstanceRecord | null>;
}
