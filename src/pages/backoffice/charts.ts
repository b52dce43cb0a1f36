// Charts drawn by the server as SVG (docs/backoffice.md): no script, no library, readable by a
// screen reader (role="img" with a summary) and followed by nothing that needs JavaScript. Bars
// only: one series, or two stacked (approved over declined). Scales start at zero.
import { escapeHtml, Html, html } from '../html.js';

const WIDTH = 640;
const HEIGHT = 180;
const PAD_LEFT = 48;
const PAD_BOTTOM = 22;
const PAD_TOP = 8;

export interface Series {
  readonly label: string;
  readonly color: string;
  readonly values: readonly number[];
}

/** A round top for the axis: 1, 2 or 5 times a power of ten, at least the largest value. */
export function niceCeiling(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

/**
 * Bars for each position of `labels`, the series stacked in order. `format` writes an axis value;
 * `summary` is what the chart says in words (its accessible name).
 */
export function barChart(options: {
  readonly title: string;
  readonly summary: string;
  readonly labels: readonly string[];
  readonly series: readonly Series[];
  readonly format: (value: number) => string;
}): Html {
  const { labels, series } = options;
  const totals = labels.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const top = niceCeiling(Math.max(0, ...totals));
  const plot_w = WIDTH - PAD_LEFT - 4;
  const plot_h = HEIGHT - PAD_TOP - PAD_BOTTOM;
  const slot = plot_w / Math.max(1, labels.length);
  const bar_w = Math.max(1, slot * 0.7);
  const y = (value: number) => PAD_TOP + plot_h - (value / top) * plot_h;
  const parts: string[] = [];
  for (const fraction of [0, 0.5, 1]) {
    const value = top * fraction;
    parts.push(`<line x1="${PAD_LEFT}" x2="${WIDTH - 4}" y1="${y(value).toFixed(1)}" y2="${y(value).toFixed(1)}" stroke="#e5e7eb"/>`);
    parts.push(
      `<text x="${PAD_LEFT - 4}" y="${(y(value) + 4).toFixed(1)}" text-anchor="end" font-size="10" fill="#6b7280">${escapeHtml(options.format(value))}</text>`,
    );
  }
  labels.forEach((label, i) => {
    let base = 0;
    const x = PAD_LEFT + i * slot + (slot - bar_w) / 2;
    for (const s of series) {
      const value = s.values[i] ?? 0;
      if (value > 0) {
        parts.push(
          `<rect x="${x.toFixed(1)}" y="${y(base + value).toFixed(1)}" width="${bar_w.toFixed(1)}" height="${(y(base) - y(base + value)).toFixed(1)}" fill="${s.color}"><title>${escapeHtml(`${label}: ${s.label} ${options.format(value)}`)}</title></rect>`,
        );
      }
      base += value;
    }
    // Every fifth label (and the last) keeps a phone-width chart legible.
    if (i % 5 === 0 || i === labels.length - 1) {
      parts.push(
        `<text x="${(x + bar_w / 2).toFixed(1)}" y="${HEIGHT - 6}" text-anchor="middle" font-size="10" fill="#6b7280">${escapeHtml(label)}</text>`,
      );
    }
  });
  const legend =
    series.length > 1
      ? html`<p class="muted">${series.map((s) => html`<span style="color:${new Html(s.color)}">■</span> ${s.label} `)}</p>`
      : html``;
  return html`<figure class="card"><figcaption>${options.title}</figcaption>${new Html(
    `<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" role="img" aria-label="${escapeHtml(options.summary)}">${parts.join('')}</svg>`,
  )}${legend}</figure>`;
}
