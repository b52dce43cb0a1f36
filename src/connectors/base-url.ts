// The check every connector with a base_url setting makes when a gateway is created or its
// settings replaced (ConnectorDefinition.check): one rule, kept in one place for every processor.
import type { Environment } from '../domain/environment.js';

/**
 * The check every connector with a base_url makes (ConnectorDefinition.check): card data and
 * credentials travel to it, so in live mode only over TLS, unless the operator allowed private
 * addresses (a processor's test double on this network). An absent base_url is the connector's
 * own default, which is https.
 */
export function baseUrlProblem(
  settings: Readonly<Record<string, string>>,
  context: { readonly environment: Environment; readonly allow_private_urls: boolean },
): { readonly field: string; readonly reason: string } | null {
  const base_url = settings.base_url;
  if (context.environment === 'live' && base_url !== undefined && !base_url.startsWith('https://') && !context.allow_private_urls) {
    return { field: 'base_url', reason: 'must be an https:// address in live mode' };
  }
  return null;
}
