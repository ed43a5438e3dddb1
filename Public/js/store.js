// Client-side state: the activities the server reported, applied message by message (docs/PROTOCOL.md).
// Pure: no DOM, no sockets. Times named *Ms are epoch milliseconds.

import { isolated } from "./bidi.js";
import { ClockSync, parseDateMs, remainingSeconds } from "./time.js";
import { buildRenderContext } from "./render-context.js";

/**
 * Display names of the known workouts, by key. Empty until the server's kinds arrive (`GET /kinds`,
 * `setKinds`): the workout kind's `enums.workout` in Kinds/workout/kind.json is the one list.
 * @type {Map<string, string>}
 */
export const WORKOUTS = new Map();

/** The seed app's integer raw values (accepted on input by the server; output should be strings). @type {Map<number, string>} */
const WORKOUT_RAW_VALUES = new Map();

/** The server's kinds by name, as `GET /kinds` lists them. @type {Map<string, object>} */
export const KINDS = new Map();

/**
 * Takes the server's kinds (`GET /kinds`): their labels, icons and title templates.
 * @param {object[]} kinds the `kinds` array of `GET /kinds`.
 */
export function setKinds(kinds) {
  KINDS.clear();
  WORKOUTS.clear();
  WORKOUT_RAW_VALUES.clear();
  for (const kind of Array.isArray(kinds) ? kinds : []) {
    if (!kind || typeof kind.name !== "string") continue;
    KINDS.set(kind.name, kind);
  }
  for (const entry of KINDS.get("workout")?.enums?.workout ?? []) {
    WORKOUTS.set(entry.value, entry.label ?? entry.value);
    if (typeof entry.rawValue === "number") WORKOUT_RAW_VALUES.set(entry.rawValue, entry.value);
  }
}

/**
 * The workout key of an activity ("jogging" | "aerobics" | "yoga", or whatever other string the server sent).
 * @param {object} activity
 * @returns {string}
 */
export function workoutOf(activity) {
  const w = activity?.attributes?.workout;
  if (typeof w === "number") return WORKOUT_RAW_VALUES.get(w) ?? String(w);
  return typeof w === "string" ? w : "";
}

/**
 * Human name of a workout key ("yoga" → "Yoga").
 * @param {string} workout
 * @returns {string}
 */
export function workoutLabel(workout) {
  if (WORKOUTS.has(workout)) return WORKOUTS.get(workout);
  return workout ? workout.charAt(0).toUpperCase() + workout.slice(1) : "Workout";
}

/**
 * What an activity shows as its name: an emoji activity's emoji and own name ("🏃 Morning run"), a workout's
 * kind of workout ("Yoga"); text holding bidirectional controls or NUL rendered isolated (bidi.js).
 * @param {object} activity
 * @returns {string}
 */
export function activityTitle(activity) {
  if (activity?.attributesType === "emoji") {
    const name = isolated(String(activity.attributes?.name ?? "").trim()) || "Emoji activity";
    const emoji = isolated(String(activity.content?.state?.emoji ?? "").trim());
    return emoji ? `${emoji} ${name}` : name;
  }
  const kind = KINDS.get(activity?.attributesType);
  if (kind && activity?.attributesType !== "workout") {
    return isolated(String(buildRenderContext(activity, kind, Date.now()).activity.title ?? ""));
  }
  return workoutLabel(workoutOf(activity));
}

/**
 * Sort order of the protocol: `relevanceScore` highest first, then `startDate` newest first (then id, for stability).
 * @param {object} a activity
 * @param {object} b activity
 * @returns {number} negative when `a` goes first.
 */
export function compareActivities(a, b) {
  const ra = Number(a?.content?.relevanceScore) || 0;
  const rb = Number(b?.content?.relevanceScore) || 0;
  if (ra !== rb) return rb - ra;
  const sa = parseDateMs(a.startDate) || 0;
  const sb = parseDateMs(b.startDate) || 0;
  if (sa !== sb) return sb - sa;
  return String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0;
}

/**
 * Whether an activity's countdown is paused (`content.state.pausedAt` is set).
 * @param {object} activity
 * @returns {boolean}
 */
export function isPaused(activity) {
  return Number.isFinite(parseDateMs(activity?.content?.state?.pausedAt));
}

