import { api, h, show, panel, table, badge, fail, toast, field } from "../js/lib.js";

// The shipped model catalogue: pick models, pick a channel (or every matching one),
// import them with their prices in one step. An operator's own price is never replaced.
const state = { provider: "", kind: "", search: "", selected: new Set(), result: null };
const num = n => (n ? Number(n).toLocaleString("en-US") : "—");

function status(m) {
  if (m.price_source === "operator") return badge("your price", "ok");
  if (m.price_source) return badge(m.served ? "imported" : "priced", "ok");
  return m.served ? badge("served, no price", "warn") : badge("not imported");
}

// Filtering by name hides rows in place, so typing never loses the focus or the ticks.
function filterRows() {
  const term = state.search.trim().toLowerCase();
  document.querySelectorAll("tbody tr").forEach(tr => {
    const hide = !!term && !(tr.dataset.id || "").toLowerCase().includes(term);
    tr.hidden = hide;
    tr.style.display = hide ? "none" : "";  // the stylesheet's table layouts override [hidden]
  });
}

async function load() {
  const q = new URLSearchParams();
  if (state.provider) q.set("provider", state.provider);
  if (state.kind) q.set("kind", state.kind);
  const data = await api("GET", `/api/catalogue?${q}`);
  const items = data.items;
  const provider = h("select", { id: "catalogue-provider", onchange: e => { state.provider = e.target.value; load().catch(fail); } },
    h("option", { value: "" }, "every provider"),
    data.vendors.map(v => h("option", { value: v, selected: v === state.provider }, v)));
  const kind = h("select", { id: "catalogue-kind", onchange: e => { state.kind = e.target.value; load().catch(fail); } },
    ["", "chat", "embedding", "image", "tts", "stt"].map(k => h("option", { value: k, selected: k === state.kind }, k || "every kind")));
  const search = h("input", { id: "catalogue-search", type: "search", placeholder: "filter by name", value: state.search,
    oninput: e => { state.search = e.target.value; filterRows(); } });
  const channel = h("select", { id: "catalogue-channel" },
    h("option", { value: "" }, "every channel that can serve each model"),
    data.channels.map(c => h("option", { value: c.name }, `${c.name} (${c.kind}, ${c.base_url})`)));
  const count = h("span", { id: "catalogue-count", class: "muted" }, `${state.selected.size} selected`);
  const tick = (id, on) => { on ? state.selected.add(id) : state.selected.delete(id); count.textContent = `${state.selected.size} selected`; };
  const all = h("input", { type: "checkbox", "aria-label": "select every listed model", onchange: e => {
    document.querySelectorAll("tbody tr:not([hidden]) input.pick").forEach(b => {
      b.checked = e.target.checked; tick(b.value, b.checked);
    });
  } });
  const importButton = h("button", { id: "catalogue-import", class: "primary", onclick: async () => {
    if (!state.selected.size) { toast("Select at least one model first", "error"); return; }
    try {
      state.result = await api("POST", "/api/catalogue/import", { models: [...state.selected], channel: channel.value || null });
      state.selected.clear();
      toast("Imported");
      await load();
    } catch (err) { fail(err); }
  } }, "Import selected");
  show(
    state.result ? panel("Last import", h("ul", { id: "import-result" }, state.result.summary.map(line => h("li", {}, line)))) : null,
    panel(`Catalogue of ${data.as_of}`,
      h("p", { class: "small muted" }, data.source),
      h("div", { class: "row" }, field("Provider", provider), field("Kind", kind), field("Search", search)),
      h("div", { class: "row" }, field("Import onto", channel), importButton, count),
      table([
        { label: all, cell: m => h("input", { type: "checkbox", class: "pick", value: m.id, "aria-label": `select ${m.id}`, checked: state.selected.has(m.id), onchange: e => tick(m.id, e.target.checked) }) },
        { label: "Model", cell: m => h("div", {}, h("code", {}, m.id), m.note ? h("div", { class: "small muted" }, m.note) : null) },
        { label: "Provider", cell: m => m.vendor },
        { label: "Kind", cell: m => m.kind },
        { label: "Context", class: "num", cell: m => num(m.context_window) },
        { label: "Max output", class: "num", cell: m => num(m.max_output) },
        { label: "Price", class: "prices", cell: m => h("ul", { class: "plain" }, m.price.summary.map(t => h("li", {}, t))) },
        { label: "Capabilities", cell: m => m.capabilities.join(", ") || "—" },
        { label: "Status", cell: status },
      ], items, "No catalogue model matches.")));
  filterRows();
}

load().catch(fail);
