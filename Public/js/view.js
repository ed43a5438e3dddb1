// The DOM side: cached element refs, delegated events, the page-only parts around each activity (controls,
// badges, the alert banner). The activities themselves are drawn from their kind's templates
// (activity-view.js). It never talks to the socket; app.js connects it to the store and the socket.

import { qs, qsa, on, delegate, setText, setAttr } from "./dom.js";
import { activityTitle, availableControls, displaySeconds, isPaused, isPending, startsInSeconds, workoutLabel,
  workoutOf } from "./store.js";
import { formatCountdown } from "./time.js";
import { Fragment, KindTemplates } from "./activity-view.js";

const STATUS_TEXT = { connecting: "Connecting…", open: "Connected", closed: "Disconnected, reconnecting…" };
/** What the status says after the page itself gave up on a connection (socket.js `reason`). */
const LOST_TEXT = {
  silent: "No data from the server, reconnecting…",
  unanswered: "The server did not answer, reconnecting…",
  timeout: "The server did not answer, reconnecting…",
};
const ROLE_TEXT = { viewer: " (view only)", unauthenticated: " (token needed)" };
/** Roles that may not start, pause, extend or end anything (null = not known yet: the server will say). */
const WATCH_ONLY = new Set(["viewer", "unauthenticated"]);

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
/** How long an alert keeps the Dynamic Island expanded, in ms. */
const ISLAND_ALERT_MS = 2500;
/** The Dynamic Island's presentations on the page, each in a `.fragment[data-presentation]` of #island. */
const ISLAND_PRESENTATIONS = ["compact", "minimal", "expanded", "small"];

/**
 * Accessible name of a control button ("Pause Yoga workout", "Add 1 minute to Yoga workout", "Pause Delivery").
 * @param {"pause"|"resume"|"extend"} action
 * @param {string} label the activity's display name.
 * @param {number} [seconds] for "extend": positive adds, negative takes off.
 * @param {string} [noun="workout"] what the activity is ("" for a kind other than the workout).
 * @returns {string}
 */
export function controlLabel(action, label, seconds = 0, noun = "workout") {
  const name = noun ? `${label} ${noun}` : label;
  if (action === "pause") return `Pause ${name}`;
  if (action === "resume") return `Resume ${name}`;
  const minutes = Math.abs(seconds) / 60;
  const amount = minutes === 1 ? "1 minute" : `${minutes} minutes`;
  return seconds < 0 ? `Take ${amount} off ${name}` : `Add ${amount} to ${name}`;
}

/** Renders the dashboard and reports user intents. */
export class View {
  constructor() {
    this.$form = qs("#start-form");
    this.$picker = qs(".picker");
    this.$duration = qs("#duration");
    this.$startAt = qs("#start-at");
    this.$start = qs("#start");
    this.$stop = qs("#stop");
    this.$status = qs("#status");
    this.$error = qs("#error");
    this.$banner = qs("#banner");
    this.$bannerTitle = qs(".banner-title", this.$banner);
    this.$bannerBody = qs(".banner-body", this.$banner);
    this.$bannerIcon = qs(".banner-icon", this.$banner);
    this.$bannerCountdown = qs(".banner-countdown", this.$banner);
    this.$announcer = qs("#announcer");
    this.$lockList = qs("#lock-screens");
    this.$lockEmpty = qs("#lock-empty");
    this.$island = qs("#island");
    this.$islandEmpty = qs("#island-empty");
    this.$islandStartsIn = qs(".starts-in", this.$island);
    this.$islandControls = this._controlsIn(qs(".expanded-controls", this.$island));
    /** @type {Fragment[]} the island's presentations */
    this._islandFragments = ISLAND_PRESENTATIONS.map((p) => new Fragment(qs(`.fragment[data-presentation="${p}"]`, this.$island), p));
    this._kinds = new KindTemplates(() => this.renderActivities(this._activities));
    this.$tokenForm = qs("#token-form");
    this.$tokenInput = qs("#token-input");
    this.$tokenMessage = qs("#token-message");

    /** @type {Map<string, {el: Element, fragment: Fragment, startsIn: Element,
     *   controls: {group: Element, pause: HTMLButtonElement, extend: HTMLButtonElement[]}}>} */
    this._rows = new Map();
    /** @type {object[]} activities as last rendered, in display order */
    this._activities = [];
    this._bannerTimer = 0;
    this._islandAlertTimer = 0;
    /** @type {string|null} the activity the banner shows (its countdown follows renderClock) */
    this._bannerActivityId = null;
    /** @type {Map<string, string>} activity id → last announced status ("Paused", "Ended"…) */
    this._announcedStatus = new Map();
    this._connection = "connecting";
    this._retrying = false;
    /** @type {string|null} why the page gave up on the last connection (LOST_TEXT key), until one opens */
    this._lost = null;
    /** @type {string|null} */
    this._role = null;
    /** @type {() => number} the server's current time, epoch ms (app.js sets the store's) */
    this._serverNow = () => Date.now();

    delegate(this.$picker, "button[data-workout]", "click", (_ev, button) => {
      this.selectWorkout(button.dataset.workout);
    });
  }

