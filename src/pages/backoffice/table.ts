// Every table of the back office, built one way so that each fits both screens (issue 30): at a
// desktop's width the columns share the page (long values wrap, short ones at their spaces), and on a
// phone each row turns into a card of "label: value" lines, the label taken from the column's
// header (data-label, shown by the stylesheet in layout.ts). No script: the page is the same HTML
// at both widths, only the stylesheet's media query differs.
import { type Html, html } from '../html.js';

/** A cell's content: text (escaped), a number, markup already built, or nothing. */
export type Cell = string | number | Html | null | undefined;

export interface Column {
  /** The header, and the label each cell carries on a phone. */
  readonly label: string;
  /**
   * A value that may be long and unbroken (an e-mail, an order id, a reason, a path): it wraps
   * anywhere rather than widen the table. Others (times, amounts, statuses) wrap at spaces only.
   */
  readonly wrap?: boolean;
}

export interface Row {
  readonly cells: readonly Cell[];
  /** A class on the row (`refused`: a request the signature check refused). */
  readonly class_name?: string | undefined;
}

/** A column of either kind: a bare string is a short value's column. */
export type ColumnSpec = string | Column;

function columnOf(spec: ColumnSpec): Column {
  return typeof spec === 'string' ? { label: spec } : spec;
}

function isEmpty(cell: Cell): boolean {
  return cell === null || cell === undefined || cell === '' || (typeof cell === 'object' && cell.text === '');
}

/**
 * A table whose rows become cards on a phone. `columns` and each row's cells are in the same order;
 * an empty cell is left out of the phone's card (no label without a value).
 */
export function dataTable(columns: readonly ColumnSpec[], rows: readonly (readonly Cell[] | Row)[], name = ''): Html {
  const shown = columns.map(columnOf);
  const line = (row: readonly Cell[] | Row) => {
    const { cells, class_name } = Array.isArray(row) ? { cells: row as readonly Cell[], class_name: undefined } : (row as Row);
    const tds = shown.map((column, i) => {
      const cell = cells[i];
      const wrap = column.wrap === true ? html` class="wrap"` : '';
      return isEmpty(cell)
        ? html`<td data-label="${column.label}"${wrap}></td>`
        : html`<td data-label="${column.label}"${wrap}><span class="v">${cell}</span></td>`;
    });
    return html`<tr${class_name === undefined ? '' : html` class="${class_name}"`}>${tds}</tr>`;
  };
  return html`<div class="scroll"><table class="rows"${name === '' ? '' : html` aria-label="${name}"`}><thead><tr>${shown.map(
    (c) => html`<th scope="col">${c.label}</th>`,
  )}</tr></thead><tbody>
${rows.map(line)}</tbody></table></div>`;
}
