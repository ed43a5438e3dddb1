// The push inspector page (/inspector): every push and client message the server received, judged as iOS would,
// live over the WebSocket (`inspect` → `inspection` messages, docs/PROTOCOL.md). No framework; text goes in with
// textContent only (never innerHTML with data); every control is a native button, select or range input.

import { ReconnectingSocket, socketUrl, tokenFromLocation } from "./socket.js";
import { TokenKeeper, sessionStore } from "./token.js";
import { VERDICT_LABELS, clockTime, copyText, matches, pretty, recordTitle, shortId } from "./inspector-format.js";
import { Timeline } from "./inspector-timeline.js";
import { Liveness } from "./liveness.js";
import { escapedControls } from "./bidi.js";

const MAX_ROWS = 500;
const $ = (id) => document.getElementById(id);

const tokens = new TokenKeeper(sessionStore(), tokenFromLocation(window.location));
/** @type {Map<number, object>} records by id */
const records = new Map();
/** @type {Map<string, string>} activity id → label */
const activities = new Map();
let lastId = 0;

const list = $("inspections");
const filterActivity = $("filter-activity");
const filterVerdict = $("filter-verdict");
const filterPushes = $("filter-pushes");

const timeline = new Timeline({
  section: $("timeline"), svg: $("timeline-axis"), summary: $("timeline-summary"), scrub: $("scrub"),
  output: $("scrub-time"), list: $("timeline-events"), lock: $("frame-lock"), island: $("frame-island"),
}, () => tokens.current);

/** @returns {{activity: string, verdict: string, pushesOnly: boolean}} the filters' current values. */
function filters() {
  return { activity: filterActivity.value, verdict: filterVerdict.value, pushesOnly: filterPushes.checked };
}

/**
 * Creates an element.
 * @param {string} tag
 * @param {string} [className]
 * @param {string} [text] its textContent (never markup).
 * @returns {HTMLElement}
 */
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * A titled part of a record's details.
 * @param {string} title
 * @param {Node} body
 * @returns {HTMLElement}
 */
function section(title, body) {
  const box = el("section", "detail-section");
  box.append(el("h3", "", title), body);
  return box;
}

/**
 * A value as pretty JSON in a <pre> that the keyboard can reach (it may scroll).
 * @param {*} value
 * @param {string} className
 * @returns {HTMLElement}
 */
function pre(value, className) {
  const node = el("pre", className, pretty(value));
  node.tabIndex = 0; // scrollable regions must be reachable by keyboard
  return node;
}

/**
 * A table with column headers.
 * @param {string[]} headers
 * @param {(string|Node)[][]} rows cells as text or nodes.
 * @param {string} [caption] for screen readers.
 * @returns {HTMLTableElement}
 */
function table(headers, rows, caption) {
  const t = el("table", "detail-table");
  if (caption) t.append(el("caption", "visually-hidden", caption));
  const head = el("tr");
  for (const h of headers) {
    const th = el("th", "", h);
    th.scope = "col";
    head.append(th);
  }
  const thead = el("thead");
  thead.append(head);
  const tbody = el("tbody");
  for (const cells of rows) {
    const tr = el("tr");
    for (const cell of cells) {
      const td = el("td");
      if (cell instanceof Node) td.append(cell);
      else td.textContent = cell;
      tr.append(td);
    }
    tbody.append(tr);
  }
  t.append(thead, tbody);
  return t;
}

/**
 * The date lens: every date of a payload read three ways, with warnings.
 * @param {object[]} dates the record's `dates`.
 * @returns {HTMLElement}
 */
function datesTable(dates) {
  if (!dates?.length) return el("p", "muted", "No dates in this payload.");
  const fmt = (n) => (typeof n === "number" ? String(Math.round(n * 1000) / 1000) : "—");
  return table(["Key", "Sent", "Read as", "Since 2001", "Unix", "ISO", "Warnings"], dates.map((d) => {
    const warnings = el("ul", "warnings");
    for (const w of d.warnings) warnings.append(el("li", "warning", w));
    for (const r of d.readings) if (r.reading !== d.expects) warnings.append(el("li", "reading", `as ${r.reading}: ${r.iso}`));
    return [d.path, JSON.stringify(d.value), { unix: "Unix seconds", reference: "seconds since 2001", iso: "ISO-8601" }[d.expects],
      fmt(d.referenceSeconds), fmt(d.unixSeconds), d.iso || "cannot decode", warnings];
  }), "Dates in the payload, three ways");
}

/**
 * What an applied change changed (or that it changed nothing).
 * @param {object} record an inspection record.
 * @returns {HTMLElement}
 */