  /**
   * Registers a handler for a user intent:
   * - "start": `({workout: string, durationText: string})`, on START (or Enter in the duration field);
   * - "stopAll": `()`, on STOP;
   * - "endActivity": `(activityId: string)`, on a template's STOP link (`<a data-action="end">`, the expanded
   *   island's), which does not navigate;
   * - "control": `({action: "pause"|"resume"|"extend", activityId: string, seconds?: number})`, on PAUSE / RESUME /
   *   +1 min / −1 min (Lock Screen views and expanded island);
   * - "token": `(token: string)`, when the token form is submitted.
   * @param {"start"|"stopAll"|"endActivity"|"control"|"token"} event
   * @param {Function} handler
   */
  bind(event, handler) {
    if (event === "start") {
      on(this.$form, "submit", (ev) => {
        ev.preventDefault();
        handler({ workout: this.selectedWorkout(), durationText: this.$duration.value, startAtText: this.$startAt.value });
      });
    } else if (event === "stopAll") {
      on(this.$stop, "click", () => handler());
    } else if (event === "endActivity") {
      const relay = (ev, link) => {
        ev.preventDefault(); // workout://stop and the like: the page ends the activity instead
        const id = link.closest("[data-activity-id]")?.dataset.activityId;
        if (link.dataset.action === "end" && id && link.getAttribute("aria-disabled") !== "true") handler(id);
      };
      delegate(this.$island, "a[data-action]", "click", relay);
      delegate(this.$lockList, "a[data-action]", "click", relay);
    } else if (event === "control") {
      const relay = (_ev, button) => {
        const { action, activityId } = button.dataset;
        if (!activityId || !action) return;
        handler(action === "extend" ? { action, activityId, seconds: Number(button.dataset.seconds) } : { action, activityId });
      };
      delegate(this.$lockList, "button[data-action]", "click", relay);
      delegate(this.$island, "button[data-action]", "click", relay);
    } else if (event === "token") {
      on(this.$tokenForm, "submit", (ev) => {
        ev.preventDefault();
        const token = this.$tokenInput.value.trim();
        if (!token) {
          setText(this.$tokenMessage, "Enter a token first.");
          this.$tokenInput.focus();
          return;
        }
        this.$tokenInput.value = "";
        handler(token);
      });
    }
  }

  /** Empties the "Start at" field (a scheduled start is a one-off). */
  clearStartAt() {
    this.$startAt.value = "";
  }

  /**
   * Shows the token form with a reason (plain text).
   * @param {string} message why a token is needed.
   * @param {{focus?: boolean}} [options] focus: move the keyboard focus to the token field.
   */
  showTokenForm(message, { focus = false } = {}) {
    setText(this.$tokenMessage, message);
    this.$tokenForm.hidden = false;
    if (focus) this.$tokenInput.focus();
  }

