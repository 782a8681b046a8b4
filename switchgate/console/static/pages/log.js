import { api, h, show, panel, table, badge, usd, when, fail, field, download, toMs, isAdmin } from "../js/lib.js";

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
  { label: "Status", cell: r => badge(r.status, r.status < 400 ? "ok" : "err") },
  { label: "Tokens in / out", class: "num", cell: r => `${r.input_tokens} / ${r.output_tokens}` },
  { label: "Cost", class: "num cost", cell: r => usd(r.cost_usd, 6) },
  { label: "Latency", class: "num", cell: r => `${r.latency_ms} ms${r.ttft_ms != null ? ` (first ${r.ttft_ms} ms)` : ""}` },
  { label: "Detail", cell: r => h("span", { class: "small muted" }, [r.endpoint, r.stream ? "stream" : null, r.error].filter(Boolean).join(" · ")) },
];

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
      h("option", { value: "ok" }, "success"), h("option", { value: "error" }, "errors"))),
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
