import { api, h, show, panel, table, badge, fail, toast, field, dialog, lines } from "../js/lib.js";
import { keySummary, openKeys } from "./channel_keys.js";

// The channel kinds come from the API (GET /api/channels: kinds, kind_details), which
// reads the provider registry (switchgate/providers/registry.py): none are listed here.
let KINDS = [];
let KIND_DETAILS = {};
const pairs = obj => Object.entries(obj || {}).map(([k, v]) => `${k}=${v}`).join("\n");
function parsePairs(text) {
  const out = {};
  for (const line of lines(text)) { const i = line.indexOf("="); if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim(); }
  return out;
}

const baseUrlHint = kind => KIND_DETAILS[kind]?.default_base_url || "https://…";
function kindSelect(current) {
  const select = h("select", { name: "kind" }, KINDS.map(k =>
    h("option", { value: k, selected: current === k }, KIND_DETAILS[k]?.label ? `${KIND_DETAILS[k].label} (${k})` : k)));
  select.addEventListener("change", () => {
    const base = select.form?.querySelector("input[name=base_url]");
    if (base) base.placeholder = baseUrlHint(select.value);
  });
  return select;
}

function channelFields(c = {}) {
  const editing = !!c.id;
  return h("div", { class: "form-grid" },
    field("Name", h("input", { name: "name", value: c.name || "", required: !editing, readonly: editing })),
    field("Kind", kindSelect(c.kind || KINDS[0])),
    h("label", { class: "wide" }, "Base URL", h("input", { name: "base_url", value: c.base_url || "", placeholder: baseUrlHint(c.kind || KINDS[0]), required: true })),
    editing ? null : h("label", { class: "wide" }, "API key", h("input", { name: "api_key", type: "password", autocomplete: "off", placeholder: "sk-…", required: true }),
      h("span", { class: "small muted" }, "more keys, weights and caps: the channel's Keys button")),
    h("label", { class: "wide" }, "Models (comma or one per line)", h("textarea", { name: "models", rows: 2, required: true }, (c.models || []).join(", "))),
    field("Priority", h("input", { name: "priority", type: "number", value: c.priority ?? 0 }), "higher tiers are tried first"),
    field("Weight", h("input", { name: "weight", type: "number", min: 1, value: c.weight ?? 1 })),
    field("Model map (alias=upstream)", h("textarea", { name: "model_map", rows: 2 }, pairs(c.model_map))),
    field("Extra headers (Name=Value)", h("textarea", { name: "headers", rows: 2 }, pairs(c.headers))),
    field("API version (Azure)", h("input", { name: "api_version", value: c.api_version || "" })));
}

function body(fd) {
  const b = {
    kind: fd.get("kind"), base_url: fd.get("base_url"), models: lines(fd.get("models")),
    priority: Number(fd.get("priority") || 0), weight: Number(fd.get("weight") || 1),
    model_map: parsePairs(fd.get("model_map")), headers: parsePairs(fd.get("headers")),
    api_version: fd.get("api_version") || null,
  };
  if (fd.get("name")) b.name = fd.get("name");
  if (fd.get("api_key")) b.api_key = fd.get("api_key");
  return b;
}

async function test(c, cell) {
  cell.replaceChildren(h("span", { class: "muted small" }, "testing…"));
  try {
    const r = await api("POST", `/api/channels/${c.id}/test`, {});
    const seen = r.upstream_model ? ` → ${r.upstream_model}` : "";
    cell.replaceChildren(badge(r.outcome, r.ok ? "ok" : r.outcome === "skipped" ? "off" : "err"), " ",
      h("span", { class: "small muted test-result" },
        `${r.call} ${r.model}${seen} · ${r.latency_ms} ms${r.status ? ` · HTTP ${r.status}` : ""} · ${r.message}`));
    if (r.diagnosis) cell.append(h("div", { class: "small test-diagnosis" }, r.diagnosis));
    if (r.disable_suggested && c.status === "enabled") {
      cell.append(h("button", { class: "small", onclick: async () => {
        try { await api("POST", `/api/channels/${c.id}/status`, { enabled: false }); toast(`${c.name} disabled`); await load(); }
        catch (e) { fail(e); }
      } }, "Disable this key"));
    }
  } catch (e) { cell.replaceChildren(); fail(e); }
}

