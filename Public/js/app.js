// Entry point: wires the socket, the store and the view together. See docs/PROTOCOL.md for the messages.

import { ReconnectingSocket, socketUrl, tokenFromLocation } from "./socket.js";
import { Store } from "./store.js";
import { View } from "./view.js";
import { parseDurationSeconds } from "./time.js";

/** How long to wait for the first snapshot before hinting that a token is needed, in ms. */
const SNAPSHOT_HINT_MS = 3000;

const store = new Store();
const view = new View();
const token = tokenFromLocation(location);
let nextRequestId = 1;
let hintTimer = 0;
let sawSnapshot = false;
let hintShown = false;

const socket = new ReconnectingSocket(socketUrl(location), {
  onState: (state, detail) => {
    clearTimeout(hintTimer);
    sawSnapshot = false;
    if (state !== "open") {
      store.resetRole();
      view.renderRole(null);
    }
    view.renderStatus(state, detail);
    if (state !== "open") return;
    // A server with a viewer token sends nothing to an unauthenticated connection until it says hello.
    if (token) send({ type: "hello", token });
    hintTimer = setTimeout(() => {
      if (sawSnapshot) return;
      hintShown = true;
      view.showError("No data from the server yet. If it needs a token, open this page as /#token=YOUR_TOKEN.");
    }, SNAPSHOT_HINT_MS);
  },
  onMessage: (message, receivedAtMs) => {
    const result = store.apply(message, receivedAtMs);
    if (message.type === "snapshot") {
      sawSnapshot = true;
      if (hintShown) view.clearError();
      hintShown = false;
    }
    if (result.roleChanged) view.renderRole(store.role);
    if (result.changed) view.renderActivities(store.ordered());
    if (result.error) view.showError(result.error.message || result.error.code || "The server refused the request.");
    if (result.alert) view.showAlert(result.alert);
    if (result.resync) send({ type: "list" });
    view.renderClock(store.serverNow(Date.now()));
  },
});

/**
 * Sends a client message with a fresh requestId.
 * @param {object} message
 * @returns {boolean} false when not connected.
 */
function send(message) {
  return socket.send({ ...message, requestId: `web-${nextRequestId++}` });
}

/** Sends a user's request, reporting in #error when it cannot go out. */
function request(message) {
  view.clearError();
  if (!send(message)) view.showError("Not connected to the server. Reconnecting…");
}

view.bind("start", ({ workout, durationText }) => {
  const durationSeconds = parseDurationSeconds(durationText);
  if (durationSeconds === null) {
    view.showError("Duration must be a whole number of seconds, 1 or more.");
    return;
  }
  request({ type: "start", attributesType: "workout", attributes: { workout }, durationSeconds });
});
view.bind("stopAll", () => request({ type: "end", all: true, dismissalPolicy: "immediate" }));
view.bind("endActivity", (activityId) => request({ type: "end", activityId, dismissalPolicy: "immediate" }));

function frame() {
  view.renderClock(store.serverNow(Date.now()));
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);
socket.connect();
