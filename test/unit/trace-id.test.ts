// The trace_id source (domain/trace-id.ts) and the draw-again loop (store/sql/fresh-trace-id.ts),
// without a database: every drawn id is a whole number in [10^9, 2·10^9), which fits int(11) and
// stays clear of sequential ids below and the endpoint checker's ids above; draws are spread over
// the range, not in sequence; a taken draw is drawn again, at most TRACE_ID_TRIES times, and a
// source that hands out anything else is a fault.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isDrawableTraceId,
  RANDOM_TRACE_ID_END,
  RANDOM_TRACE_ID_MIN,
  randomTraceIds,
  TRACE_ID_MAX,
  TRACE_ID_TRIES,
} from '../../src/domain/trace-id.js';
import { ID_TAKEN } from '../../src/store/sql/dialect.js';
import { TraceIdsExhausted, withFreshTraceId } from '../../src/store/sql/fresh-trace-id.js';

/** A source handing out `ids` in turn. */
function fixedSource(ids: readonly number[]) {
  let next = 0;
  return { next: () => ids[next++ % ids.length]! };
}

describe('the trace_id source', () => {
  it('draws whole numbers within [10^9, 2·10^9), inside int(11), below the endpoint checker’s range', () => {
    expect(RANDOM_TRACE_ID_END).toBeLessThan(TRACE_ID_MAX);
    expect(TRACE_ID_MAX).toBe(2 ** 31 - 1);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), (draws) => {
        for (let i = 0; i < draws; i += 1) {
          const id = randomTraceIds.next();
          expect(Number.isInteger(id)).toBe(true);
          expect(id).toBeGreaterThanOrEqual(RANDOM_TRACE_ID_MIN);
          expect(id).toBeLessThan(RANDOM_TRACE_ID_END);
          expect(isDrawableTraceId(id)).toBe(true);
        }
      }),
    );
  });

  it('spreads its draws over the whole range, never in sequence', () => {
    const draws = Array.from({ length: 4000 }, () => randomTraceIds.next());
    // Ten equal slices of the range: each holds about 400 draws. The bound is far outside chance
    // (a slice below 250 or above 550 is about 8 standard deviations off), so it cannot flake.
    const slices = new Array<number>(10).fill(0);
    for (const id of draws) slices[Math.floor(((id - RANDOM_TRACE_ID_MIN) * 10) / (RANDOM_TRACE_ID_END - RANDOM_TRACE_ID_MIN))]! += 1;
    for (const count of slices) {
      expect(count).toBeGreaterThan(250);
      expect(count).toBeLessThan(550);
    }
    // Two draws in a row tell nothing of each other: neither the next number nor always above.
    const steps = draws.slice(1).map((id, i) => id - draws[i]!);
    expect(steps.filter((step) => Math.abs(step) <= 1000).length).toBeLessThan(5);
    expect(steps.filter((step) => step > 0).length).toBeGreaterThan(1600);
    expect(steps.filter((step) => step < 0).length).toBeGreaterThan(1600);
  });

  it('refuses what no source may hand out', () => {
    for (const id of [0, 1, 999_999_999, RANDOM_TRACE_ID_END, TRACE_ID_MAX, 1_500_000_000.5, Number.NaN]) {
      expect(isDrawableTraceId(id)).toBe(false);
    }
  });
});

describe('drawing again when a trace_id is taken', () => {
  it('answers the first try whose id was free, each try with the next draw', async () => {
    const tried: number[] = [];
    const answer = await withFreshTraceId(fixedSource([1_000_000_001, 1_000_000_002, 1_000_000_003]), async (trace_id) => {
      tried.push(trace_id);
      return trace_id === 1_000_000_003 ? `row ${trace_id}` : ID_TAKEN;
    });
    expect(answer).toBe('row 1000000003');
    expect(tried).toEqual([1_000_000_001, 1_000_000_002, 1_000_000_003]);
  });

  it('passes on a key taken (null) at once, without drawing again', async () => {
    let tries = 0;
    expect(
      await withFreshTraceId(randomTraceIds, async () => {
        tries += 1;
        return null;
      }),
    ).toBeNull();
    expect(tries).toBe(1);
  });

  it(`gives up after ${TRACE_ID_TRIES} taken draws with a fault that says so`, async () => {
    let tries = 0;
    const attempt = withFreshTraceId(fixedSource([1_234_567_890]), async () => {
      tries += 1;
      return ID_TAKEN;
    });
    await expect(attempt).rejects.toBeInstanceOf(TraceIdsExhausted);
    await expect(attempt).rejects.toThrow(`no free trace_id in ${TRACE_ID_TRIES} draws`);
    expect(tries).toBe(TRACE_ID_TRIES);
  });

  it('refuses a source handing out an id outside the range, before trying it', async () => {
    let tries = 0;
    const attempt = withFreshTraceId(fixedSource([42]), async () => {
      tries += 1;
      return 'row';
    });
    await expect(attempt).rejects.toThrow('the trace_id source gave 42');
    expect(tries).toBe(0);
  });
});
