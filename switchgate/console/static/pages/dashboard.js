import { api, h, show, panel, money, table, when, badge, fail, isAdmin, statusBadge } from "../js/lib.js";
import { timeChart, fmt } from "../js/charts.js";

const card = (label, value, id, title) => h("div", { class: "card", id },
  h("div", { class: "label" }, label), h("div", { class: "value", title: title || null }, value));

const DAY = 86400000;

function personal(d) {
  const times = d.days.map(x => x.day);
  return [
    h("h2", { class: "section" }, isAdmin ? "Your own usage" : "Your usage"),
    h("div", { class: "cards" },
      card("Balance", money(d.balance_usd), "card-balance"),
      card("Spend, last 30 days", money(d.spend_30d_usd), "card-spend"),
      card("Requests, last 30 days", d.requests_30d.toLocaleString(), "card-requests"),
      card("Errors, last 30 days", d.errors_30d.toLocaleString(), "card-errors")),
    h("div", { class: "grid2" },
      panel("Spend per day", timeChart({ label: "Your spend per day", times, step: DAY, format: fmt.usd,
        series: [{ label: "Spend", values: d.days.map(x => Number(x.spend_usd)), bars: true }] })),
      panel("Requests per day", timeChart({ label: "Your requests per day", times, step: DAY,
        series: [{ label: "Requests", values: d.days.map(x => x.requests), bars: true, color: "#0f9d58" },
                 { label: "Errors", values: d.days.map(x => x.errors), bars: true, color: "#d93025" }] }))),
    panel("Recent errors", table([
      { label: "When", cell: r => when(r.created_at) },
      { label: "Model", cell: r => r.model || "—" },
      { label: "Status", cell: r => statusBadge(r.status) },
      { label: "Error", cell: r => r.error || "—" },
    ], d.recent_errors, "No errors. Nice.")),
  ];
}

function checklist(items) {
  if (items.every(i => i.done)) return null;
  return panel("Getting started", h("ol", { class: "checklist", id: "checklist" }, items.map(i =>
    h("li", { class: i.done ? "done" : "" },
      h("span", { class: "tick", "aria-hidden": "true" }, i.done ? "✓" : "○"),
      h("a", { href: i.href }, i.label), i.done ? h("span", { class: "sr-only" }, " (done)") : null))));
}

const ms = v => fmt.ms(v);
// Site-wide amounts: cents are exact, but a small site's spend would read "$0.00" — below
// $1, up to six decimals (the exact amount is on hover whenever digits are cut).
const spend = v => money(v, Math.abs(Number(v)) < 1 ? 6 : 2);

function perTable(rows, first, emptyText) {
  return table([
    first,
    { label: "Requests", class: "num", cell: r => r.requests.toLocaleString() },
    { label: "Errors", class: "num", cell: r => r.errors.toLocaleString() },
    { label: "Spend", class: "num", cell: r => spend(r.spend_usd) },
    { label: "p50 / p95", class: "num", cell: r => `${ms(r.p50_ms)} / ${ms(r.p95_ms)}` },
    { label: "First token p50 / p95", class: "num", cell: r => `${ms(r.ttft_p50_ms)} / ${ms(r.ttft_p95_ms)}` },
  ], rows, emptyText);
}

// The model and channel pickers list what the period has; a choice stays listed even when
// the new period has none of it (the charts then say so).
function refill(select, allLabel, options, current) {
  const known = options.some(o => o.value === current);
  select.replaceChildren(h("option", { value: "" }, allLabel),
    ...options.map(o => h("option", { value: o.value, selected: o.value === current }, o.label)),
    current && !known ? h("option", { value: current, selected: true }, current) : null);
  select.value = current;
}

let latest = 0;  // pickers changed quickly: only the last answer is shown

