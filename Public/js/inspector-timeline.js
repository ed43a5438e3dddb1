// The push inspector's timeline: one activity's events on a time axis (GET /api/activities/{id}/timeline), and a
// scrubber that shows the Lock Screen and the island as they were at any instant (render ?at=ISO-8601).
// SVG built with createElementNS and attributes only; text with textContent (no innerHTML, no inline style).

import { axisX, clockTime, instantAt, sliderValue } from "./inspector-format.js";

const SVG = "http://www.w3.org/2000/svg";

/** Shows one activity's timeline and renderings. */
export class Timeline {
  /**
   * @param {{section:HTMLElement, svg:SVGSVGElement, summary:HTMLElement, scrub:HTMLInputElement, output:HTMLOutputElement,
   *   list:HTMLOListElement, lock:HTMLIFrameElement, island:HTMLIFrameElement}} nodes
   * @param {() => string|null} token the access token (for fetch and the iframes' ?token=)
   */
  constructor(nodes, token) {
    this.n = nodes;
    this.token = token;
    this.activityId = "";
    this.data = null;
    this.instantMs = null; // the instant shown; null = follow "now"
    this._frameTimer = 0;
    this._refreshTimer = 0;
    this.n.scrub.addEventListener("input", () => {
      if (!this.data) return;
      const { fromMs, toMs } = this._range();
      this.show(instantAt(this.n.scrub.value, fromMs, toMs), false);
    });
  }

  /**
   * Shows the timeline of `activityId` ("" hides it).
   * @param {string} activityId
   */
  async select(activityId) {
    this.activityId = activityId;
    this.instantMs = null;
    this.n.section.hidden = !activityId;
    if (!activityId) return;
    await this.refresh();
  }

  /** Re-reads the timeline soon (several records in a row cause one fetch). */
  refreshSoon() {
    if (!this.activityId) return;
    clearTimeout(this._refreshTimer);
    this._refreshTimer = setTimeout(() => this.refresh(), 250);
  }

  /** Re-reads the timeline now. */
  async refresh() {
    const id = this.activityId;
    if (!id) return;
    const headers = {};
    const token = this.token();
    if (token) headers.authorization = `Bearer ${token}`;
    let data;
    try {
      const response = await fetch(`/api/activities/${encodeURIComponent(id)}/timeline`, { headers, cache: "no-store" });
      if (!response.ok) throw new Error(`timeline: HTTP ${response.status}`);
      data = await response.json();
    } catch (error) {
      this.n.summary.textContent = `The timeline could not be read (${error.message}).`;
      return;
    }
    if (id !== this.activityId) return;
    this.data = data;
    this.n.section.dataset.activityId = id;
    this._draw();
    this.show(this.instantMs ?? Date.parse(data.to), true);
  }

  /** @private */
  _range() {
    return { fromMs: Date.parse(this.data.from), toMs: Date.parse(this.data.to) };
  }

  /**
   * Shows the activity as it was at `ms`: moves the slider, names the instant, reloads the renderings.
   * @param {number} ms
   * @param {boolean} moveSlider
   */
  show(ms, moveSlider = true) {
    if (!this.data) return;
    const { fromMs, toMs } = this._range();
    this.instantMs = ms >= toMs ? null : ms;
    if (moveSlider) this.n.scrub.value = String(sliderValue(ms, fromMs, toMs));
    const iso = new Date(ms).toISOString();
    const text = `${clockTime(iso)} (${iso})`;
    this.n.output.textContent = text;
    this.n.scrub.setAttribute("aria-valuetext", text);
    this.n.section.dataset.instant = iso;
    this._cursor(axisX(ms, fromMs, toMs));
    clearTimeout(this._frameTimer);
    this._frameTimer = setTimeout(() => this._frames(iso), 120);
  }

  /** @private */
  _frames(iso) {
    const token = this.token();
    const query = new URLSearchParams({ at: iso, live: "0" });
    if (token) query.set("token", token);
    const base = `/activities/${encodeURIComponent(this.activityId)}/render`;
    this.n.lock.src = `${base}/lock-screen?${query}`;
    this.n.island.src = `${base}/expanded?${query}`;
    this.n.section.dataset.framesAt = iso;
  }

