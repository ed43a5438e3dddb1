// The DOM side: cached element refs, rendering with textContent/<template>, delegated events.
// It never talks to the socket; app.js connects it to the store and the socket.

import { qs, qsa, on, delegate, cloneTemplate, setText, setAttr } from "./dom.js";
import { countdownSeconds, isPaused, workoutLabel, workoutOf } from "./store.js";
import { formatCountdown } from "./time.js";

const STATUS_TEXT = { connecting: "Connecting…", open: "Connected", closed: "Disconnected, reconnecting…" };
const ROLE_TEXT = { viewer: " (view only)" };

/**
 * The badge on a Lock Screen view: "Ended", "Scheduled", "Paused", "Stale" or "" (in that priority).
 * @param {object} activity
 * @returns {string}
 */
export function badgeText(activity) {
  const state = activity.activityState;
  if (state === "ended") return "Ended";
  if (state === "pending") return "Scheduled";
  if (isPaused(activity)) return "Paused";
  return state === "stale" ? "Stale" : "";
}
/** How long an update's alert banner stays up, in ms. */
const BANNER_MS = 4000;

/** Renders the dashboard and reports user intents. */
export class View {
  constructor() {
    this.$form = qs("#start-form");
    this.$picker = qs(".picker");
    this.$duration = qs("#duration");
    this.$start = qs("#start");
    this.$stop = qs("#stop");
    this.$status = qs("#status");
    this.$error = qs("#error");
    this.$banner = qs("#banner");
    this.$bannerTitle = qs(".banner-title", this.$banner);
    this.$bannerBody = qs(".banner-body", this.$banner);
    this.$lockList = qs("#lock-screens");
    this.$lockEmpty = qs("#lock-empty");
    this.$lockTemplate = qs("#lock-screen-template");
    this.$island = qs("#island");
    this.$islandEmpty = qs("#island-empty");
    this.$islandNames = qsa(".workout-name", this.$island);
    this.$islandCountdowns = qsa(".countdown", this.$island);
    this.$islandIcon = qs(".workout-icon", this.$island);
    this.$islandStop = qs(".island-stop", this.$island);

    /** @type {Map<string, {el: Element, name: Element, icon: Element, badge: Element, countdown: Element}>} */
    this._rows = new Map();
    /** @type {object[]} activities as last rendered, in display order */
    this._activities = [];
    this._bannerTimer = 0;
    this._connection = "connecting";
    this._retrying = false;
    /** @type {string|null} */
    this._role = null;

    delegate(this.$picker, "button[data-workout]", "click", (_ev, button) => {
      this.selectWorkout(button.dataset.workout);
    });
  }

  /**
   * Registers a handler for a user intent:
   * - "start": `({workout: string, durationText: string})`, on START (or Enter in the duration field);
   * - "stopAll": `()`, on STOP;
   * - "endActivity": `(activityId: string)`, on the expanded island's STOP.
   * @param {"start"|"stopAll"|"endActivity"} event
   * @param {Function} handler
   */
  bind(event, handler) {
    if (event === "start") {
      on(this.$form, "submit", (ev) => {
        ev.preventDefault();
        handler({ workout: this.selectedWorkout(), durationText: this.$duration.value });
      });
    } else if (event === "stopAll") {
      on(this.$stop, "click", () => handler());
    } else if (event === "endActivity") {
      delegate(this.$island, "button.island-stop", "click", (_ev, button) => {
        if (button.dataset.activityId) handler(button.dataset.activityId);
      });
    }
  }

  /**
   * Marks one picker segment as chosen.
   * @param {string} workout "aerobics" | "jogging" | "yoga"
   */
  selectWorkout(workout) {
    for (const b of qsa("button[data-workout]", this.$picker)) {
      setAttr(b, "aria-pressed", String(b.dataset.workout === workout));
    }
  }

  /** @returns {string} the chosen workout key. */
  selectedWorkout() {
    const pressed = qs('button[aria-pressed="true"]', this.$picker);
    return pressed ? pressed.dataset.workout : "aerobics";
  }

  /**
   * Shows the connection state in `#status` and enables START/STOP only while open.
   * @param {"connecting"|"open"|"closed"} state
   * @param {{extensions?: string, retryInMs?: number}} detail
   */
  renderStatus(state, detail = {}) {
    // Retrying goes closed → connecting → closed…; keep the text steady so the live region is not re-announced.
    this._retrying = state === "closed" || (state === "connecting" && this._retrying);
    this._connection = state;
    setAttr(this.$status, "data-state", state);
    if (state === "open") setAttr(this.$status, "data-extensions", detail.extensions ?? "");
    setAttr(this.$status, "title",
      state === "closed" && detail.retryInMs ? `Retrying in ${(detail.retryInMs / 1000).toFixed(1)} s` : null);
    this._renderControls();
  }