function diffView(record) {
  if (record.noOp) return el("p", "noop", "No-op update: the content is exactly the same and there is no alert. It costs budget and changes nothing.");
  if (!record.diff) return el("p", "muted", record.verdict === "applied" ? "New activity (nothing to compare with)." : "Nothing changed.");
  if (!record.diff.length) return el("p", "muted", "The content did not change.");
  return table(["Key", "Before", "After"], record.diff.map((c) => [c.path, c.before === undefined ? "(absent)" : JSON.stringify(c.before),
    c.after === undefined ? "(removed)" : JSON.stringify(c.after)]), "What changed");
}

/**
 * Copies text to the clipboard and says so on the button for a moment.
 * @param {string} text
 * @param {HTMLButtonElement} button
 */
async function copy(text, button) {
  let ok = false;
  try {
    await navigator.clipboard.writeText(text);
    ok = true;
  } catch {
    const area = el("textarea", "visually-hidden");
    area.value = text;
    document.body.append(area);
    area.select();
    try { ok = document.execCommand("copy"); } catch { ok = false; }
    area.remove();
  }
  button.textContent = ok ? "Copied" : "Copy failed: select the command below";
  setTimeout(() => { button.textContent = button.dataset.label; }, 2000);
}

/**
 * A record's details: reason, payload, decoded state, dates, diff, events, and copy-as-curl.
 * @param {object} record an inspection record.
 * @returns {HTMLElement}
 */
function details(record) {
  const box = el("div", "details");
  box.id = `details-${record.id}`;
  const why = el("div", "why");
  if (record.detail) why.append(el("p", "detail", record.detail));
  if (record.warning) why.append(el("p", "warning", record.warning));
  for (const t of record.throttled || []) why.append(el("p", "throttled", `Would be throttled on a device: ${t}`));
  if (record.noOp) why.append(el("p", "noop", "No-op update"));
  if (record.channelId) {
    const reached = record.activityIds || [];
    why.append(el("p", "channel", `Broadcast to channel ${record.channelId}: reached ${reached.length} `
      + `${reached.length === 1 ? "activity" : "activities"}${reached.length ? ` (${reached.map(shortId).join(", ")})` : ""}.`));
  }
  if (record.status && record.source === "push") why.append(el("p", "muted", `APNs would answer HTTP ${record.status}${record.cause && record.status !== 200 ? ` ${record.cause}` : ""}.`));
  if (why.childElementCount) box.append(why);

  const actions = el("div", "actions");
  const copyButton = el("button", "copy-curl", record.source === "push" ? "Copy as curl" : "Copy JSON");
  copyButton.type = "button";
  copyButton.dataset.label = copyButton.textContent;
  const text = copyText(record, window.location.origin);
  copyButton.addEventListener("click", () => copy(text, copyButton));
  actions.append(copyButton);
  if (record.activityId) {
    const show = el("button", "show-timeline", "Show this activity's timeline");
    show.type = "button";
    show.addEventListener("click", () => {
      filterActivity.value = record.activityId;
      applyFilters();
      $("timeline").scrollIntoView({ block: "start" });
      $("scrub").focus();
    });
    actions.append(show);
  }
  box.append(actions);
  box.append(section("Raw payload", pre(record.raw, "raw")));
  box.append(section("Decoded state", pre(record.decoded, "decoded")));
  box.append(section("Dates", datesTable(record.dates)));
  box.append(section("Diff against the previous content", diffView(record)));
  if (record.source === "push") {
    const curl = el("pre", "curl", text);
    curl.tabIndex = 0;
    box.append(section("As curl", curl));
  }
  if (record.events?.length) box.append(section("Events", el("p", "events", record.events.map((e) => `${e.event} #${e.sequence}`).join(", "))));
  return box;
}

/**
 * One list item: a summary button that opens the record's details.
 * @param {object} record an inspection record.
 * @returns {HTMLLIElement}
 */
function row(record) {
  const li = el("li", `inspection verdict-${record.verdict}`);
  li.dataset.id = String(record.id);
  li.dataset.verdict = record.verdict;
  li.dataset.source = record.source;
  li.dataset.activityId = record.activityId || "";
  if (record.cause) li.dataset.cause = record.cause;
  if (record.noOp) li.dataset.noop = "true";
  if (record.throttled) li.dataset.throttled = "true";
  const summary = el("button", "summary");
  summary.type = "button";
  summary.setAttribute("aria-expanded", "false");
  summary.setAttribute("aria-controls", `details-${record.id}`);
  summary.append(
    el("span", "time", clockTime(record.at)),
    el("span", "what", recordTitle(record)),
    el("span", "activity", shortId(record.activityId)),
    el("span", `badge badge-${record.verdict}`, VERDICT_LABELS[record.verdict] || record.verdict),
    el("span", "cause", [record.cause, record.noOp ? "no-op" : "", record.throttled ? "throttled" : "",
      record.dates?.some((d) => d.warnings.length) ? "date warning" : ""].filter(Boolean).join(" · ")),
  );
  const box = details(record);
  box.hidden = true;
  summary.addEventListener("click", () => {
    const open = summary.getAttribute("aria-expanded") !== "true";
    summary.setAttribute("aria-expanded", String(open));
    box.hidden = !open;
  });
  li.append(summary, box);
  li.hidden = !matches(record, filters());
  return li;
}

