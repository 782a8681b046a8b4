import { h, field, lines } from "../js/lib.js";

// The channel form (Add a channel, Edit): every kind's label, default base URL, key
// format and options come from GET /api/channels (kind_details, read from the provider
// registry, switchgate/providers/registry.py); the time limits' placeholders are the
// gateway's own (timeout_defaults). Nothing per kind is written here.

const TIMEOUTS = [
  ["connect", "Connect"], ["first_byte", "First byte"], ["idle", "Idle"],
  ["stream_first_byte", "First byte (stream)"], ["stream_idle", "Idle (stream)"], ["total", "Total"],
];
const pairs = obj => Object.entries(obj || {}).map(([k, v]) => `${k}=${v}`).join("\n");
function parsePairs(text) {
  const out = {};
  for (const line of lines(text)) { const i = line.indexOf("="); if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim(); }
  return out;
}
const seconds = v => String(v).replace(/\.0$/, "");

let serial = 0;  // unique ids for the labels of the option rows

// One option: its name and value; a declared option's name is fixed, its hint shown.
function optionRow(name, value, declared) {
  const id = `opt-${++serial}`;
  const nameInput = h("input", { name: "option_name", value: name, "aria-label": "Option name",
    placeholder: "name", readonly: !!declared, class: "option-name" });
  const valueInput = h("input", { name: "option_value", value: value || "", id,
    "aria-label": `Value of option ${name || "(new)"}`, placeholder: declared?.required ? "required" : "",
    required: !!declared?.required, "aria-describedby": declared ? `${id}-hint` : null });
  nameInput.addEventListener("input", () => valueInput.setAttribute("aria-label", `Value of option ${nameInput.value || "(new)"}`));
  const row = h("div", { class: "option-row", dataset: { option: name } }, nameInput, valueInput,
    declared ? null : h("button", { type: "button", class: "small", "aria-label": `Remove option ${name || "(new)"}`, onclick: () => row.remove() }, "Remove"),
    declared ? h("span", { class: "small muted option-hint", id: `${id}-hint` },
      `${declared.required ? "required: " : ""}${declared.hint}`) : null);
  return row;
}

// The option rows for `kind`: its declared options first (empty when unset), then the
// channel's other options (a kind that does not read one still keeps it until removed).
function optionRows(kind, current, meta) {
  const declared = meta.details[kind]?.options || [];
  const names = new Set(declared.map(o => o.name));
  return [
    ...declared.map(o => optionRow(o.name, current[o.name], o)),
    ...Object.entries(current).filter(([k]) => !names.has(k)).map(([k, v]) => optionRow(k, v, null)),
  ];
}

function kindInfo(detail) {
  if (!detail) return [];
  const key = detail.needs_key ? `Key: ${detail.key_format}` : `Key: none needed (${detail.key_format})`;
  return [h("span", {}, key), h("span", {}, `Serves: ${detail.endpoints.join(", ")}`),
    detail.default_base_url ? h("span", {}, `Default base URL: ${detail.default_base_url}`) : h("span", {}, "Base URL: your own")];
}

