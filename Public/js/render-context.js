// The values a kind's templates see: one activity at one instant, as a plain object. The same function as
// the server's RenderContext (Sources/LiveActivityRendering/Context/RenderContext.swift): the same inputs give
// the same object (Tests/fixtures/render-context/cases.json holds the cases both are tested against).
// Pure: no DOM, no clock. The shape is documented in docs/TEMPLATES.md.

import { displayValues, labelled } from "./display-values.js";
import { formatCountdown, parseDateMs } from "./time.js";

/**
 * `H:mm` of an instant, as SwiftUI shows a time of day (24-hour).
 * @param {number} ms epoch milliseconds.
 * @param {number} offsetMinutes minutes east of UTC.
 * @returns {string} e.g. "10:02".
 */
export function timeOfDay(ms, offsetMinutes) {
  const minutes = ((Math.trunc((ms + offsetMinutes * 60000) / 60000) % 1440) + 1440) % 1440;
  const h = Math.floor(minutes / 60), m = minutes % 60;
  return `${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}`;
}

/**
 * The name lists show, from `kind.json`'s `title` template: `{{path}}` becomes the context's text at that path.
 * @param {string} template e.g. "{{workout.label}}".
 * @param {object} context a render context.
 * @returns {string}
 */
export function renderTitle(template, context) {
  const out = String(template).replace(/\{\{([^}]*?)\}\}/g, (_, path) => {
    let value = context;
    for (const key of path.trim().split(".")) value = value && typeof value === "object" ? value[key] : undefined;
    if (typeof value === "string") return value;
    if (typeof value === "number") return String(value);
    if (typeof value === "boolean") return value ? "true" : "false";
    return "";
  });
  return out.trim();
}

/**
 * Builds the render context.
 * @param {object} activity the protocol's activity object.
 * @param {object} kind the kind as `GET /kinds` lists it.
 * @param {number} nowMs the instant to show, epoch ms.
 * @param {number} [offsetMinutes=0] minutes east of UTC for times of day (`range`).
 * @returns {object}
 */
export function buildRenderContext(activity, kind, nowMs, offsetMinutes = 0) {
  const attributes = isObject(activity?.attributes) ? activity.attributes : {};
  const content = isObject(activity?.content) ? activity.content : {};
  const state = isObject(content.state) ? content.state : {};
  const context = { ...attributes, ...state };
  const fallbackIcon = kind.fallbackIcon ?? "workout";
  const label = kind.label ?? kind.name;

  for (const [field, values] of Object.entries(kind.enums ?? {})) {
    const raw = attributes[field] ?? state[field];
    if (raw === undefined || raw === null) continue;
    const keyed = keyedCase(raw, values, fallbackIcon, offsetMinutes);
    if (keyed) { context[field] = keyed; continue; }
    const entry = values.find((e) => e.value === raw || (e.rawValue !== undefined && e.rawValue === raw));
    const text = typeof raw === "string" ? raw : typeof raw === "number" ? String(raw) : "";
    context[field] = {
      value: entry?.value ?? text,
      label: entry?.label ?? (text.charAt(0).toUpperCase() + text.slice(1)),
      icon: entry?.icon ?? fallbackIcon,
    };
  }

  const shown = shownState(activity, content, nowMs);
  const pausedAt = parseDateMs(state.pausedAt);
  const paused = Number.isFinite(pausedAt);
  let countdown = null;
  const bounds = kind.countdown ? countdownBounds(state[kind.countdown], activity) : null;
  if (bounds) {
    let freeze = paused ? pausedAt : null;
    const ended = parseDateMs(activity.endDate);
    if ((shown === "ended" || shown === "dismissed") && Number.isFinite(ended)) freeze = Math.min(freeze ?? ended, ended);
    let reference = nowMs;
    if (freeze !== null) reference = Math.min(reference, freeze);
    reference = Math.max(reference, bounds.start);
    const left = bounds.end - reference;
    countdown = formatCountdown(left <= 0 ? 0 : Math.ceil(left / 1000));
    context[kind.countdown] = {
      countdown,
      range: `${timeOfDay(bounds.start, offsetMinutes)} – ${timeOfDay(bounds.end, offsetMinutes)}`,
      paused,
      start: new Date(bounds.start).toISOString(),
      end: new Date(bounds.end).toISOString(),
    };
  }

  if (kind.image) {
    const t = activity?.thumbnail?.["1x"];
    const thumbnail = typeof t === "string" && t.startsWith("/images/") ? t : null;
    context[kind.image] = {
      src: thumbnail ?? `/icons/${fallbackIcon}.svg`,
      url: typeof attributes[kind.image] === "string" ? attributes[kind.image] : "",
      thumbnail: thumbnail !== null,
      logo: "/icons/favicon.svg",
    };
  }

  let freeze = paused ? pausedAt : null;
  const endedMs = parseDateMs(activity?.endDate);
  if ((shown === "ended" || shown === "dismissed") && Number.isFinite(endedMs)) freeze = Math.min(freeze ?? endedMs, endedMs);
  const display = displayValues({ ...attributes, ...state }, context, kind, nowMs, parseDateMs(activity?.startDate), freeze, offsetMinutes);

  const badge = badgeOf(shown, paused);
  const title = renderTitle(kind.title ?? "{{kind.label}}", { ...context, kind: { name: kind.name, label } }) || label;
  const summary = [title];
  if (countdown !== null) summary.push(shown === "pending" ? `${countdown} planned` : `${countdown} left`);
  if (badge) summary.push(badge.toLowerCase());
  const icon = Object.keys(kind.enums ?? {}).sort().map((f) => context[f]?.icon).find((i) => typeof i === "string") ?? fallbackIcon;

  context.activity = { id: activity?.id ?? "", state: shown, badge, paused, title, summary: summary.join(", "), icon };
  context.kind = { name: kind.name, label };
  context.display = display;
  return context;
}

