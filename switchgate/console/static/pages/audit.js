import { api, h, show, panel, table, when, fail, field, download } from "../js/lib.js";

let before = null;
let rows = [];

function query(form) {
  const fd = new FormData(form);
  const q = new URLSearchParams();
  for (const key of ["actor", "action"]) if (fd.get(key)) q.set(key, fd.get(key));
  return q;
}

const columns = [
  { label: "Time", cell: r => when(r.created_at) },
  { label: "Who", cell: r => r.actor },
  { label: "Action", cell: r => h("code", {}, r.action) },
  { label: "Target", cell: r => h("code", {}, r.target) },
  { label: "From", cell: r => r.ip || "—" },
  { label: "Detail", cell: r => h("span", { class: "small muted" }, r.detail || "—") },
];

async function fetchPage(form, more) {
  const q = query(form);
  if (more && before) q.set("before_id", before);
  q.set("limit", "50");
  const page = await api("GET", `/api/audit?${q}`);
  rows = more ? rows.concat(page.items) : page.items;
  before = page.next_before_id;
  render(form);
}

function render(form) {
  const more = before ? h("button", { type: "button", onclick: () => fetchPage(form, true).catch(fail) }, "Older") : null;
  show(
    panel("Filter", form),
    panel("Admin actions (append-only)", table(columns, rows, "No admin actions recorded yet."), more),
  );
}

const form = h("form", { class: "row", id: "audit-filter" },
  field("Who (e-mail)", h("input", { name: "actor", placeholder: "admin@example.com" })),
  field("Action contains", h("input", { name: "action", placeholder: "/api/users" })),
  h("button", { type: "submit", class: "primary" }, "Show"),
  h("button", { type: "button", onclick: () => download(`/api/audit.csv?${query(form)}`, "switchgate-audit.csv").catch(fail) }, "Download CSV"));
form.addEventListener("submit", e => { e.preventDefault(); fetchPage(form, false).catch(fail); });
fetchPage(form, false).catch(fail);