/**
 * Offers an activity in the activity filter (once).
 * @param {string|undefined} id
 * @param {string} [label]
 */
function addActivity(id, label) {
  if (!id || activities.has(id)) return;
  activities.set(id, label ? escapedControls(label) : shortId(id));  // a spoofing name shows its controls escaped
  const option = el("option", "", `${activities.get(id)} (${shortId(id)})`);
  option.value = id;
  filterActivity.append(option);
}

/** Says how many records are shown of how many kept. */
function updateCount() {
  const shown = [...list.children].filter((li) => !li.hidden).length;
  $("count").textContent = `${shown} of ${records.size} shown`;
  $("empty").hidden = records.size > 0;
}

/**
 * Adds a record at the top (once), keeping at most MAX_ROWS.
 * @param {object} record an inspection record.
 */
function receive(record) {
  if (records.has(record.id)) return;
  records.set(record.id, record);
  lastId = Math.max(lastId, record.id);
  addActivity(record.activityId);
  list.prepend(row(record));
  while (list.children.length > MAX_ROWS) {
    const last = list.lastElementChild;
    records.delete(Number(last.dataset.id));
    last.remove();
  }
  updateCount();
  if (record.verdict === "ignored" || record.verdict === "dropped") {
    $("announcer").textContent = `${recordTitle(record)}: ${VERDICT_LABELS[record.verdict]} (${record.cause || ""})`;
  }
  if (record.activityId && record.activityId === filterActivity.value) timeline.refreshSoon();
}

/** Shows the records the filters let through, and the chosen activity's timeline. */
function applyFilters() {
  const f = filters();
  for (const li of list.children) li.hidden = !matches(records.get(Number(li.dataset.id)), f);
  updateCount();
  if (timeline.activityId !== f.activity) timeline.select(f.activity);
}

for (const control of [filterActivity, filterVerdict, filterPushes]) control.addEventListener("change", applyFilters);
$("filters").addEventListener("submit", (event) => event.preventDefault());

const status = $("status");
/**
 * Shows the connection state.
 * @param {"connecting"|"open"|"closed"} state
 * @param {string} text
 */
function setStatus(state, text) {
  status.dataset.state = state;
  status.textContent = text;
}

let socket;
/**
 * Sends a message when connected.
 * @param {object} message
 * @returns {boolean} whether it was sent.
 */
function sendJSON(message) {
  return socket?.send(message) ?? false;
}

/** Checks sent so far (their requestIds are `check-N`). */
let checks = 0;
// A connection silent for a few heartbeat intervals, or that does not answer a check (an `inspect` from the
// last record: not recorded, and idempotent), is dropped and opened again (docs/PROTOCOL.md, `heartbeat`).
const liveness = new Liveness({
  onDead: (reason) => socket.restart(reason.kind),
  probe: () => {
    const requestId = `check-${++checks}`;
    return sendJSON({ type: "inspect", requestId, ...(lastId ? { since: lastId } : {}) }) ? requestId : null;
  },
  onInterval: (seconds) => { status.dataset.heartbeatSeconds = String(seconds); },
  visible: () => document.visibilityState === "visible",
});
window.addEventListener("online", () => liveness.check("online"));
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") liveness.check("visible");
});

socket = new ReconnectingSocket(() => socketUrl(window.location), {
  onState(state) {
    if (state !== "open") liveness.closed();
    if (state === "open") {
      liveness.opened();
      setStatus("open", "Live");
      if (tokens.current) sendJSON({ type: "hello", requestId: "hello", token: tokens.current });
      sendJSON({ type: "inspect", requestId: "inspect", ...(lastId ? { since: lastId } : {}) });
    } else if (state === "closed") {
      setStatus("closed", "Reconnecting…");
    } else {
      setStatus("connecting", "Connecting…");
    }
  },
  onMessage(message, receivedAtMs) {
    liveness.heard(message, receivedAtMs);
    switch (message.type) {
      case "inspection":
        receive(message.inspection);
        break;
      case "snapshot":
        for (const a of message.activities || []) addActivity(a.id, a.attributes?.workout || a.attributes?.name || a.attributesType);
        break;
      case "activity":
        addActivity(message.activity?.id, message.activity?.attributes?.workout || message.activity?.attributes?.name);
        if (message.activity?.id === filterActivity.value) timeline.refreshSoon();
        break;
      case "error":
        $("error").textContent = message.code === "unauthorized"
          ? "This server needs a token: open /inspector#token=… (the viewer or controller token)."
          : `${message.code}: ${message.message}`;
        if (message.code === "unauthorized") tokens.forget();
        break;
      default:
        break;
    }
  },
});
socket.connect();
updateCount();
