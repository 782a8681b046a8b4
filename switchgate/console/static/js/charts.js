// Time-series charts for the dashboards: uPlot (vendored, MIT) with readable 12 px axes,
// the console's colours, a legend that shows values on hover, and no chart at all (a short
// message instead) when there is nothing to draw.
import uPlot from "../vendor/uplot.esm.min.js";
import { h } from "./lib.js";

const PALETTE = ["#4f46e5", "#0f9d58", "#d93025", "#b7791f", "#0891b2", "#c026d3", "#64748b"];

function css(name, fallback) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

export const fmt = {
  count: v => (v === null || v === undefined ? "—" : Math.round(v).toLocaleString()),
  usd: v => (v === null || v === undefined ? "—" : v >= 100 ? `$${v.toFixed(0)}` : v >= 1 ? `$${v.toFixed(2)}` : `$${v.toPrecision(2)}`),
  ms: v => (v === null || v === undefined ? "—" : v >= 1000 ? `${(v / 1000).toFixed(v >= 10000 ? 0 : 1)} s` : `${Math.round(v)} ms`),
};

// times: epoch ms; series: [{label, values, color?, bars?}]; format: a fmt function.
// step: the bucket width in ms (hour or day), for the x axis labels.
// totals: the series add up (requests, spend): a caption under the chart gives each
// series' total over the period, as text (also what a screen reader gets for the chart)
// with the exact number in a <data value>.
// Room for the widest y-axis label (uPlot calls this with the formatted tick labels).
const axisSize = (u, values) => (values && values.length ? Math.max(...values.map(v => String(v).length)) * 7.5 + 18 : 40);

// A value with no neighbour (one hour between empty ones, as latency is) draws no line
// segment: uPlot draws a dot on these indices instead.
function isolated(u, seriesIdx) {
  const values = u.data[seriesIdx], out = [];
  for (let i = 0; i < values.length; i++)
    if (values[i] != null && values[i - 1] == null && values[i + 1] == null) out.push(i);
  return out.length ? out : null;
}

// A caption's amount: the axis keeps two significant digits, a total keeps six below $1.
const total = (format, v) => (format === fmt.usd && v > 0 && v < 1 ? `$${v.toLocaleString("en-US", { maximumSignificantDigits: 6 })}` : format(v));

function totalsCaption(series, format) {
  const sums = series.map(s => ({ label: s.label, sum: s.values.reduce((a, v) => a + (v || 0), 0) }));
  return h("figcaption", { class: "chart-sum" }, "Totals: ", sums.map((s, i) => [i ? " · " : "",
    h("span", { class: "sum", dataset: { series: s.label } }, `${s.label} `, h("data", { value: String(s.sum) }, total(format, s.sum)))]));
}

export function timeChart({ label, times, series, format = fmt.count, step = 3600000, height = 220, totals = false }) {
  const hasData = series.some(s => s.values.some(v => v !== null && v !== undefined && v !== 0));
  const box = h("figure", { class: "chart", role: "group", "aria-label": label });
  if (!hasData) {
    box.append(h("p", { class: "empty" }, "No requests in this period."));
    return box;
  }
  const muted = css("--muted", "#6b7185"), line = css("--line", "#e3e6ef");
  const font = "12px system-ui, -apple-system, Segoe UI, Roboto, sans-serif";
  const axis = { stroke: muted, font, grid: { stroke: line, width: 1 }, ticks: { stroke: line, width: 1 } };
  const daily = step >= 86400000;
  const opts = {
    width: 600,
    height,
    scales: { x: { time: true } },
    legend: { live: true },
    cursor: { drag: { x: false, y: false } },
    series: [
      { label: "Time", value: (u, v) => (v == null ? "—" : new Date(v * 1000).toLocaleString(undefined, daily ? { month: "short", day: "numeric" } : { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" })) },
      ...series.map((s, i) => ({
        label: s.label,
        stroke: s.color || PALETTE[i % PALETTE.length],
        fill: s.bars ? (s.color || PALETTE[i % PALETTE.length]) + "bb" : undefined,
        width: s.bars ? 0 : 2,
        paths: s.bars ? uPlot.paths.bars({ size: [0.7, 48] }) : undefined,
        points: s.bars ? { show: false } : { show: false, filter: isolated, size: 7, fill: s.color || PALETTE[i % PALETTE.length] },
        spanGaps: false,
        value: (u, v) => format(v),
      })),
    ],
    axes: [
      { ...axis, values: daily ? "{MMM} {D}" : undefined },
      { ...axis, size: axisSize, values: (u, vals) => vals.map(format),
        incrs: format === fmt.count ? [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 1e6, 1e7] : undefined },
    ],
  };
  const data = [times.map(t => t / 1000), ...series.map(s => s.values)];
  const plot = h("div", { class: "plot" });
  box.append(plot);
  const chart = new uPlot(opts, data, plot);
  const fit = () => {
    const w = Math.max(240, Math.floor(plot.clientWidth || box.clientWidth || 600));
    if (Math.abs(chart.width - w) > 2) chart.setSize({ width: w, height });
  };
  new ResizeObserver(fit).observe(box);
  requestAnimationFrame(fit);
  if (totals) box.append(totalsCaption(series, format));
  return box;
}

export function seriesFrom(named, times) {
  return Object.entries(named).map(([label, values]) => ({ label, values: values.slice(0, times.length) }));
}
