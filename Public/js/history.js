// The dashboard's History panel: past workouts (kind, name, when, planned and actual duration, how each
// ended), newest first, paged with the protocol's cursor (`history` with `before` + `beforeId`,
// docs/PROTOCOL.md), updated live when an activity ends; and a chart of minutes per day over the last
// CHART_DAYS days, drawn as inline SVG and readable by screen readers through a table.
// Pure helpers first (no DOM), then the panel.

import { qs, setAttr, setText } from "./dom.js";
import { KINDS, activityTitle, workoutLabel, workoutOf } from "./store.js";

/** Days the chart covers, today included. */
export const CHART_DAYS = 28;
/** Rows the table shows at first, and how many more "Show older workouts" adds. */
export const PAGE_ROWS = 10;
/** Entries asked for per `history` request (the protocol allows 1–500). */
export const FETCH_LIMIT = 100;
/** Entries asked for when an activity ended (merged into what is loaded). */
export const NEWEST_LIMIT = 20;

const OUTCOME_TEXT = { completed: "Finished", stopped: "Stopped", expired: "Lifetime cap (8 h)" };
const KIND_TEXT = { workout: "Workout", emoji: "Emoji activity" };
const SVG_NS = "http://www.w3.org/2000/svg";
const DAY_MS = 86_400_000;

/**
 * How an activity ended, for people.
 * @param {{outcome?: string}} entry a `history` entry.
 * @returns {string} "Finished" (the countdown ran out), "Stopped" (ended early) or "Lifetime cap (8 h)".
 */
export function outcomeText(entry) {
  return OUTCOME_TEXT[entry?.outcome] ?? String(entry?.outcome ?? "");
}

/**
 * What a history entry (or an activity) is called: the workout's name, an emoji activity's own name, or a
 * declared kind's title (its `kind.json` `title` from the attributes; the kind's label without one).
 * @param {{attributesType?: string, attributes?: object}} entry
 * @returns {{name: string, kind: string}} e.g. {name: "Yoga", kind: "Workout"}, {name: "Pizza delivery", kind: ""}
 *   (the kind left empty when the name is already its label).
 */
export function entryName(entry) {
  const type = entry?.attributesType;
  if (type === "emoji") {
    return { name: String(entry.attributes?.name ?? "") || "Emoji activity", kind: KIND_TEXT.emoji };
  }
  if (type === undefined || type === "workout") return { name: workoutLabel(workoutOf(entry)), kind: KIND_TEXT.workout };
  const label = String(KINDS.get(type)?.label ?? type);
  const name = (KINDS.has(type) ? activityTitle(entry) : "") || label;
  return { name, kind: name === label ? "" : label };
}

/**
 * A duration for people: "45 s", "1 min 12 s", "2 min", "1 h 5 min".
 * @param {number|null|undefined} seconds
 * @returns {string} "—" when there is none (an activity without a countdown has no planned duration).
 * @example formatDuration(72) // "1 min 12 s"
 */
export function formatDuration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(Number(seconds))) return "—";
  const total = Math.max(0, Math.round(Number(seconds)));
  if (total < 60) return `${total} s`;
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return m > 0 ? `${h} h ${m} min` : `${h} h`;
  return s > 0 ? `${m} min ${s} s` : `${m} min`;
}

/**
 * Orders history entries as the server does: newest end first, then by id, descending.
 * @param {{endDate: string, id: string}} a
 * @param {{endDate: string, id: string}} b
 * @returns {number} negative when `a` goes first.
 */
