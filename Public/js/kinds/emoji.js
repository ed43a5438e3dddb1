// The `emoji` activity kind on the page: its START form fields and its Lock Screen and Dynamic Island layouts.
// Self-contained: it adds its own elements to the form, the Lock Screen rows and the island, and marks them
// with data-kind="emoji" so css/emoji.css can hide the workout-only parts. app.js creates one EmojiKind and
// calls render() after every view.renderActivities().
//
// Layout (as the reference app's widget): the thumbnail (48 pt, 4 pt corner radius; the server's
// /images/{key}@{1,2,3}x.png once ready, a system-style photo icon until then), a logo overlay at its
// top-leading corner at half its width, pulled out by a quarter of the logo's own size, with a soft shadow,
// and the emoji state beside it.

import { qs, qsa, on, setText, setAttr } from "../dom.js";
import { nextTimeOfDayMs, parseDateMs, formatCountdown } from "../time.js";

/** The server's attributesType for this kind. */
export const KIND = "emoji";
/** Fallback shown until (or instead of) the server's thumbnail. */
const FALLBACK_ICON = "icons/photo.svg";
/** The logo drawn over the thumbnail's corner. */
const LOGO = "icons/favicon.svg";

/**
 * The thumbnail's image sources for an activity, or null when the server has not published one.
 * @param {object} activity
 * @returns {{src: string, srcset: string}|null}
 */
export function thumbnailSources(activity) {
  const t = activity?.thumbnail;
  if (!t || typeof t["1x"] !== "string" || !t["1x"].startsWith("/images/")) return null;
  const srcset = ["1x", "2x", "3x"].filter((s) => typeof t[s] === "string" && t[s].startsWith("/images/"))
    .map((s) => `${t[s]} ${s}`).join(", ");
  return { src: t["1x"], srcset };
}

/**
 * The start message for the emoji kind, from the form's values.
 * @param {{name: string, image: string, emoji: string, endText: string}} fields
 * @param {number} nowMs browser time, epoch ms.
 * @returns {{message?: object, error?: string}}
 */
export function emojiStartMessage({ name, image, emoji, endText }, nowMs) {
  const trimmedName = String(name ?? "").trim();
  if (!trimmedName) return { error: "Give the activity a name." };
  const trimmedEmoji = String(emoji ?? "").trim();
  if (!trimmedEmoji) return { error: "Pick an emoji." };
  const endMs = nextTimeOfDayMs(endText, nowMs);
  if (endMs === null) return { error: "End time must be a time of day, like 18:30." };
  const attributes = { startTime: new Date(nowMs).toISOString(), endTime: new Date(Math.max(endMs, nowMs)).toISOString(),
    name: trimmedName };
  const url = String(image ?? "").trim();
  if (url) {
    if (!/^https?:\/\/[^/\s]+/i.test(url)) return { error: "The image must be an http:// or https:// URL." };
    attributes.image = url;
  }
  return { message: { type: "start", attributesType: KIND, attributes,
    content: { state: { emoji: trimmedEmoji }, staleDate: attributes.endTime, relevanceScore: 0 } } };
}

/** The emoji kind's form section and layouts. */
export class EmojiKind {
  /**
   * @param {HTMLFormElement} form the START form (#start-form); a type switch and the emoji fields are added to it.
   * @param {(message: object) => boolean} request sends a start message (shows its own errors).
   * @param {(text: string) => void} showError shows a form error.
   * @param {() => number} serverNow the server's current time, epoch ms.
   */
  constructor(form, request, showError, serverNow) {
    this.$form = form;
    this._serverNow = serverNow;
    /** @type {object[]} emoji activities as last rendered */
    this._activities = [];
    this._buildForm();
    // Capture on the form itself runs before view.js's submit listener: an emoji start never reaches it.
    form.addEventListener("submit", (ev) => {
      if (form.dataset.kind !== KIND) return;
      ev.preventDefault();
      ev.stopImmediatePropagation();
      const result = emojiStartMessage({ name: this.$name.value, image: this.$image.value, emoji: this.$emoji.value,
        endText: this.$end.value }, Date.now());
      if (result.error) showError(result.error);
      else request(result.message);
    }, { capture: true });
    setInterval(() => this._renderClock(), 1000);
  }

