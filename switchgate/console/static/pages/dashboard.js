import { api, h, show, panel, usd, table, when, badge, fail } from "../js/lib.js";

const SVG = "http://www.w3.org/2000/svg";
function s(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  for (const kid of kids) el.append(kid);
  return el;
}

// A bar chart as inline SVG: one bar per day, with hover titles.
function barChart(days, value, label, cls) {
  const W = 720, H = 180, pad = 28, gap = 3;
  const values = days.map(value);
  const max = Math.max(...values, 0) || 1;
  const bw = (W - pad * 2) / days.length - gap;
  const svg = s("svg", { viewBox: `0 0 ${W} ${H + 24}`, role: "img", "aria-label": label });
  svg.append(s("line", { x1: pad, x2: W - pad, y1: H, y2: H, class: "axis" }));
  days.forEach((d, i) => {
    const v = values[i];
    const bh = Math.max(v > 0 ? 2 : 0, (v / max) * (H - 20));
    const x = pad + i * (bw + gap);
    const date = new Date(d.day).toLocaleDateString(undefined, { month: "short", day: "numeric" });
    const bar = s("rect", { x, y: H - bh, width: bw, height: bh, rx: 2, class: cls });
    bar.append(s("title", {}, `${date}: ${label === "Spend" ? usd(d.spend_usd) : v + " requests"}`));
    svg.append(bar);
    if (i % 5 === 0 || i === days.length - 1) {
      svg.append(s("text", { x: x + bw / 2, y: H + 16, "text-anchor": "middle" }, date));
    }
  });
  svg.append(s("text", { x: pad, y: 12 }, label === "Spend" ? usd(String(max)) : `${max}`));
  return h("div", { class: "chart" }, svg);
}

async function main() {
  const d = await api("GET", "/api/dashboard");
  const card = (label, value, id) => h("div", { class: "card", id }, h("div", { class: "label" }, label), h("div", { class: "value" }, value));
  show(
    h("div", { class: "cards" },
      card("Balance", usd(d.balance_usd), "card-balance"),
      card("Spend, last 30 days", usd(d.spend_30d_usd), "card-spend"),
      card("Requests, last 30 days", d.requests_30d.toLocaleString(), "card-requests"),
      card("Errors, last 30 days", d.errors_30d.toLocaleString(), "card-errors")),
    h("div", { class: "grid2" },
      panel("Spend per day", barChart(d.days, x => Number(x.spend_usd), "Spend", "bar")),
      panel("Requests per day", barChart(d.days, x => x.requests, "Requests", "bar bar2"))),
    panel("Recent errors", table([
      { label: "When", cell: r => when(r.created_at) },
      { label: "Model", cell: r => r.model || "—" },
      { label: "Status", cell: r => badge(r.status, "err") },
      { label: "Error", cell: r => r.error || "—" },
    ], d.recent_errors, "No errors. Nice.")),
  );
}

main().catch(fail);
