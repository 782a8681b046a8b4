import { api, h, show, panel, table, usd, when, fail, toast, field, download, copyButton } from "../js/lib.js";

async function load(fresh) {
  const { items } = await api("GET", "/api/redemptions");
  const form = h("form", { class: "row", id: "generate-form" },
    field("How many", h("input", { name: "count", type: "number", min: 1, max: 10000, value: 10, required: true })),
    field("Worth, USD each", h("input", { name: "amount_usd", inputmode: "decimal", required: true, placeholder: "5.00" })),
    field("Note", h("input", { name: "note", placeholder: "e.g. workshop March" })),
    h("button", { type: "submit", class: "primary" }, "Generate"));
  form.addEventListener("submit", async e => {
    e.preventDefault();
    const fd = new FormData(form);
    try {
      const r = await api("POST", "/api/redemptions", { count: Number(fd.get("count")), amount_usd: fd.get("amount_usd"), note: fd.get("note") });
      toast(`${r.codes.length} codes generated`);
      await load(r);
    } catch (err) { fail(err); }
  });
  const csv = b => download(`/api/redemptions/${encodeURIComponent(b)}/codes.csv`, `codes-${b}.csv`).catch(fail);
  show(
    fresh ? panel(`New batch: ${fresh.codes.length} codes worth ${usd(fresh.amount_usd)} each`,
      h("pre", { id: "new-codes" }, fresh.codes.join("\n")),
      h("div", { class: "actions" }, copyButton(fresh.codes.join("\n"), "Copy all"),
        h("button", { type: "button", onclick: () => csv(fresh.batch) }, "Download CSV"))) : null,
    panel("Generate codes", form),
    panel("Batches", table([
      { label: "Created", cell: b => when(b.created_at) },
      { label: "Batch", cell: b => h("code", {}, b.batch) },
      { label: "Worth", class: "num", cell: b => usd(b.amount_usd) },
      { label: "Used", class: "num", cell: b => `${b.used} of ${b.count}` },
      { label: "Note", cell: b => b.note || "—" },
      { label: "By", cell: b => b.created_by || "—" },
      { label: "", cell: b => h("div", { class: "actions" },
        h("button", { class: "small", onclick: () => csv(b.batch) }, "CSV"),
        h("button", { class: "small danger", onclick: async () => {
          if (!confirm("Disable every unused code of this batch?")) return;
          try { const r = await api("POST", `/api/redemptions/${encodeURIComponent(b.batch)}/disable`); toast(`${r.disabled} codes disabled`); } catch (e) { fail(e); }
        } }, "Disable unused")) },
    ], items, "No codes yet.")));
}

load().catch(fail);