  /**
   * Shows this connection's role; a viewer cannot start or stop anything, so its buttons are disabled.
   * @param {string|null} role "controller" | "viewer" | null (not known yet)
   */
  renderRole(role) {
    this._role = role;
    setAttr(this.$status, "data-role", role);
    this._renderControls();
  }

  /** @private */
  _renderControls() {
    const open = this._connection === "open";
    const text = this._retrying ? STATUS_TEXT.closed : STATUS_TEXT[this._connection] ?? this._connection;
    setText(this.$status, text + (open ? ROLE_TEXT[this._role] ?? "" : ""));
    const canControl = open && this._role !== "viewer";
    this.$start.disabled = !canControl;
    this.$stop.disabled = !canControl;
    this.$islandStop.disabled = this._role === "viewer";
  }

  /**
   * Shows a message in the `#error` alert area.
   * @param {string} text
   */
  showError(text) {
    setText(this.$error, text);
  }

  /** Empties the `#error` alert area. */
  clearError() {
    setText(this.$error, "");
  }

  /**
   * Shows an update's alert as a banner for a few seconds.
   * @param {{title?: string, body?: string}} alert
   */
  showAlert(alert) {
    setText(this.$bannerTitle, String(alert.title ?? ""));
    setText(this.$bannerBody, String(alert.body ?? ""));
    this.$banner.hidden = false;
    clearTimeout(this._bannerTimer);
    this._bannerTimer = setTimeout(() => { this.$banner.hidden = true; }, BANNER_MS);
  }

  /**
   * Renders the Lock Screen list and the Dynamic Island (the first activity). Countdown text is left to renderClock.
   * @param {object[]} activities in display order (highest ranked first).
   */
  renderActivities(activities) {
    const seen = new Set();
    activities.forEach((activity, index) => {
      const id = String(activity.id);
      seen.add(id);
      let row = this._rows.get(id);
      if (!row) {
        row = this._createRow();
        this._rows.set(id, row);
      }
      this._fillRow(row, id, activity);
      const here = this.$lockList.children[index] ?? null;
      if (here !== row.el) this.$lockList.insertBefore(row.el, here);
    });
    for (const [id, row] of this._rows) {
      if (!seen.has(id)) {
        row.el.remove();
        this._rows.delete(id);
      }
    }
    this.$lockEmpty.hidden = activities.length > 0;
    this._renderIsland(activities[0] ?? null);
    this._activities = activities;
  }

  /**
   * Updates every countdown. Cheap when nothing changed, so it can run on every animation frame.
   * @param {number} serverNowMs the server's current time, epoch ms.
   */
  renderClock(serverNowMs) {
    for (const activity of this._activities) {
      const row = this._rows.get(String(activity.id));
      if (row) setText(row.countdown, formatCountdown(countdownSeconds(activity, serverNowMs)));
    }
    const top = this._activities[0];
    if (top) {
      const text = formatCountdown(countdownSeconds(top, serverNowMs));
      for (const el of this.$islandCountdowns) setText(el, text);
    }
  }

  /** @private */
  _createRow() {
    const el = cloneTemplate(this.$lockTemplate);
    return {
      el,
      name: qs(".workout-name", el),
      icon: qs(".workout-icon", el),
      badge: qs(".badge", el),
      countdown: qs(".countdown", el),
    };
  }

  /** @private */
  _fillRow(row, id, activity) {
    const workout = workoutOf(activity);
    const state = activity.activityState ?? "active";
    setAttr(row.el, "data-activity-id", id);
    setAttr(row.el, "data-activity-state", state);
    setAttr(row.icon, "data-workout", workout);
    setText(row.name, workoutLabel(workout));
    setAttr(row.el, "data-paused", isPaused(activity) ? "true" : null);
    setText(row.badge, badgeText(activity));
  }

  /** @private */
  _renderIsland(top) {
    this.$island.hidden = top === null;
    this.$islandEmpty.hidden = top !== null;
    if (top === null) {
      setAttr(this.$island, "data-activity-id", null);
      setAttr(this.$islandStop, "data-activity-id", null);
      return;
    }
    const id = String(top.id);
    const workout = workoutOf(top);
    const label = workoutLabel(workout);
    setAttr(this.$island, "data-activity-id", id);
    setAttr(this.$island, "data-activity-state", top.activityState ?? "active");
    setAttr(this.$islandIcon, "data-workout", workout);
    for (const el of this.$islandNames) setText(el, label);
    setAttr(this.$islandStop, "data-activity-id", id);
    setAttr(this.$islandStop, "aria-label", `Stop ${label} workout`);
  }
}
