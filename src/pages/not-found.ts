// The page a person sees for a payment link that is unknown or no longer valid (a 3-D Secure or
// e-wallet page, the way back from a processor's page): the same words whatever the reason.
import { html, page } from './html.js';

export function notFoundPage(): string {
  return page('Not found', html`<div class="card"><h1>Link not valid</h1><p>This payment link is unknown or no longer valid.</p></div>`);
}