  /** @private Adds the type switch (workout | emoji) and the emoji fields to the form. */
  _buildForm() {
    const doc = this.$form.ownerDocument;
    const types = doc.createElement("div");
    types.className = "kind-picker";
    setAttr(types, "role", "group");
    setAttr(types, "aria-label", "Activity type");
    for (const [kind, label] of [["workout", "Workout"], [KIND, "Emoji"]]) {
      const b = doc.createElement("button");
      b.type = "button";
      b.dataset.kind = kind;
      setText(b, label);
      setAttr(b, "aria-pressed", String(kind === "workout"));
      types.append(b);
    }
    const fields = doc.createElement("fieldset");
    fields.className = "emoji-fields";
    fields.hidden = true;
    const legend = doc.createElement("legend");
    legend.className = "visually-hidden";
    setText(legend, "Emoji activity");
    fields.append(legend);
    const field = (label, attrs) => {
      const wrap = doc.createElement("label");
      wrap.className = "emoji-field";
      const span = doc.createElement("span");
      setText(span, label);
      const input = doc.createElement("input");
      for (const [k, v] of Object.entries(attrs)) input.setAttribute(k, v);
      wrap.append(span, input);
      fields.append(wrap);
      return input;
    };
    this.$name = field("Name", { id: "emoji-name", name: "emojiName", type: "text", maxlength: "64", value: "Morning run" });
    this.$image = field("Image URL", { id: "emoji-image", name: "emojiImage", type: "url", maxlength: "2048",
      placeholder: "https://…", inputmode: "url" });
    this.$emoji = field("Emoji", { id: "emoji-state", name: "emojiState", type: "text", maxlength: "16", value: "🏃" });
    const end = new Date(Date.now() + 30 * 60_000);
    this.$end = field("Ends at", { id: "emoji-end", name: "emojiEnd", type: "time",
      value: `${String(end.getHours()).padStart(2, "0")}:${String(end.getMinutes()).padStart(2, "0")}` });
    this.$form.prepend(types);
    const start = qs("#start", this.$form);
    this.$form.insertBefore(fields, start);
    this._fields = fields;
    this._types = types;
    this._select("workout");
    on(types, "click", (ev) => {
      const b = ev.target instanceof Element ? ev.target.closest("button[data-kind]") : null;
      if (b) this._select(b.dataset.kind);
    });
  }

  /**
   * Labels the kind switch from the server's kinds (`GET /kinds`), and hides the switch's kinds the server
   * does not list.
   * @param {object[]} kinds
   */
  renderKinds(kinds) {
    for (const b of qsa("button[data-kind]", this._types)) {
      const kind = kinds.find((k) => k?.name === b.dataset.kind);
      b.hidden = !kind;
      if (kind && typeof kind.label === "string") setText(b, kind.label);
    }
  }

  /** @private */
  _select(kind) {
    this.$form.dataset.kind = kind;
    this._fields.hidden = kind !== KIND;
    for (const b of qsa("button[data-kind]", this._types)) setAttr(b, "aria-pressed", String(b.dataset.kind === kind));
  }

  /**
   * Gives every emoji activity its layout: on its Lock Screen row, and on the island when it is the top one.
   * @param {object[]} activities in display order, as view.renderActivities got them.
   */
  render(activities) {
    const doc = this.$form.ownerDocument;
    this._activities = activities.filter((a) => a?.attributesType === KIND);
    for (const row of qsa(".lock-screen[data-activity-id]", doc)) {
      const activity = this._activities.find((a) => String(a.id) === row.dataset.activityId);
      this._decorate(row, activity, "lock");
    }
    const island = qs("#island", doc);
    if (island) {
      const top = activities[0];
      const activity = top?.attributesType === KIND ? top : undefined;
      for (const part of qsa(".island-compact, .island-minimal, .island-expanded", island)) {
        this._decorate(part, activity, part.className.replace("island-", ""));
      }
      setAttr(island, "data-kind", activity ? KIND : null);
    }
    this._renderClock();
  }

