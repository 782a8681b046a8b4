import { api, h, show, panel, table, badge, fail, toast, field, when, csrf } from "../js/lib.js";

async function load() {
  const me = await api("GET", "/api/me");
  const pw = h("form", { class: "stack", id: "password-form" },
    me.has_password ? field("Current password", h("input", { type: "password", name: "current_password", autocomplete: "current-password", required: true })) : null,
    field("New password", h("input", { type: "password", name: "new_password", minlength: 8, autocomplete: "new-password", required: true })),
    h("div", {}, h("button", { type: "submit", class: "primary" }, me.has_password ? "Change password" : "Set password")));
  pw.addEventListener("submit", async e => {
    e.preventDefault();
    try { await api("POST", "/api/me/password", Object.fromEntries(new FormData(pw).entries())); toast("Password saved; other sessions were signed out"); pw.reset(); load(); }
    catch (err) { fail(err); }
  });
  const linkForm = p => h("form", { method: "post", action: `/console/oauth/${p}/link` },
    h("input", { type: "hidden", name: "csrf", value: csrf }),
    h("button", { type: "submit", id: `link-${p}` }, `Link ${p === "github" ? "GitHub" : "Google"}`));
  const linkable = Object.entries(me.providers).filter(([p, on]) => on && !me.identities.some(i => i.provider === p)).map(([p]) => p);
  show(
    panel("Profile", h("p", {}, h("b", {}, me.email), " ", badge(me.role), " ",
      me.email_verified ? badge("verified", "ok") : badge("not verified", "warn"))),
    panel("Sign-in methods",
      h("p", { class: "small muted" }, me.has_password ? "E-mail and password" : "No password set"),
      table([
        { label: "Provider", cell: i => i.provider },
        { label: "E-mail", cell: i => i.email || "—" },
        { label: "Linked", cell: i => when(i.created_at) },
        { label: "", cell: i => h("button", { class: "small danger", onclick: async () => {
          try { await api("DELETE", `/api/me/identities/${i.id}`); toast("Unlinked"); load(); } catch (e) { fail(e); }
        } }, "Unlink") },
      ], me.identities, "No GitHub or Google account linked."),
      linkable.length ? h("div", { class: "actions" }, linkable.map(linkForm)) : null),
    panel(me.has_password ? "Change password" : "Set a password", pw));
  const linked = new URLSearchParams(location.search).get("linked");
  if (linked) toast(`${linked} linked`);
}

load().catch(fail);
