// The access token the page presents in `hello` (docs/PROTOCOL.md, docs/SECURITY.md), kept for this tab's
// session in sessionStorage so every reconnect sends it again. Never written to the DOM.

/** sessionStorage key of the remembered token. */
export const TOKEN_KEY = "liveactivity.token";

/** Remembers one token in a Storage (sessionStorage); works, without remembering, when storage is unavailable. */
export class TokenKeeper {
  /**
   * @param {Storage|null} storage usually `sessionStorage` (null, or one that throws, keeps the token in memory only).
   * @param {string|null} fromLocation a token given as `#token=…` / `?token=…`; it replaces the remembered one.
   */
  constructor(storage, fromLocation = null) {
    this._storage = storage;
    /** @type {string|null} */
    this._token = null;
    if (fromLocation) this.set(fromLocation);
    else this._token = this._read();
  }

  /** @returns {string|null} the token to present, or null. */
  get current() {
    return this._token;
  }

  /**
   * Remembers a token for this session.
   * @param {string} token
   */
  set(token) {
    this._token = token || null;
    try {
      if (this._token) this._storage?.setItem(TOKEN_KEY, this._token);
      else this._storage?.removeItem(TOKEN_KEY);
    } catch {
      // Storage disabled or full: the token still works until the page is closed.
    }
  }

  /** Forgets the token (the server said it matches no role). */
  forget() {
    this.set(null);
  }

  /** @private @returns {string|null} */
  _read() {
    try {
      return this._storage?.getItem(TOKEN_KEY) || null;
    } catch {
      return null;
    }
  }
}

/**
 * `window.sessionStorage`, or null where touching it throws (some privacy settings).
 * @returns {Storage|null}
 */
export function sessionStore() {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}
