// The dashboard's Sharing panel: make read-only links to one activity, list the live ones with their
// expiry and viewer count, revoke them. Controllers only (the panel hides for other roles).
// Messages: `share`, `shares`, `unshare` (docs/PROTOCOL.md).

import { on, qs, setText } from "./dom.js";
import { activityTitle } from "./store.js";
import { parseDateMs } from "./time.js";

/** How often the list (viewer counts) is refreshed while the panel shows, in ms. */
export const REFRESH_MS = 10000;

/**
 * The absolute URL of a share link path.
 * @param {string} path e.g. "/s/Ab3…"
 * @param {Location|URL} loc the page's location
 * @returns {string}
 */
export function shareUrl(path, loc) {
  return new URL(path, `${loc.protocol}//${loc.host}`).toString();
}

/**
 * How the Sharing panel names an activity: what it shows, when it started, and whether it has ended (an
 * ended activity stays on screen until dismissed, and a link to it shows its final state).
 * @param {object} activity
 * @returns {string} e.g. "Yoga, started 14:03", "🏃 Morning run, ended (started 09:30)", "Yoga, starts at 18:00".
 */
export function shareLabel(activity) {
  const title = activityTitle(activity);
  const startMs = parseDateMs(activity?.startDate);
  const time = Number.isFinite(startMs)
    ? new Date(startMs).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" }) : "";
  const state = activity?.activityState;
  if (!time) return state === "ended" ? `${title}, ended` : title;
  if (state === "ended") return `${title}, ended (started ${time})`;
  if (state === "pending") return `${title}, starts at ${time}`;
  return `${title}, started ${time}`;
}

/** The Sharing panel. */
export class SharesPanel {
  /**
   * @param {(message: object) => string|null} send sends a client message, returning its requestId (null when offline)
   */
  constructor(send) {
    this._send = send;
    this.$panel = qs("#shares-panel");
    this.$activity = qs("#share-activity");
    this.$duration = qs("#share-duration");
    this.$linkRow = qs("#share-link-row");
    this.$link = qs("#share-link");
    this.$rows = qs("#share-rows");
    this.$empty = qs("#share-empty");
    /** @type {Map<string, string>} activity id → label */
    this._labels = new Map();
    this._timer = 0;
    /** @type {Set<string>} requestIds of `unshare` requests not yet acknowledged */
    this._revoking = new Set();
    on(qs("#share-form"), "submit", (event) => {
      event.preventDefault();
      const activityId = this.$activity.value;
      if (activityId) this._send({ type: "share", activityId, expiresIn: Number(this.$duration.value) });
    });
    on(qs("#share-copy"), "click", () => {
      this.$link.select();
      navigator.clipboard?.writeText(this.$link.value).catch(() => {});
    });
    on(this.$rows, "click", (event) => {
      const button = event.target.closest("button[data-share-id]");
      if (!button) return;
      const requestId = this._send({ type: "unshare", shareId: button.dataset.shareId });
      if (requestId) this._revoking.add(requestId);
    });
  }

  /**
   * Shows the panel for controllers only, and keeps its list fresh while shown.
   * @param {string|null} role
   */
  setRole(role) {
    const show = role === "controller";
    this.$panel.hidden = !show;
    clearInterval(this._timer);
    if (!show) return;
    this.refresh();
    this._timer = setInterval(() => this.refresh(), REFRESH_MS);
  }

  /** Asks the server for the live shares. */
  refresh() {
    if (!this.$panel.hidden) this._send({ type: "shares" });
  }

  /**
   * Offers the current activities in the picker.
   * @param {object[]} activities in presentation order
   */
  renderActivities(activities) {
    const selected = this.$activity.value;
    this._labels = new Map(activities.map((a) => [String(a.id), shareLabel(a)]));
    this.$activity.replaceChildren(...activities.map((a) => {
      const option = document.createElement("option");
      option.value = String(a.id);
      option.textContent = this._labels.get(String(a.id));
      return option;
    }));
    if (this._labels.has(selected)) this.$activity.value = selected;
    qs("#share-create").disabled = activities.length === 0;
  }

  /**
   * Applies a server message if it concerns the panel: `shares` (a new link carries `url`), or the `ack`
   * of an `unshare` (the list is then refreshed); anything else is ignored.
   * @param {object} message
   */
  apply(message) {
    if (message.type === "ack" && this._revoking.delete(message.requestId)) {
      this.refresh();
      return;
    }
    if (message.type !== "shares") return;
    const created = (message.shares ?? []).find((share) => share.url);
    if (created) {
      this.$linkRow.hidden = false;
      this.$link.value = shareUrl(created.url, location);
      this.refresh();
      return;
    }
    this._renderRows(message.shares ?? []);
  }

  /** @private Lists the live share links. */
  _renderRows(shares) {
    this.$empty.hidden = shares.length > 0;
    this.$rows.replaceChildren(...shares.map((share) => {
      const row = document.createElement("tr");
      const cell = (text) => {
        const td = document.createElement("td");
        td.textContent = text;
        row.append(td);
        return td;
      };
      const label = this._labels.get(share.activityId) ?? "An activity no longer shown";
      cell(label);
      cell(new Date(share.expiresAt).toLocaleString());
      cell(String(share.viewers));
      const revoke = document.createElement("button");
      revoke.type = "button";
      revoke.className = "control";
      revoke.dataset.shareId = share.id;
      revoke.textContent = "Revoke";
      revoke.setAttribute("aria-label", `Revoke the link to ${label}`);
      cell("").append(revoke);
      return row;
    }));
  }
}
