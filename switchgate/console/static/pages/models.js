import { api, h, show, panel, table, badge, fail, toast, field, isAdmin, dialog } from "../js/lib.js";

const KINDS = ["chat", "embedding", "image", "tts", "stt", "rerank", "realtime"];
const KIND_LABEL = { chat: "chat", embedding: "embedding", image: "image", tts: "speech", stt: "transcription", rerank: "rerank", realtime: "realtime" };
const val = v => (v === null || v === undefined ? "" : String(v));

// Every price kind has a field; an edit sends every field, pre-filled with the stored value,
// and the API merges (a field left out keeps its value), so nothing is ever dropped.
function priceForm(p = {}, idPrefix = "") {
  const money = (name, label, value, hint) =>
    field(label, h("input", { name, inputmode: "decimal", value: val(value), autocomplete: "off" }), hint);
  const sizes = Object.entries(p.image_prices || {}).map(([k, v]) => `${k}=${v}`).join("\n");
  return h("div", { class: "stack" },
    h("div", { class: "form-grid" },
      field("Model", h("input", { name: "model", value: p.model || "", required: true, readonly: !!p.model && p.served !== undefined, autocomplete: "off" })),
      field("Kind", h("select", { name: "kind" }, KINDS.map(k => h("option", { value: k, selected: (p.kind || "chat") === k }, KIND_LABEL[k]))))),
    h("fieldset", {}, h("legend", {}, "Tokens, USD per 1M"),
      h("div", { class: "form-grid" },
        money("input_per_1m", "Input", p.input_per_1m && Number(p.input_per_1m) ? p.input_per_1m : ""),
        money("output_per_1m", "Output", p.output_per_1m && Number(p.output_per_1m) ? p.output_per_1m : ""),
        money("cache_read_per_1m", "Cache read", p.cache_read_per_1m, "empty: input price"),
        money("cache_write_per_1m", "Cache write", p.cache_write_per_1m, "empty: input price"))),
    h("fieldset", {}, h("legend", {}, "Per item, USD"),
      h("div", { class: "form-grid" },
        money("per_request_usd", "Per request", p.per_request_usd && Number(p.per_request_usd) ? p.per_request_usd : "", "added to every call"),
        money("per_image_usd", "Per image (any size)", p.per_image_usd, "image models"),
        field("Per image by size", h("textarea", { name: "image_prices", rows: 2, placeholder: "1024x1024:hd=0.08\n1792x1024=0.12", id: `${idPrefix}image-prices` }, sizes), "SIZE or SIZE:QUALITY=USD, one a line"),
        money("per_1m_characters", "Speech, per 1M characters", p.per_1m_characters, "text-to-speech models"),
        money("per_minute_usd", "Transcription, per minute", p.per_minute_usd, "speech-to-text models"))));
}

function parseSizes(text) {
  const out = {};
  for (const line of String(text || "").split(/\n/).map(s => s.trim()).filter(Boolean)) {
    const [key, usd] = line.split("=").map(s => (s || "").trim());
    if (!key || !usd) throw new Error(`Write each image price as SIZE:QUALITY=USD (got "${line}")`);
    out[key] = usd;
  }
  return out;
}

async function savePrice(fd) {
  const body = Object.fromEntries(fd.entries());
  const model = body.model.trim();
  delete body.model;
  body.image_prices = parseSizes(body.image_prices);
  await api("PUT", `/api/prices/${encodeURIComponent(model)}`, body);
  toast(`Price of ${model} saved; live within a second`);
  setTimeout(() => load().catch(fail), 1200);
}

function editButton(m) {
  return h("button", { class: "small", "aria-label": `Edit the price of ${m.model}`,
    onclick: () => dialog(`Price of ${m.model}`, priceForm(m, "edit-"), savePrice) }, "Edit");
}

function removeButton(m) {
  return h("button", { class: "small danger", "aria-label": `Remove the price of ${m.model}`, onclick: async () => {
    if (!confirm(`Remove the price of ${m.model}? It stops being served.`)) return;
    try { await api("DELETE", `/api/prices/${encodeURIComponent(m.model)}`); toast("Removed"); setTimeout(() => load().catch(fail), 1200); } catch (e) { fail(e); }
  } }, "Remove");
}

async function load() {
  const data = await api("GET", "/api/models");
  const columns = [
    { label: "Model", cell: m => h("b", { class: "model-name" }, m.model) },
    { label: "Kind", cell: m => badge(KIND_LABEL[m.kind] || m.kind) },
    { label: "Price", class: "prices", cell: m => h("ul", { class: "plain" }, m.summary.map(t => h("li", {}, t))) },
  ];
  if (isAdmin) {
    columns.push({ label: "Served", cell: m => !m.priced ? badge("no price: refused", "err") : m.served ? badge("yes", "ok") : badge("no channel", "warn") });
    columns.push({ label: "Actions", cell: m => h("div", { class: "actions" }, editButton(m), removeButton(m)) });
  }
  const form = h("form", { class: "stack", id: "price-form" }, priceForm(),
    h("div", {}, h("button", { type: "submit", class: "primary" }, "Set price")));
  form.addEventListener("submit", async e => { e.preventDefault(); try { await savePrice(new FormData(form)); form.reset(); } catch (err) { fail(err); } });
  show(
    panel(null, h("p", { class: "small muted" }, "Each model is charged in its own units: tokens, images, characters, minutes or requests. A model is offered when a channel serves it and it has a price."),
      table(columns, data.items, "No models yet.")),
    isAdmin && data.unpriced.length ? panel("Served but not priced (not offered yet)",
      h("div", { class: "actions" }, data.unpriced.map(m => h("button", { class: "small", onclick: () => dialog(`Price of ${m}`, priceForm({ model: m }, "new-"), savePrice) }, m)))) : null,
    isAdmin ? panel("Set a price", form) : null);
}

load().catch(fail);
