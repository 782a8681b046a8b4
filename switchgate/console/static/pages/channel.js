import { api, h, show, panel, table, badge, fail, toast, dialog } from "../js/lib.js";
import { channelForm } from "./channel_form.js";
import { keySummary, openKeys } from "./channel_keys.js";

// The channel kinds, their details and the default time limits come from the API
// (GET /api/channels), which reads the provider registry: none are listed here.
const META = { kinds: [], details: {}, timeouts: {} };

function kindCell(c) {
  const set = Object.entries(c.options || {}).map(([k, v]) => `${k}=${v}`);
  const limits = Object.entries(c.timeouts || {}).map(([k, v]) => `${k} ${v}s`);
  return h("div", {}, badge(c.kind),
    set.length ? h("div", { class: "small muted channel-options-summary" }, set.join(", ")) : null,
    limits.length ? h("div", { class: "small muted channel-timeouts-summary" }, `limits: ${limits.join(", ")}`) : null);
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
  const { items, kinds, kind_details, timeout_defaults } = await api("GET", "/api/channels");
  if (kinds) META.kinds = kinds;
  if (kind_details) META.details = Object.fromEntries(kind_details.map(d => [d.name, d]));
  if (timeout_defaults) META.timeouts = timeout_defaults;
  const add = channelForm(META);
  const form = h("form", { class: "stack", id: "channel-form" }, add.node,
    h("div", {}, h("button", { type: "submit", class: "primary" }, "Add channel")));
  form.addEventListener("submit", async e => {
    e.preventDefault();
    try { await api("POST", "/api/channels", add.body(new FormData(form))); toast("Channel added; live within a second"); await load(); }
    catch (err) { fail(err); }
  });
  show(panel(null, table([
    { label: "Name", cell: c => h("b", {}, c.name) },
    { label: "Kind", cell: kindCell },
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
        h("button", { class: "small", "aria-label": `Edit ${c.name}`, onclick: () => {
          const edit = channelForm(META, c);
          dialog(`Edit ${c.name}`, edit.node, async fd => {
            await api("PATCH", `/api/channels/${c.id}`, edit.body(fd)); toast("Saved"); await load();
          }).classList.add("channel-dialog");
        } }, "Edit"),
        h("button", { class: "small", onclick: async () => {
          try { await api("POST", `/api/channels/${c.id}/status`, { enabled: c.status !== "enabled" }); await load(); } catch (e) { fail(e); }
        } }, c.status === "enabled" ? "Disable" : "Enable")), result);
    } },
  ], items, "No channels yet: add one below.")),
  panel("Add a channel", form));
}

load().then(live).catch(fail);
