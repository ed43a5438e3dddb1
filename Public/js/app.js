// Entry point: wires the socket, the store and the view together. See docs/PROTOCOL.md for the messages.

import { ReconnectingSocket, resumeUrl, socketUrl, tokenFromLocation } from "./socket.js";
import { Store } from "./store.js";
import { TokenKeeper, sessionStore } from "./token.js";
import { View } from "./view.js";
import { EmojiKind } from "./kinds/emoji.js";
import { DeclaredKinds } from "./kinds/declared-kinds.js";
import { SharesPanel } from "./shares.js";
import { nextTimeOfDayMs, parseDurationSeconds } from "./time.js";
import { Liveness } from "./liveness.js";
import { HistoryPanel } from "./history.js";
import { fetchKinds, workoutChoices } from "./kinds.js";
import { setKinds } from "./store.js";

/** How long to wait for the server's first answer before hinting that something is wrong, in ms. */
const SNAPSHOT_HINT_MS = 3000;

const TOKEN_TEXT = {
  needed: "This server needs an access token to show its workouts. Enter it to continue.",
  rejected: "That token was not accepted. Check it and try again.",
  viewOnly: "View only. Enter the controller token to start, pause or stop workouts.",
};

const store = new Store();
const view = new View();
view.useClock(() => store.serverNow(Date.now()));
const emojiKind = new EmojiKind(document.querySelector("#start-form"), (message) => request(message),
  (text) => view.showError(text));
const declaredKinds = new DeclaredKinds(document.querySelector("#start-form"), (message) => request(message),
  (text) => view.showError(text));
emojiKind.onSelect((kind) => declaredKinds.select(kind));
/** How often the page asks the server for its kinds again (a kind folder may be added while it is open), in ms. */
const KINDS_POLL_MS = 4000;
let kindsSeen = null;
// The kinds the server accepts: the workout picker, the kind switch, the START fields and every activity's
// templates come from GET /kinds, read again now and then and on every connect (a kind added or changed while
// the page is open shows up); nothing is redrawn when the listing did not change.
async function refreshKinds() {
  const kinds = await fetchKinds();
  const text = JSON.stringify(kinds);
  if (text === kindsSeen || (!kinds.length && kindsSeen !== null)) return;
  kindsSeen = text;
  view.setKinds(kinds); // none (no answer): every activity in the default layout
  if (!kinds.length) return;
  setKinds(kinds);
  view.renderWorkouts(workoutChoices(kinds));
  emojiKind.renderKinds(kinds);
  declaredKinds.setKinds(kinds);
}
refreshKinds();
setInterval(() => { if (document.visibilityState === "visible") refreshKinds(); }, KINDS_POLL_MS);
const tokens = new TokenKeeper(sessionStore(), tokenFromLocation(location));
const shares = new SharesPanel((message) => send(message));
const historyPanel = new HistoryPanel((message) => send(message));
const baseUrl = socketUrl(location);
let nextRequestId = 1;
let hintTimer = 0;
/** The server has answered this connection (snapshot, caughtUp, hello or unauthorized). */
let answered = false;
let hintShown = false;
/** The History panel has asked for the newest workouts on this connection. */
let historyAsked = false;
/** requestId of the `hello` carrying the current token, to tell a rejected token from a missing one. */
let helloRequestId = null;

// A connection that goes silent for a few heartbeat intervals, or leaves a check unanswered, is dropped and
// resumed with `since` like any other (docs/PROTOCOL.md, `heartbeat`).
const liveness = new Liveness({
  onDead: (reason) => socket.restart(reason.kind),
  probe: () => sendProbe(),
  onInterval: (seconds) => view.renderHeartbeat(seconds),
  visible: () => document.visibilityState === "visible",
});

// The first connection asks for a snapshot; every later one resumes after the last applied event.
const socket = new ReconnectingSocket(() => resumeUrl(baseUrl, store.sequence, store.logId), {
  onState: (state, detail) => {
    clearTimeout(hintTimer);
    answered = false;
    historyAsked = false;
    helloRequestId = null;
    if (state !== "open") {
      liveness.closed();
      store.resetRole();
      view.renderRole(null);
    }
    view.renderStatus(state, detail);
    if (state !== "open") return;
    liveness.opened();
    store.connectionOpened();
    refreshKinds();
    // Browsers cannot set headers on a WebSocket: the token goes in a `hello` on every connect.
    sayHello();
    hintTimer = setTimeout(() => {
      if (answered || view.tokenFormShown) return;
      hintShown = true;
      view.showError("No data from the server yet. If it needs a token, open this page as /#token=YOUR_TOKEN.");
    }, SNAPSHOT_HINT_MS);
  },
  onMessage: (message, receivedAtMs) => {
    liveness.heard(message, receivedAtMs);
    const result = store.apply(message, receivedAtMs);
    if (message.type === "snapshot" || message.type === "caughtUp" || message.type === "hello") {
      answered = true;
      if (hintShown) view.clearError();
      hintShown = false;
    }
    if (result.roleChanged || message.type === "hello") onRole(store.role);
    if (result.changed) view.renderActivities(store.ordered());
    if (result.changed) shares.renderActivities(store.ordered());
    shares.apply(message);
    historyPanel.apply(message);
    if (!historyAsked && (message.type === "snapshot" || message.type === "caughtUp")) {
      historyAsked = true; // watching is allowed now: what ended while away shows up
      historyPanel.refresh();
    }
    if (result.error) onError(result.error);
    if (result.alert) view.showAlert(result.alert, message.activity);
    if (result.resync) send({ type: "list" });
    view.renderClock(store.serverNow(Date.now()));
  },
});

