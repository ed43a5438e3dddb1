// Renders text that could spoof the display without changing what is stored (issue 29, item 8): a value
// holding bidirectional embedding, override or isolate controls (U+202A…U+202E, U+2066…U+2069) is wrapped in
// FIRST STRONG ISOLATE … POP DIRECTIONAL ISOLATE — the plain-text form of <bdi>, valid in attributes too —
// with its own isolates balanced (a stray PDI, which would end the wrapper early, is left out; isolates left
// open are closed), so it cannot reorder the text after it; NUL shows as ␀ (U+2400). Other text is returned
// unchanged. Sources/LiveActivityRendering/BidiIsolation.swift does the same on the server.

const CONTROL = /[\u202A-\u202E\u2066-\u2069]/;

/**
 * Text as it is safe to render.
 * @param {string} text
 * @returns {string}
 * @example isolated("a\u202Eb") // "\u2068a\u202Eb\u2069"
 */
export function isolated(text) {
  const hasControl = CONTROL.test(text);
  if (!hasControl && !text.includes("\u0000")) return text;
  let out = hasControl ? "\u2068" : "";
  let open = 0;
  for (const char of text) {
    if (char === "\u0000") out += "\u2400";
    else if (char === "\u2066" || char === "\u2067" || char === "\u2068") { open += 1; out += char; }
    else if (char === "\u2069") { if (open > 0) { open -= 1; out += char; } }
    else out += char;
  }
  return hasControl ? out + "\u2069".repeat(open + 1) : out;
}

/**
 * Text with bidirectional controls and NUL written as escapes (`\u202e`), for showing a payload as it is
 * (the push inspector).
 * @param {string} text
 * @returns {string}
 */
export function escapedControls(text) {
  return text.replace(/[\u0000\u200E\u200F\u202A-\u202E\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
