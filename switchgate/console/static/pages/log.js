import { api, h, show, panel, table, badge, statusBadge, money, usd, when, fail, field, download, toMs, isAdmin } from "../js/lib.js";

let cursor = null;
let rows = [];

function query(form) {
  const fd = new FormData(form);
  const q = new URLSearchParams();
  for (const key of ["model", "token_id", "status"]) if (fd.get(key)) q.set(key, fd.get(key));
  if (fd.get("since")) q.set("since", toMs(fd.get("since")));
  if (fd.get("until")) q.set("until", toMs(fd.get("until")));
  if (isAdmin && fd.get("everyone")) q.set("user_id", "all");
  return q;
}

const columns = [
  { label: "Time", cell: r => when(r.created_at) },
  { label: "Model", cell: r => r.model || "—" },
  { label: "Token", cell: r => r.token_name || (r.token_id ? `#${r.token_id}` : "—") },
  { label: "Status", cell: r => statusBadge(r.status) },
  { label: "Tokens in / out", class: "num", cell: r => `${r.input_tokens} / ${r.output_tokens}` },
  { label: "Cost", class: "num cost", cell: r => usd(r.cost_usd, 6) },
  { label: "Latency", class: "num", cell: r => `${r.latency_ms} ms${r.ttft_ms != null ? ` (first ${r.ttft_ms} ms)` : ""}` },
  { label: "Detail", cell: r => h("div", { class: "detail-cell" },
      h("span", { class: "small muted" }, [r.endpoint, r.stream ? "stream" : null, r.error].filter(Boolean).join(" · ")),
      h("button", { type: "button", class: "small", "aria-label": `Details of request ${r.request_id}`, onclick: () => detail(r.request_id).catch(fail) }, "Details")) },
];

const ms = v => (v === null || v === undefined ? "—" : `${v.toLocaleString()} ms`);

async function detail(requestId) {
  const d = await api("GET", `/api/logs/${encodeURIComponent(requestId)}`);
  const row = (label, value) => [h("dt", {}, label), h("dd", {}, value === null || value === undefined || value === "" ? "—" : value)];
  const tokens = [
    ["input", d.input_tokens], ["of which cached", d.cache_read_tokens], ["cache writes", d.cache_write_tokens],
    ["output", d.output_tokens], ["of which reasoning", d.reasoning_tokens],
  ].filter(([, n], i) => i === 0 || i === 3 || n).map(([k, n]) => `${n.toLocaleString()} ${k}`).join(" · ");
  const box = h("dialog", { id: "log-detail", "aria-labelledby": "log-detail-title" },
    h("h2", { id: "log-detail-title" }, "Request details"),
    h("dl", { class: "detail" },
      row("Request id", h("code", {}, d.request_id)),
      row("When", when(d.created_at)),
      row("Model", d.model),
      d.upstream_model && d.upstream_model !== d.model ? row("Upstream model", d.upstream_model) : null,
      row("Endpoint", `${d.endpoint}${d.stream ? " (streamed)" : ""}`),
      row("Dialect", d.dialect),
      d.channel !== undefined ? row("Channel", d.channel ? `${d.channel.name} (#${d.channel.id})` : null) : null,
      d.attempts !== undefined ? row("Attempts", d.attempts) : null,
      row("Status", [statusBadge(d.status), d.error ? h("span", { class: "small" }, " " + d.error) : null]),
      row("Tokens", tokens + (d.usage_estimated ? " (estimated)" : "")),
      row("Cost", money(d.cost_usd, 12)),
      d.cost_breakdown.length ? row("Cost breakdown", h("ul", { class: "plain" },
        d.cost_breakdown.map(p => h("li", {}, `${p.part}: `, money(p.usd, 12))))) : null,
      row("Latency", ms(d.latency_ms)),
      row("Time to first token", ms(d.ttft_ms)),
      row("Token", d.token_name || (d.token_id ? `#${d.token_id}` : null)),
      row("Client IP", d.client_ip)),
    h("div", { class: "actions" }, h("button", { type: "button", class: "primary", onclick: () => box.close() }, "Close")));
  box.addEventListener("close", () => box.remove());
  document.body.append(box);
  box.showModal();
}

async function fetchPage(form, more) {
  const q = query(form);
  if (more && cursor) q.set("cursor", cursor);
  q.set("limit", "50");
  const data = await api("GET", `/api/logs?${q}`);
  rows = more ? rows.concat(data.items) : data.items;
  cursor = data.next_cursor;
  const results = document.getElementById("results");
  results.replaceChildren(...[table(columns, rows, "No requests match."),
    cursor ? h("p", {}, h("button", { type: "button", id: "more", onclick: () => fetchPage(form, true).catch(fail) }, "Load more")) : null].filter(Boolean));
}

async function main() {
  const [models, tokens] = await Promise.all([api("GET", "/api/models"), api("GET", "/api/tokens")]);
  const form = h("form", { class: "toolbar", id: "filters" },
    field("Model", h("select", { name: "model" }, h("option", { value: "" }, "all"),
      models.items.map(m => h("option", { value: m.model }, m.model)))),
    field("Token", h("select", { name: "token_id" }, h("option", { value: "" }, "all"),
      tokens.items.map(t => h("option", { value: t.id }, t.name || t.key_prefix)))),
    field("Status", h("select", { name: "status" }, h("option", { value: "" }, "all"),
      h("option", { value: "ok" }, "success"), h("option", { value: "error" }, "errors"), h("option", { value: "stopped" }, "stopped"))),
    field("From", h("input", { type: "datetime-local", name: "since" })),
    field("To", h("input", { type: "datetime-local", name: "until" })),
    isAdmin ? h("label", {}, "Everyone", h("input", { type: "checkbox", name: "everyone", value: "1" })) : null,
    h("button", { type: "submit", class: "primary" }, "Apply"),
    h("span", { class: "spacer" }),
    h("button", { type: "button", id: "export", onclick: () =>
      download(`/api/logs.csv?${query(form)}`, "switchgate-logs.csv").catch(fail) }, "Export CSV"));
  form.addEventListener("submit", e => { e.preventDefault(); fetchPage(form, false).catch(fail); });
  form.addEventListener("change", () => fetchPage(form, false).catch(fail));
  show(panel(null, form, h("div", { id: "results" })));
  await fetchPage(form, false);
}

main().catch(fail);
