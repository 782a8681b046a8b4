// A model's prices in words, in the units they are charged in (shared by the Models page,
// the public pricing page and the playground's cost line). Prices arrive as exact USD strings.

const num = v => (v === null || v === undefined || v === "" ? 0 : Number(v));
const money = v => {
  const n = Number(v);
  return "$" + (Number.isInteger(n) ? String(n) : String(v).replace(/0+$/, "").replace(/\.$/, ""));
};

// ["$1 in / $2 out per 1M tokens", "$0.04 per image", ...]; never "$0 / $0 per 1M".
export function describe(m) {
  const out = [];
  const sizes = Object.entries(m.image_prices || {});
  if (m.per_image_usd !== null && m.per_image_usd !== undefined) out.push(`${money(m.per_image_usd)} per image`);
  for (const [size, usd] of sizes) out.push(`${size}: ${money(usd)} per image`);
  if (m.per_1m_characters !== null && m.per_1m_characters !== undefined) out.push(`${money(m.per_1m_characters)} per 1M characters`);
  if (m.per_minute_usd !== null && m.per_minute_usd !== undefined) out.push(`${money(m.per_minute_usd)} per minute of audio`);
  const tokenIn = num(m.input_per_1m), tokenOut = num(m.output_per_1m);
  if (tokenIn && tokenOut) out.push(`${money(m.input_per_1m)} in / ${money(m.output_per_1m)} out per 1M tokens`);
  else if (tokenIn) out.push(`${money(m.input_per_1m)} per 1M input tokens`);
  else if (tokenOut) out.push(`${money(m.output_per_1m)} per 1M output tokens`);
  if (m.cache_read_per_1m !== null && m.cache_read_per_1m !== undefined) out.push(`cached input ${money(m.cache_read_per_1m)} per 1M`);
  if (m.cache_write_per_1m !== null && m.cache_write_per_1m !== undefined) out.push(`cache writes ${money(m.cache_write_per_1m)} per 1M`);
  if (num(m.per_request_usd)) out.push(`${money(m.per_request_usd)} per request`);
  return out.length ? out : ["no price set"];
}

// What one image / one speech reply costs, as a number of USD (an estimate the playground shows;
// the log has the exact charge).
export function imageCost(m, size, quality) {
  const sizes = m.image_prices || {};
  const pick = sizes[`${size}:${quality}`] ?? sizes[size] ?? m.per_image_usd;
  const any = Object.values(sizes).concat(m.per_image_usd ?? []).map(Number);
  const each = pick !== undefined && pick !== null ? Number(pick) : (any.length ? Math.max(...any) : null);
  return each === null ? null : each + num(m.per_request_usd);
}

export function speechCost(m, characters) {
  if (m.per_1m_characters !== null && m.per_1m_characters !== undefined) {
    return characters * Number(m.per_1m_characters) / 1e6 + num(m.per_request_usd);
  }
  return null;
}
