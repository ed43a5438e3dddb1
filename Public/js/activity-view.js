// One activity drawn on the dashboard from its kind's templates: the same Mustache templates the server
// renders statically (`GET /activities/{id}/render/{presentation}`), rendered here by kind-fragment.js over
// the same render context. KindTemplates fetches and caches each kind's compiled templates; a Fragment
// holds one presentation (Lock Screen, compact, minimal, expanded or small) of one activity in a host
// element, re-rendered only when the activity changed, its countdowns ticked in between.

import { fetchTemplates, kindColours, renderFragment, resolveIcons, tickCountdowns } from "./kind-fragment.js";
import { parseDateMs } from "./time.js";
import { buildRenderContext } from "./render-context.js";

/** The kinds the server lists (`GET /kinds`) and their compiled templates, fetched once per kind. */
export class KindTemplates {
  /**
   * @param {() => void} onLoaded called when a kind's templates (or the kinds themselves) arrive: redraw.
   * @param {(url: string, init?: object) => Promise<Response>} [fetchImpl=fetch]
   */
  constructor(onLoaded, fetchImpl = fetch) {
    this._onLoaded = onLoaded;
    this._fetch = fetchImpl;
    /** @type {Map<string, object>|null} kinds by name; null until `GET /kinds` has answered (or failed) */
    this._kinds = null;
    /** @type {Map<string, Object<string, {render: Function}>|null>} compiled templates by kind name; null while loading */
    this._templates = new Map();
  }

  /**
   * Takes the server's kinds (`GET /kinds`; empty when it did not answer: every kind gets the default layout).
   * @param {object[]} kinds
   */
  setKinds(kinds) {
    this._kinds = new Map();
    for (const kind of Array.isArray(kinds) ? kinds : []) {
      if (kind && typeof kind.name === "string") this._kinds.set(kind.name, kind);
    }
    this._templates.clear();
    this._onLoaded();
  }

  /**
   * The kind an activity is of, as `GET /kinds` lists it; a kind the server did not list is described by its
   * name alone (no presentations: the default layout).
   * @param {object} activity the protocol's activity object.
   * @returns {object|null} null until the kinds are known.
   */
  kindOf(activity) {
    if (this._kinds === null) return null;
    const name = typeof activity?.attributesType === "string" ? activity.attributesType : "workout";
    return this._kinds.get(name) ?? { name, label: name, presentations: [] };
  }

  /**
   * A kind's compiled templates by presentation (a presentation it has no usable template for is missing).
   * Starts fetching them on first use.
   * @param {object} kind
   * @returns {Object<string, {render: Function}>|null} null while they are being fetched.
   */
  templatesOf(kind) {
    if (!this._templates.has(kind.name)) {
      this._templates.set(kind.name, null);
      fetchTemplates(kind, this._fetch).then((templates) => {
        this._templates.set(kind.name, templates);
        this._onLoaded();
      });
    }
    return this._templates.get(kind.name);
  }
}

/** How often a fragment checks whether a date came near (a countdown from then on, a time of day before), in ms. */
const NEAR_CHECK_MS = 1000;

/**
 * Which date fields are near at `nowMs` (`display.F.near`, docs/TEMPLATES.md): a generated layout shows those as
 * countdowns and the others as times of day, so the fragment is drawn again when this changes.
 * @param {object} activity the protocol's activity object.
 * @param {object} kind the kind as `GET /kinds` lists it.
 * @param {number} nowMs epoch ms.
 * @returns {string} e.g. "estimatedDeliveryTime", "" when none.
 */
export function nearFields(activity, kind, nowMs) {
  const display = buildRenderContext(activity, kind, nowMs).display ?? {};
  return Object.keys(display).filter((key) => display[key]?.near === true).sort().join(",");
}

/** Whether an activity's stale date has passed at `nowMs` (the render context then shows it stale). */
function staleAt(activity, nowMs) {
  const stale = parseDateMs(activity?.content?.staleDate);
  return Number.isFinite(stale) && stale <= nowMs;
}

