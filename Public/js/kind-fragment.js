// One activity drawn with its kind's template, on the page: the same Mustache template (`GET
// /kinds/{name}/templates/{presentation}`) over the same render context (render-context.js) as the server's
// static renderings, or the same generated default layout when the kind has no usable template
// (docs/TEMPLATES.md), inside the renderer's frame (`framed`). Bound elements: `[data-countdown]` (any date
// field of the state or the attributes) and `progress[data-progress]` tick (clamped at 0:00, frozen while paused),
// `<i data-icon>` becomes the icon's inline SVG, `<img data-image>` shows `F.src`.

import { isolated } from "./bidi.js";
import { compile } from "./mustache.js";
import { buildRenderContext } from "./render-context.js";
import { formatCountdown, parseDateMs, remainingSeconds } from "./time.js";

/** The presentations, in the order `GET /kinds` lists them. */
export const PRESENTATIONS = ["lock-screen", "compact", "minimal", "expanded", "small"];

/**
 * Fetches and compiles a kind's templates. A template the server does not serve (none, or one it could not
 * parse) or that does not compile here is left out: that presentation gets the default layout.
 * @param {object} kind the kind as `GET /kinds` lists it.
 * @param {(url: string, init?: object) => Promise<Response>} [fetchImpl=fetch]
 * @returns {Promise<Object<string, {render: Function}>>} compiled templates by presentation.
 */
export async function fetchTemplates(kind, fetchImpl = fetch) {
  const templates = {};
  await Promise.all((kind.presentations ?? []).map(async (presentation) => {
    try {
      const response = await fetchImpl(`/kinds/${encodeURIComponent(kind.name)}/templates/${presentation}`,
        { credentials: "same-origin" });
      if (!response.ok) return;
      templates[presentation] = compile(await response.text(), `${kind.name}/${presentation}.html`);
    } catch (_) { /* offline or not parseable: the default layout */ }
  }));
  return templates;
}

/**
 * The markup of one presentation of an activity (before its icons are resolved).
 * @param {object|undefined} template the compiled template, or undefined for the default layout.
 * @param {object} activity the protocol's activity object.
 * @param {object} kind the kind as `GET /kinds` lists it.
 * @param {string} presentation e.g. "lock-screen".
 * @param {number} nowMs the instant to show, epoch ms.
 * @param {number} [offsetMinutes=0] minutes east of UTC for times of day.
 * @returns {string} HTML.
 */
export function renderFragment(template, activity, kind, presentation, nowMs, offsetMinutes = 0) {
  const context = buildRenderContext(activity, kind, nowMs, offsetMinutes);
  return template ? framed(template.render(context).trim(), presentation, context, kind.name)
    : defaultLayout(context, kind, presentation, activity);
}

const FRAME_CLASSES = new Set(["lock-screen", "island-compact", "island-minimal", "island-expanded", "activity-small"]);

/**
 * Whether the first element of `markup` carries a frame class (the template draws its own frame).
 * @param {string} markup
 * @returns {boolean}
 */
export function drawsOwnFrame(markup) {
  const tag = /<[a-zA-Z][^>]*>/.exec(markup)?.[0] ?? "";
  const classes = /(?:^|\s)class="([^"]*)"/.exec(tag.slice(1))?.[1] ?? "";
  return classes.split(" ").some((c) => FRAME_CLASSES.has(c));
}

/**
 * `content` inside the presentation's frame (the Lock Screen card, the island's shapes, the small platter), as
 * the server's `ActivityRenderer+Frame.swift` draws it; a template whose root is a frame already is kept.
 * @param {string} content the template's rendered markup.
 * @param {string} presentation e.g. "lock-screen".
 * @param {object} context the render context.
 * @param {string} kindName the kind's wire name (`data-kind`).
 * @returns {string} HTML.
 */
export function framed(content, presentation, context, kindName) {
  if (drawsOwnFrame(content)) return content;
  const [tag, classes] = FRAMES[presentation] ?? FRAMES["lock-screen"];
  const activity = context.activity ?? {};
  let attributes = `class="${classes} la-frame" data-kind="${escape(kindName)}"`;
  if (tag === "div") attributes += ' role="group"';
  attributes += ` data-activity-id="${escape(activity.id ?? "")}" data-activity-state="${escape(activity.state ?? "")}"`;
  if (activity.paused === true) attributes += ' data-paused="true"';
  attributes += ` aria-label="${escape(activity.summary ?? "")}"`;
  let extra = presentation === "compact" ? '<span class="camera" aria-hidden="true"></span>' : "";
  // An ended activity stays on the Lock Screen until cleared: the system's button (activitySystemActionForegroundColor).
  if (presentation === "lock-screen" && activity.state === "ended") extra = '<span class="system-action" aria-hidden="true">Clear</span>';
  return `<${tag} ${attributes}><div class="la-content">${content}</div>${extra}</${tag}>`;
}

