// A WebSocket that reconnects by itself with exponential backoff (0.5 s doubling to 5 s), gives up on a
// handshake that hangs, and can be told to drop a connection that went silent (liveness.js decides that).

/** First reconnect delay, in ms. */
export const INITIAL_BACKOFF_MS = 500;
/** Longest reconnect delay, in ms. */
export const MAX_BACKOFF_MS = 5000;
/** Longest wait for a handshake before the attempt is dropped and retried, in ms. */
export const CONNECT_TIMEOUT_MS = 10000;

/**
 * The endpoint for a page location: `ws://HOST/ws`, or `wss://HOST/ws` when the page came over https.
 * A `?ws=URL` query parameter overrides it (handy when the page is opened from a file or another server).
 * @param {Location|URL} loc
 * @returns {string}
 */
export function socketUrl(loc) {
  const override = new URLSearchParams(loc.search).get("ws");
  if (override) return override;
  const scheme = loc.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${loc.host}/ws`;
}

/**
 * An access token given to the page as `#token=…` (kept out of server logs and Referer) or `?token=…`.
 * The page presents it in a `hello` message on every connect (browsers cannot set WebSocket headers).
 * @param {Location|URL} loc
 * @returns {string|null}
 */
export function tokenFromLocation(loc) {
  const fromHash = new URLSearchParams(String(loc.hash || "").replace(/^#/, "")).get("token");
  return fromHash || new URLSearchParams(loc.search).get("token") || null;
}

/**
 * The endpoint to resume from: `url` with `since=N` added (docs/PROTOCOL.md, "Resuming after a disconnect").
 * Without a sequence (nothing applied yet) it is `url` unchanged, and the server sends a snapshot.
 * @param {string} url ws:// or wss:// endpoint (may already carry a query).
 * @param {number|null} sequence the last applied activity event's sequence.
 * @returns {string}
 * @param {string|null} [logId] the server log the sequence belongs to (a replaced log answers with a reset)
 * @example resumeUrl("ws://h/ws", 42, "abc") // "ws://h/ws?since=42&log=abc"
 */
export function resumeUrl(url, sequence, logId = null) {
  if (!Number.isInteger(sequence) || sequence < 0) return url;
  const u = new URL(url);
  u.searchParams.set("since", String(sequence));
  if (logId) u.searchParams.set("log", logId);
  return u.toString();
}

/**
 * Delay before reconnect attempt number `attempt` (0-based): 500, 1000, 2000, 4000, 5000, 5000… ms.
 * @param {number} attempt
 * @returns {number} milliseconds
 */
export function backoffMs(attempt) {
  return Math.min(MAX_BACKOFF_MS, INITIAL_BACKOFF_MS * 2 ** attempt);
}

/**
 * Keeps one JSON WebSocket connection open.
 *
 * Callbacks: `onState(state, detail)` with state "connecting" | "open" | "closed" (detail: `{extensions}` when
 * open, `{retryInMs, reason}` when closed, where reason is "closed", "timeout" (the handshake hung) or what
 * `restart()` was given); `onMessage(object, receivedAtMs)` for each JSON text frame.
 */
export class ReconnectingSocket {
  /**
   * @param {string|(() => string)} url ws:// or wss:// endpoint, or a function giving it anew for each attempt
   *   (so a reconnect can resume with `?since=`).
   * @param {{onState:(state:string, detail:object)=>void, onMessage:(msg:object, receivedAtMs:number)=>void,
   *   connectTimeoutMs?: number}} callbacks and options (connectTimeoutMs: CONNECT_TIMEOUT_MS by default).
   */
  constructor(url, { onState, onMessage, connectTimeoutMs = CONNECT_TIMEOUT_MS }) {
    this._url = url;
    this._onState = onState;
    this._onMessage = onMessage;
    this._connectTimeoutMs = connectTimeoutMs;
    this._ws = null;
    this._attempt = 0;
    this._timer = 0;
    this._handshakeTimer = 0;
  }

  /** Opens the connection (and keeps reopening it after it closes). */
  connect() {
    clearTimeout(this._timer);
    this._onState("connecting", {});
    let ws;
    try {
      ws = new WebSocket(typeof this._url === "function" ? this._url() : this._url);
    } catch (e) {
      this._scheduleReconnect();
      return;
    }
    this._ws = ws;
    this._handshakeTimer = setTimeout(() => {
      if (this._ws === ws && ws.readyState === WebSocket.CONNECTING) this.restart("timeout");
    }, this._connectTimeoutMs);
    ws.addEventListener("open", () => {
      if (this._ws !== ws) return;
      clearTimeout(this._handshakeTimer);
      this._attempt = 0;
      this._onState("open", { extensions: ws.extensions, protocol: ws.protocol });
    });
    ws.addEventListener("message", (ev) => {
      const receivedAtMs = Date.now();
      if (this._ws !== ws || typeof ev.data !== "string") return;
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return; // not ours to crash on
      }
      this._onMessage(msg, receivedAtMs);
    });
    ws.addEventListener("close", () => {
      if (this._ws !== ws) return;
      clearTimeout(this._handshakeTimer);
      this._ws = null;
      this._scheduleReconnect("closed");
    });
    // "error" is always followed by "close"; nothing to do here.
  }

  /**
   * Drops the current connection without waiting for its closing handshake (a dead connection never
   * completes one; its late events are ignored) and reconnects after the usual backoff.
   * @param {string} reason passed on to `onState("closed", {reason})`, e.g. "silent".
   */
  restart(reason) {
    const ws = this._ws;
    if (ws === null) return;
    this._ws = null;
    clearTimeout(this._handshakeTimer);
    try {
      ws.close();
    } catch {
      // already closing
    }
    this._scheduleReconnect(reason);
  }

  /** Reconnects now instead of at the end of the current backoff (e.g. the browser came back online). */
  retryNow() {
    if (this._ws !== null) return;
    clearTimeout(this._timer);
    this.connect();
  }

  /** @private */
  _scheduleReconnect(reason) {
    const delay = backoffMs(this._attempt++);
    this._onState("closed", { retryInMs: delay, reason });
    clearTimeout(this._timer);
    this._timer = setTimeout(() => this.connect(), delay);
  }

  /** @returns {boolean} whether the socket is open (messages can be sent). */
  get isOpen() {
    return this._ws !== null && this._ws.readyState === WebSocket.OPEN;
  }

  /**
   * Sends one message as a JSON text frame.
   * @param {object} message
   * @returns {boolean} false when not connected (nothing was sent).
   */
  send(message) {
    if (!this.isOpen) return false;
    this._ws.send(JSON.stringify(message));
    return true;
  }
}