/**
 * Gives each `<img data-image>` showing the server's thumbnail (`/images/{key}@1x.png`) its 2x and 3x files as
 * a `srcset`, so the browser picks the one for the screen's density (the static renderings inline one PNG).
 * @param {Element} root
 * @param {object} activity the protocol's activity object (its `thumbnail`: `{"1x", "2x", "3x"}` URLs).
 */
export function addDensities(root, activity) {
  const t = activity?.thumbnail ?? {};
  const scales = ["1x", "2x", "3x"].filter((s) => typeof t[s] === "string" && t[s].startsWith("/images/"));
  if (!scales.includes("1x")) return;
  for (const img of root.querySelectorAll("img[data-image]")) {
    if (img.getAttribute("src") === t["1x"]) img.srcset = scales.map((s) => `${t[s]} ${s}`).join(", ");
  }
}

const FOCUSABLE = "a[href], button, input, select, textarea, [tabindex]";

/** One presentation of one activity, rendered from its kind's template into a host element. */
export class Fragment {
  /**
   * @param {Element} host the element the rendered markup goes in (its content is replaced).
   * @param {"lock-screen"|"compact"|"minimal"|"expanded"|"small"} presentation
   */
  constructor(host, presentation) {
    this.host = host;
    this.presentation = presentation;
    /** @type {object|null} the activity shown */
    this.activity = null;
    this._key = null;
    this._stale = false;
  }

  /**
   * Renders `activity` with `kind`'s template for this presentation (the default layout without one), unless
   * exactly this was rendered already: the focus and the DOM stay put when nothing changed.
   * @param {object} activity the protocol's activity object.
   * @param {object} kind the kind as `GET /kinds` lists it.
   * @param {Object<string, {render: Function}>} templates the kind's compiled templates.
   * @param {number} nowMs the server's current time, epoch ms.
   * @returns {boolean} whether it was rendered anew.
   */
  show(activity, kind, templates, nowMs) {
    const stale = staleAt(activity, nowMs);
    const near = nearFields(activity, kind, nowMs);
    const key = JSON.stringify([kind.name, Object.keys(templates).sort(), stale, near, activity]);
    if (key === this._key) return false;
    const focused = this._focusedIndex();
    this._key = key;
    this._stale = stale;
    this._near = near;
    this._kind = kind;
    this._nearCheckedMs = nowMs;
    this.activity = activity;
    const offsetMinutes = -new Date(nowMs).getTimezoneOffset();
    this.host.innerHTML = renderFragment(templates[this.presentation], activity, kind, this.presentation, nowMs, offsetMinutes);
    // The kind's colours, on the host (inherited by the frame): CSSOM, which the page's CSP allows.
    for (const name of ["--kind-tint", "--kind-foreground", "--activity-system-action-foreground"]) this.host.style.removeProperty(name);
    for (const [name, value] of kindColours(kind)) this.host.style.setProperty(name, value);
    addDensities(this.host, activity);
    resolveIcons(this.host).catch(() => {});
    tickCountdowns(this.host, activity, nowMs);
    if (focused >= 0) this.host.querySelectorAll(FOCUSABLE)[focused]?.focus();
    return true;
  }

  /**
   * Updates the countdowns to `nowMs` (clamped at 0:00, frozen while paused or ended).
   * @param {number} nowMs the server's current time, epoch ms.
   * @returns {boolean} whether the stale date passed, or a date came near, since the last render (render it again).
   */
  tick(nowMs) {
    if (!this.activity) return false;
    tickCountdowns(this.host, this.activity, nowMs);
    if (staleAt(this.activity, nowMs) !== this._stale) return true;
    if (this._kind && Math.abs(nowMs - this._nearCheckedMs) >= NEAR_CHECK_MS) {
      this._nearCheckedMs = nowMs;
      return nearFields(this.activity, this._kind, nowMs) !== this._near;
    }
    return false;
  }

  /** Empties the host. */
  clear() {
    this.host.replaceChildren();
    this.activity = null;
    this._key = null;
  }

  /** @private The index of the focused element among the host's focusable ones, or -1. */
  _focusedIndex() {
    const active = this.host.ownerDocument.activeElement;
    if (!active || !this.host.contains(active)) return -1;
    return [...this.host.querySelectorAll(FOCUSABLE)].indexOf(active);
  }
}
