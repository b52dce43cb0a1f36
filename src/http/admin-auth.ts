// The operator's bearer token (PAYGATE_ADMIN_TOKEN) for the operator API and the sandbox clock.
// Only the Authorization header carries it: a token in a URL ends up in proxies' and browsers'
// histories, so a request that puts a credential in its query string is refused outright, even
// with a good header (the token it leaked should be changed).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isCredentialParameter } from '../logging.js';

/** Compared in constant time (hashing makes the lengths equal); no token configured means nobody is admitted. */
export function adminAuthorized(request: FastifyRequest, admin_token: string | null): boolean {
  if (admin_token === null) return false;
  const header = request.headers.authorization ?? '';
  const given = header.startsWith('Bearer ') ? header.slice(7) : '';
  return timingSafeEqual(createHash('sha256').update(given).digest(), createHash('sha256').update(admin_token).digest());
}

/** The first query parameter whose name says it carries a credential (access_token, api_key, …), or null. */
export function credentialInQuery(request: FastifyRequest): string | null {
  const query = request.query;
  if (typeof query !== 'object' || query === null) return null;
  return Object.keys(query).find(isCredentialParameter) ?? null;
}

/** Answers 401 and returns false when the request is not the operator's. */
export function requireAdmin(request: FastifyRequest, response: FastifyReply, admin_token: string | null): boolean {
  const in_query = credentialInQuery(request);
  if (in_query !== null) {
    void response
      .code(401)
      .header('www-authenticate', 'Bearer')
      .send({
        status: 11,
        description: `Credentials are not accepted in the query string (${in_query}): send Authorization: Bearer <token>`,
      });
    return false;
  }
  if (adminAuthorized(request, admin_token)) return true;
  void response.code(401).header('www-authenticate', 'Bearer').send({ status: 11, description: 'Missing or wrong admin token' });
  return false;
}
