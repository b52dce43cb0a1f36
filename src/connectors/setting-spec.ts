// What a connector declares of each setting it takes (ConnectorDefinition.settings in
// connector.ts): its name, whether it is required or secret, what it is, the schema a value must
// fit and, in words, the shape of such a value. operations/gateways.ts checks given settings
// against these before anything is written and words its refusals from them.
import type { TSchema } from '@sinclair/typebox';

/** A setting a connector takes (`gateway create --setting KEY=VALUE`). */
export interface SettingSpec {
  readonly name: string;
  readonly required: boolean;
  /** Sealed at rest like every setting, and never shown or logged again. */
  readonly secret: boolean;
  readonly description: string;
  /** Checked when the gateway is created or its settings replaced. */
  readonly schema: TSchema;
  /**
   * What a value that fits the schema looks like, in words ("pc_ followed by 26 lowercase letters
   * or digits"): a refused value is answered "expected <shape>, got …" (operations/gateways.ts),
   * so the operator reads what is wrong, not the setting's description again.
   */
  readonly shape: string;
  readonly default?: string;
}