// The form's fields and how to read them back. `meta`: { kinds, details, timeouts }.
export function channelForm(meta, c = {}) {
  const editing = !!c.id;
  let kind = c.kind || meta.kinds[0];
  const detail = () => meta.details[kind] || {};
  const info = h("div", { class: "wide small kind-info", "aria-live": "polite" }, ...kindInfo(detail()));
  const baseUrl = h("input", { name: "base_url", value: c.base_url || (editing ? "" : detail().default_base_url || ""),
    placeholder: detail().default_base_url || "https://…", required: true });
  const keyHint = h("span", { class: "small muted key-format" });
  const apiKey = editing ? null : h("input", { name: "api_key", type: "password", autocomplete: "off", "aria-describedby": "key-format-hint" });
  keyHint.id = "key-format-hint";
  const options = h("div", { class: "option-rows" }, ...optionRows(kind, c.options || {}, meta));
  const optionsLegend = h("legend", {});
  const responses = h("select", { name: "responses" },
    h("option", { value: "auto", selected: c.responses === null || c.responses === undefined }, "auto (on for api.openai.com only)"),
    h("option", { value: "true", selected: c.responses === true }, "yes: the upstream serves /responses"),
    h("option", { value: "false", selected: c.responses === false }, "no: translate to chat"));
  const responsesField = field("Responses API", responses);

  const showKind = () => {
    const d = detail();
    info.replaceChildren(...kindInfo(d));
    baseUrl.placeholder = d.default_base_url || "https://…";
    optionsLegend.textContent = `Options (${d.label || kind})`;
    if (apiKey) {
      apiKey.required = d.needs_key !== false;
      apiKey.placeholder = d.needs_key === false ? "none needed" : (d.key_format || "API key");
      keyHint.textContent = `${d.needs_key === false ? "optional; " : ""}the format is above; more keys, weights and caps: the channel's Keys button`;
    }
    const serves = (d.endpoints || []).includes("responses");
    responsesField.hidden = !serves;
    responses.disabled = !serves;  // left out of the form: the setting is kept
  };
  const select = h("select", { name: "kind", onchange: () => {
    const before = detail().default_base_url || "";
    // the rows that hold something stay; the new kind's declared options are added
    const kept = {};
    for (const row of options.querySelectorAll(".option-row")) {
      const [n, v] = row.querySelectorAll("input");
      if (n.value.trim() && v.value.trim()) kept[n.value.trim()] = v.value;
    }
    kind = select.value;
    options.replaceChildren(...optionRows(kind, kept, meta));
    // prefill the default base URL when the field is empty or still the old default
    if (!baseUrl.value.trim() || baseUrl.value.trim() === before) baseUrl.value = detail().default_base_url || "";
    showKind();
  } }, meta.kinds.map(k => h("option", { value: k, selected: kind === k },
    meta.details[k]?.label ? `${meta.details[k].label} (${k})` : k)));

  const own = c.timeouts || {};
  const node = h("div", { class: "form-grid" },
    field("Name", h("input", { name: "name", value: c.name || "", required: !editing, readonly: editing })),
    field("Kind", select),
    info,
    h("label", { class: "wide" }, "Base URL", baseUrl),
    apiKey ? h("label", { class: "wide" }, "API key", apiKey, keyHint) : null,
    h("label", { class: "wide" }, "Models (comma or one per line)", h("textarea", { name: "models", rows: 2, required: true }, (c.models || []).join(", "))),
    field("Priority", h("input", { name: "priority", type: "number", value: c.priority ?? 0 }), "higher tiers are tried first"),
    field("Weight", h("input", { name: "weight", type: "number", min: 1, value: c.weight ?? 1 })),
    field("Model map (alias=upstream)", h("textarea", { name: "model_map", rows: 2 }, pairs(c.model_map))),
    field("Extra headers (Name=Value)", h("textarea", { name: "headers", rows: 2 }, pairs(c.headers))),
    field("API version (Azure)", h("input", { name: "api_version", value: c.api_version || "" })),
    responsesField,
    h("fieldset", { class: "wide channel-options" }, optionsLegend, options,
      h("button", { type: "button", class: "small", onclick: () => {
        const row = optionRow("", "", null);
        options.append(row);
        row.querySelector("input").focus();
      } }, "Add option")),
    h("fieldset", { class: "wide channel-timeouts" },
      h("legend", {}, "Time limits (seconds; empty: the gateway's, shown)"),
      h("div", { class: "timeout-grid" }, TIMEOUTS.map(([name, label]) =>
        field(label, h("input", { name: `timeout_${name}`, type: "number", min: 0.1, step: "any", inputmode: "decimal",
          value: own[name] !== undefined ? seconds(own[name]) : "",
          placeholder: meta.timeouts[name] !== undefined ? seconds(meta.timeouts[name]) : "" }))))));
  showKind();

  const body = fd => {
    const b = {
      kind: fd.get("kind"), base_url: fd.get("base_url"), models: lines(fd.get("models")),
      priority: Number(fd.get("priority") || 0), weight: Number(fd.get("weight") || 1),
      model_map: parsePairs(fd.get("model_map")), headers: parsePairs(fd.get("headers")),
      api_version: fd.get("api_version") || null,
      options: {}, timeouts: {},  // the form shows them all: what it sends replaces them
    };
    const names = fd.getAll("option_name"), values = fd.getAll("option_value");
    names.forEach((n, i) => { if (String(n).trim() && String(values[i]).trim()) b.options[String(n).trim()] = String(values[i]).trim(); });
    for (const [name] of TIMEOUTS) { const v = fd.get(`timeout_${name}`); if (v) b.timeouts[name] = Number(v); }
    if (fd.get("responses")) b.responses = fd.get("responses") === "auto" ? "auto" : fd.get("responses") === "true";
    if (fd.get("name")) b.name = fd.get("name");
    if (fd.get("api_key")) b.api_key = fd.get("api_key");
    return b;
  };
  return { node, body };
}