  /** Hides the token form. */
  hideTokenForm() {
    this.$tokenForm.hidden = true;
    setText(this.$tokenMessage, "");
  }

  /** @returns {boolean} whether the token form is shown. */
  get tokenFormShown() {
    return !this.$tokenForm.hidden;
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

  /**
   * Makes the picker offer exactly the server's workouts (`GET /kinds`): relabels the buttons the page has,
   * adds one for each new workout, removes those the server no longer lists. Keeps the current choice.
   * @param {{value: string, label: string}[]} choices
   */
  renderWorkouts(choices) {
    if (!choices.length) return;
    const chosen = this.selectedWorkout();
    const wanted = new Set(choices.map((c) => c.value));
    for (const b of qsa("button[data-workout]", this.$picker)) if (!wanted.has(b.dataset.workout)) b.remove();
    for (const { value, label } of choices) {
      let b = qs(`button[data-workout="${CSS.escape(value)}"]`, this.$picker);
      if (!b) {
        b = this.$picker.ownerDocument.createElement("button");
        b.type = "button";
        b.dataset.workout = value;
        this.$picker.append(b);
      }
      setText(b, label);
    }
    this.selectWorkout(wanted.has(chosen) ? chosen : choices[0].value);
  }

  /** @returns {string} the chosen workout key. */
  selectedWorkout() {
    const pressed = qs('button[aria-pressed="true"]', this.$picker);
    return pressed ? pressed.dataset.workout : "aerobics";
  }

  /**
   * Shows the connection state in `#status` and enables START/STOP only while open.
   * @param {"connecting"|"open"|"closed"} state
   * @param {{extensions?: string, retryInMs?: number, reason?: string}} detail
   */
  renderStatus(state, detail = {}) {
    // Retrying goes closed → connecting → closed…; keep the text steady so the live region is not re-announced.
    this._retrying = state === "closed" || (state === "connecting" && this._retrying);
    if (state === "open") this._lost = null;
    else if (state === "closed" && LOST_TEXT[detail.reason] && !this._lost) this._lost = detail.reason;
    this._connection = state;
    setAttr(this.$status, "data-state", state);
    setAttr(this.$status, "data-lost", this._lost);
    if (state === "open") setAttr(this.$status, "data-extensions", detail.extensions ?? "");
    setAttr(this.$status, "title",
      state === "closed" && detail.retryInMs ? `Retrying in ${(detail.retryInMs / 1000).toFixed(1)} s` : null);
    this._renderControls();
  }

  /**
   * Notes the server's heartbeat interval on `#status[data-heartbeat-seconds]` (the page now notices a silent
   * connection).
   * @param {number} seconds
   */
  renderHeartbeat(seconds) {
    setAttr(this.$status, "data-heartbeat-seconds", String(seconds));
  }

  /**
   * Shows this connection's role; a viewer cannot start or stop anything, so its buttons are disabled.
   * @param {string|null} role "controller" | "viewer" | "unauthenticated" (must say hello first) | null (not known yet)
   */
  renderRole(role) {
    this._role = role;
    setAttr(this.$status, "data-role", role);
    this._renderControls();
  }

  /** @private */
  _renderControls() {
    const open = this._connection === "open";
    const text = this._retrying ? LOST_TEXT[this._lost] ?? STATUS_TEXT.closed
      : STATUS_TEXT[this._connection] ?? this._connection;
    setText(this.$status, text + (open ? ROLE_TEXT[this._role] ?? "" : ""));
    const canControl = open && !WATCH_ONLY.has(this._role);
    this.$start.disabled = !canControl;
    this.$stop.disabled = !canControl;
    for (const row of this._rows.values()) this._enableControls(row.controls);
    this._enableControls(this.$islandControls);
    this._enableLinks(this.$lockList);
    this._enableLinks(this.$island);
  }

  /** @private A template's action links (STOP): marked disabled for a viewer (a click then does nothing). */
  _enableLinks(root) {
    const disabled = WATCH_ONLY.has(this._role) ? "true" : null;
    for (const link of qsa("a[data-action]", root)) setAttr(link, "aria-disabled", disabled);
  }

  /**
   * Takes the server's kinds (`GET /kinds`): each activity is drawn with its kind's templates.
   * @param {object[]} kinds the `kinds` array (empty when the server did not answer: default layouts).
   */
  setKinds(kinds) {
    this._kinds.setKinds(kinds);
  }

  /** @private Like the island's STOP: disabled for a viewer; while disconnected a click explains why nothing happens. */
  _enableControls(controls) {
    const disabled = WATCH_ONLY.has(this._role);
    controls.pause.disabled = disabled;
    for (const b of controls.extend) b.disabled = disabled;
  }

  /** @private @returns {{group: Element, pause: HTMLButtonElement, extend: HTMLButtonElement[]}} */
  _controlsIn(group) {
    return { group, pause: qs(".control-pause", group), extend: qsa(".control-extend", group) };
  }

  /**
   * @private Points a control group at an activity: PAUSE or RESUME by its state, none once ended.
   * @param {{group: Element, pause: HTMLButtonElement, extend: HTMLButtonElement[]}} controls
   * @param {string|null} id
   * @param {object|null} activity
   */
  _fillControls(controls, id, activity, kind = null) {
    // Only a kind with a countdown can be paused or extended; a marked activity (kindProblem) is refused.
    const can = activity && kind?.countdown && !activity.kindProblem ? availableControls(activity)
      : { pause: false, resume: false, extend: false };
    controls.group.hidden = !(can.pause || can.resume || can.extend);
    const label = activity ? labelOf(activity) : "";
    const noun = !kind || kind.name === "workout" ? "workout" : ""; // a pizza delivery is no workout
    setAttr(controls.group, "aria-label", `${label}${noun ? ` ${noun}` : ""} controls`);
    const action = can.resume ? "resume" : "pause";
    controls.pause.hidden = !(can.pause || can.resume);
    setAttr(controls.pause, "data-action", action);
    setAttr(controls.pause, "data-activity-id", id);
    setAttr(controls.pause, "aria-label", controlLabel(action, label, 0, noun));
    setText(controls.pause, action === "resume" ? "RESUME" : "PAUSE");
    for (const b of controls.extend) {
      b.hidden = !can.extend;
      setAttr(b, "data-activity-id", id);
      setAttr(b, "aria-label", controlLabel("extend", label, Number(b.dataset.seconds), noun));
    }
    this._enableControls(controls);
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
   * Shows an update's alert as a banner for a few seconds: the activity's Lock Screen view sliding in at the
   * top (as on iPhones without a Dynamic Island), while the Dynamic Island expands briefly. The slide and the
   * expansion are CSS animations that `prefers-reduced-motion: reduce` turns off (presentations.css).
   * @param {{title?: string, body?: string}} alert
   * @param {object} [activity] the updated activity (for its icon and countdown).
   */
  showAlert(alert, activity) {
    setText(this.$bannerTitle, String(alert.title ?? ""));
    setText(this.$bannerBody, String(alert.body ?? ""));
    this._bannerActivityId = activity?.id != null ? String(activity.id) : null;
    if (this.$bannerIcon) setAttr(this.$bannerIcon, "data-workout", activity ? workoutOf(activity) : "");
    if (this.$bannerCountdown) setText(this.$bannerCountdown, "");
    this.$banner.hidden = false;
    this.$banner.classList.remove("is-entering");
    void this.$banner.offsetWidth; // restart the slide-in for a second alert
    this.$banner.classList.add("is-entering");
    clearTimeout(this._bannerTimer);
    this._bannerTimer = setTimeout(() => {
      this.$banner.hidden = true;
      this._bannerActivityId = null;
    }, BANNER_MS);
    if (this._bannerActivityId !== null && this.$island.dataset.activityId === this._bannerActivityId) {
      setAttr(this.$island, "data-alerting", "");
      clearTimeout(this._islandAlertTimer);
      this._islandAlertTimer = setTimeout(() => setAttr(this.$island, "data-alerting", null), ISLAND_ALERT_MS);
    }
  }

  /**
   * Renders the Lock Screen list and the Dynamic Island (the first activity, the most relevant), each from the
   * activity's kind's templates. A fragment is rendered again only when its activity changed; countdowns are
   * left to renderClock.
   * @param {object[]} activities in display order (highest ranked first).
   */
  renderActivities(activities) {
    const nowMs = this._serverNow();
    const seen = new Set();
    activities.forEach((activity, index) => {
      const id = String(activity.id);
      seen.add(id);
      let row = this._rows.get(id);
      if (!row) {
        row = this._createRow();
        this._rows.set(id, row);
      }
      this._fillRow(row, id, activity, nowMs);
      const here = this.$lockList.children[index] ?? null;
      if (here !== row.el) this.$lockList.insertBefore(row.el, here);
    });
    for (const [id, row] of this._rows) {
      if (!seen.has(id)) {
        row.el.remove();
        this._rows.delete(id);
        this._announcedStatus.delete(id);
      }
    }
    this.$lockEmpty.hidden = activities.length > 0;
    this._renderIsland(activities[0] ?? null, nowMs);
    this._activities = activities;
    this._enableLinks(this.$lockList);
    this._enableLinks(this.$island);
  }

  /**
   * Sets the clock the fragments are rendered at (the server's, from the store).
   * @param {() => number} serverNow the server's current time, epoch ms.
   */
  useClock(serverNow) {
    this._serverNow = serverNow;
  }

  /**
   * Updates every countdown (the fragments' `[data-countdown]`, the time to a scheduled start, the banner's).
   * Cheap when nothing changed, so it can run on every animation frame; a fragment whose stale date just
   * passed is rendered again.
   * @param {number} serverNowMs the server's current time, epoch ms.
   */
  renderClock(serverNowMs) {
    let stale = false;
    for (const activity of this._activities) {
      const row = this._rows.get(String(activity.id));
      if (!row) continue;
      stale = row.fragment.tick(serverNowMs) || stale;
      this._fillStartsIn(row.startsIn, activity, serverNowMs);
    }
    for (const fragment of this._islandFragments) stale = fragment.tick(serverNowMs) || stale;
    const top = this._activities[0];
    if (top) this._fillStartsIn(this.$islandStartsIn, top, serverNowMs);
    if (this._bannerActivityId !== null && this.$bannerCountdown) {
      const shown = this._activities.find((a) => String(a.id) === this._bannerActivityId);
      if (shown) setText(this.$bannerCountdown, formatCountdown(displaySeconds(shown, serverNowMs)));
    }
    if (stale) this.renderActivities(this._activities);
  }

  /** @private "Starts in m:ss" under a scheduled (pending) activity; hidden otherwise. */
  _fillStartsIn(el, activity, nowMs) {
    const pending = isPending(activity);
    el.hidden = !pending;
    if (pending) setText(el, `Starts in ${formatCountdown(startsInSeconds(activity, nowMs))}`);
  }

  /**
   * Announces a state change politely (paused, stale, ended…), once per change and never for ticks.
   * @private
   */
  _announceStatus(id, activity) {
    const status = badgeText(activity) || "Running";
    const before = this._announcedStatus.get(id);
    this._announcedStatus.set(id, status);
    if (before === undefined || before === status || !this.$announcer) return;
    setText(this.$announcer, `${labelOf(activity)} workout: ${status.toLowerCase()}`);
  }

  /** @private A Lock Screen row: the rendered fragment, then the page's own parts (start time, controls). */
  _createRow() {
    const doc = this.$lockList.ownerDocument;
    const el = doc.createElement("li");
    el.className = "lock-item";
    const host = doc.createElement("div");
    host.className = "fragment";
    host.dataset.presentation = "lock-screen";
    const startsIn = doc.createElement("p");
    startsIn.className = "starts-in";
    setAttr(startsIn, "role", "timer");
    startsIn.hidden = true;
    const group = doc.createElement("div");
    group.className = "lock-actions activity-controls";
    setAttr(group, "role", "group");
    for (const [cls, action, seconds, text] of [["control-extend", "extend", "-60", "\u22121 min"],
      ["control-pause", "pause", null, "PAUSE"], ["control-extend", "extend", "60", "+1 min"]]) {
      const b = doc.createElement("button");
      b.type = "button";
      b.className = `control ${cls}`;
      b.dataset.action = action;
      if (seconds) b.dataset.seconds = seconds;
      b.textContent = text;
      group.append(b);
    }
    el.append(host, startsIn, group);
    return { el, fragment: new Fragment(host, "lock-screen"), startsIn, controls: this._controlsIn(group) };
  }

  /** @private */
  _fillRow(row, id, activity, nowMs) {
    const kind = this._kinds.kindOf(activity);
    setAttr(row.el, "data-activity-id", id);
    setAttr(row.el, "data-activity-state", activity.activityState ?? "active");
    setAttr(row.el, "data-kind", kind?.name ?? null);
    // A broadcast channel (iOS 18) the activity is subscribed to: shown as the row's tooltip.
    setAttr(row.el, "data-channel-id", activity.channelId ?? null);
    setAttr(row.el, "data-paused", isPaused(activity) ? "true" : null);
    // A stored activity that no longer decodes as its kind (kindProblem): shown, marked, not controllable.
    setAttr(row.el, "data-kind-problem", activity.kindProblem ? String(activity.kindProblem) : null);
    const title = activity.kindProblem ? `Marked: ${activity.kindProblem}`
      : activity.channelId ? `Subscribed to broadcast channel ${activity.channelId}` : null;
    setAttr(row.el, "title", title);
    this._showFragment(row.fragment, activity, kind, nowMs);
    this._announceStatus(id, activity);
    this._fillStartsIn(row.startsIn, activity, nowMs);
    this._fillControls(row.controls, id, activity, kind);
  }

  /** @private Renders a fragment once its kind's templates are known (it stays as it was until then). */
  _showFragment(fragment, activity, kind, nowMs) {
    const templates = kind ? this._kinds.templatesOf(kind) : null;
    if (templates) fragment.show(activity, kind, templates, nowMs);
  }

  /** @private */
  _renderIsland(top, nowMs) {
    this.$island.hidden = top === null;
    this.$islandEmpty.hidden = top !== null;
    if (top === null) {
      setAttr(this.$island, "data-activity-id", null);
      setAttr(this.$island, "data-paused", null);
      setAttr(this.$island, "data-kind", null);
      for (const fragment of this._islandFragments) fragment.clear();
      this._fillControls(this.$islandControls, null, null);
      return;
    }
    const id = String(top.id);
    const kind = this._kinds.kindOf(top);
    setAttr(this.$island, "data-activity-id", id);
    setAttr(this.$island, "data-activity-state", top.activityState ?? "active");
    setAttr(this.$island, "data-kind", kind?.name ?? null);
    setAttr(this.$island, "data-paused", isPaused(top) ? "true" : null);
    for (const fragment of this._islandFragments) this._showFragment(fragment, top, kind, nowMs);
    this._fillStartsIn(this.$islandStartsIn, top, nowMs);
    this._fillControls(this.$islandControls, id, top, kind);
  }
}

/** @private The name controls and announcements use: the workout's ("Yoga"), or the kind's title. */
function labelOf(activity) {
  return activity?.attributesType === "workout" || activity?.attributesType === undefined
    ? workoutLabel(workoutOf(activity)) : activityTitle(activity);
}
