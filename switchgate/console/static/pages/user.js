import { api, h, show, panel, table, badge, usd, money, when, fail, toast, field, dialog } from "../js/lib.js";

let q = "";
let offset = 0;

async function edit(u, change, message) {
  try { await api("PATCH", `/api/users/${u.id}`, change); toast(message); await load(); } catch (e) { fail(e); }
}

function adjust(u) {
  dialog(`Adjust the balance of ${u.email}`, h("div", { class: "stack" },
    h("p", { class: "muted small" }, `Now ${usd(u.balance_usd)}. A negative amount removes money. Recorded in the ledger with your e-mail.`),
    field("Amount, USD", h("input", { name: "amount_usd", inputmode: "decimal", required: true, placeholder: "10.00" })),
    field("Note", h("input", { name: "note", required: true, placeholder: "why" }))),
  async fd => {
    const r = await api("POST", `/api/users/${u.id}/balance`, Object.fromEntries(fd.entries()));
    toast(`Balance is now ${usd(r.balance_usd)}`);
    await load();
  }, "Adjust");
}

async function load() {
  const data = await api("GET", `/api/users?${new URLSearchParams({ q, offset })}`);
  const search = h("form", { class: "toolbar", id: "user-search" },
    field("Search by e-mail", h("input", { name: "q", value: q, type: "search" })),
    h("button", { type: "submit" }, "Search"), h("span", { class: "spacer" }),
    h("span", { class: "muted small" }, `${data.total} users`));
  search.addEventListener("submit", e => { e.preventDefault(); q = new FormData(search).get("q"); offset = 0; load().catch(fail); });
  const create = h("form", { class: "row", id: "user-create" },
    field("E-mail", h("input", { name: "email", type: "email", required: true })),
    field("Password", h("input", { name: "password", type: "password", minlength: 8, placeholder: "optional" })),
    h("label", {}, "Admin", h("input", { name: "admin", type: "checkbox", value: "1" })),
    h("button", { type: "submit", class: "primary" }, "Create user"));
  create.addEventListener("submit", async e => {
    e.preventDefault();
    const fd = new FormData(create);
    try { await api("POST", "/api/users", { email: fd.get("email"), password: fd.get("password") || null, admin: !!fd.get("admin") }); toast("Created"); await load(); } catch (err) { fail(err); }
  });
  show(panel(null, search, table([
    { label: "E-mail", cell: u => h("b", {}, u.email) },
    { label: "Role", cell: u => badge(u.role, u.role === "admin" ? "" : "off") },
    { label: "Status", cell: u => u.status === "active" ? badge("active", "ok") : badge("disabled", "err") },
    { label: "Verified", cell: u => u.email_verified ? "yes" : "no" },
    { label: "Balance", class: "num", cell: u => money(u.balance_usd) },
    { label: "Since", cell: u => when(u.created_at) },
    { label: "", cell: u => h("div", { class: "actions" },
      h("button", { class: "small", onclick: () => adjust(u) }, "Adjust balance"),
      u.status === "active"
        ? h("button", { class: "small danger", onclick: () => edit(u, { status: "disabled" }, "Disabled") }, "Disable")
        : h("button", { class: "small", onclick: () => edit(u, { status: "active" }, "Enabled") }, "Enable"),
      u.role === "admin"
        ? h("button", { class: "small", onclick: () => edit(u, { role: "user" }, "Now a user") }, "Make user")
        : h("button", { class: "small", onclick: () => edit(u, { role: "admin" }, "Now an admin") }, "Make admin")) },
  ], data.items, "No users match."),
  h("div", { class: "actions" },
    offset > 0 ? h("button", { onclick: () => { offset = Math.max(0, offset - 50); load().catch(fail); } }, "Previous") : null,
    offset + 50 < data.total ? h("button", { onclick: () => { offset += 50; load().catch(fail); } }, "Next") : null)),
  panel("Create a user", create));
}

load().catch(fail);
