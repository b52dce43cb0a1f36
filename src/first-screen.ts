// What `npm start` prints once the gateway listens (issue 28): where a developer goes next, so the
// first screen points somewhere (the store it runs on, the API reference, the back office, the
// first signed sale, the test cards and triggers, the demo merchant and the admin token). Plain lines on stdout, through
// the same announce function as the demo merchant's credentials; tests silence it.
import type { Environment } from './domain/environment.js';

export interface FirstScreen {
  readonly environment: Environment;
  /** The base URL the gateway is reached at (PUBLIC_URL, or the bound address). */
  readonly url: string;
  /** The demo merchant's id when it exists in the sandbox; null otherwise. */
  readonly demo_merchant_id: string | null;
  /** Its credentials were printed just above (first start). */
  readonly demo_created: boolean;
  /** The store it runs on, as config.ts storeName words it (never a password). */
  readonly store: string;
  /** Where the admin token comes from: the operator's variable, the sandbox's own (made now or earlier), or none. */
  readonly admin_token: 'configured' | 'created' | 'stored' | 'none';
}

/** The lines, without trailing newlines. */
export function firstScreenLines(screen: FirstScreen): string[] {
  const row = (label: string, text: string) => `  ${label.padEnd(15)}${text}`;
  const lines = [
    `paygate ${screen.environment} on ${screen.url}. Where to go next:`,
    row('Store', screen.store),
    row('API reference', `${screen.url}/reference (every endpoint; the spec: docs/contract/payment-api.md)`),
    row('Back office', `${screen.url}/backoffice/ (first user: npx paygate user create --role operator …, docs/backoffice.md)`),
  ];
  if (screen.environment === 'sandbox') {
    lines.push(
      row('First sale', 'docs/signing.md: a complete sale, signed with npx paygate sign --now, by one curl line'),
      row('Test cards', 'docs/test-cards.md: the card, CVV and amount of every sandbox outcome'),
      row('Triggers', 'npx paygate trigger --list: a real flow to your notification_url (docs/triggers.md)'),
    );
    if (screen.demo_merchant_id !== null) {
      lines.push(
        row(
          'Demo merchant',
          screen.demo_created
            ? `${screen.demo_merchant_id}: its secret and keys are printed above, once`
            : `${screen.demo_merchant_id} (its secret was shown on first start; npx paygate merchant create makes another)`,
        ),
      );
    }
  } else {
    lines.push(
      row('Signing', 'docs/signing.md (the rules, test vectors, npx paygate sign)'),
      row('Gateways', 'npx paygate gateway create … for each processor account (docs/connectors.md)'),
    );
  }
  const token = {
    configured:
      'PAYGATE_ADMIN_TOKEN (Authorization: Bearer …): the operator API' + (screen.environment === 'sandbox' ? ', clock and triggers' : ''),
    created: 'printed above, once (Authorization: Bearer …): the operator API, the sandbox clock and triggers',
    stored: "the sandbox's own, shown on first start (npx paygate trigger uses it by itself); PAYGATE_ADMIN_TOKEN sets another",
    none: 'none: set PAYGATE_ADMIN_TOKEN (16+ characters) to open the operator API',
  }[screen.admin_token];
  lines.push(row('Admin token', token));
  return lines;
}
