// The playground calls the gateway's own /v1 endpoints, exactly as a client would,
// with this browser session's playground token (POST /api/playground/token). Replies are
// rendered as Markdown (js/markdown.js: text only, never HTML); every reply, including
// images, speech and stopped ones, shows what it was charged (from the request log).
import { api, h, show, panel, field, fail, usd, exactUsd } from "../js/lib.js";
import { render } from "../js/markdown.js";

let token = null;
let models = [];
let history = [];       // [{role, content}]
let controller = null;  // AbortController of the call in flight

const MEDIA = { image: "image", tts: "speech" };
const CHAT_KINDS = ["chat", "image", "tts"];

async function getToken() {
  if (!token) token = (await api("POST", "/api/playground/token")).token;
  return token;
}

function estimate(model, usage) {
  const p = models.find(m => m.model === model);
  if (!p || !usage) return null;
  const cached = (usage.prompt_tokens_details && usage.prompt_tokens_details.cached_tokens) || 0;
  const perTok = x => Number(x || 0) / 1e6;
  return (usage.prompt_tokens - cached) * perTok(p.input_per_1m)
    + cached * perTok(p.cache_read_per_1m ?? p.input_per_1m)
    + usage.completion_tokens * perTok(p.output_per_1m) + Number(p.per_request_usd || 0);
}

async function errorText(res) {
  const text = await res.text();
  try { const j = JSON.parse(text); return (j.error && (j.error.message || j.error)) || text; } catch { return text || res.statusText; }
}

const $ = id => document.getElementById(id);

function bubble(role, text = "") {
  const el = h("div", { class: `msg ${role}` }, text);
  $("transcript").append(el);
  el.scrollIntoView({ block: "end" });
  return el;
}

function setBusy(busy) {
  $("send").disabled = busy;
  $("stop").disabled = !busy;
}

// What the request was charged, from the log (written in batches: retried for a few seconds).
async function showCharge(requestId, meta, onCost) {
  if (!requestId) return;
  for (let i = 0; i < 20; i++) {
    await new Promise(r => setTimeout(r, i ? 400 : 250));
    try {
      const row = await api("GET", `/api/logs/${encodeURIComponent(requestId)}`);
      const cost = h("span", { class: "charge", title: `charged ${exactUsd(row.cost_usd)}` }, usd(row.cost_usd, 6));
      if (onCost) onCost(cost); else meta.append(" · ", cost);
      return;
    } catch (err) { if (err.status !== 404) return; }
  }
}

