// GET /healthz's one question: does the store answer? (docs/operations.md). The dialect is
// named either way, so a probe tells which database an instance runs on.
import type { OperationDeps } from './deps.js';

export async function storeHealth(deps: Pick<OperationDeps, 'store'>): Promise<{ readonly ok: boolean; readonly dialect: string }> {
  try {
    await deps.store.ping();
    return { ok: true, dialect: deps.store.dialect };
  } catch {
    return { ok: false, dialect: deps.store.dialect };
  }
}
