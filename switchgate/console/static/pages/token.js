import { api, h, show, actions, checklistPicker, panel, table, badge, usd, exactUsd, when, ago, fail, toast, dialog, field, copyButton, toMs, toLocal, lines, baseUrl } from "../js/lib.js";

let models = [];

function examples(key) {
  const v1 = `${baseUrl}/v1`;
  return {
    "OpenAI (Python)": `from openai import OpenAI\n\nclient = OpenAI(base_url="${v1}", api_key="${key}")\nreply = client.chat.completions.create(\n    model="${models[0] || "MODEL"}",\n    messages=[{"role": "user", "content": "Hello!"}],\n)\nprint(reply.choices[0].message.content)`,
    "Anthropic (Python)": `from anthropic import Anthropic\n\nclient = Anthropic(base_url="${baseUrl}", api_key="${key}")\nreply = client.messages.create(\n    model="${models[0] || "MODEL"}",\n    max_tokens=1024,\n    messages=[{"role": "user", "content": "Hello!"}],\n)\nprint(reply.content[0].text)`,
    "Gemini (Python)": `from google import genai\n\nclient = genai.Client(api_key="${key}", http_options={"base_url": "${baseUrl}"})\nreply = client.models.generate_content(model="${models[0] || "MODEL"}", contents="Hello!")\nprint(reply.text)`,
    "curl": `curl ${v1}/chat/completions \\\n  -H "Authorization: Bearer ${key}" \\\n  -H "Content-Type: application/json" \\\n  -d '{"model": "${models[0] || "MODEL"}", "messages": [{"role": "user", "content": "Hello!"}]}'`,
  };
}

function keyPanel(created) {
  const ex = examples(created.token);
  const code = h("pre", { id: "example-code" });
  const tabs = h("div", { class: "tabs", role: "tablist" });
  const pick = (name) => {
    code.textContent = ex[name];
    for (const b of tabs.children) b.classList.toggle("on", b.textContent === name);
  };
  for (const name of Object.keys(ex)) tabs.append(h("button", { type: "button", onclick: () => pick(name) }, name));
  pick("OpenAI (Python)");
  return panel("Your new key — copy it now, it is shown only once",
    h("div", { class: "secret" }, h("code", { id: "new-key" }, created.token), copyButton(created.token)),
    tabs, h("div", { class: "code-block" }, code, copyButton(() => code.textContent)),
    h("p", { class: "small muted" }, `Base address: ${baseUrl}/v1 (OpenAI), ${baseUrl} (Anthropic, Gemini).`),
    h("button", { type: "button", onclick: () => load() }, "Done"));
}

function tokenFields(t = {}) {
  return h("div", { class: "form-grid" },
    field("Name", h("input", { name: "name", value: t.name || "", placeholder: "laptop", required: true })),
    field("Expires", h("input", { name: "expires_at", type: "datetime-local", value: toLocal(t.expires_at) }), "empty: never"),
    field("Spending limit (USD)", h("input", { name: "quota_limit_usd", inputmode: "decimal", value: t.quota_limit_usd || "", placeholder: "no limit" })),
    field("Requests per minute", h("input", { name: "rpm_limit", type: "number", min: 1, value: t.rpm_limit || "", placeholder: "no limit" })),
    checklistPicker("allowed_models", "Allowed models", models, t.allowed_models || [], "none selected: every model"),
    field("Allowed client IPs or CIDR ranges", h("textarea", { name: "allowed_ips", rows: 2, placeholder: "203.0.113.7, 10.0.0.0/8" }, (t.allowed_ips || []).join(", ")), "empty: any address"));
}

function bodyFrom(fd) {
  const num = v => (v === "" || v === null ? null : Number(v));
  return {
    name: fd.get("name"),
    expires_at: toMs(fd.get("expires_at")),
    quota_limit_usd: fd.get("quota_limit_usd") || null,
    rpm_limit: num(fd.get("rpm_limit")),
    allowed_models: fd.getAll("allowed_models"),
    allowed_ips: lines(fd.get("allowed_ips")),
  };
}

function status(t) {
  if (t.status !== "active") return badge("disabled", "off");
  if (t.expires_at && t.expires_at < Date.now()) return badge("expired", "warn");
  return badge("active", "ok");
}

function limits(t) {
  const out = [];
  if (t.quota_limit_usd) out.push(h("span", { title: `${exactUsd(t.quota_used_usd)} of ${exactUsd(t.quota_limit_usd)}` }, `${usd(t.quota_used_usd)} of ${usd(t.quota_limit_usd)}`));
  else out.push(h("span", { title: exactUsd(t.quota_used_usd) }, `${usd(t.quota_used_usd)} spent`));
  if (t.rpm_limit) out.push(`${t.rpm_limit}/min`);
  if (t.allowed_models) out.push(`${t.allowed_models.length} model(s)`);
  if (t.allowed_ips) out.push(`IPs: ${t.allowed_ips.join(", ")}`);
  if (t.expires_at) out.push(`expires ${when(t.expires_at)}`);
  return h("span", { class: "small" }, out.join(" · "));
}

async function act(fn, message) { try { await fn(); toast(message); await load(); } catch (e) { fail(e); } }

async function load(created) {
  const { items } = await api("GET", "/api/tokens");
  const form = h("form", { class: "stack", id: "create-token" }, tokenFields(),
    h("div", {}, h("button", { type: "submit", class: "primary" }, "Create token")));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try { load(await api("POST", "/api/tokens", bodyFrom(new FormData(form)))); } catch (err) { fail(err); }
  });
  show(
    created ? keyPanel(created) : null,
    panel(null, table([
      { label: "Name", cell: t => h("b", {}, t.name || "(unnamed)") },
      { label: "Key", cell: t => h("code", {}, `${t.key_prefix}…`) },
      { label: "Status", cell: status },
      { label: "Limits", cell: limits },
      { label: "Last used", cell: t => ago(t.last_used_at) },
      { label: "", cell: t => h("div", { class: "actions" },
        h("button", { class: "small", onclick: () => dialog(`Edit ${t.name}`, tokenFields(t),
          async fd => { await api("PATCH", `/api/tokens/${t.id}`, bodyFrom(fd)); toast("Saved"); await load(); }) }, "Edit"),
        t.status === "active"
          ? h("button", { class: "small", onclick: () => act(() => api("PATCH", `/api/tokens/${t.id}`, { status: "disabled" }), "Disabled") }, "Disable")
          : h("button", { class: "small", onclick: () => act(() => api("PATCH", `/api/tokens/${t.id}`, { status: "active" }), "Enabled") }, "Enable"),
        h("button", { class: "small danger", onclick: () => confirm(`Delete ${t.name}? Clients using it stop working.`) &&
          act(() => api("DELETE", `/api/tokens/${t.id}`), "Deleted") }, "Delete")) },
    ], items, "No tokens yet: create one below.")),
    panel("New token", form));
  actions();
}

async function main() {
  const all = (await api("GET", "/api/models")).items.filter(m => m.served);
  models = [...all.filter(m => m.kind === "chat"), ...all.filter(m => m.kind !== "chat")].map(m => m.model);
  await load();
}

main().catch(fail);