/**
 * A kind's `kind.json` colours as CSS custom properties, as the server's `KindColours` gives them:
 * `--kind-tint` and `--kind-foreground` (black or white, whichever contrasts more) from
 * `activityBackgroundTint`, `--activity-system-action-foreground` from `activitySystemActionForegroundColor`.
 * @param {object} kind the kind as `GET /kinds` lists it.
 * @returns {Array<[string, string]>}
 */
export function kindColours(kind) {
  const out = [];
  const hex = (text) => (typeof text === "string" && /^#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i.test(text) ? text.toLowerCase() : null);
  const tint = hex(kind?.activityBackgroundTint);
  if (tint) {
    let digits = tint.slice(1);
    if (digits.length <= 4) digits = [...digits.slice(0, 3)].map((c) => c + c).join("");
    const [r, g, b] = [0, 2, 4].map((i) => {
      const v = parseInt(digits.slice(i, i + 2), 16) / 255;
      return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    const luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    out.push(["--kind-tint", tint], ["--kind-foreground", (luminance + 0.05) / 0.05 >= 1.05 / (luminance + 0.05) ? "#000" : "#fff"]);
  }
  const action = hex(kind?.activitySystemActionForegroundColor);
  if (action) out.push(["--activity-system-action-foreground", action]);
  return out;
}

const FRAMES = {
  "lock-screen": ["article", "lock-screen"], compact: ["div", "island-compact"], minimal: ["div", "island-minimal"],
  expanded: ["div", "island-expanded"], small: ["div", "activity-small"],
};

const escape = (text) => isolated(String(text)).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));

/**
 * The default layout's accessible summary, as the server's `ActivityFacts.summary` words it: the title (with the
 * kind's label, lowercased, when the kind has enums: "Ada: Pyramid intervals"), then the time left ("0:50
 * left", "2:00 planned") or, without a countdown, the state's text values, then the badge, lowercased.
 * @param {object} context the render context.
 * @param {object} kind the kind.
 * @param {object} [activity] the protocol's activity object (its raw state, for a kind without a countdown).
 * @returns {string}
 */
export function defaultSummary(context, kind, activity) {
  const shown = context.activity ?? {};
  const label = kind.label ?? kind.name;
  const title = shown.title ?? label;
  // "Yoga workout"; but "Ride", not "Ride ride", when the title already says what the kind is.
  const named = String(title).toLowerCase().includes(String(label).toLowerCase());
  const parts = [Object.keys(kind.enums ?? {}).length && !named ? `${title} ${String(label).toLowerCase()}` : title];
  const countdown = kind.countdown && context[kind.countdown]?.countdown;
  if (countdown) parts.push(shown.state === "pending" ? `${countdown} planned` : `${countdown} left`);
  else {
    const state = activity?.content?.state ?? {};
    const skipped = new Set([kind.countdown ?? "", "pausedAt"]);
    const text = Object.keys(state).sort().filter((k) => !skipped.has(k) && typeof state[k] === "string")
      .map((k) => state[k]).join(" ");
    if (text) parts.push(text);
  }
  if (shown.badge) parts.push(String(shown.badge).toLowerCase());
  return parts.join(", ");
}

/**
 * The generated default layout, as the server's `ActivityRenderer+DefaultLayout.swift` draws it: a plain list
 * of the title, each field's value and the countdown, in the presentation's frame.
 * @param {object} context the render context.
 * @param {object} kind the kind.
 * @param {string} presentation e.g. "compact".
 * @param {object} [raw] the protocol's activity object (for the accessible summary).
 * @returns {string} HTML.
 */
export function defaultLayout(context, kind, presentation, raw) {
  const [tag, classes] = FRAMES[presentation] ?? FRAMES["lock-screen"];
  const activity = context.activity ?? {};
  const items = [`<li class="default-title"><p class="default-name">${escape(activity.title ?? kind.label)}</p></li>`];
  const skipped = new Set(["activity", "kind", "pausedAt", kind.countdown ?? ""]);
  for (const field of Object.keys(context).sort()) {
    if (skipped.has(field)) continue;
    const value = context[field];
    let text = null;
    if (kind.enums?.[field] && typeof value?.label === "string") text = value.label;
    else if (typeof value === "string") text = value;
    else if (typeof value === "number") text = String(value);
    else if (typeof value === "boolean") text = value ? "true" : "false";
    if (text !== null) {
      items.push(`<li class="default-field"><span class="field-name">${escape(field)}</span> <span class="field-value">${escape(text)}</span></li>`);
    }
  }
  const countdown = kind.countdown && context[kind.countdown]?.countdown;
  if (countdown) {
    items.push(`<li class="default-countdown"><span class="countdown monospaced-digits" role="timer" data-countdown="${escape(kind.countdown)}">${escape(countdown)}</span></li>`);
  }
  if (activity.badge) items.push(`<li class="default-badge"><span class="badge">${escape(activity.badge)}</span></li>`);
  const paused = activity.paused ? ' data-paused="true"' : "";
  const role = tag === "div" ? ' role="group"' : "";
  return `<${tag} class="${classes} default-layout" data-kind="${escape(kind.name)}" data-activity-id="${escape(activity.id ?? "")}" ` +
    `data-activity-state="${escape(activity.state ?? "")}"${paused} aria-label="${escape(defaultSummary(context, kind, raw))}"${role}>` +
    `<ul class="default-fields">${items.join("")}</ul></${tag}>`;
}

const iconCache = new Map();

/**
 * Replaces each `<i data-icon="NAME">` under `root` by `Public/icons/NAME.svg` inline (it takes the text
 * colour; the element's classes are kept, plus `icon`).
 * @param {Element} root
 * @param {(url: string) => Promise<Response>} [fetchImpl=fetch]
 * @returns {Promise<void>}
 */
export async function resolveIcons(root, fetchImpl = fetch) {
  await Promise.all([...root.querySelectorAll("i[data-icon]")].map(async (element) => {
    const name = element.dataset.icon;
    if (!iconCache.has(name)) {
      iconCache.set(name, fetchImpl(`/icons/${encodeURIComponent(name)}.svg`)
        .then((r) => (r.ok ? r.text() : "")).catch(() => ""));
    }
    const text = await iconCache.get(name);
    const svg = new DOMParser().parseFromString(text, "image/svg+xml").documentElement;
    if (!svg || svg.nodeName !== "svg" || !element.isConnected) return;
    // Black strokes and fills, on the root <svg> too, take the text colour (as RenderAssets.swift does).
    for (const node of [svg, ...svg.querySelectorAll("*")]) {
      for (const attribute of ["stroke", "fill"]) {
        if (["#000", "#000000"].includes(node.getAttribute(attribute))) node.setAttribute(attribute, "currentColor");
      }
    }
    svg.setAttribute("class", `icon ${element.getAttribute("class") ?? ""}`.trim());
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("focusable", "false");
    element.replaceWith(document.importNode(svg, true));
  }));
}

/**
 * Updates every `[data-countdown="F"]` under `root` to `F`'s countdown at `nowMs`
 * (`Text(timerInterval:pauseTime:countsDown:)`: rounded up, clamped at 0:00, frozen at `pausedAt`, and at
 * `endDate` once ended).
 * @param {Element} root
 * @param {object} activity the protocol's activity object.
 * @param {number} nowMs epoch ms.
 */
export function tickCountdowns(root, activity, nowMs) {
  const state = activity?.content?.state ?? {};
  const attributes = activity?.attributes ?? {};
  for (const element of root.querySelectorAll("[data-countdown], progress[data-progress]")) {
    const field = element.dataset.countdown ?? element.dataset.progress;
    const range = state[field] ?? attributes[field];
    let startMs = NaN;
    let endMs = NaN;
    if (range && typeof range === "object") { startMs = parseDateMs(range.start); endMs = parseDateMs(range.end); }
    else if (typeof range === "string") { endMs = parseDateMs(range); startMs = Math.min(parseDateMs(activity.startDate), endMs); }
    let reference = nowMs;
    const paused = parseDateMs(state.pausedAt);
    if (Number.isFinite(paused)) reference = Math.min(reference, paused);
    const ended = parseDateMs(activity.endDate);
    if ((activity.activityState === "ended" || activity.activityState === "dismissed") && Number.isFinite(ended)) {
      reference = Math.min(reference, ended);
    }
    if (element.dataset.progress !== undefined) {
      const from = Math.max(reference, startMs);
      const done = endMs <= startMs ? 1000 : Math.min(1000, Math.max(0, Math.trunc((from - startMs) * 1000 / (endMs - startMs))));
      if (Number.isFinite(done) && Number(element.getAttribute("value")) !== done) element.setAttribute("value", String(done));
      continue;
    }
    const text = formatCountdown(remainingSeconds(startMs, endMs, reference));
    if (element.textContent !== text) element.textContent = text;
  }
}