/**
 * Seconds left on an activity's `content.state.workoutTimer`. The countdown freezes at `content.state.pausedAt`
 * while paused (`Text(timerInterval:pauseTime:)`), and an ended activity shows its final content frozen at `endDate`.
 * @param {object} activity
 * @param {number} serverNowMs the server's current time, epoch ms.
 * @returns {number|null} whole seconds (rounded up, never negative), or null without a timer.
 */
export function countdownSeconds(activity, serverNowMs) {
  const state = activity?.content?.state;
  const timer = state?.workoutTimer;
  if (!timer) return null;
  let now = serverNowMs;
  const pausedAt = parseDateMs(state.pausedAt);
  if (Number.isFinite(pausedAt)) now = Math.min(now, pausedAt);
  const endedAt = parseDateMs(activity.endDate);
  if (activity.activityState === "ended" && Number.isFinite(endedAt)) now = Math.min(now, endedAt);
  return remainingSeconds(parseDateMs(timer.start), parseDateMs(timer.end), now);
}

/**
 * Seconds until a pending (scheduled) activity starts: its `startDate`, or its timer's start when that is later.
 * @param {object} activity
 * @param {number} serverNowMs the server's current time, epoch ms.
 * @returns {number|null} whole seconds (rounded up, never negative), or null when the start is unknown.
 */
export function startsInSeconds(activity, serverNowMs) {
  const starts = [parseDateMs(activity?.startDate), parseDateMs(activity?.content?.state?.workoutTimer?.start)]
    .filter(Number.isFinite);
  if (starts.length === 0 || !Number.isFinite(serverNowMs)) return null;
  return Math.max(0, Math.ceil((Math.max(...starts) - serverNowMs) / 1000));
}

/**
 * What an activity's countdown shows: the time to its start while `pending`, else the time left
 * (frozen while paused or ended; see countdownSeconds).
 * @param {object} activity
 * @param {number} serverNowMs the server's current time, epoch ms.
 * @returns {number|null} whole seconds, or null when unknown.
 */
export function displaySeconds(activity, serverNowMs) {
  return isPending(activity) ? startsInSeconds(activity, serverNowMs) : countdownSeconds(activity, serverNowMs);
}

/**
 * @param {object} activity
 * @returns {boolean} whether it is scheduled for a future start (`activityState` "pending").
 */
export function isPending(activity) {
  return activity?.activityState === "pending";
}

/**
 * Which control buttons make sense for an activity: none once ended; no pause for a pending one (the server
 * answers `invalid_state`), but it can be extended.
 * @param {object} activity
 * @returns {{pause: boolean, resume: boolean, extend: boolean}}
 */
export function availableControls(activity) {
  const state = activity?.activityState;
  if (state === "ended" || state === "dismissed") return { pause: false, resume: false, extend: false };
  if (state === "pending") return { pause: false, resume: false, extend: true };
  const paused = isPaused(activity);
  return { pause: !paused, resume: paused, extend: true };
}

/**
 * What one applied message changed.
 * @typedef {object} ApplyResult
 * @property {boolean} changed the activity list changed (re-render it).
 * @property {boolean} resync an event was missed (sequence gap); ask for a fresh snapshot with `list`.
 * @property {boolean} reset a snapshot with `reset: true` replaced everything (the resume could not be served).
 * @property {boolean} caughtUp the events replayed for a resume (`?since=`) are all applied.
 * @property {{code:string,message:string,field?:string,requestId?:(string|number)}|null} error an `error` to show.
 * @property {{title:string,body:string}|null} alert an `update` alert to show.
 * @property {boolean} roleChanged `role` changed (from a snapshot or a `hello` reply).
 */

/** Holds the non-dismissed activities and the server clock offset. */
export class Store {
  constructor() {
    /** @type {Map<string, object>} activity id → activity object as sent by the server */
    this.activities = new Map();
    /** @type {number|null} sequence number of the last applied activity event */
    this.sequence = null;
    /** @type {string|null} the server's event-log identity that `sequence` belongs to */
    this.logId = null;
    /** @type {string|null} this connection's role: "controller" | "viewer" (null until the server says) */
    this.role = null;
    /** @type {string|null} the previous connection's role (a resumed connection is not told its role again) */
    this._lastRole = null;
    this.clock = new ClockSync();
  }

