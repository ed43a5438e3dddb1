// Tells a live connection from one that died without a close (docs/PROTOCOL.md, `heartbeat`).
//
// Browsers hide WebSocket pings from pages, and a connection that died silently (a laptop that slept, a
// Wi-Fi change, a proxy or NAT that dropped the flow) fires no `close` for minutes. The server sends a
// `heartbeat` every `intervalSeconds` whatever runs, and says the interval from the connection's first
// message on (`heartbeatSeconds` in `snapshot`, `caughtUp` and `hello`), so: once the interval is known, a silence of
// DEAD_AFTER_INTERVALS intervals means the connection is dead. A `check()` (on `online`, on becoming visible,
// after the page's timers jumped because the machine slept) sends the server a request at once and gives its
// reply PROBE_TIMEOUT_MS: only the reply counts, since messages already on their way prove nothing about now.
// No DOM and no socket here: app.js feeds it messages and acts on `onDead`.

/** Silent heartbeat intervals after which the connection counts as dead (a heartbeat late by 1.5 intervals). */
export const DEAD_AFTER_INTERVALS = 2.5;
/** The messages that say the heartbeat interval: `heartbeat` (intervalSeconds), and those that start a
 *  connection's conversation (heartbeatSeconds). */
export const INTERVAL_MESSAGES = new Set(["heartbeat", "snapshot", "caughtUp", "hello"]);
/** How long a check may wait for the server's answer, in ms. */
export const PROBE_TIMEOUT_MS = 4000;
/** Longest time between two looks at the clock, in ms (a quarter interval when that is shorter). */
export const CHECK_EVERY_MS = 1000;
/** A look at the clock this much later than planned means the timers were frozen (the machine slept), in ms. */
export const JUMP_MS = 3000;

/**
 * How often to look at the clock for a heartbeat interval.
 * @param {number|null} intervalMs the server's heartbeat interval in ms, or null when not known yet.
 * @returns {number} ms between two looks: CHECK_EVERY_MS, or a quarter interval when shorter (at least 50).
 * @example checkEveryMs(1000) // 250
 */
export function checkEveryMs(intervalMs) {
  return intervalMs ? Math.max(50, Math.min(CHECK_EVERY_MS, intervalMs / 4)) : CHECK_EVERY_MS;
}

/**
 * Why a connection counts as dead, as a short sentence for people.
 * @param {{kind: "silent"|"unanswered", silenceMs?: number, trigger?: string}} reason what `onDead` reported.
 * @returns {string} e.g. "No data from the server for 3 s".
 */
export function deadReasonText(reason) {
  if (reason?.kind === "unanswered") return "The server did not answer a connection check";
  const seconds = Math.round((reason?.silenceMs ?? 0) / 1000);
  return `No data from the server for ${seconds} s`;
}

/** Watches one connection at a time for silence; see the file comment. */
export class Liveness {
  /**
   * @param {object} options
   * @param {(reason: {kind: "silent"|"unanswered", silenceMs?: number, trigger?: string}) => void} options.onDead
   *   called once when the open connection counts as dead (then it is not watched until `opened()` again).
   * @param {() => (string|null)} options.probe sends the server a request that it answers, returning the
   *   request's requestId (null when it could not be sent).
   * @param {(intervalSeconds: number) => void} [options.onInterval] called when a message gives a new interval.
   * @param {() => number} [options.now] the clock, epoch ms (Date.now: it keeps counting while the machine sleeps).
   * @param {() => boolean} [options.visible] whether the page is visible (hidden pages' timers are throttled,
   *   which is not a jump).
   */
  constructor({ onDead, probe, onInterval = () => {}, now = () => Date.now(), visible = () => true }) {
    this._onDead = onDead;
    this._probe = probe;
    this._onInterval = onInterval;
    this._now = now;
    this._visible = visible;
    /** @type {number|null} the heartbeat interval in ms, from the last message saying it (kept across connections) */
    this.intervalMs = null;
    this._open = false;
    this._lastHeardMs = now();
    this._lastLookMs = now();
    /** @type {number|null} when the outstanding check's answer is due, epoch ms */
    this._probeDueMs = null;
    /** @type {string|null} what started the outstanding check */
    this._probeTrigger = null;
    /** @type {string|null} the requestId whose reply answers the outstanding check */
    this._probeId = null;
    this._timer = 0;
    this._everyMs = 0;
    this._schedule();
  }

