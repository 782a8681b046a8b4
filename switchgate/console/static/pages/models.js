import { api, h, show, panel, table, badge, fail, toast, field, isAdmin, dialog } from "../js/lib.js";

const KINDS = ["chat", "embedding", "image", "tts", "stt", "rerank", "realtime"];
const per1m = v => (v === null || v === undefined ? "—" : `$${v}`);

function priceForm(p = {}) {
  return h("div", { class: "form-grid" },
    field("Model", h("input", { name: "model", value: p.model || "", required: true, readonly: !!p.model && p.served !== undefined })),
    field("Kind", h("select", { name: "kind" }, KINDS.map(k => h("option", { value: k, selected: (p.kind || "chat") === k }, k)))),
    field("Input, USD per 1M", h("input", { name: "input_per_1m", inputmode: "decimal", value: p.input_per_1m || "", required: true })),
    field("Output, USD per 1M", h("input", { name: "output_per_1m", inputmode: "decimal", value: p.output_per_1m || "", required: true })),
    field("Cache read, USD per 1M", h("input", { name: "cache_read_per_1m", inputmode: "decimal", value: p.cache_read_per_1m || "" }), "empty: input price"),
    field("Cache write, USD per 1M", h("input", { name: "cache_write_per_1m", inputmode: "decimal", value: p.cache_write_per_1m || "" }), "empty: input price"),
    field("Per request, USD", h("input", { name: "per_request_usd", inputmode: "decimal", value: p.per_request_usd && Number(p.per_request_usd) ? p.per_request_usd : "" })));
}

async function savePrice(fd) {
  const body = Object.fromEntries(fd.entries());
  const model = body.model.trim();
  delete body.model;
  await api("PUT", `/api/prices/${encodeURIComponent(model)}`, body);
  toast(`Price of ${model} saved; live within a second`);
  setTimeout(load, 1200);
}

async function load() {
  const data = await api("GET", "/api/models");
  const columns = [
    { label: "Model", cell: m => h("b", {}, m.model) },
    { label: "Kind", cell: m => badge(m.kind) },
    { label: "Input / 1M", class: "num", cell: m => per1m(m.input_per_1m) },
    { label: "Output / 1M", class: "num", cell: m => per1m(m.output_per_1m) },
    { label: "Cache read / 1M", class: "num", cell: m => per1m(m.cache_read_per_1m) },
    { label: "Per request", class: "num", cell: m => (Number(m.per_request_usd) ? `$${m.per_request_usd}` : "—") },
    { label: "Other", cell: m => h("span", { class: "small" }, Object.entries(m.other || {}).map(([k, v]) => `${k.replace(/_/g, " ")}: $${v}`).join(" · ") || "—") },
  ];
  if (isAdmin) {
    columns.push({ label: "Served", cell: m => m.served ? badge("yes", "ok") : badge("no channel", "warn") });
    columns.push({ label: "", cell: m => h("div", { class: "actions" },
      h("button", { class: "small", onclick: () => dialog(`Price of ${m.model}`, priceForm(m), savePrice) }, "Edit"),
      h("button", { class: "small danger", onclick: async () => {
        if (!confirm(`Remove the price of ${m.model}? It stops being served.`)) return;
        try { await api("DELETE", `/api/prices/${encodeURIComponent(m.model)}`); toast("Removed"); setTimeout(load, 1200); } catch (e) { fail(e); }
      } }, "Remove")) });
  }
  const form = h("form", { class: "stack", id: "price-form" }, priceForm(),
    h("div", {}, h("button", { type: "submit", class: "primary" }, "Set price")));
  form.addEventListener("submit", async e => { e.preventDefault(); try { await savePrice(new FormData(form)); form.reset(); } catch (err) { fail(err); } });
  show(
    panel(null, h("p", { class: "small muted" }, "Prices in USD per 1 million tokens. A model is offered when a channel serves it and it has a price."),
      table(columns, data.items, "No models yet.")),
    isAdmin && data.unpriced.length ? panel("Served but not priced (not offered yet)",
      h("div", { class: "actions" }, data.unpriced.map(m => h("button", { class: "small", onclick: () => dialog(`Price of ${m}`, priceForm({ model: m }), savePrice) }, m)))) : null,
    isAdmin ? panel("Set a price", form) : null);
}

load().catch(fail);
