// The spec's test vectors (decisions.md §1-§3), kept as data in test/vectors/vectors.json.
import fs from 'node:fs';

export interface Vectors {
  readonly body_signature: {
    readonly secret: string;
    readonly message: Record<string, string | number | null>;
    readonly signing_string: string;
    readonly signature: string;
  };
  readonly header_signature: {
    readonly secret: string;
    readonly merchant_id: string;
    readonly application_key: string;
    readonly timestamp: number;
    readonly signature: string;
  };
  readonly card_encryption: {
    readonly secret: string;
    readonly timestamp: number;
    readonly fields: readonly { readonly name: string; readonly plain: string; readonly encrypted: string }[];
  };
}

export const VECTORS_PATH = new URL('../vectors/vectors.json', import.meta.url);

export function loadVectors(): Vectors {
  return JSON.parse(fs.readFileSync(VECTORS_PATH, 'utf8')) as Vectors;
}
