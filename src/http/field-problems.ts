// Every problem of a request's fields in one answer (docs/errors.md, "Every problem at once"):
// the route's schema finds them in its own order (fields.ts); this words the answer. The
// description names as many as fit its limit, each exactly as it would be named alone (so the
// first is what a one-problem answer says), joined by "; "; when they do not all fit it ends with
// how many more there are, and error_details (varchar(256), spec §2.2) holds the whole list
// (worded more tightly when it must be: wholeList).
// Routes whose failures the spec keeps to the envelope (init-* and find-order, spec §2.3, §4.7)
// get the description alone.
import { DESCRIPTION_MAX } from '../domain/signature-help.js';
import { type Reply, reply, Status } from './envelope.js';
import type { FieldError } from './fields.js';

/** Between two problems, in the description and in error_details. */
export const PROBLEM_SEPARATOR = '; ';

/** error_details' limit (spec §2.2: varchar(256)). */
export const ERROR_DETAILS_MAX = 256;

export interface ProblemsWording {
  readonly description: string;
  /** The whole list, when the description could not hold it and the route's answer has error_details. */
  readonly error_details: string | null;
}

export interface ProblemsLimits {
  /** The description's limit: 256, or 75 on init-* and find-order. */
  readonly description_max?: number;
  /** False where the answer carries only the envelope (init-* and find-order). */
  readonly error_details?: boolean;
}

function more(count: number, in_details: boolean): string {
  return `${PROBLEM_SEPARATOR}+${count} more${in_details ? ' in error_details' : ''}`;
}

/**
 * The longest run of `texts` from the first that fits `max` with the count of the others after
 * it (at least the first, which fits alone: a field problem's wording is short by construction).
 */
function fittingRun(texts: readonly string[], max: number, in_details: boolean): string {
  const run = (count: number) => {
    const shown = texts.slice(0, count).join(PROBLEM_SEPARATOR);
    return count < texts.length ? shown + more(texts.length - count, in_details) : shown;
  };
  let count = 1;
  while (count < texts.length && run(count + 1).length <= max) count++;
  // The first alone when even the count of the others does not fit beside it.
  return run(count).length <= max ? run(count) : (texts[0] ?? '');
}

const MISSING = 'Missing required field: ';

/** Neighbouring problems of one kind, named together: `Missing required fields: a, b`, `Invalid fields: c, d`. */
interface Run {
  readonly missing: boolean;
  readonly names: string[];
  /** Each problem's own wording, kept while the run is worded in full. */
  readonly texts: string[];
}

function runsOf(problems: readonly FieldError[]): Run[] {
  const runs: Run[] = [];
  for (const problem of problems) {
    const missing = problem.description.startsWith(MISSING);
    const last = runs.at(-1);
    if (last !== undefined && last.missing === missing) {
      last.names.push(problem.field);
      last.texts.push(problem.description);
    } else runs.push({ missing, names: [problem.field], texts: [problem.description] });
  }
  return runs;
}

function namedRun(run: Run): string {
  const plural = run.names.length > 1;
  return `${run.missing ? `Missing required field${plural ? 's' : ''}` : `Invalid field${plural ? 's' : ''}`}: ${run.names.join(', ')}`;
}

/**
 * The whole list, in order, within ERROR_DETAILS_MAX, in the first of these wordings that fits:
 * every problem as alone; missing fields named together and invalid ones with their reasons;
 * neighbours of one kind named together without reasons; as many of those names as fit and the
 * count of the others.
 */
function wholeList(problems: readonly FieldError[]): string {
  const full = problems.map((problem) => problem.description).join(PROBLEM_SEPARATOR);
  if (full.length <= ERROR_DETAILS_MAX) return full;
  const runs = runsOf(problems);
  const with_reasons = runs.map((run) => (run.missing ? namedRun(run) : run.texts.join(PROBLEM_SEPARATOR))).join(PROBLEM_SEPARATOR);
  if (with_reasons.length <= ERROR_DETAILS_MAX) return with_reasons;
  let left = 0;
  for (;;) {
    const named = runs
      .filter((run) => run.names.length > 0)
      .map(namedRun)
      .join(PROBLEM_SEPARATOR);
    const text = left === 0 ? named : named + more(left, false);
    if (text.length <= ERROR_DETAILS_MAX) return text;
    // Drop the last name; a field name is short, so this ends long before the first one.
    const last = runs.filter((run) => run.names.length > 0).at(-1)!;
    last.names.pop();
    left++;
  }
}

/** The description and error_details naming these problems (at least one), in their order. */
export function wordProblems(problems: readonly FieldError[], limits: ProblemsLimits = {}): ProblemsWording {
  const max = limits.description_max ?? DESCRIPTION_MAX;
  const texts = problems.map((problem) => problem.description);
  const joined = texts.join(PROBLEM_SEPARATOR);
  if (joined.length <= max) return { description: joined, error_details: null };
  const in_details = limits.error_details !== false;
  return { description: fittingRun(texts, max, in_details), error_details: in_details ? wholeList(problems) : null };
}

/** The status-10 answer naming these problems (at least one); `status` where a route answers field problems otherwise (v1.3 plan update: -1). */
export function fieldProblemsReply(
  problems: readonly FieldError[],
  limits: ProblemsLimits = {},
  status: number = Status.INVALID_FIELD,
): Reply {
  const { description, error_details } = wordProblems(problems, limits);
  return error_details === null ? reply(status, description) : reply(status, description, { error_details });
}
