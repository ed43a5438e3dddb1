// Pure time helpers: ISO parsing, server/browser clock offset, countdown maths and formatting.
// No DOM, no globals. Times named *Ms are epoch milliseconds; *Seconds are seconds.

/**
 * Parses an ISO-8601 date string (any UTC offset, with or without fractional seconds).
 * @param {string|null|undefined} iso
 * @returns {number} epoch milliseconds, or NaN when missing or unparsable.
 */
export function parseDateMs(iso) {
  if (typeof iso !== "string" || iso === "") return NaN;
  return Date.parse(iso);
}

/**
 * Estimates the offset between the server clock and the browser clock.
 *
 * Each sample is `serverTime − Date.now()` taken when a message arrives. Network delay can only make a sample
 * too small (the message is read later than it was stamped), so the estimate is the largest of the last few
 * samples. Call `reset()` when a new connection starts (the server may have restarted with another clock).
 */
export class ClockSync {
  /** @param {number} [window=8] how many recent samples to keep. */
  constructor(window = 8) {
    this._window = window;
    /** @type {number[]} offsets in milliseconds */
    this._samples = [];
  }

  /** Forgets every sample; the offset becomes 0 until the next one. */
  reset() {
    this._samples = [];
  }

  /**
   * Records one sample.
   * @param {string} serverTimeIso the message's `serverTime`.
   * @param {number} receivedAtMs browser `Date.now()` when the message arrived, in ms.
   */
  sample(serverTimeIso, receivedAtMs) {
    const serverMs = parseDateMs(serverTimeIso);
    if (!Number.isFinite(serverMs) || !Number.isFinite(receivedAtMs)) return;
    this._samples.push(serverMs - receivedAtMs);
    if (this._samples.length > this._window) this._samples.shift();
  }

  /** @returns {number} server clock minus browser clock, in ms (0 without samples). */
  get offsetMs() {
    return this._samples.length === 0 ? 0 : Math.max(...this._samples);
  }

  /**
   * @param {number} browserNowMs browser `Date.now()`, in ms.
   * @returns {number} the estimated server time, in epoch ms.
   */
  serverNow(browserNowMs) {
    return browserNowMs + this.offsetMs;
  }
}

/**
 * Seconds left on a countdown, like the server's `tick.remainingSeconds`: rounded up, never negative.
 * A timer whose start lies in the future shows its whole length.
 * @param {number} startMs timer start, epoch ms (NaN = unknown).
 * @param {number} endMs timer end, epoch ms.
 * @param {number} nowMs the (server) time to evaluate at, epoch ms.
 * @returns {number|null} whole seconds left, or null when the end is unknown.
 */
export function remainingSeconds(startMs, endMs, nowMs) {
  if (!Number.isFinite(endMs) || !Number.isFinite(nowMs)) return null;
  const from = Number.isFinite(startMs) ? Math.max(nowMs, startMs) : nowMs;
  return Math.max(0, Math.ceil((endMs - from) / 1000));
}

/**
 * Formats a countdown: `m:ss` below an hour, `h:mm:ss` from an hour on.
 * @param {number|null} seconds whole seconds (negative is shown as 0:00; null as --:--).
 * @returns {string} e.g. "1:10", "0:00", "1:02:03".
 * @example formatCountdown(70) // "1:10"
 */
export function formatCountdown(seconds) {
  if (seconds === null || !Number.isFinite(seconds)) return "--:--";
  const total = Math.max(0, Math.floor(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

/**
 * Reads the duration field: a whole number of seconds, 1 or more.
 * @param {string} text what the user typed.
 * @returns {number|null} seconds, or null when it is not a positive whole number.
 */
export function parseDurationSeconds(text) {
  const t = String(text ?? "").trim();
  if (!/^\d{1,9}$/.test(t)) return null;
  const n = Number(t);
  return n >= 1 ? n : null;
}

/**
 * The next time a wall-clock time of day occurs, in the browser's time zone (for a scheduled start).
 * A time more than a minute ago means tomorrow; within the last minute it means now (the server starts at once).
 * @param {string} text "HH:MM" or "HH:MM:SS", as an `<input type="time">` gives it.
 * @param {number} nowMs browser `Date.now()`, in ms.
 * @returns {number|null} epoch ms, or null when the text is not a time of day.
 * @example nextTimeOfDayMs("07:30", Date.now()) // the coming 7:30
 */
export function nextTimeOfDayMs(text, nowMs) {
  const m = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/.exec(String(text ?? "").trim());
  if (!m || !Number.isFinite(nowMs)) return null;
  const [h, min, s] = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
  if (h > 23 || min > 59 || s > 59) return null;
  const d = new Date(nowMs);
  d.setHours(h, min, s, 0);
  if (d.getTime() < nowMs - 60_000) d.setDate(d.getDate() + 1);
  return d.getTime();
}