async function site() {
  const mine = ++latest;
  const range = document.getElementById("range").value;
  const model = document.getElementById("filter-model").value;
  const channel = document.getElementById("filter-channel").value;
  const query = new URLSearchParams({ range });
  if (model) query.set("model", model);
  if (channel) query.set("channel", channel);
  const s = await api("GET", `/api/admin/stats?${query}`);
  if (mine !== latest) return;
  refill(document.getElementById("filter-model"), "All models",
    s.choices.models.map(m => ({ value: m, label: m })), model);
  refill(document.getElementById("filter-channel"), "All channels",
    s.choices.channels.map(c => ({ value: String(c.channel_id), label: c.name })), channel);
  const slice = [model && `model ${model}`,
    channel && `channel ${(s.choices.channels.find(c => String(c.channel_id) === channel) || { name: channel }).name}`].filter(Boolean);
  document.getElementById("site-title").textContent = slice.length ? `Whole site: ${slice.join(", ")}` : "Whole site";
  const t = s.totals, times = s.series.t, step = s.step_ms;
  const named = obj => Object.entries(obj).map(([label, values]) => ({ label, values }));
  const box = document.getElementById("site");
  box.replaceChildren(
    h("div", { class: "cards" },
      card("Revenue (spend)", spend(t.spend_usd), "site-spend"),
      card("Requests", t.requests.toLocaleString(), "site-requests"),
      card("Errors", t.errors.toLocaleString(), "site-errors", t.stopped ? `${t.stopped} stopped by the user (not errors)` : null),
      card("Latency p50 / p95", `${ms(t.p50_ms)} / ${ms(t.p95_ms)}`, "site-latency"),
      card("First token p50 / p95", `${ms(t.ttft_p50_ms)} / ${ms(t.ttft_p95_ms)}`, "site-ttft")),
    h("p", { class: "muted note", id: "site-scope" }, "Requests of known keys, from the request log. Requests refused before that " +
      "(unknown or revoked keys, gateway rate limits) are only in /metrics. Latency counts successful requests; " +
      "time to first token, successful streams."),
    h("div", { class: "grid2" },
      panel("Requests and errors", timeChart({ label: "Requests and errors over time", times, step, totals: true,
        series: [{ label: "Requests", values: s.series.requests, color: "#4f46e5" },
                 { label: "Errors", values: s.series.errors, color: "#d93025" },
                 { label: "Stopped", values: s.series.stopped, color: "#64748b" }] })),
      panel("Spend", timeChart({ label: "Spend over time", times, step, format: fmt.usd, totals: true,
        series: [{ label: "Spend", values: s.series.spend, bars: true }] })),
      panel("Latency", timeChart({ label: "Latency p50 and p95 over time", times, step, format: fmt.ms,
        series: [{ label: "p50", values: s.series.p50_ms, color: "#0891b2" },
                 { label: "p95", values: s.series.p95_ms, color: "#c026d3" }] })),
      panel("Time to first token", timeChart({ label: "Time to first token p50 and p95 over time", times, step, format: fmt.ms,
        series: [{ label: "p50", values: s.series.ttft_p50_ms, color: "#0f9d58" },
                 { label: "p95", values: s.series.ttft_p95_ms, color: "#b7791f" }] })),
      panel("Spend per model", timeChart({ label: "Spend per model over time", times, step, format: fmt.usd, totals: true, series: named(s.spend_by_model) })),
      panel("Spend per channel", timeChart({ label: "Spend per channel over time", times, step, format: fmt.usd, totals: true, series: named(s.spend_by_channel) }))),
    panel("Per model", perTable(s.models, { label: "Model", cell: r => r.model }, "No requests in this period.")),
    panel("Per channel", perTable(s.channels, { label: "Channel", cell: r => r.name }, "No requests in this period.")),
    panel("Top users by spend", table([
      { label: "User", cell: r => r.email },
      { label: "Requests", class: "num", cell: r => r.requests.toLocaleString() },
      { label: "Errors", class: "num", cell: r => r.errors.toLocaleString() },
      { label: "Tokens in / out", class: "num", cell: r => `${r.input_tokens.toLocaleString()} / ${r.output_tokens.toLocaleString()}` },
      { label: "Spend", class: "num", cell: r => spend(r.spend_usd) },
    ], s.users, "No requests in this period.")),
  );
  const list = checklist(s.checklist);
  document.getElementById("getting-started").replaceChildren(...(list ? [list] : []));
}

async function main() {
  const d = await api("GET", "/api/dashboard");
  if (!isAdmin) { show(...personal(d)); return; }
  const pickers = [
    h("select", { id: "range", "aria-label": "Time range" },
      [["24h", "Last 24 hours"], ["7d", "Last 7 days"], ["30d", "Last 30 days"], ["90d", "Last 90 days"]]
        .map(([v, l]) => h("option", { value: v, selected: v === "7d" }, l))),
    h("select", { id: "filter-model", "aria-label": "Model" }, h("option", { value: "" }, "All models")),
    h("select", { id: "filter-channel", "aria-label": "Channel" }, h("option", { value: "" }, "All channels")),
  ];
  for (const picker of pickers) picker.addEventListener("change", () => site().catch(fail));
  show(
    h("div", { id: "getting-started" }),
    h("div", { class: "section-head" }, h("h2", { class: "section", id: "site-title" }, "Whole site"),
      h("div", { class: "filters" }, pickers)),
    h("div", { id: "site" }, h("p", { class: "muted" }, "Loading…")),
    ...personal(d));
  await site();
}

main().catch(fail);