  /** @private Draws the axis, the events, the pushes and the marks. */
  _draw() {
    const d = this.data;
    const svg = this.n.svg;
    const title = svg.querySelector("title");
    svg.replaceChildren(title);
    const { fromMs, toMs } = this._range();
    const el = (name, attrs, text) => {
      const node = document.createElementNS(SVG, name);
      for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
      if (text) {
        const t = document.createElementNS(SVG, "title");
        t.textContent = text;
        node.append(t);
      }
      svg.append(node);
      return node;
    };
    el("line", { x1: 0, y1: 45, x2: 1000, y2: 45, class: "axis" });
    const marks = [
      ["start", d.startDate, "Started"],
      ["stale", d.staleDate, "Stale date"],
      ["end", d.endDate, "Ended"],
      ["dismissal", d.dismissalDate, "Dismissed"],
      ["cap", d.capDate, "8-hour cap: iOS ends it here"],
    ];
    const beyond = [];
    for (const [kind, iso, label] of marks) {
      if (!iso) continue;
      const ms = Date.parse(iso);
      if (ms < fromMs || ms > toMs) {
        if (ms > toMs) beyond.push(`${label} at ${clockTime(iso)}`);
        continue;
      }
      const x = axisX(ms, fromMs, toMs);
      el("line", { x1: x, y1: 10, x2: x, y2: 80, class: `mark mark-${kind}` }, `${label}: ${iso}`);
    }
    for (const e of d.events) {
      const x = axisX(Date.parse(e.at), fromMs, toMs);
      el("circle", { cx: x, cy: 45, r: 7, class: `event event-${e.event}` }, `${e.event} #${e.sequence} at ${e.at}${e.approximate ? " (time approximate)" : ""}`);
    }
    for (const p of d.inspections) {
      if (p.verdict === "applied" || p.verdict === "answered") continue;
      const x = axisX(Date.parse(p.at), fromMs, toMs);
      el("rect", { x: x - 5, y: 62, width: 10, height: 10, class: `push push-${p.verdict}` },
        `${p.type} ${p.event || ""} ${p.verdict}${p.cause ? ` (${p.cause})` : ""} at ${p.at}`);
    }
    this._cursorNode = el("line", { x1: 1000, y1: 4, x2: 1000, y2: 86, class: "cursor" });

    const ignored = d.inspections.filter((p) => p.verdict === "ignored" || p.verdict === "dropped").length;
    const noOps = d.inspections.filter((p) => p.noOp).length;
    const throttled = d.inspections.filter((p) => p.throttled).length;
    const parts = [`${d.activityState}; ${d.events.length} events`, `${ignored} ignored or dropped`];
    if (noOps) parts.push(`${noOps} no-op updates`);
    if (throttled) parts.push(`${throttled} would be throttled`);
    if (beyond.length) parts.push(`ahead: ${beyond.join(", ")}`);
    this.n.summary.textContent = `${parts.join(" · ")}.`;

    const items = d.events.map((e) => {
      const li = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.className = `timeline-event event-${e.event}`;
      button.dataset.event = e.event;
      button.dataset.at = e.at;
      button.textContent = `${e.event} ${clockTime(e.at)}${e.approximate ? " ≈" : ""}`;
      button.addEventListener("click", () => this.show(Date.parse(e.at), true));
      li.append(button);
      return li;
    });
    const now = document.createElement("li");
    const latest = document.createElement("button");
    latest.type = "button";
    latest.className = "timeline-event timeline-now";
    latest.textContent = "Latest";
    latest.addEventListener("click", () => this.show(Date.parse(this.data.to), true));
    now.append(latest);
    this.n.list.replaceChildren(...items, now);
  }

  /** @private */
  _cursor(x) {
    this._cursorNode?.setAttribute("x1", String(x));
    this._cursorNode?.setAttribute("x2", String(x));
  }
}