/**
 * A keyed enum's value (`{"delayed": {"minutes": 25}}`) as `{value: "delayed", label: "Delayed · Minutes 25", icon}`:
 * the case's label, then its associated values in declaration order (the kind's `associatedValues`), each its
 * label and value as the layout shows it, or the value alone when unlabelled; null for any other value
 * (RenderContext.swift `keyedCase`).
 * @param {*} raw
 * @param {Array} values the field's `enums` entries.
 * @param {string} fallbackIcon
 * @param {number} offsetMinutes
 * @returns {object|null}
 */
function keyedCase(raw, values, fallbackIcon, offsetMinutes) {
  if (!isObject(raw) || Object.keys(raw).length !== 1) return null;
  const name = Object.keys(raw)[0];
  const entry = Array.isArray(values) ? values.find((e) => e.value === name) : undefined;
  const parts = [entry?.label ?? (name.charAt(0).toUpperCase() + name.slice(1))];
  const fields = isObject(raw[name]) ? raw[name] : {};
  // Without the declaration's order (no entry, or one that lists none): the keys sorted, unlabelled.
  const order = Array.isArray(entry?.associatedValues) && entry.associatedValues.length ? entry.associatedValues
    : Object.keys(fields).sort().map((key) => ({ key, label: "" }));
  for (const associated of order) {
    if (!(associated.key in fields)) continue;
    // A raw-value enum's value in words (`valueLabels`: "home" → "Home"); an own key only ("constructor" is no label).
    const text = labelled(fields[associated.key], associated.valueLabels, offsetMinutes);
    if (text === null || text === "") continue;
    parts.push(associated.label ? `${associated.label} ${text}` : text);
  }
  return { value: name, label: parts.join(" · "), icon: entry?.icon ?? fallbackIcon };
}

/** @private */
function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** @private The state at `nowMs`: a running activity is stale exactly when its stale date is not after it. */
function shownState(activity, content, nowMs) {
  const sent = typeof activity?.activityState === "string" ? activity.activityState : "active";
  if (sent !== "active" && sent !== "stale") return sent;
  const stale = parseDateMs(content.staleDate);
  if (!Number.isFinite(stale)) return "active";
  return stale <= nowMs ? "stale" : "active";
}

/** @private "Ended", "Dismissed", "Scheduled", "Paused", "Stale" or "". */
function badgeOf(state, paused) {
  if (state === "ended") return "Ended";
  if (state === "dismissed") return "Dismissed";
  if (state === "pending") return "Scheduled";
  if (paused) return "Paused";
  if (state === "stale") return "Stale";
  return "";
}

/** @private A countdown's bounds in epoch ms: a {start, end} range, or a Date counted to from startDate. */
function countdownBounds(value, activity) {
  if (isObject(value)) {
    const start = parseDateMs(value.start), end = parseDateMs(value.end);
    return Number.isFinite(start) && Number.isFinite(end) ? { start, end } : null;
  }
  if (typeof value === "string") {
    const end = parseDateMs(value), start = parseDateMs(activity?.startDate);
    return Number.isFinite(end) && Number.isFinite(start) ? { start: Math.min(start, end), end } : null;
  }
  return null;
}
