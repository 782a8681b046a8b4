// The Keys dialog of the channels page: a channel's API keys (only their last four
// characters ever reach the page), weight, caps, state (enabled, or disabled with the
// reason and the time, or an open breaker), and the actions: add, edit, test, disable,
// re-enable, remove. Every change goes through /api/channels/{id}/keys (audited).
import { api, h, badge, fail, toast, when } from "../js/lib.js";

const capText = k => [
  k.max_concurrency ? `${k.max_concurrency} in flight` : null,
  k.rpm ? `${k.rpm}/min` : null,
].filter(Boolean).join(" · ") || "no caps";

// The channel list's Keys cell: how many, and what needs a look.
export function keySummary(c) {
  const keys = c.keys || [];
  const off = keys.filter(k => k.status !== "enabled").length;
  const open = keys.filter(k => k.status === "enabled" && k.breaker && k.breaker.phase !== "closed").length;
  return [
    h("span", {}, `${keys.length} ${keys.length === 1 ? "key" : "keys"}`),
    off ? [" ", badge(`${off} disabled`, "err")] : null,
    open ? [" ", badge(`${open} cooling`, "warn")] : null,
  ];
}

function state(k) {
  if (k.status !== "enabled") {
    return h("div", { class: "key-state" }, badge("disabled", "err"), " ",
      h("span", { class: "small key-reason" }, k.disabled_reason || "disabled"),
      k.disabled_at ? h("span", { class: "small muted key-when" }, ` · since ${when(k.disabled_at)}`) : null);
  }
  const b = k.breaker;
  if (b && b.phase === "open") {
    return h("div", { class: "key-state" }, badge(`breaker open ${Math.ceil(b.seconds_left)}s`, "warn"), " ",
      h("span", { class: "small key-reason" }, b.reason || ""));
  }
  if (b && b.phase === "half-open") return h("div", { class: "key-state" }, badge("probing", "warn"));
  return h("div", { class: "key-state" }, badge("enabled", "ok"));
}

function capsForm(k, onSave) {
  const form = h("form", { class: "row key-edit" },
    h("label", {}, "Weight", h("input", { name: "weight", type: "number", min: 1, value: k.weight, required: true })),
    h("label", {}, "Max in flight", h("input", { name: "max_concurrency", type: "number", min: 0, value: k.max_concurrency ?? "", placeholder: "no cap" })),
    h("label", {}, "Requests / min", h("input", { name: "rpm", type: "number", min: 0, value: k.rpm ?? "", placeholder: "no cap" })),
    h("button", { type: "submit", class: "small primary" }, "Save"));
  form.addEventListener("submit", async e => { e.preventDefault(); await onSave(caps(new FormData(form))); });
  return form;
}

function caps(fd) {
  const num = name => (fd.get(name) === "" || fd.get(name) === null ? null : Number(fd.get(name)));
  const out = { max_concurrency: num("max_concurrency") || null, rpm: num("rpm") || null };
  if (fd.get("weight")) out.weight = Number(fd.get("weight"));
  return out;
}

export function openKeys(channel, onClose) {
  const list = h("ul", { class: "plain key-list", "aria-label": `Keys of ${channel.name}` });
  const result = h("div", { class: "key-test-result small", role: "status" });
  const base = `/api/channels/${channel.id}/keys`;

  // Every action: do it, report a failure, and show the keys as they are now.
  async function run(fn) {
    try { await fn(); } catch (e) { fail(e); }
    await refresh().catch(fail);
  }

  function item(k) {
    const name = `key ${k.hint}`;
    const editArea = h("div", {});
    const actions = h("div", { class: "actions" },
      h("button", { type: "button", class: "small", "aria-label": `Test ${name}`, onclick: () => run(async () => {
        result.replaceChildren(`Testing ${name}…`);
        const r = await api("POST", `${base}/${k.position}/test`, {});
        result.replaceChildren(badge(r.ok ? "passed" : r.outcome, r.ok ? "ok" : "err"), " ",
          `${name}: ${r.status ? `HTTP ${r.status} · ` : ""}${r.message}`,
          r.key_enabled ? " — enabled again" : "");
      }) }, "Test"),
      k.status === "enabled"
        ? h("button", { type: "button", class: "small", "aria-label": `Disable ${name}`, onclick: () => run(async () => {
          await api("POST", `${base}/${k.position}/status`, { enabled: false }); toast(`${name} disabled`);
        }) }, "Disable")
        : h("button", { type: "button", class: "small", "aria-label": `Enable ${name}`, onclick: () => run(async () => {
          await api("POST", `${base}/${k.position}/status`, { enabled: true }); toast(`${name} enabled`);
        }) }, "Enable"),
      h("button", { type: "button", class: "small", "aria-label": `Edit ${name}`, "aria-expanded": "false", onclick: ev => {
        const open = !editArea.firstChild;
        ev.currentTarget.setAttribute("aria-expanded", String(open));
        editArea.replaceChildren(open ? capsForm(k, body => run(async () => {
          await api("PATCH", `${base}/${k.position}`, body); toast(`${name} saved`);
        })) : "");
      } }, "Edit"),
      h("button", { type: "button", class: "small danger", "aria-label": `Remove ${name}`, onclick: () => {
        if (!confirm(`Remove ${name} from ${channel.name}?`)) return;
        run(async () => { await api("DELETE", `${base}/${k.position}`); toast(`${name} removed`); });
      } }, "Remove"));
    return h("li", { class: "key-item", dataset: { position: k.position, status: k.status } },
      h("div", { class: "key-head" }, h("code", { class: "key-hint" }, k.hint),
        h("span", { class: "small muted" }, `#${k.position} · weight ${k.weight} · ${capText(k)}`)),
      state(k), actions, editArea);
  }

  async function refresh() {
    const { items } = await api("GET", base);
    list.replaceChildren(...items.map(item));
  }

  const add = h("form", { class: "row key-add", autocomplete: "off" },
    h("label", { class: "key-add-key" }, "New API key", h("input", { name: "key", type: "password", autocomplete: "off", required: true, placeholder: "sk-…" })),
    h("label", {}, "Weight", h("input", { name: "weight", type: "number", min: 1, value: 1 })),
    h("label", {}, "Max in flight", h("input", { name: "max_concurrency", type: "number", min: 0, placeholder: "no cap" })),
    h("label", {}, "Requests / min", h("input", { name: "rpm", type: "number", min: 0, placeholder: "no cap" })),
    h("button", { type: "submit", class: "primary" }, "Add key"));
  add.addEventListener("submit", async e => {
    e.preventDefault();
    const fd = new FormData(add);
    const body = { key: fd.get("key"), ...caps(fd) };
    add.reset();  // the key leaves the page at once
    await run(async () => { const r = await api("POST", base, body); toast(`Key ${r.hint} added`); });
  });

  const title = `Keys of ${channel.name}`;
  const d = h("dialog", { class: "keys-dialog", "aria-label": title },
    h("div", { class: "stack" }, h("h2", {}, title),
      h("p", { class: "small muted" }, "Keys are used in turn by weight. A key the upstream refuses (401/403) is disabled with the reason; Test sends a tiny real request with that key and enables it again when it passes."),
      list, result,
      h("h3", {}, "Add a key"), add,
      h("div", { class: "actions" }, h("button", { type: "button", onclick: () => d.close() }, "Close"))));
  d.addEventListener("close", () => { d.remove(); if (onClose) onClose(); });
  document.body.append(d);
  d.showModal();
  refresh().catch(fail);
  return d;
}