  /** @private Adds, fills or removes the emoji layout inside `host`. */
  _decorate(host, activity, presentation) {
    let layout = qs(":scope > .emoji-layout", host);
    if (!activity) {
      if (layout) layout.remove();
      setAttr(host, "data-kind", null);
      return;
    }
    setAttr(host, "data-kind", KIND);
    if (!layout) {
      layout = this._createLayout(host.ownerDocument, presentation);
      host.append(layout);
    }
    setAttr(layout, "data-activity-id", String(activity.id));
    const name = String(activity.attributes?.name ?? "");
    const emoji = String(activity.content?.state?.emoji ?? "");
    for (const el of qsa(".emoji-name", layout)) setText(el, name);
    for (const el of qsa(".emoji-state", layout)) {
      setText(el, emoji);
      setAttr(el, "aria-label", emoji ? `Status ${emoji}` : null);
    }
    this._fillThumbnail(qs(".emoji-thumb", layout), activity, name);
  }

  /** @private */
  _createLayout(doc, presentation) {
    const layout = doc.createElement("div");
    layout.className = `emoji-layout emoji-${presentation}`;
    const thumb = doc.createElement("span");
    thumb.className = "emoji-thumb";
    const img = doc.createElement("img");
    img.className = "emoji-image";
    img.width = 48;
    img.height = 48;
    img.decoding = "async";
    const logo = doc.createElement("img");
    logo.className = "emoji-logo";
    logo.src = LOGO;
    logo.alt = "";
    thumb.append(img, logo);
    layout.append(thumb);
    if (presentation === "lock" || presentation === "expanded") {
      const text = doc.createElement("span");
      text.className = "emoji-text";
      const name = doc.createElement("strong");
      name.className = "emoji-name";
      const remaining = doc.createElement("span");
      remaining.className = "emoji-remaining";
      setAttr(remaining, "role", "timer");
      text.append(name, remaining);
      layout.append(text);
    }
    if (presentation !== "minimal") {
      const state = doc.createElement("span");
      state.className = "emoji-state";
      layout.append(state);
    }
    return layout;
  }

  /** @private The server's thumbnail once published (swapped in place), the fallback icon until then. */
  _fillThumbnail(thumb, activity, name) {
    const img = qs(".emoji-image", thumb);
    const sources = thumbnailSources(activity);
    if (sources) {
      if (img.getAttribute("src") !== sources.src) {
        img.srcset = sources.srcset;
        img.src = sources.src;
      }
      img.alt = name ? `${name} thumbnail` : "Thumbnail";
      setAttr(thumb, "data-thumbnail", "ready");
    } else {
      if (img.getAttribute("src") !== FALLBACK_ICON) {
        img.removeAttribute("srcset");
        img.src = FALLBACK_ICON;
      }
      img.alt = "";
      setAttr(thumb, "data-thumbnail", "fallback");
    }
  }

  /** @private Time left until each activity's endTime ("Ended" once it has ended). */
  _renderClock() {
    const now = this._serverNow();
    for (const el of qsa(".emoji-layout[data-activity-id] .emoji-remaining", this.$form.ownerDocument)) {
      const id = el.closest(".emoji-layout").dataset.activityId;
      const activity = this._activities.find((a) => String(a.id) === id);
      if (!activity) continue;
      const end = parseDateMs(activity.attributes?.endTime);
      const endedAt = parseDateMs(activity.endDate);
      const at = activity.activityState === "ended" && Number.isFinite(endedAt) ? Math.min(now, endedAt) : now;
      // An ended activity stays until dismissed: it says so instead of showing a frozen time.
      if (activity.activityState === "ended") setText(el, "Ended");
      else setText(el, Number.isFinite(end) ? formatCountdown(Math.max(0, Math.ceil((end - at) / 1000))) : "");
    }
  }
}
