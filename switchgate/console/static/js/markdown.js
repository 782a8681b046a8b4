// A small Markdown renderer for the playground's replies. It builds DOM nodes and sets
// only text (never innerHTML), so whatever a model writes, HTML in it shows as text.
// Covers: fenced code blocks, inline code, headings, bold, italic, links (http, https,
// mailto only), bullet and numbered lists, block quotes, paragraphs and line breaks.

const SAFE_URL = /^(https?:|mailto:)/i;

function el(tag, attrs, children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  for (const c of children || []) node.append(c);
  return node;
}

// Inline spans: `code`, **bold**, *italic* / _italic_, [text](url).
export function inline(text) {
  const out = [];
  const pattern = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let last = 0, m;
  while ((m = pattern.exec(text)) !== null) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1]) out.push(el("code", {}, [m[2].trim()]));
    else if (m[3] || m[4]) out.push(el("strong", {}, inline(m[3] || m[4])));
    else if (m[5] || m[6]) out.push(el("em", {}, inline(m[5] || m[6])));
    else if (m[7]) {
      const url = m[8];
      out.push(SAFE_URL.test(url)
        ? el("a", { href: url, target: "_blank", rel: "noopener noreferrer nofollow" }, inline(m[7]))
        : m[0]);
    }
    last = pattern.lastIndex;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function withBreaks(lines) {
  const out = [];
  lines.forEach((line, i) => { if (i) out.push(el("br")); out.push(...inline(line)); });
  return out;
}

const FENCE = /^\s*(```|~~~)\s*([\w+#.-]*)\s*$/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*(\d{1,9})[.)]\s+(.*)$/;
const QUOTE = /^\s*>\s?(.*)$/;

// Markdown text -> a DocumentFragment. An unclosed fence (a reply still streaming)
// renders as a code block up to the end.
export function render(text) {
  const root = document.createDocumentFragment();
  const lines = String(text || "").replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(FENCE);
    if (fence) {
      const body = [];
      i++;
      while (i < lines.length && !new RegExp("^\\s*" + fence[1] + "\\s*$").test(lines[i])) body.push(lines[i++]);
      i++;
      const code = el("code", fence[2] ? { class: `language-${fence[2]}` } : {}, [body.join("\n")]);
      const pre = el("pre", { class: "md-code" }, [code]);
      if (fence[2]) pre.dataset.lang = fence[2];
      root.append(pre);
      continue;
    }
    if (!line.trim()) { i++; continue; }
    const heading = line.match(HEADING);
    if (heading) {
      root.append(el(`h${Math.min(6, heading[1].length + 2)}`, { class: "md-h" }, inline(heading[2])));
      i++;
      continue;
    }
    if (BULLET.test(line) || NUMBERED.test(line)) {
      const ordered = !BULLET.test(line);
      const re = ordered ? NUMBERED : BULLET;
      const start = ordered ? Number(line.match(NUMBERED)[1]) : 1;
      const list = el(ordered ? "ol" : "ul", ordered && start !== 1 ? { start: String(start) } : {});
      while (i < lines.length && re.test(lines[i])) {
        const m = lines[i].match(re);
        list.append(el("li", {}, inline(ordered ? m[2] : m[1])));
        i++;
      }
      root.append(list);
      continue;
    }
    if (QUOTE.test(line)) {
      const body = [];
      while (i < lines.length && QUOTE.test(lines[i])) body.push(lines[i++].match(QUOTE)[1]);
      root.append(el("blockquote", {}, [render(body.join("\n"))]));
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim() && !FENCE.test(lines[i]) && !HEADING.test(lines[i])
           && !BULLET.test(lines[i]) && !NUMBERED.test(lines[i]) && !QUOTE.test(lines[i])) para.push(lines[i++]);
    root.append(el("p", {}, withBreaks(para)));
  }
  return root;
}