async function streamChat(model, out, body, started) {
  const res = await fetch("/v1/chat/completions", {
    method: "POST", signal: controller.signal,
    headers: { authorization: `Bearer ${await getToken()}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  out.requestId = res.headers.get("x-request-id");
  if (!res.ok) throw new Error(await errorText(res));
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "", usage = null, pending = false;
  const md = h("div", { class: "md" });
  out.replaceChildren(md);
  out.text = "";
  const paint = () => { pending = false; md.replaceChildren(render(out.text)); out.scrollIntoView({ block: "end" }); };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      for (const line of event.split("\n")) {
        if (!line.startsWith("data:")) continue;
        const data = line.slice(5).trim();
        if (data === "[DONE]") continue;
        const chunk = JSON.parse(data);
        if (chunk.error) throw new Error(chunk.error.message || "The stream ended with an error");
        const delta = chunk.choices && chunk.choices[0] && chunk.choices[0].delta;
        if (delta && delta.content) {
          out.text += delta.content;
          if (!pending) { pending = true; requestAnimationFrame(paint); }
          md.textContent = out.text;  // plain at once; Markdown on the next frame
        }
        if (chunk.usage) usage = chunk.usage;
      }
    }
  }
  paint();
  return usage;
}

async function media(kind, model, prompt, out) {
  const path = kind === "image" ? "/v1/images/generations" : "/v1/audio/speech";
  const body = kind === "image"
    ? { model, prompt, n: 1, response_format: "b64_json" }
    : { model, input: prompt, voice: "alloy", response_format: "mp3" };
  const res = await fetch(path, {
    method: "POST", signal: controller.signal,
    headers: { authorization: `Bearer ${await getToken()}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  out.requestId = res.headers.get("x-request-id");
  if (!res.ok) {
    const message = await errorText(res);
    if (res.status === 404 && /nknown endpoint/.test(message)) {
      const what = kind === "image" ? "Image generation" : "Text to speech";
      throw new Error(`${what} is not available on this gateway yet (${path} answered 404: ${message}).`);
    }
    throw new Error(message);
  }
  if (kind === "image") {
    const data = await res.json();
    const item = data.data && data.data[0];
    const src = item && (item.b64_json ? `data:image/png;base64,${item.b64_json}` : item.url);
    out.replaceChildren(src ? h("img", { src, alt: `Generated image: ${prompt}` }) : "(no image in the answer)");
  } else {
    const url = URL.createObjectURL(await res.blob());
    out.replaceChildren(h("audio", { controls: true, autoplay: true, src: url, "aria-label": `Speech: ${prompt}` }));
  }
}

function chatBody(model) {
  const system = $("system").value.trim();
  const body = {
    model, stream: true, stream_options: { include_usage: true },
    messages: [...(system ? [{ role: "system", content: system }] : []), ...history],
  };
  const temperature = $("temperature").value;
  if (temperature !== "") body.temperature = Number(temperature);
  const maxTokens = $("max_tokens").value;
  if (maxTokens) body.max_tokens = Number(maxTokens);
  return body;
}

async function send(e) {
  e.preventDefault();
  const input = $("prompt");
  const prompt = input.value.trim();
  const model = $("model").value;
  if (!prompt || !model) return;
  const kind = (models.find(m => m.model === model) || {}).kind || "chat";
  input.value = "";
  bubble("user", prompt);
  const out = bubble("assistant streaming", "");
  out.id = "reply-live";
  controller = new AbortController();
  setBusy(true);
  const started = performance.now();
  const seconds = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
  try {
    if (MEDIA[kind]) {
      await media(kind, model, prompt, out);
      const meta = h("span", { class: "meta reply-meta" }, `${model} · ${seconds()}`);
      out.append(meta);
      showCharge(out.requestId, meta);
    } else {
      history.push({ role: "user", content: prompt });
      const usage = await streamChat(model, out, chatBody(model), started);
      history.push({ role: "assistant", content: out.text });
      const c = estimate(model, usage);
      const cost = h("span", { class: "charge" }, c === null ? "" : usd(String(c.toFixed(12)), 6));
      const meta = h("span", { class: "meta reply-meta" }, usage
        ? [`${usage.prompt_tokens} in · ${usage.completion_tokens} out tokens · `, cost, ` · ${seconds()}`]
        : "no usage reported");
      out.append(meta);
      showCharge(out.requestId, meta, charged => cost.replaceWith(charged));
    }
  } catch (err) {
    if (err.name === "AbortError") {
      const meta = h("span", { class: "meta" }, "stopped");
      out.append(meta);
      if (kind === "chat" && out.text) history.push({ role: "assistant", content: out.text });
      else if (kind === "chat") history.pop();
      showCharge(out.requestId, meta);
    } else {
      if (kind === "chat") history.pop();
      out.remove();
      bubble("error", err.message.charAt(0).toUpperCase() + err.message.slice(1));
    }
  } finally {
    out.classList.remove("streaming");
    out.removeAttribute("id");
    setBusy(false);
    controller = null;
  }
}

async function main() {
  models = (await api("GET", "/api/models")).items.filter(m => m.served && m.priced !== false);
  const usable = models.filter(m => CHAT_KINDS.includes(m.kind));
  // Chat models first (the default is the first chat model), then image and speech models.
  const ordered = [...usable.filter(m => m.kind === "chat"), ...usable.filter(m => m.kind !== "chat")];
  const form = h("form", { class: "chat panel", id: "chat-form", onsubmit: send },
    field("Model", h("select", { id: "model" }, ordered.length
      ? ordered.map(m => h("option", { value: m.model }, `${m.model}${MEDIA[m.kind] ? ` (${MEDIA[m.kind]})` : ""}`))
      : h("option", { value: "" }, "no models yet"))),
    h("div", { class: "transcript", id: "transcript", role: "log", "aria-live": "polite", "aria-label": "Conversation" },
      h("p", { class: "muted small" }, "Replies stream in as they are generated. Image models show the image; speech models play the audio.")),
    h("div", { class: "composer" },
      h("label", { for: "prompt", class: "sr-only" }, "Message"),
      h("textarea", { id: "prompt", rows: 2, placeholder: "Type a message… (Enter sends, Shift+Enter for a new line)",
        onkeydown: e => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); } } }),
      h("div", { class: "stack" },
        h("button", { type: "submit", class: "primary", id: "send" }, "Send"),
        h("button", { type: "button", id: "stop", disabled: true, onclick: () => controller && controller.abort() }, "Stop"))));
  const narrow = window.matchMedia("(max-width: 900px)").matches;
  show(h("div", { class: "playground" },
    h("details", { class: "panel settings", open: !narrow },
      h("summary", {}, "Settings"),
      h("div", { class: "stack" },
        field("System prompt", h("textarea", { id: "system", rows: 3, placeholder: "optional" })),
        field("Temperature", h("input", { id: "temperature", type: "number", min: 0, max: 2, step: 0.1, placeholder: "model default" })),
        field("Max tokens", h("input", { id: "max_tokens", type: "number", min: 1, placeholder: "model default" })),
        h("button", { type: "button", id: "new-chat", onclick: () => {
          history = []; $("transcript").replaceChildren();
        } }, "New chat"))),
    form));
  if (!narrow) $("prompt").focus();
}

main().catch(fail);