const healthBadge = c => c.health === "ok" ? badge("ok", "ok")
  : badge(c.cooling_seconds ? `${c.health} ${c.cooling_seconds}s` : c.health, "warn");
function lastError(c) {
  if (!c.last_error) return [];
  return [c.last_error, h("span", { class: "muted" }, ` (${new Date(c.last_error_at).toLocaleTimeString()})`)];
}

// Live health: every 5 s the Health and Last error cells are refreshed in place.
let liveTimer = null;
function live() {
  clearInterval(liveTimer);
  liveTimer = setInterval(async () => {
    if (!document.querySelector(".live-health")) { clearInterval(liveTimer); return; }
    try {
      const { items } = await api("GET", "/api/channels");
      for (const c of items) {
        document.querySelector(`.live-health[data-id="${c.id}"]`)?.replaceChildren(healthBadge(c));
        document.querySelector(`.last-error[data-id="${c.id}"]`)?.replaceChildren(...lastError(c));
        document.querySelector(`.key-summary[data-id="${c.id}"]`)?.replaceChildren(...keySummary(c));
      }
    } catch { /* the next tick tries again */ }
  }, 5000);
}

async function load() {
  const { items, kinds, kind_details } = await api("GET", "/api/channels");
  if (kinds) KINDS = kinds;
  if (kind_details) KIND_DETAILS = Object.fromEntries(kind_details.map(d => [d.name, d]));
  const form = h("form", { class: "stack", id: "channel-form" }, channelFields(),
    h("div", {}, h("button", { type: "submit", class: "primary" }, "Add channel")));
  form.addEventListener("submit", async e => {
    e.preventDefault();
    try { await api("POST", "/api/channels", body(new FormData(form))); toast("Channel added; live within a second"); await load(); }
    catch (err) { fail(err); }
  });
  show(panel(null, table([
    { label: "Name", cell: c => h("b", {}, c.name) },
    { label: "Kind", cell: c => badge(c.kind) },
    { label: "Models", cell: c => h("span", { class: "small" }, c.models.join(", ")) },
    { label: "Tier / weight", class: "num", cell: c => `${c.priority} / ${c.weight}` },
    { label: "Status", cell: c => c.status === "enabled" ? badge("enabled", "ok") : badge("disabled", "off") },
    { label: "Health", cell: c => h("span", { class: "live-health", "data-id": c.id }, healthBadge(c)) },
    { label: "Keys", cell: c => h("span", { class: "small key-summary", "data-id": c.id }, ...keySummary(c)) },
    { label: "Last error", cell: c => h("span", { class: "small last-error", "data-id": c.id }, ...lastError(c)) },
    { label: "", cell: c => {
      const result = h("div", {});
      return h("div", {}, h("div", { class: "actions" },
        h("button", { class: "small", onclick: () => test(c, result) }, "Test"),
        h("button", { class: "small", "aria-label": `Keys of ${c.name}`, onclick: () => openKeys(c, () => load().catch(fail)) }, "Keys"),
        h("button", { class: "small", onclick: () => dialog(`Edit ${c.name}`, channelFields(c), async fd => {
          await api("PATCH", `/api/channels/${c.id}`, body(fd)); toast("Saved"); await load();
        }) }, "Edit"),
        h("button", { class: "small", onclick: async () => {
          try { await api("POST", `/api/channels/${c.id}/status`, { enabled: c.status !== "enabled" }); await load(); } catch (e) { fail(e); }
        } }, c.status === "enabled" ? "Disable" : "Enable")), result);
    } },
  ], items, "No channels yet: add one below.")),
  panel("Add a channel", form));
}

load().then(live).catch(fail);
