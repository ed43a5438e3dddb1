// Pure helpers of the push inspector page: labels, filters, curl commands, timeline geometry. No DOM.

import { escapedControls } from "./bidi.js";

/** Human words for each verdict. */

export const VERDICT_LABELS = {
  applied: "Applied",
  ignored: "Ignored by iOS",
  dropped: "Dropped by iOS",
  refused: "Refused",
  answered: "Answered",
};

/**
 * Quotes a string for a POSIX shell (single quotes).
 * @param {string} text
 * @returns {string}
 */
export function shellQuote(text) {
  return `'${String(text).replace(/'/g, `'\\''`)}'`;
}

/**
 * The curl command that sends a recorded push again, to this server (as APNs would be called).
 * The controller token is left as a shell variable: the page never writes secrets.
 * @param {object} record an inspection with source "push"
 * @param {string} origin e.g. "http://127.0.0.1:8080"
 * @returns {string}
 */
export function curlCommand(record, origin) {
  const lines = [
    `curl -i -X POST ${shellQuote(`${origin}/3/device/${record.pushToken || ""}`)}`,
    `  -H 'apns-push-type: liveactivity'`,
    `  -H 'apns-topic: com.example.app.push-type.liveactivity'`,
    `  -H ${shellQuote(`apns-priority: ${record.priority || 10}`)}`,
    `  -H "authorization: bearer $LIVEACTIVITY_CONTROLLER_TOKEN"`,
    `  -H 'content-type: application/json'`,
    `  --data ${shellQuote(JSON.stringify(record.raw ?? {}))}`,
  ];
  return lines.join(" \\\n");
}

/**
 * What to copy for a record: a curl command for a push, the JSON message otherwise.
 * @param {object} record
 * @param {string} origin
 * @returns {string}
 */
export function copyText(record, origin) {
  return record.source === "push" ? curlCommand(record, origin) : JSON.stringify(record.raw ?? null);
}

/**
 * Whether a record passes the filters.
 * @param {object} record
 * @param {{activity?:string, verdict?:string, pushesOnly?:boolean}} filters
 * @returns {boolean}
 */
export function matches(record, { activity = "", verdict = "", pushesOnly = false } = {}) {
  if (activity && record.activityId !== activity) return false;
  if (verdict && record.verdict !== verdict) return false;
  if (pushesOnly && record.source !== "push") return false;
  return true;
}

/**
 * A one-line title: what it was.
 * @param {object} record
 * @returns {string}
 */
export function recordTitle(record) {
  if (record.source === "push") return `push ${record.event || "?"} (${record.transport})`;
  return `${record.type} message`;
}

/**
 * `HH:MM:SS.mmm` in local time.
 * @param {string} iso
 * @returns {string}
 */
export function clockTime(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  const pad = (n, w = 2) => String(n).padStart(w, "0");
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/**
 * A short id for display: the first 8 characters.
 * @param {string|undefined} id
 * @returns {string}
 */
export function shortId(id) {
  return id ? `${id.slice(0, 8)}…` : "—";
}

/**
 * JSON for display (2-space indent), bidirectional controls written as escapes (`\u202e`, as JSON writes NUL);
 * `undefined` shows as an em dash.
 * @param {*} value
 * @returns {string}
 */
export function pretty(value) {
  return value === undefined ? "—" : escapedControls(JSON.stringify(value, null, 2));
}

/**
 * Position (0…1000) of an instant on the axis from `fromMs` to `toMs`.
 * @param {number} ms
 * @param {number} fromMs
 * @param {number} toMs
 * @returns {number}
 */
export function axisX(ms, fromMs, toMs) {
  if (!(toMs > fromMs)) return 0;
  return Math.max(0, Math.min(1000, ((ms - fromMs) / (toMs - fromMs)) * 1000));
}

/**
 * The instant (ms) a slider value 0…1000 stands for.
 * @param {number} value
 * @param {number} fromMs
 * @param {number} toMs
 * @returns {number}
 */
export function instantAt(value, fromMs, toMs) {
  return Math.round(fromMs + ((toMs - fromMs) * Number(value)) / 1000);
}

/**
 * The slider value 0…1000 of an instant (rounded up, so the event at that instant is included).
 * @param {number} ms
 * @param {number} fromMs
 * @param {number} toMs
 * @returns {number}
 */
export function sliderValue(ms, fromMs, toMs) {
  if (!(toMs > fromMs)) return 1000;
  return Math.max(0, Math.min(1000, Math.ceil(((ms - fromMs) / (toMs - fromMs)) * 1000)));
}
