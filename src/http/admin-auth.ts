// The operator's bearer token (PAYGATE_ADMIN_TOKEN) for the operator API and the sandbox clock.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Compared in constant time (hashing makes the lengths equal); no token configured means nobody is admitted. */
export function adminAuthorized(request: FastifyRequest, admin_token: string | null): boolean {
  if (admin_token === null) return false;
  const header = request.headers.authorization ?? '';
  const given = header.startsWith('Bearer ') ? header.slice(7) : '';
  return timingSafeEqual(createHash('sha256').update(given).digest(), createHash('sha256').update(admin_token).digest());
}

/** Answers 401 and returns false when the request is not the operator's. */
export function requireAdmin(request: FastifyRequest, response: FastifyReply, admin_token: string | null): boolean {
  if (adminAuthorized(request, admin_token)) return true;
  void response.code(401).header('www-authenticate', 'Bearer').send({ status: 11, description: 'Missing or wrong admin token' });
  return false;
}
