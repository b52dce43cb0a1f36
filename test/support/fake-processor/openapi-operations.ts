// Reading a payment processor's OpenAPI 3.0 description for the tests' validators (checkout/spec.ts,
// stripe/spec.ts): the operations it declares, and which of them a request's method and path
// name. A path matches an operation's template segment by segment, `{name}` standing for one
// segment (taken as a path parameter, percent-decoded); templates with fewer parameters, then
// with more literal segments, are tried first, so that "/v1/payment_intents/search" is not
// "/v1/payment_intents/{intent}". Also the small readings both validators make of a request
// (header names in any case). How each description is loaded and how its schemas are checked
// stay with each processor: their OpenAPI texts are written differently.

export type JsonObject = { [key: string]: unknown };

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** `value` as an object; anything else is an error "<description_name>: <what> is not an object". */
export function descriptionObject(value: unknown, what: string, description_name: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${description_name}: ${what} is not an object`);
  return value as JsonObject;
}

export interface DescribedOperation {
  /** Upper case. */
  readonly method: string;
  /** The path template, e.g. "/payments/{id}/refunds". */
  readonly template: string;
  readonly operation: JsonObject;
}

/** Every operation under `paths`, in the document's order (`description_name` begins error messages). */
export function describedOperations(document: JsonObject, description_name: string): DescribedOperation[] {
  const found: DescribedOperation[] = [];
  for (const [template, item] of Object.entries(descriptionObject(document.paths, 'paths', description_name))) {
    for (const method of HTTP_METHODS) {
      const operation = descriptionObject(item, template, description_name)[method];
      if (operation !== undefined)
        found.push({
          method: method.toUpperCase(),
          template,
          operation: descriptionObject(operation, `${method} ${template}`, description_name),
        });
    }
  }
  return found;
}

export interface OperationEntry extends DescribedOperation {
  /** "METHOD template", e.g. "POST /payments/{id}/refunds". */
  readonly key: string;
}

export interface FoundOperation {
  /** The operation of this method and path, or null. */
  readonly entry: OperationEntry | null;
  /** Its path parameters by name (decoded); {} when none matched. */
  readonly path_params: Record<string, string>;
  /** The templates the path matches, whatever their method (to say which method a path lacks). */
  readonly templates: readonly string[];
}

/** The operation an answer comes from; `label` ("METHOD /path → status") begins the answer's problems. */
export type AnsweredOperation =
  { readonly label: string; readonly entry: OperationEntry } | { readonly label: string; readonly entry: null; readonly problem: string };

export interface OperationTable {
  /** In the order they are tried. */
  readonly entries: readonly OperationEntry[];
  /** The operation a request names; a query string in `raw_path` is ignored. */
  find(method: string, raw_path: string): FoundOperation;
  /** The operation of a request that was answered `status`, or the problem that there is none. */
  findAnswered(method: string, raw_path: string, status: number): AnsweredOperation;
}

interface CompiledEntry extends OperationEntry {
  readonly pattern: RegExp;
  readonly param_names: readonly string[];
  readonly literal_segments: number;
}

export function operationTable(operations: readonly DescribedOperation[]): OperationTable {
  const entries: CompiledEntry[] = operations.map(({ method, template, operation }) => {
    const param_names: string[] = [];
    let literal_segments = 0;
    const source = template
      .split('/')
      .map((segment) => {
        const m = /^\{([^}]+)\}$/.exec(segment);
        if (!m) {
          literal_segments += 1;
          return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        }
        param_names.push(m[1] ?? '');
        return '([^/]+)';
      })
      .join('/');
    return { method, template, operation, key: `${method} ${template}`, pattern: new RegExp(`^${source}$`), param_names, literal_segments };
  });
  entries.sort((a, b) => a.param_names.length - b.param_names.length || b.literal_segments - a.literal_segments);

  function find(method: string, raw_path: string): FoundOperation {
    const path = raw_path.split('?')[0] ?? '';
    const upper = method.toUpperCase();
    const templates: string[] = [];
    for (const entry of entries) {
      const m = entry.pattern.exec(path);
      if (!m) continue;
      templates.push(entry.template);
      if (entry.method !== upper) continue;
      const path_params: Record<string, string> = {};
      entry.param_names.forEach((name, i) => {
        path_params[name] = safeDecode(m[i + 1] ?? '');
      });
      return { entry, path_params, templates };
    }
    return { entry: null, path_params: {}, templates };
  }

  function findAnswered(method: string, raw_path: string, status: number): AnsweredOperation {
    const upper = method.toUpperCase();
    const path = raw_path.split('?')[0] ?? '';
    const label = `${upper} ${path} → ${status}`;
    const { entry } = find(upper, raw_path);
    return entry ? { label, entry } : { label, entry: null, problem: `${label}: no operation of the description matches ${upper} ${path}` };
  }

  return { entries, find, findAnswered };
}

/** The problem of a request `find` found no operation for ("METHOD /path: …"). */
export function unmatchedRequestProblem(label: string, method: string, found: FoundOperation): string {
  return found.templates.length > 0
    ? `${label}: ${method} is not declared for ${found.templates[0]} in the description`
    : `${label}: no path of the description matches`;
}

/** Header names in lower case, a list of values joined by ", " (as HTTP folds them), numbers as text. */
export function lowerCaseHeaders(
  headers: Readonly<Record<string, string | readonly string[] | number | undefined>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

/** A percent-decoded path segment; a segment that is not valid percent-encoding stays as it is. */
export function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The checks every processor's validator makes, on its own shapes of requests and answers. */
export interface MessageValidator<Request, Response> {
  validateRequest(request: Request): string[];
  validateResponse(response: Response): string[];
  /** A webhook event body. */
  validateEvent(body: unknown): string[];
  /**
   * Compiles now, not on first use, every schema a check of these operations ("METHOD template";
   * all when omitted) and of the events may need; returns how many are compiled. A fake calls it
   * at its start: compiling a large description inside a request took longer than the gateway's
   * processor time-out in a loaded suite, and the first sale timed out.
   */
  compileAll?(operation_keys?: readonly string[]): number;
}

export interface ProjectValidator<Request, Response, V extends MessageValidator<Request, Response>> {
  /** The validator, built by the first call (read-only afterwards). */
  readonly get: () => V;
  readonly validateRequest: (request: Request) => string[];
  readonly validateResponse: (response: Response) => string[];
  readonly validateEvent: (body: unknown) => string[];
  /** Builds the validator and compiles the schemas of the operations a fake serves (compileAll), once; the fake's start calls it. */
  readonly warm: (operation_keys?: readonly string[]) => void;
}

/**
 * A processor's validator over the project's copy of its description, built on first use (reading
 * and compiling a description takes a while, and most test files never need it), and the
 * one-call checks over it.
 */
export function projectValidator<Request, Response, V extends MessageValidator<Request, Response>>(
  build: () => V,
): ProjectValidator<Request, Response, V> {
  let built: V | null = null;
  let warmed = false;
  const get = (): V => (built ??= build());
  return {
    get,
    warm: (operation_keys) => {
      if (warmed) return;
      get().compileAll?.(operation_keys);
      warmed = true;
    },
    validateRequest: (request) => get().validateRequest(request),
    validateResponse: (response) => get().validateResponse(response),
    validateEvent: (body) => get().validateEvent(body),
  };
}
