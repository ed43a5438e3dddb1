// The `emoji` activity kind's START form fields: the kind switch (every kind the server lists: workout, emoji,
// and the declared kinds, whose fields kinds/declared-kinds.js builds) and the emoji fields, added to the
// START form. Its activities are drawn from Kinds/emoji/*.html like any kind's (activity-view.js): the
// thumbnail (`<img data-image>`, the server's /images/… once ready, the photo icon until then), the logo,
// the name and the emoji.

import { qs, qsa, on, setText, setAttr } from "../dom.js";
import { nextTimeOfDayMs } from "../time.js";

/** The server's attributesType for this kind. */
export const KIND = "emoji";

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

/** The emoji kind's form section. */
export class EmojiKind {
  /**
   * @param {HTMLFormElement} form the START form (#start-form); a type switch and the emoji fields are added to it.
   * @param {(message: object) => boolean} request sends a start message (shows its own errors).
   * @param {(text: string) => void} showError shows a form error.
   */
  constructor(form, request, showError) {
    this.$form = form;
    /** @type {Array<(kind: string) => void>} */
    this._listeners = [];
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
    const doc = this.$form.ownerDocument;
    for (const kind of kinds) {
      if (!kind || typeof kind.name !== "string" || qsa("button[data-kind]", this._types).some((b) => b.dataset.kind === kind.name)) continue;
      const b = doc.createElement("button"); // a kind the page has no form of its own for: SchemaForm builds it
      b.type = "button";
      b.dataset.kind = kind.name;
      setAttr(b, "aria-pressed", "false");
      this._types.append(b);
    }
    const labelOf = (kind) => (typeof kind.label === "string" ? kind.label : kind.name);
    // Two kinds with one label (a user's WorkoutAttributes beside the built-in workout): each says its name too.
    const shared = new Set(kinds.filter(Boolean).map(labelOf).filter((label, i, all) => all.indexOf(label) !== i));
    for (const b of qsa("button[data-kind]", this._types)) {
      const kind = kinds.find((k) => k?.name === b.dataset.kind);
      b.hidden = !kind;
      if (kind) setText(b, shared.has(labelOf(kind)) ? `${labelOf(kind)} (${kind.name})` : labelOf(kind));
    }
    if (qs(`button[data-kind="${CSS.escape(this.$form.dataset.kind ?? "")}"]`, this._types)?.hidden) this._select("workout");
  }

  /**
   * Calls `listener(kindName)` whenever the kind switch selects a kind.
   * @param {(kind: string) => void} listener
   */
  onSelect(listener) {
    this._listeners.push(listener);
  }

  /** @private */
  _select(kind) {
    this.$form.dataset.kind = kind;
    this._fields.hidden = kind !== KIND;
    for (const b of qsa("button[data-kind]", this._types)) setAttr(b, "aria-pressed", String(b.dataset.kind === kind));
    for (const listener of this._listeners ?? []) listener(kind);
  }
}
