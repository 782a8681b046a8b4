// Shared helpers for the console's pages: the API client (with the CSRF header),
// a tiny element builder, formatting, tables, dialogs and toasts. No build step.

const meta = document.querySelector('meta[name="csrf-token"]');
export const csrf = meta ? meta.content : "";
const app = document.getElementById("app");
export const baseUrl = (app && app.dataset.baseUrl) || location.origin;
export const isAdmin = !!app && app.dataset.admin === "true";

export class ApiError extends Error {
  constructor(message, status) { super(message); this.status = status; }
}

export async function api(method, path, body) {
  const headers = { "x-csrf-token": csrf, accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(path, {
    method, headers, credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const type = res.headers.get("content-type") || "";
  const data = type.includes("json") ? await res.json() : await res.text();
  if (!res.ok) {
    if (res.status === 401) location.href = "/console/signin?next=" + encodeURIComponent(location.pathname);
    throw new ApiError((data && data.error && data.error.message) || res.statusText, res.status);
  }
  return data;
}

export async function download(path, filename) {
  const res = await fetch(path, { headers: { "x-csrf-token": csrf }, credentials: "same-origin" });
  if (!res.ok) throw new ApiError(`download failed (${res.status})`, res.status);
  const url = URL.createObjectURL(await res.blob());
  const a = h("a", { href: url, download: filename });
  document.body.append(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// h("div", {class: "x", onclick: fn}, "text", child, [more])
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (key === "value") el.value = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

export const content = () => document.getElementById("content");
export function show(...nodes) { const c = content(); c.replaceChildren(); append(c, nodes); }
export function actions(...nodes) { const a = document.getElementById("actions"); a.replaceChildren(); append(a, nodes); }

export function toast(message, kind = "") {
  const box = document.getElementById("toasts");
  const text = String(message);
  const t = h("div", { class: "toast " + kind, role: kind === "error" ? "alert" : "status" },
    text.charAt(0).toUpperCase() + text.slice(1));
  box.append(t);
  setTimeout(() => t.remove(), kind === "error" ? 7000 : 3500);
}

export function fail(err) { toast(err && err.message ? err.message : String(err), "error"); }

// Amounts arrive as exact USD strings (up to 12 decimals). Shown with 2 to `places`
// decimals (default 2: exact cents), cut, never rounded up: a balance never looks bigger
// than it is. money() adds the full value on hover when digits were cut.
export function usd(text, places) {
  if (text === null || text === undefined || text === "") return "—";
  let raw = String(text).trim();
  if (/e/i.test(raw)) raw = Number(raw).toFixed(12);  // a JS number in exponent form
  const sign = raw.startsWith("-") ? "-" : "";
  const [whole, frac = ""] = raw.replace(/^[-+]/, "").split(".");
  const max = places === undefined ? 2 : places;
  let digits = frac.slice(0, max).replace(/0+$/, "");
  if (digits.length < 2) digits = digits.padEnd(Math.min(2, max), "0");
  return `${sign}$${whole || "0"}${digits ? "." + digits : ""}`;
}

export function exactUsd(text) {
  const raw = String(text ?? "").trim();
  const [whole, frac = ""] = raw.replace(/^[-+]/, "").split(".");
  return `${raw.startsWith("-") ? "-" : ""}$${whole || "0"}.${frac.replace(/0+$/, "").padEnd(2, "0")}`;
}

export function money(text, places) {
  const shown = usd(text, places);
  const full = exactUsd(text);
  return h("span", { class: "money", title: full !== shown ? full : null }, shown);
}

// A request's status: 499 is the user's own Stop (not an error).
export function statusBadge(status) {
  if (status === 499) return badge("stopped", "off");
  return badge(String(status), status < 400 ? "ok" : "err");
}

export function when(ms) {
  if (!ms) return "—";
  const d = new Date(Number(ms));
  return d.toLocaleString(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

export function ago(ms) {
  if (!ms) return "never";
  const s = (Date.now() - Number(ms)) / 1000;
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

export function badge(text, kind = "") { return h("span", { class: `badge ${kind}` }, text); }

// columns: [{label, cell: row => node|string, class}]
export function table(columns, rows, emptyText = "Nothing here yet.") {
  if (!rows.length) return h("div", { class: "empty" }, emptyText);
  return h("div", { class: "table-wrap", tabindex: "0" }, h("table", {},
    h("thead", {}, h("tr", {}, columns.map(c => h("th", { class: c.class, scope: "col" }, c.label || h("span", { class: "sr-only" }, "Actions"))))),
    h("tbody", {}, rows.map(r => h("tr", { dataset: { id: r.id ?? "" } },
      columns.map(c => h("td", { class: c.class }, c.cell(r))))))));
}

export function panel(title, ...children) {
  return h("section", { class: "panel" }, title ? h("h2", {}, title) : null, children);
}

export function field(label, input, hint) {
  return h("label", {}, label, input, hint ? h("span", { class: "small muted" }, hint) : null);
}

export function copyButton(text, label = "Copy") {
  const b = h("button", { type: "button", class: "small copy", onclick: async () => {
    try { await navigator.clipboard.writeText(typeof text === "function" ? text() : text); b.textContent = "Copied"; }
    catch { b.textContent = "Select & copy"; }
    setTimeout(() => (b.textContent = label), 1500);
  } }, label);
  return b;
}

export function dialog(title, body, onSubmit, submitLabel = "Save") {
  const form = h("form", { method: "dialog", class: "stack" }, h("h2", {}, title), body,
    h("div", { class: "actions" },
      h("button", { type: "submit", class: "primary", value: "ok" }, submitLabel),
      h("button", { type: "button", onclick: () => d.close() }, "Cancel")));
  const d = h("dialog", {}, form);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try { await onSubmit(new FormData(form)); d.close(); } catch (err) { fail(err); }
  });
  d.addEventListener("close", () => d.remove());
  document.body.append(d);
  d.showModal();
  return d;
}

export function formJson(form) { return Object.fromEntries(new FormData(form).entries()); }

export function toMs(localValue) { return localValue ? new Date(localValue).getTime() : null; }
export function toLocal(ms) {
  if (!ms) return "";
  const d = new Date(Number(ms));
  const pad = n => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function lines(text) { return (text || "").split(/[\n,]/).map(s => s.trim()).filter(Boolean); }

// A discoverable multi-picker: a filter box and one checkbox per item (form field `name`).
export function checklistPicker(name, legend, items, selected = [], hint = "") {
  const chosen = new Set(selected);
  const count = h("span", { class: "small muted picker-count" });
  const boxes = items.map(item => h("label", { class: "check" },
    h("input", { type: "checkbox", name, value: item, checked: chosen.has(item), onchange: () => update() }), item));
  const update = () => {
    const n = boxes.filter(b => b.firstChild.checked).length;
    count.textContent = n ? `${n} selected` : hint;
  };
  const filter = h("input", { type: "search", class: "picker-filter", placeholder: "Filter…", "aria-label": `Filter ${legend.toLowerCase()}`,
    oninput: () => {
      const q = filter.value.trim().toLowerCase();
      for (const b of boxes) b.hidden = !!q && !b.textContent.toLowerCase().includes(q);
    } });
  update();
  return h("fieldset", { class: "picker wide" }, h("legend", {}, legend),
    items.length > 6 ? filter : null,
    h("div", { class: "picker-list" }, boxes.length ? boxes : h("span", { class: "small muted" }, "No models yet.")),
    count);
}