export function compareEntries(a, b) {
  const ea = Date.parse(a.endDate) || 0;
  const eb = Date.parse(b.endDate) || 0;
  if (ea !== eb) return eb - ea;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/**
 * Merges entries into a list (by id, the newer copy wins), in server order.
 * @param {object[]} known entries already loaded.
 * @param {object[]} more entries just received.
 * @returns {object[]} a new list.
 */
export function mergeEntries(known, more) {
  const byId = new Map(known.map((e) => [e.id, e]));
  for (const e of more) if (e && typeof e.id === "string") byId.set(e.id, e);
  return [...byId.values()].sort(compareEntries);
}

/**
 * Local midnight of the day holding `ms`.
 * @param {number} ms epoch ms
 * @returns {number} epoch ms
 */
export function startOfDay(ms) {
  const d = new Date(ms);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

/**
 * A local day as `YYYY-MM-DD` (for `<time datetime>` and tests).
 * @param {number} ms epoch ms within that day
 * @returns {string}
 */
export function dayKey(ms) {
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}

/**
 * Minutes of activity per local day for the `days` days up to today: each entry's actual duration counts
 * on the day it started.
 * @param {object[]} entries `history` entries (any order).
 * @param {number} nowMs the current time, epoch ms.
 * @param {number} [days=CHART_DAYS]
 * @returns {{day: string, startMs: number, minutes: number, count: number}[]} oldest day first; minutes to 0.1.
 */
export function minutesPerDay(entries, nowMs, days = CHART_DAYS) {
  const today = startOfDay(nowMs);
  const out = [];
  const index = new Map();
  for (let i = days - 1; i >= 0; i--) {
    // Step by calendar days, not 24 h, so a daylight-saving change keeps midnights.
    const d = new Date(today);
    d.setDate(d.getDate() - i);
    const row = { day: dayKey(d.getTime()), startMs: d.getTime(), seconds: 0, count: 0 };
    index.set(row.day, row);
    out.push(row);
  }
  for (const e of entries) {
    const start = Date.parse(e.startDate);
    const row = Number.isFinite(start) ? index.get(dayKey(start)) : undefined;
    if (!row) continue;
    row.seconds += Math.max(0, Number(e.actualDurationSeconds) || 0);
    row.count += 1;
  }
  return out.map(({ day, startMs, seconds, count }) => ({ day, startMs, minutes: Math.round(seconds / 6) / 10, count }));
}

/**
 * A date for the table: weekday, day, month and time in the browser's locale.
 * @param {number} ms epoch ms
 * @returns {string} e.g. "Mon 30 Nov, 14:03"
 */
export function formatWhen(ms) {
  return new Date(ms).toLocaleString(undefined,
    { weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
}

/**
 * A day for the chart's table.
 * @param {number} ms epoch ms within the day
 * @returns {string} e.g. "Mon 30 Nov"
 */
export function formatDay(ms) {
  return new Date(ms).toLocaleDateString(undefined, { weekday: "short", day: "numeric", month: "short" });
}

/** The History panel. app.js feeds it messages; it sends its own `history` requests. */
export class HistoryPanel {
  /**
   * @param {(message: object) => string|null} send sends a client message, returning its requestId (null when offline).
   * @param {() => number} [now] the current time, epoch ms.
   */
  constructor(send, now = () => Date.now()) {
    this._send = send;
    this._now = now;
    this.$panel = qs("#history-panel");
    this.$rows = qs("#history-rows");
    this.$table = qs("#history-table");
    this.$empty = qs("#history-empty");
    this.$more = qs("#history-more");
    this.$chart = qs("#history-chart");
    this.$chartRows = qs("#history-chart-rows");
    this.$chartCaption = qs("#history-chart-caption");
    /** @type {object[]} loaded entries, newest first */
    this._entries = [];
    /** Rows shown in the table. */
    this._shown = PAGE_ROWS;
    /** Whether the server may hold entries older than the loaded ones. */
    this._more = false;
    /** @type {Map<string, "fill"|"newest">} requestIds of `history` requests waiting for their reply */
    this._pending = new Map();
    this._loaded = false;
    this.$more.addEventListener("click", () => this._showOlder());
  }

  /** Loads the newest entries (on every connection: what ended while away is then shown). */
  refresh() {
    if (this._loaded) this._request("newest", { limit: NEWEST_LIMIT });
    else this._request("fill", { limit: FETCH_LIMIT });
  }

  /**
   * Takes a server message: the reply to one of its `history` requests, or an `activity` event `ended`
   * (then the newest entries are loaded again). Anything else is ignored.
   * @param {object} message
   */
  apply(message) {
    if (message?.type === "activity" && message.event === "ended") {
      this.refresh();
      return;
    }
    if (message?.type !== "history") return;
    const purpose = this._pending.get(message.requestId);
    if (!purpose) return;
    this._pending.delete(message.requestId);
    const page = Array.isArray(message.workouts) ? message.workouts : [];
    if (purpose === "newest" && this._entries.length > 0 && page.length === NEWEST_LIMIT
        && !page.some((e) => this._entries.some((k) => k.id === e.id))) {
      // More ended than one page while away: start again rather than leave a gap.
      this._entries = [];
      this._loaded = false;
      this.refresh();
      return;
    }
    this._entries = mergeEntries(this._entries, page);
    if (purpose === "fill") {
      this._loaded = true;
      this._more = page.length === FETCH_LIMIT;
      // Keep loading while the chart's window is not covered yet.
      const oldest = this._entries[this._entries.length - 1];
      const windowStart = startOfDay(this._now()) - (CHART_DAYS - 1) * DAY_MS;
      if (this._more && oldest && Date.parse(oldest.startDate) >= windowStart) this._requestOlder();
    }
    this.render();
  }

  /** @private Sends a `history` request and remembers what its reply is for. */
  _request(purpose, fields) {
    const requestId = this._send({ type: "history", ...fields });
    if (requestId) this._pending.set(requestId, purpose);
  }

  /** @private The page after the oldest loaded entry (the protocol's cursor). */
  _requestOlder() {
    const oldest = this._entries[this._entries.length - 1];
    if (!oldest) return;
    this._request("fill", { limit: FETCH_LIMIT, before: oldest.endDate, beforeId: oldest.id });
  }

  /** @private "Show older workouts": more rows from what is loaded, and the next page when they run out. */
  _showOlder() {
    this._shown += PAGE_ROWS;
    if (this._shown >= this._entries.length && this._more) this._requestOlder();
    this.render();
    const next = this.$rows.children[this._shown - PAGE_ROWS];
    if (next) qs("th", next)?.focus();
  }

  /** Draws the table and the chart from the loaded entries. */
  render() {
    const shown = this._entries.slice(0, this._shown);
    this.$rows.replaceChildren(...shown.map((entry) => this._row(entry)));
    this.$empty.hidden = this._entries.length > 0 || !this._loaded;
    this.$table.hidden = this._entries.length === 0;
    this.$more.hidden = !(this._entries.length > this._shown || this._more);
    this._renderChart(minutesPerDay(this._entries, this._now()));
  }

  /** @private One table row. */
  _row(entry) {
    const doc = this.$rows.ownerDocument;
    const tr = doc.createElement("tr");
    setAttr(tr, "data-activity-id", entry.id);
    setAttr(tr, "data-outcome", String(entry.outcome ?? ""));
    const { name, kind } = entryName(entry);
    const head = doc.createElement("th");
    head.scope = "row";
    head.tabIndex = -1; // focus target after "Show older workouts"
    const strong = doc.createElement("span");
    strong.className = "history-name";
    setText(strong, name);
    const small = doc.createElement("span");
    small.className = "history-kind";
    setText(small, kind);
    head.append(strong, " ", small);
    tr.append(head);
    const cell = (text, attrs = {}) => {
      const td = doc.createElement("td");
      for (const [k, v] of Object.entries(attrs)) setAttr(td, k, v);
      setText(td, text);
      tr.append(td);
      return td;
    };
    const start = Date.parse(entry.startDate);
    const when = cell("");
    const time = doc.createElement("time");
    setAttr(time, "datetime", entry.startDate);
    setText(time, Number.isFinite(start) ? formatWhen(start) : "");
    when.append(time);
    cell(formatDuration(entry.plannedDurationSeconds), { class: "history-planned",
      "data-seconds": entry.plannedDurationSeconds == null ? null : String(entry.plannedDurationSeconds) });
    cell(formatDuration(entry.actualDurationSeconds), { class: "history-actual",
      "data-seconds": String(entry.actualDurationSeconds) });
    cell(outcomeText(entry), { class: "history-outcome" });
    return tr;
  }

  /** @private The SVG bars (decorative for assistive technology) and the table they are read from. */
  _renderChart(days) {
    const doc = this.$chart.ownerDocument;
    const width = 20 * days.length;
    const top = 14;
    const height = 96;
    const max = Math.max(1, ...days.map((d) => d.minutes));
    const nodes = [];
    const line = doc.createElementNS(SVG_NS, "line");
    for (const [k, v] of Object.entries({ x1: 0, x2: width, y1: top + height, y2: top + height, class: "chart-axis" })) {
      line.setAttribute(k, String(v));
    }
    nodes.push(line);
    days.forEach((d, i) => {
      const h = d.minutes > 0 ? Math.max(2, (d.minutes / max) * height) : 0;
      const bar = doc.createElementNS(SVG_NS, "rect");
      for (const [k, v] of Object.entries({ x: i * 20 + 3, y: top + height - h, width: 14, height: h,
        class: i === days.length - 1 ? "chart-bar chart-today" : "chart-bar", "data-day": d.day,
        "data-minutes": d.minutes })) {
        bar.setAttribute(k, String(v));
      }
      nodes.push(bar);
      if (i % 7 === 6 || i === days.length - 1) {
        const label = doc.createElementNS(SVG_NS, "text");
        for (const [k, v] of Object.entries({ x: i * 20 + 10, y: top + height + 14, class: "chart-label" })) {
          label.setAttribute(k, String(v));
        }
        label.textContent = String(new Date(d.startMs).getDate());
        nodes.push(label);
      }
    });
    const peak = doc.createElementNS(SVG_NS, "text");
    for (const [k, v] of Object.entries({ x: 0, y: 10, class: "chart-label chart-peak" })) peak.setAttribute(k, String(v));
    peak.textContent = days.some((d) => d.minutes > 0) ? `${max} min` : "";
    nodes.push(peak);
    this.$chart.setAttribute("viewBox", `0 0 ${width} ${top + height + 18}`);
    this.$chart.replaceChildren(...nodes);

    const withMinutes = days.filter((d) => d.minutes > 0);
    setText(this.$chartCaption, `Minutes of activity per day, ${formatDay(days[0].startMs)} to `
      + `${formatDay(days[days.length - 1].startMs)}` + (withMinutes.length ? " (days without any are left out)" : ""));
    const rows = withMinutes.length ? withMinutes : [null];
    this.$chartRows.replaceChildren(...rows.map((d) => {
      const tr = doc.createElement("tr");
      const th = doc.createElement("th");
      th.scope = "row";
      const td = doc.createElement("td");
      if (d === null) {
        setText(th, "No activity in this period");
        setText(td, "0");
      } else {
        const time = doc.createElement("time");
        setAttr(time, "datetime", d.day);
        setText(time, formatDay(d.startMs));
        th.append(time);
        setText(td, String(d.minutes));
        setAttr(tr, "data-day", d.day);
      }
      tr.append(th, td);
      return tr;
    }));
  }
}
