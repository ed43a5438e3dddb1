// The render context's `display` object: each top-level field's value as the generated layout shows it. The
// same function as the server's DisplayValues (Sources/LiveActivityRendering/Context/DisplayValues.swift):
// Tests/fixtures/render-context/cases.json holds the cases both are tested against. Pure: no DOM, no clock.

import { formatCountdown, parseDateMs } from "./time.js";

const ROW_LIMIT = 2;
const LIST_LIMIT = 2;
const NEAR_MS = 3600000;

/**
 * `H:mm` of an instant (24-hour), as render-context.js's `timeOfDay`.
 * @param {number} ms epoch milliseconds.
 * @param {number} offsetMinutes minutes east of UTC.
 * @returns {string}
 */
function timeOfDay(ms, offsetMinutes) {
  const minutes = ((Math.trunc((ms + offsetMinutes * 60000) / 60000) % 1440) + 1440) % 1440;
  return `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;
}

/**
 * Whether a text is one of the protocol's dates (`YYYY-MM-DDThh:mm…`), not just any text a parser takes.
 * @param {string} text
 * @returns {boolean}
 */
export function looksLikeDate(text) {
  return typeof text === "string" && text.length >= 17 && text.length <= 40 && /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(text);
}

/**
 * A date's or `{start, end}` range's bounds in epoch ms; a date counts from `startMs` (or from itself).
 * @param {*} value
 * @param {number|null} startMs
 * @returns {{start: number, end: number, isRange: boolean}|null}
 */
export function dateBounds(value, startMs) {
  if (typeof value === "string") {
    if (!looksLikeDate(value)) return null;
    const end = parseDateMs(value);
    if (!Number.isFinite(end)) return null;
    return { start: Math.min(Number.isFinite(startMs) ? startMs : end, end), end, isRange: false };
  }
  if (value && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 2
      && looksLikeDate(value.start) && looksLikeDate(value.end)) {
    const start = parseDateMs(value.start), end = parseDateMs(value.end);
    if (Number.isFinite(start) && Number.isFinite(end)) return { start, end, isRange: true };
  }
  return null;
}

/**
 * A number as the layout shows it: whole numbers below 2^53 in full, grouped with commas from 10,000 on; others
 * rounded to two decimals, trailing zeros dropped; a magnitude from 1e15 on, or a non-zero one under 0.005
 * (which two decimals would show as 0), in exponent form: `1e308`, `-1.5e20`, `1e-7` (as DisplayValues.swift).
 * @param {number} number
 * @returns {string}
 */
export function formatNumber(number) {
  if (!Number.isFinite(number)) return String(number);
  const isWhole = Number.isInteger(number) && Math.abs(number) < 9007199254740992;
  if (!isWhole && number !== 0 && (Math.abs(number) >= 1e15 || Math.abs(number) < 0.005)) {
    const [mantissa, exponent] = number.toExponential(2).split("e");
    return mantissa.replace(/0+$/, "").replace(/\.$/, "") + "e" + String(Number(exponent));
  }
  let text = isWhole ? String(number) : number.toFixed(2);
  if (text.includes(".")) text = text.replace(/0+$/, "").replace(/\.$/, "");
  const negative = text.startsWith("-");
  if (negative) text = text.slice(1);
  let [whole, fraction] = text.split(".");
  if (whole.length > 4) whole = whole.replace(/\B(?=(\d{3})+$)/g, ",");
  return (negative ? "-" : "") + whole + (fraction !== undefined ? `.${fraction}` : "");
}

/**
 * A value as one line of text (a date as its time of day, a range as both, a number formatted, a Bool as
 * Yes / No, an array as a short list, an object as its values by key joined with " · "), or null for null.
 * @param {*} value
 * @param {number} offsetMinutes
 * @returns {string|null}
 */
export function displayText(value, offsetMinutes) {
  const bounds = dateBounds(value, null);
  if (bounds) {
    return bounds.isRange ? `${timeOfDay(bounds.start, offsetMinutes)} – ${timeOfDay(bounds.end, offsetMinutes)}`
      : timeOfDay(bounds.end, offsetMinutes);
  }
  if (typeof value === "string") return value;
  if (typeof value === "number") return formatNumber(value);
  if (typeof value === "boolean") return value ? "Yes" : "No";
  if (Array.isArray(value)) return list(value.map((v) => displayText(v, offsetMinutes))) ?? "";
  if (value && typeof value === "object") {
    return Object.keys(value).sort().map((k) => displayText(value[k], offsetMinutes))
      .filter((t) => t !== null && t !== "").join(" · ");
  }
  return null;
}

/**
 * A dictionary as its pairs, each key and value as text ("economy 12, business 2"), the first LIST_LIMIT then
 * `+N`: from a flat array of alternating key, value in its order, or from an object by sorted key; pairs with a
 * null value are left out; null when none is left, or when the value is not of the dictionary's form
 * (DisplayValues.swift `pairs`).
 * @param {*} value
 * @param {"array"|"object"} form
 * @param {number} offsetMinutes
 * @param {{keys?: object, values?: object}|null} labels words for a raw-value enum's keys and values (`elementLabels`).
 * @returns {string|null}
 */
export function pairsText(value, form, offsetMinutes, labels = null) {
  const pairs = [];
  if (form === "array" && Array.isArray(value)) {
    for (let i = 0; i + 1 < value.length; i += 2) pairs.push([value[i], value[i + 1]]);
  } else if (form === "object" && value && typeof value === "object" && !Array.isArray(value)) {
    for (const key of Object.keys(value).sort()) pairs.push([key, value[key]]);
  } else {
    return null;
  }
  const texts = [];
  for (const [key, item] of pairs) {
    const keyText = labelled(key, labels?.keys, offsetMinutes), itemText = labelled(item, labels?.values, offsetMinutes);
    if (keyText === null || itemText === null || itemText === "") continue;
    texts.push(`${keyText} ${itemText}`);
  }
  return list(texts);
}

/** @private Texts as a short list: the first LIST_LIMIT joined with ", ", then `+N`; null when none is left. */
function list(texts) {
  const shown = texts.filter((t) => t !== null && t !== "");
  if (!shown.length) return null;
  const first = shown.slice(0, LIST_LIMIT).join(", ");
  return shown.length > LIST_LIMIT ? `${first} +${shown.length - LIST_LIMIT}` : first;
}

/**
 * A value as text, in words when `words` has its raw value (a string as it is, a whole number as its digits:
 * KindMetadata.labelKey); an own key only.
 * @param {*} value
 * @param {object|undefined} words
 * @param {number} offsetMinutes
 * @returns {string|null}
 */
export function labelled(value, words, offsetMinutes) {
  const key = typeof value === "string" ? value : Number.isInteger(value) && Math.abs(value) < 1e15 ? String(value) : null;
  if (key !== null && words && typeof words === "object" && Object.hasOwn(words, key) && typeof words[key] === "string") return words[key];
  return displayText(value, offsetMinutes);
}

/** @private Each non-null, non-empty field of an object as text, by key (sorted, as the server's are). */
function texts(object, offsetMinutes) {
  const out = {};
  for (const key of Object.keys(object).sort()) {
    const text = displayText(object[key], offsetMinutes);
    if (text !== null && text !== "") out[key] = text;
  }
  return out;
}

/**
 * The `display` object (docs/TEMPLATES.md): by field, `{text}`; a date or range `{text, countdown, near,
 * progress}`; an array of objects `{rows, more}`; an object `{fields}`. Null and empty values are left out.
 * @param {object} fields the attributes and state merged (state wins), as sent.
 * @param {object} context the context built so far (enum labels).
 * @param {object} kind the kind as `GET /kinds` lists it.
 * @param {number} nowMs the instant shown, epoch ms.
 * @param {number} startMs the activity's startDate, epoch ms (NaN without one).
 * @param {number|null} freezeMs where countdowns stop (pausedAt, or endDate once ended).
 * @param {number} offsetMinutes minutes east of UTC.
 * @returns {object}
 */
export function displayValues(fields, context, kind, nowMs, startMs, freezeMs, offsetMinutes) {
  const display = {};
  for (const key of Object.keys(fields).sort()) {
    const value = fields[key];
    if (key === "pausedAt" || key === kind.image) continue;
    if (kind.enums?.[key] && typeof context[key]?.label === "string") { display[key] = { text: context[key].label }; continue; }
    const form = kind.dictionaries?.[key];
    const labels = kind.elementLabels?.[key] ?? null;
    if (form === "array" || form === "object") {
      const text = pairsText(value, form, offsetMinutes, labels);
      if (text !== null) display[key] = { text };
      continue;
    }
    if (labels?.values && Array.isArray(value) && !value.some((v) => v && typeof v === "object")) {
      const text = list(value.map((v) => labelled(v, labels.values, offsetMinutes)));
      if (text !== null) display[key] = { text };
      continue;
    }
    const bounds = dateBounds(value, startMs);
    if (bounds) {
      let reference = nowMs;
      if (freezeMs !== null && freezeMs !== undefined) reference = Math.min(reference, freezeMs);
      // A range not begun yet is shown by its start where one time fits (compact, minimal), else by its end.
      const next = bounds.isRange && reference < bounds.start ? bounds.start : bounds.end;
      reference = Math.max(reference, bounds.start);
      const left = bounds.end - reference, length = bounds.end - bounds.start;
      const done = length <= 0 ? 1000 : Math.min(1000, Math.max(0, Math.trunc((reference - bounds.start) * 1000 / length)));
      display[key] = {
        text: displayText(value, offsetMinutes),
        short: timeOfDay(next, offsetMinutes),
        countdown: formatCountdown(left <= 0 ? 0 : Math.ceil(left / 1000)),
        near: left > 0 && left <= NEAR_MS,
        progress: done,
      };
      continue;
    }
    if (Array.isArray(value) && value.some((v) => v && typeof v === "object" && !Array.isArray(v) && !dateBounds(v, null)?.isRange)) {
      const rows = value.slice(0, ROW_LIMIT).filter((v) => v && typeof v === "object" && !Array.isArray(v)).map((v) => ({ fields: texts(v, offsetMinutes) }));
      if (!rows.length) continue;
      display[key] = { rows };
      if (value.length > ROW_LIMIT) display[key].more = `+${value.length - ROW_LIMIT} more`;
    } else if (value && typeof value === "object" && !Array.isArray(value)) {
      const inner = texts(value, offsetMinutes);
      if (Object.keys(inner).length) display[key] = { fields: inner };
    } else {
      const text = displayText(value, offsetMinutes);
      if (text !== null && text !== "") display[key] = { text };
    }
  }
  return display;
}
