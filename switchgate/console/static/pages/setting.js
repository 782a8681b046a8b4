import { api, h, show, panel, badge, fail, toast, field } from "../js/lib.js";

const GROUPS = [
  ["Sign-up", k => k === "signup" || k === "require_verification"],
  ["E-mail (SMTP)", k => k.startsWith("smtp_")],
  ["Sign in with GitHub", k => k.startsWith("github_")],
  ["Sign in with Google", k => k.startsWith("google_")],
];

function input(s) {
  if (s.choices.length) return h("select", { name: s.key }, s.choices.map(c => h("option", { value: c, selected: c === s.value }, c)));
  if (s.secret) return h("input", { name: s.key, type: "password", autocomplete: "off", placeholder: s.is_set ? "(set — leave empty to keep)" : "(not set)" });
  return h("input", { name: s.key, value: s.value });
}

async function load() {
  const data = await api("GET", "/api/settings");
  const form = h("form", { class: "stack", id: "settings-form" },
    GROUPS.map(([title, match]) => panel(title, h("div", { class: "form-grid" },
      data.items.filter(s => match(s.key)).map(s => field(s.label, input(s), `from ${s.source}`))),
      title.startsWith("Sign in with") ? h("p", { class: "small muted" }, "Callback URL to register with the provider: ",
        h("code", {}, data.oauth_callback.replace("{provider}", title.endsWith("GitHub") ? "github" : "google"))) : null)),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Save settings"),
      h("button", { type: "button", onclick: async () => {
        try { await api("POST", "/api/settings/test-mail", {}); toast("Test mail sent to you"); } catch (e) { fail(e); }
      } }, "Send a test e-mail")));
  form.addEventListener("submit", async e => {
    e.preventDefault();
    const changes = {};
    for (const s of data.items) {
      const value = new FormData(form).get(s.key);
      if (s.secret) { if (value) changes[s.key] = value; }
      else if (value !== s.value) changes[s.key] = value === "" ? null : value;
    }
    try { await api("PUT", "/api/settings", changes); toast("Settings saved"); await load(); } catch (err) { fail(err); }
  });
  show(form);
}

load().catch(fail);
