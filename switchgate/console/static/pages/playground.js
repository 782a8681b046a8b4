// The playground calls the gateway's own /v1 endpoints, exactly as a client would,
// with this browser session's playground token (POST /api/playground/token).
import { api, h, show, panel, field, fail, usd } from "../js/lib.js";

let token = null;
let models = [];
let history = [];       // [{role, content}]
let controller = null;  // AbortController of the call in flight

async function getToken() {
  if (!token) token = (await api("POST", "/api/playground/token")).token;
  return token;
}

function cost(model, usage) {
  const p = models.find(m => m.model === model);
  if (!p || !usage) return null;
  const cached = (usage.prompt_tokens_details && usage.prompt_tokens_details.cached_tokens) || 0;
  const perTok = x => Number(x || 0) / 1e6;
  const c = (usage.prompt_tokens - cached) * perTok(p.input_per_1m)
    + cached * perTok(p.cache_read_per_1m ?? p.input_per_1m)
    + usage.completion_tokens * perTok(p.output_per_1m) + Number(p.per_request_usd || 0);
  return c;
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

async function streamChat(model, out) {
  const system = $("system").value.trim();
  const body = {
    model, stream: true, stream_options: { include_usage: true },
    messages: [...(system ? [{ role: "system", content: system }] : []), ...history],
  };
  const temperature = $("temperature").value;
  if (temperature !== "") body.temperature = Number(temperature);
  const maxTokens = $("max_tokens").value;
  if (maxTokens) body.max_tokens = Number(maxTokens);
  const res = await fetch("/v1/chat/completions", {
    method: "POST", signal: controller.signal,
    headers: { authorization: `Bearer ${await getToken()}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(await errorText(res));
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "", text = "", usage = null;
  const textNode = document.createTextNode("");
  out.replaceChildren(textNode);
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
        if (chunk.error) throw new Error(chunk.error.message || "the stream ended with an error");
        const delta = chunk.choices && chunk.choices[0] && chunk.choices[0].delta;
        if (delta && delta.content) { text += delta.content; textNode.data = text; out.scrollIntoView({ block: "end" }); }
        if (chunk.usage) usage = chunk.usage;
      }
    }
  }
  return { text, usage };
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
  if (res.status === 404) {
    const what = kind === "image" ? "Image generation" : "Text to speech";
    throw new Error(`${what} is not available on this gateway yet (${path} answered 404: ${await errorText(res)}).`);
  }
  if (!res.ok) throw new Error(await errorText(res));
  if (kind === "image") {
    const data = await res.json();
    const item = data.data && data.data[0];
    const src = item && (item.b64_json ? `data:image/png;base64,${item.b64_json}` : item.url);
    out.replaceChildren(src ? h("img", { src, alt: prompt }) : "(no image in the answer)");
  } else {
    const url = URL.createObjectURL(await res.blob());
    out.replaceChildren(h("audio", { controls: true, autoplay: true, src: url }));
  }
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
  try {
    if (kind === "image" || kind === "tts") {
      await media(kind, model, prompt, out);
      out.append(h("span", { class: "meta" }, `${model} · ${((performance.now() - started) / 1000).toFixed(1)} s`));
    } else {
      history.push({ role: "user", content: prompt });
      const { text, usage } = await streamChat(model, out);
      history.push({ role: "assistant", content: text });
      const c = cost(model, usage);
      out.append(h("span", { class: "meta reply-meta" }, usage
        ? `${usage.prompt_tokens} in · ${usage.completion_tokens} out tokens · ${c === null ? "" : usd(String(c), 6)} · ${((performance.now() - started) / 1000).toFixed(1)} s`
        : "no usage reported"));
    }
  } catch (err) {
    if (err.name === "AbortError") {
      out.append(h("span", { class: "meta" }, "stopped"));
      const partial = out.firstChild && out.firstChild.nodeType === 3 ? out.firstChild.data : "";
      if (kind === "chat" && partial) history.push({ role: "assistant", content: partial });
      else if (kind === "chat") history.pop();
    } else {
      if (kind === "chat") history.pop();
      out.remove();
      bubble("error", err.message);
    }
  } finally {
    out.classList.remove("streaming");
    out.removeAttribute("id");
    setBusy(false);
    controller = null;
  }
}

async function main() {
  models = (await api("GET", "/api/models")).items.filter(m => m.served);
  const chatModels = models.filter(m => !["embedding", "stt", "rerank", "realtime"].includes(m.kind));
  const form = h("form", { class: "chat panel", id: "chat-form", onsubmit: send },
    h("div", { class: "transcript", id: "transcript" },
      h("p", { class: "muted small" }, "Replies stream in as they are generated. Image models show the image; speech models play the audio.")),
    h("div", { class: "composer" },
      h("textarea", { id: "prompt", rows: 2, placeholder: "Type a message… (Enter sends, Shift+Enter for a new line)",
        onkeydown: e => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); } } }),
      h("div", { class: "stack" },
        h("button", { type: "submit", class: "primary", id: "send" }, "Send"),
        h("button", { type: "button", id: "stop", disabled: true, onclick: () => controller && controller.abort() }, "Stop"))));
  show(h("div", { class: "playground" },
    panel("Settings",
      h("div", { class: "stack" },
        field("Model", h("select", { id: "model" }, chatModels.length
          ? chatModels.map(m => h("option", { value: m.model }, `${m.model}${m.kind !== "chat" ? ` (${m.kind})` : ""}`))
          : h("option", { value: "" }, "no models yet"))),
        field("System prompt", h("textarea", { id: "system", rows: 3, placeholder: "optional" })),
        field("Temperature", h("input", { id: "temperature", type: "number", min: 0, max: 2, step: 0.1, placeholder: "model default" })),
        field("Max tokens", h("input", { id: "max_tokens", type: "number", min: 1, placeholder: "model default" })),
        h("button", { type: "button", id: "new-chat", onclick: () => {
          history = []; $("transcript").replaceChildren();
        } }, "New chat"))),
    form));
  $("prompt").focus();
}

main().catch(fail);