/**
 * Sends a client message with a fresh requestId.
 * @param {object} message
 * @returns {string|null} its requestId, or null when not connected (nothing was sent).
 */
function send(message) {
  const requestId = `web-${nextRequestId++}`;
  return socket.send({ ...message, requestId }) ? requestId : null;
}

/**
 * Sends a user's request, reporting in #error when it cannot go out.
 * @returns {boolean} whether it was sent.
 */
function request(message) {
  view.clearError();
  if (send(message)) return true;
  view.showError("Not connected to the server. Reconnecting…");
  return false;
}

/**
 * Asks the server for an answer to check the connection: a `catchUp` from the last applied event (it replays
 * what this page may have missed, then `caughtUp`), or a `list` before the first snapshot.
 * @returns {string|null} the request's requestId (its reply answers the check), or null when not sent.
 */
function sendProbe() {
  if (store.sequence === null) return send({ type: "list" });
  const message = { type: "catchUp", since: store.sequence };
  if (store.logId) message.log = store.logId;
  return send(message);
}

/** Presents the remembered token, if any. */
function sayHello() {
  const token = tokens.current;
  helloRequestId = token ? send({ type: "hello", token }) : null;
}

/** A role arrived (snapshot, hello reply, or the previous one on resume): ask for a better token if useful. */
function onRole(role) {
  view.renderRole(role);
  shares.setRole(role);
  if (role === "viewer") view.showTokenForm(TOKEN_TEXT.viewOnly);
  else if (role === "controller") view.hideTokenForm();
}

/** Shows an `error`; the access errors bring up the token form. */
function onError(error) {
  if (error.code === "unauthorized") {
    answered = true;
    if (hintShown) view.clearError();
    hintShown = false;
    const rejected = error.requestId != null && error.requestId === helloRequestId;
    if (rejected) {
      tokens.forget(); // a wrong token is not sent again
      store.forgetRole();
      helloRequestId = null;
    }
    if (store.role === null) view.renderRole("unauthenticated");
    view.showTokenForm(rejected ? TOKEN_TEXT.rejected : TOKEN_TEXT.needed, { focus: rejected });
    return;
  }
  view.showError(error.message || error.code || "The server refused the request.");
  if (error.code === "forbidden") view.showTokenForm(TOKEN_TEXT.viewOnly, { focus: true });
}

view.bind("start", ({ workout, durationText, startAtText }) => {
  const durationSeconds = parseDurationSeconds(durationText);
  if (durationSeconds === null) {
    view.showError("Duration must be a whole number of seconds, 1 or more.");
    return;
  }
  const message = { type: "start", attributesType: "workout", attributes: { workout }, durationSeconds };
  if (startAtText) {
    const startMs = nextTimeOfDayMs(startAtText, Date.now());
    if (startMs === null) {
      view.showError("Start at must be a time of day, like 07:30.");
      return;
    }
    message.startDate = new Date(startMs).toISOString();
  }
  if (request(message) && startAtText) view.clearStartAt();
});
view.bind("stopAll", () => request({ type: "end", all: true, dismissalPolicy: "immediate" }));
view.bind("endActivity", (activityId) => request({ type: "end", activityId, dismissalPolicy: "immediate" }));
view.bind("control", ({ action, activityId, seconds }) => {
  if (action === "pause" || action === "resume") request({ type: action, activityId });
  else if (action === "extend" && Number.isFinite(seconds)) request({ type: "extend", activityId, seconds });
});
view.bind("token", (token) => {
  tokens.set(token);
  store.forgetRole();
  view.clearError();
  view.showTokenForm("Checking the token…");
  // Sent now when connected; otherwise on the next connect.
  if (socket.isOpen) sayHello();
});

// Check the connection at once when it is likely to have died: the network came back, the tab came back,
// or the page's timers jumped (liveness.js notices that by itself).
window.addEventListener("online", () => {
  if (socket.isOpen) liveness.check("online");
  else socket.retryNow();
});
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") liveness.check("visible");
});

/** Redraws the countdowns on every animation frame. */
function frame() {
  view.renderClock(store.serverNow(Date.now()));
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);
socket.connect();
