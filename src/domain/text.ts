// What a text value of the API may hold (docs/limits.md §2): pure rules shared by the field
// schemas, the signed pipelines' early merchant_id check and the edge's guard on path and query
// parameters, so one definition decides everywhere.
//
// - No control characters: C0 (U+0000-U+001F), DEL and C1 (U+0080-U+009F). They have no place
//   in an order id or a name; NUL in particular is refused by PostgreSQL outright and would
//   otherwise turn bad input into an internal error on one store and not the other.
// - No unpaired surrogate: it is not Unicode text. Stored, it would come back rewritten (as
//   U+FFFD), so what the merchant signed and what we keep would differ.
// - Lengths count characters as Unicode code points, which is what PostgreSQL's varchar(n)
//   counts, not UTF-16 units (an emoji is one character, not two).
// - A required text must hold something other than spaces.

/** Any control character a text field refuses (C0, DEL, C1). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** A lone high or low surrogate. */
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export type TextProblem = 'control_character' | 'unpaired_surrogate';

/** Why `value` is not acceptable text anywhere in the API, or null. */
export function textProblem(value: string): TextProblem | null {
  if (CONTROL.test(value)) return 'control_character';
  if (UNPAIRED_SURROGATE.test(value)) return 'unpaired_surrogate';
  return null;
}

/** The words a field error uses for a text problem. */
export function describeTextProblem(problem: TextProblem): string {
  return problem === 'control_character' ? 'control characters are not allowed' : 'not valid Unicode text';
}

/** Length in characters (Unicode code points). A string with unpaired surrogates counts each as one. */
export function characterLength(value: string): number {
  let count = 0;
  for (let i = 0; i < value.length; i += 1) {
    const unit = value.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i += 1;
    }
    count += 1;
  }
  return count;
}

/** True when the text has at least one character that is not white space. */
export function hasContent(value: string): boolean {
  return /\S/.test(value);
}
