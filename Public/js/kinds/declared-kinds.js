// START for every kind the page has no form of its own for (all but workout and emoji): when the kind switch
// selects one, its schema (`GET /kinds/{name}/schema`) is fetched once and its fields built (SchemaForm), put in
// the START form; submitting sends the kind's `start`.

import { qs } from "../dom.js";
import { SchemaForm } from "./schema-form.js";

/** The kinds whose START fields the page has built in. */
const BUILT_IN = new Set(["workout", "emoji"]);

/** The START fields of declared kinds. */
export class DeclaredKinds {
  /**
   * @param {HTMLFormElement} form the START form (#start-form).
   * @param {(message: object) => boolean} request sends a start message (shows its own errors).
   * @param {(text: string) => void} showError shows a form error.
   * @param {(url: string, init?: object) => Promise<Response>} [fetchImpl=fetch]
   */
  constructor(form, request, showError, fetchImpl = fetch) {
    this.$form = form;
    this._fetch = (url, init) => fetchImpl(url, init); // called as a plain function (fetch needs no `this`)
    this._showError = showError;
    /** @type {Map<string, object>} kinds by name */
    this._kinds = new Map();
    /** @type {Map<string, SchemaForm|null>} built forms by kind name; null while the schema is fetched */
    this._forms = new Map();
    // Capture on the form itself runs before view.js's submit listener: a declared kind's start never reaches it.
    form.addEventListener("submit", (ev) => {
      const kind = form.dataset.kind;
      if (!kind || BUILT_IN.has(kind)) return;
      ev.preventDefault();
      ev.stopImmediatePropagation();
      const built = this._forms.get(kind);
      if (!built) { showError("The form is still loading; try again in a moment."); return; }
      const result = built.read(Date.now());
      if (result.error) showError(result.error);
      else request(result.message);
    }, { capture: true });
  }

  /**
   * Takes the server's kinds (`GET /kinds`): a kind whose listing changed has its form built again.
   * @param {object[]} kinds
   */
  setKinds(kinds) {
    const next = new Map(kinds.filter((k) => k && typeof k.name === "string").map((k) => [k.name, k]));
    for (const [name, form] of this._forms) {
      if (JSON.stringify(next.get(name)) !== JSON.stringify(this._kinds.get(name))) {
        form?.element.remove();
        this._forms.delete(name);
      }
    }
    this._kinds = next;
    this.select(this.$form.dataset.kind);
  }

  /**
   * Shows the fields of `kind` (none for a built-in kind), building them on first use.
   * @param {string} kind the kind's name.
   */
  select(kind) {
    for (const [name, form] of this._forms) if (form) form.element.hidden = name !== kind;
    const listed = this._kinds.get(kind);
    if (!listed || BUILT_IN.has(kind) || this._forms.has(kind)) return;
    this._forms.set(kind, null);
    this._fetch(`/kinds/${encodeURIComponent(kind)}/schema`, { credentials: "same-origin" })
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`HTTP ${r.status}`))))
      .then((schema) => {
        if (this._kinds.get(kind) !== listed) return; // the kinds changed meanwhile
        const built = new SchemaForm(this.$form.ownerDocument, listed, schema);
        this._forms.set(kind, built);
        this.$form.insertBefore(built.element, qs("#start", this.$form));
        built.element.hidden = this.$form.dataset.kind !== kind;
      })
      .catch(() => {
        this._forms.delete(kind);
        this._showError(`Could not read the fields of ${listed.label ?? kind}.`);
      });
  }
}