  /**
   * Applies one server message.
   * @param {object} message a parsed server message.
   * @param {number} receivedAtMs browser `Date.now()` when it arrived, in ms.
   * @returns {ApplyResult}
   */
  apply(message, receivedAtMs) {
    const result = {
      changed: false, resync: false, reset: false, caughtUp: false, error: null, alert: null, roleChanged: false,
    };
    switch (message?.type) {
      case "snapshot":
        // A snapshot is the whole truth: on (re)connect and in reply to `list`.
        this.clock.reset();
        this.clock.sample(message.serverTime, receivedAtMs);
        this.activities = new Map();
        for (const a of message.activities ?? []) {
          if (a && a.id != null && a.activityState !== "dismissed") this.activities.set(String(a.id), a);
        }
        this.sequence = typeof message.sequence === "number" ? message.sequence : null;
        if (typeof message.logId === "string") this.logId = message.logId;
        result.changed = true;
        result.reset = message.reset === true;
        // Only the snapshot that opens a plain connection names the role; keep the last one otherwise.
        result.roleChanged = this._setRole(message.role ?? this._restorableRole());
        break;
      case "caughtUp":
        // Every event after our `since` has been replayed; live events follow.
        this.clock.sample(message.serverTime, receivedAtMs);
        if (typeof message.logId === "string") this.logId = message.logId;
        result.caughtUp = true;
        if (typeof message.sequence === "number" && this.sequence !== null && message.sequence > this.sequence) {
          result.resync = true; // the replay ended short of the server's sequence
        }
        result.roleChanged = this._setRole(this._restorableRole());
        break;
      case "hello":
        result.roleChanged = this._setRole(message.role);
        break;
      case "activity":
        this.clock.sample(message.serverTime, receivedAtMs);
        if (typeof message.sequence === "number" && this.sequence !== null) {
          if (message.sequence <= this.sequence) break; // already in the snapshot
          if (message.sequence > this.sequence + 1) result.resync = true;
        }
        if (typeof message.sequence === "number") this.sequence = message.sequence;
        this._applyEvent(message.event, message.activity);
        result.changed = true;
        if (message.event === "updated" && message.alert) result.alert = message.alert;
        break;
      case "tick":
        this.clock.sample(message.serverTime, receivedAtMs);
        break;
      case "error":
        result.error = { code: message.code, message: message.message, field: message.field,
          requestId: message.requestId };
        break;
      default:
        break; // ack, history and anything newer: nothing to keep.
    }
    return result;
  }

  /**
   * Forgets the connection's role (call when the socket closes; the next snapshot or hello reply sets it).
   * A resumed connection (`?since=`) is not told its role: it gets the previous one back on `caughtUp`.
   */
  resetRole() {
    if (this.role !== null) this._lastRole = this.role;
    this.role = null;
  }

  /** Forgets the role for good (the token changed, so the next connection may have another one). */
  forgetRole() {
    this._lastRole = null;
  }

  /** Call when a new connection opens: the server may have restarted with another clock. */
  connectionOpened() {
    this.clock.reset();
  }

  /** @private @returns {string|null} the previous connection's role while this one has none yet. */
  _restorableRole() {
    return this.role === null ? this._lastRole : null;
  }

  /** @private @returns {boolean} whether the role changed. */
  _setRole(role) {
    if (typeof role !== "string" || role === this.role) return false;
    this.role = role;
    return true;
  }

  /** @private */
  _applyEvent(event, activity) {
    if (!activity || activity.id == null) return;
    const id = String(activity.id);
    if (event === "dismissed" || activity.activityState === "dismissed") this.activities.delete(id);
    else this.activities.set(id, activity);
  }

  /** @returns {object[]} the activities in display order (see compareActivities). */
  ordered() {
    return [...this.activities.values()].sort(compareActivities);
  }

  /** @returns {object|null} the highest-ranked activity (the one the Dynamic Island shows). */
  top() {
    return this.ordered()[0] ?? null;
  }

  /**
   * @param {number} browserNowMs browser `Date.now()`, in ms.
   * @returns {number} estimated server time, epoch ms.
   */
  serverNow(browserNowMs) {
    return this.clock.serverNow(browserNowMs);
  }
}
