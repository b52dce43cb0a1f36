// The back office's first page (docs/backoffice.md): today's and the last 30 days' approved
// volume per currency, the approval rate, refunds, payouts waiting for a decision and
// notifications not yet acknowledged, with two charts drawn by the server. The figures come
// from domain/overview.ts (through operations/overview-figures.ts).
import { DAY_MS, type CurrencyFigure, type Overview, OVERVIEW_DAYS } from '../../domain/overview.js';
import { majorUnits, money } from './format.js';
import { barChart } from './charts.js';
import { type Html, html } from '../html.js';

function moneyList(figures: readonly CurrencyFigure[]): string {
  if (figures.length === 0) return '0';
  return figures.map((f) => money(f.amount_minor, f.currency)).join(' · ');
}

function percent(rate: number | null): string {
  return rate === null ? '—' : `${(rate * 100).toFixed(1)} %`;
}

function tile(label: string, value: string, href: string | null = null): Html {
  return html`<div class="tile"><div class="label">${label}</div><div class="value">${href === null ? value : html`<a href="${href}">${value}</a>`}</div></div>`;
}

export function overviewBody(figures: {
  readonly overview: Overview;
  readonly payouts_waiting: number;
  readonly unacknowledged: number;
}): Html {
  const { overview, payouts_waiting, unacknowledged } = figures;
  const labels = overview.days.map((day) => new Date(day * DAY_MS).toISOString().slice(5, 10));
  const main = overview.period_volume[0]?.currency ?? null;
  const volume_chart =
    main === null
      ? html`<p class="card muted">No approved sale in the last ${OVERVIEW_DAYS} days.</p>`
      : barChart({
          title: `Approved sales per day, ${main} (last ${OVERVIEW_DAYS} days)`,
          summary: `Approved sales in ${main} over the last ${OVERVIEW_DAYS} days: ${money(overview.period_volume[0]!.amount_minor, main)} in all`,
          labels,
          series: [{ label: main, color: '#2563eb', values: overview.volume_by_day[main]! }],
          format: (value) => majorUnits(Math.round(value), main),
        });
  const outcomes_chart = barChart({
    title: `Sales approved and refused per day (last ${OVERVIEW_DAYS} days)`,
    summary: `Approval rate over the last ${OVERVIEW_DAYS} days: ${percent(overview.approval_rate)}`,
    labels,
    series: [
      { label: 'approved', color: '#16a34a', values: overview.approved_by_day },
      { label: 'declined or rejected', color: '#dc2626', values: overview.declined_by_day },
    ],
    format: (value) => (Number.isInteger(value) ? String(value) : value.toFixed(1)),
  });
  return html`<h1>Overview</h1>
<div class="tiles">
${tile('Approved today', moneyList(overview.today_volume))}
${tile(`Approved, last ${OVERVIEW_DAYS} days`, moneyList(overview.period_volume))}
${tile('Approval rate today', percent(overview.today_approval_rate))}
${tile(`Approval rate, ${OVERVIEW_DAYS} days`, percent(overview.approval_rate))}
${tile(`Refunds, ${OVERVIEW_DAYS} days`, moneyList(overview.period_refunds))}
${tile('Payouts waiting for a decision', String(payouts_waiting), '/backoffice/payouts')}
${tile('Notifications not acknowledged', String(unacknowledged))}
</div>${volume_chart}${outcomes_chart}
<p class="muted">Days are UTC days. Volume counts approved sales; the approval rate counts sales that were approved, declined or rejected.</p>`;
}
