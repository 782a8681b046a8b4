import { api, h, show, panel, table, badge, usd, money, when, fail, toast, field } from "../js/lib.js";

let before = null;
let rows = [];

const KIND = { charge: "", topup: "ok", redeem: "ok", adjust: "warn", refund: "ok" };

async function ledger(kind, more) {
  const q = new URLSearchParams({ limit: "50" });
  if (kind) q.set("kind", kind);
  if (more && before) q.set("before_id", before);
  const data = await api("GET", `/api/ledger?${q}`);
  rows = more ? rows.concat(data.items) : data.items;
  before = data.next_before_id;
  document.getElementById("ledger").replaceChildren(...[table([
    { label: "When", cell: r => when(r.created_at) },
    { label: "Kind", cell: r => badge(r.kind, KIND[r.kind] || "") },
    { label: "Amount", class: "num", cell: r => usd(r.amount_usd, 6) },
    { label: "Note", cell: r => r.note || (r.request_id ? h("code", {}, r.request_id) : "—") },
    { label: "By", cell: r => r.actor || "—" },
  ], rows, "No balance changes yet."),
  before ? h("button", { type: "button", onclick: () => ledger(kind, true).catch(fail) }, "Load more") : null].filter(Boolean));
}

async function main() {
  const me = await api("GET", "/api/me");
  const balance = h("div", { class: "value", id: "balance" }, money(me.balance_usd));
  const form = h("form", { class: "row", id: "redeem-form" },
    field("Redemption code", h("input", { name: "code", placeholder: "rc-…", required: true, autocomplete: "off" })),
    h("button", { type: "submit", class: "primary" }, "Redeem"));
  form.addEventListener("submit", async e => {
    e.preventDefault();
    try {
      const r = await api("POST", "/api/redeem", { code: new FormData(form).get("code") });
      balance.replaceChildren(money(r.balance_usd));
      toast(`Added ${usd(r.amount_usd)}`);
      form.reset();
      await ledger(filter.value, false);
    } catch (err) { fail(err); }
  });
  const filter = h("select", { id: "ledger-kind", onchange: () => ledger(filter.value, false).catch(fail) },
    h("option", { value: "" }, "everything"), h("option", { value: "credits" }, "credits only"),
    h("option", { value: "charge" }, "charges only"));
  show(
    h("div", { class: "cards" }, h("div", { class: "card" }, h("div", { class: "label" }, "Balance"), balance)),
    panel("Redeem a code", form),
    panel("Balance history", h("div", { class: "toolbar" }, field("Show", filter)), h("div", { id: "ledger" })));
  await ledger("", false);
}

main().catch(fail);