  /** @returns {number|null} how long the connection may stay silent before it counts as dead, in ms. */
  get deadAfterMs() {
    return this.intervalMs === null ? null : this.intervalMs * DEAD_AFTER_INTERVALS;
  }

  /** A connection opened: its silence counts from now. */
  opened() {
    this._open = true;
    this._lastHeardMs = this._now();
    this._probeDueMs = null;
    this._probeId = null;
  }

  /** The connection closed (or was given up): nothing to watch until the next `opened()`. */
  closed() {
    this._open = false;
    this._probeDueMs = null;
    this._probeId = null;
  }

  /**
   * Records one message from the server: any message proves the connection alive; the reply to the
   * outstanding check answers it; a `heartbeat` (intervalSeconds), `snapshot`, `caughtUp` or `hello`
   * (heartbeatSeconds) also gives the interval.
   * @param {object} message a parsed server message.
   * @param {number} [atMs] when it arrived, epoch ms.
   */
  heard(message, atMs = this._now()) {
    this._lastHeardMs = Math.max(this._lastHeardMs, atMs);
    if (this._probeId !== null && message?.requestId === this._probeId) {
      this._probeDueMs = null;
      this._probeId = null;
    }
    const seconds = Number(message?.type === "heartbeat" ? message?.intervalSeconds : message?.heartbeatSeconds);
    if (INTERVAL_MESSAGES.has(message?.type) && Number.isFinite(seconds) && seconds > 0 && seconds * 1000 !== this.intervalMs) {
      this.intervalMs = seconds * 1000;
      this._schedule();
      this._onInterval(seconds);
    }
  }

  /**
   * Checks the connection at once: sends the server a request, and calls the connection dead when its reply
   * does not come within PROBE_TIMEOUT_MS (or the dead-silence limit, when that is shorter). Does nothing
   * while closed or while a check is already waiting.
   * @param {string} trigger what prompted it: "online", "visible" or "wake".
   */
  check(trigger) {
    if (!this._open || this._probeDueMs !== null) return;
    const requestId = this._probe();
    if (!requestId) return;
    this._probeId = requestId;
    const limit = this.deadAfterMs === null ? PROBE_TIMEOUT_MS : Math.min(PROBE_TIMEOUT_MS, this.deadAfterMs);
    this._probeDueMs = this._now() + limit;
    this._probeTrigger = trigger;
  }

  /**
   * One look at the clock (the timer calls it; tests may too): notices a jump, a check left unanswered
   * and a connection silent for too long.
   */
  look() {
    const now = this._now();
    const late = now - this._lastLookMs - this._everyMs;
    this._lastLookMs = now;
    if (!this._open) return;
    if (late > JUMP_MS && this._visible()) {
      this.check("wake");
      return;
    }
    if (this._probeDueMs !== null) {
      if (now >= this._probeDueMs) this._dead({ kind: "unanswered", trigger: this._probeTrigger });
      return;
    }
    const limit = this.deadAfterMs;
    const silenceMs = now - this._lastHeardMs;
    if (limit !== null && silenceMs > limit) this._dead({ kind: "silent", silenceMs });
  }

  /** @private */
  _dead(reason) {
    this.closed();
    this._onDead(reason);
  }

  /** @private (Re)starts the clock timer at the rate the interval needs. */
  _schedule() {
    const every = checkEveryMs(this.intervalMs);
    if (every === this._everyMs) return;
    clearInterval(this._timer);
    this._everyMs = every;
    this._lastLookMs = this._now();
    this._timer = setInterval(() => this.look(), every);
  }
}
