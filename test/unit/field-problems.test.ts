// How several field problems are worded in one answer (http/field-problems.ts, docs/errors.md
// "Every problem at once"): the description within its limit, error_details within 256 holding
// the whole list in order, and nothing lost without being counted.
import { describe, expect, it } from 'vitest';
import { ERROR_DETAILS_MAX, fieldProblemsReply, wordProblems } from '../../src/http/field-problems.js';
import type { FieldError } from '../../src/http/fields.js';

const missing = (field: string): FieldError => ({ field, description: `Missing required field: ${field}` });
const invalid = (field: string, rule = 'a valid value'): FieldError => ({
  field,
  description: `Invalid field: ${field} (expected ${rule})`,
});

describe('wording several field problems', () => {
  it('names one problem exactly as before, and a few joined by "; " in the order given', () => {
    expect(wordProblems([missing('dob')])).toEqual({ description: 'Missing required field: dob', error_details: null });
    expect(wordProblems([invalid('amount'), missing('dob'), missing('phone')])).toEqual({
      description: 'Invalid field: amount (expected a valid value); Missing required field: dob; Missing required field: phone',
      error_details: null,
    });
  });

  it('counts what the description cannot hold and lists everything in error_details', () => {
    const problems = [invalid('currency', 'x'.repeat(20)), ...['pin', 'dob', 'email', 'phone', 'city'].map(missing)];
    const { description, error_details } = wordProblems(problems, { description_max: 120 });
    expect(description).toBe(`${problems[0]!.description}; Missing required field: pin; +4 more in error_details`);
    expect(error_details).toBe(problems.map((p) => p.description).join('; '));
  });

  it('tightens error_details when the list is long: missing fields together, then names only, then a count', () => {
    const names = ['pin', 'dob', 'email', 'phone', 'requester_ip', 'address', 'city', 'country', 'first_name', 'last_name', 'zip'];
    const grouped = wordProblems([invalid('currency', 'an ISO 4217 code the gateway knows, such as USD'), ...names.map(missing)]);
    expect(grouped.error_details).toBe(
      `Invalid field: currency (expected an ISO 4217 code the gateway knows, such as USD); Missing required fields: ${names.join(', ')}`,
    );
    const long_rule = 'y'.repeat(200);
    const named = wordProblems([invalid('amount', long_rule), invalid('currency', long_rule), missing('pin'), missing('dob')]);
    expect(named.error_details).toBe('Invalid fields: amount, currency; Missing required fields: pin, dob');
    const many = Array.from({ length: 40 }, (_, i) => missing(`field_number_${i}`));
    const counted = wordProblems(many).error_details!;
    expect(counted.length).toBeLessThanOrEqual(ERROR_DETAILS_MAX);
    const shown = /^Missing required fields: (.*); \+(\d+) more$/.exec(counted)!;
    expect(shown[1]!.split(', ').length + Number(shown[2])).toBe(40);
    expect(shown[1]!.split(', ')[0]).toBe('field_number_0');
  });

  it('keeps to 75 characters without error_details where the answer is the envelope alone', () => {
    const { description, error_details } = wordProblems([missing('order_id'), missing('amount'), missing('return_url')], {
      description_max: 75,
      error_details: false,
    });
    expect(description).toBe('Missing required field: order_id; Missing required field: amount; +1 more');
    expect(error_details).toBeNull();
  });

  it('answers status 10, or the status the route names, with error_details only when needed', () => {
    expect(fieldProblemsReply([missing('dob')])).toEqual({ status: 10, description: 'Missing required field: dob' });
    const overflow = fieldProblemsReply(
      Array.from({ length: 12 }, (_, i) => missing(`name_${i}`)),
      {},
      -1,
    );
    expect(overflow.status).toBe(-1);
    expect(overflow.fields?.error_details).toMatch(/^Missing required fields: name_0, name_1, .*name_11$/);
  });
});
