// The START form of any kind the server declares (`GET /kinds/{name}/schema`, docs/PROTOCOL.md), built from its
// JSON Schemas: a text field per string, a picker per enum (kind.json's labels), a number field per number, a
// checkbox per Bool, a duration ("in N minutes") for every date or date range (the first one is the countdown),
// comma-separated text for an array of values, JSON for nested structs, keyed enums and dictionaries (starting
// with a value the schema accepts); optionals folded away in a <details>.
// Pure DOM building and reading: no requests (the caller fetches the schema and sends the message).

import { setAttr, setText } from "../dom.js";

/** Minutes the first date or date range is from now by default. */
const DEFAULT_MINUTES = 20;

/** Short words read letter by letter, in capitals however spelled (Words.swift `acronyms`, the same list). */
const ACRONYMS = new Set(["eta", "id", "url", "uuid", "api", "gps", "ok", "tv", "xs", "xl", "xxl"]);

/**
 * A field name in words, as the server's `Words.label(ofField:)`: "estimatedDeliveryTime" → "Estimated delivery time".
 * @param {string} name
 * @returns {string}
 */
export function fieldLabel(name) {
  const words = String(name).replace(/[_-]+/g, " ")
    .replace(/([a-z])([A-Z])/g, "$1 $2").replace(/([A-Z])([A-Z][a-z])/g, "$1 $2")
    .replace(/([A-Za-z])([0-9])/g, "$1 $2").replace(/([0-9])([A-Za-z])/g, "$1 $2").trim().split(/\s+/);
  return words.map((w, i) => {
    if (w.length > 1 && /^[A-Z0-9]+$/.test(w)) return w;
    const lower = w.toLowerCase();
    if (ACRONYMS.has(lower)) return w.toUpperCase();
    return i === 0 ? lower.charAt(0).toUpperCase() + lower.slice(1) : lower;
  }).join(" ");
}

/**
 * What a schema property asks for.
 * @param {object} property the property's schema.
 * @param {object} defs the schema's `$defs`.
 * @returns {{shape: string, optional: boolean, values?: Array, schema: object, items?: object}} shape: "enum", "text", "integer",
 *   "number", "bool", "date", "range", "list" (array of values) or "json"; `items`, a list's element schema (its
 *   `$ref` resolved).
 */
export function fieldShape(property, defs) {
  let schema = property ?? {};
  let optional = false;
  if (Array.isArray(schema.anyOf)) {
    optional = schema.anyOf.some((s) => s?.type === "null");
    schema = schema.anyOf.find((s) => s?.type !== "null") ?? {};
  }
  if (typeof schema.$ref === "string") schema = defs?.[schema.$ref.replace("#/$defs/", "")] ?? {};
  if (Array.isArray(schema.enum)) return { shape: "enum", optional, values: schema.enum, schema };
  if (schema.type === "string") return { shape: schema.format === "date-time" ? "date" : "text", optional, schema };
  if (schema.type === "integer" || schema.type === "number" || schema.type === "boolean") {
    return { shape: schema.type === "boolean" ? "bool" : schema.type, optional, schema };
  }
  if (schema.type === "object" && schema.properties?.start?.format === "date-time" && schema.properties?.end?.format === "date-time") {
    return { shape: "range", optional, schema };
  }
  if (schema.type === "array") {
    let items = schema.items ?? {};
    if (typeof items.$ref === "string") items = defs?.[items.$ref.replace("#/$defs/", "")] ?? {};
    if (["string", "integer", "number"].includes(items.type) || Array.isArray(items.enum)) return { shape: "list", optional, schema, items };
  }
  return { shape: "json", optional, schema };
}

/**
 * A value the schema accepts, for a JSON field's starting text: an object's required properties filled, the first
 * of a `oneOf` (a keyed enum's first case, `{"onTime": {}}`), an enum's first value, "" for text (now for a
 * date-time, a URL or a fresh UUID by its format), 0 for numbers (the minimum when above 0), false for a Bool, []
 * for an array; what `{}` alone would not be.
 * @param {object} schema
 * @param {object} defs the schema's `$defs`.
 * @param {number} [depth=0]
 * @returns {*}
 */
export function exampleValue(schema, defs, depth = 0) {
  let s = schema ?? {};
  if (typeof s.$ref === "string") s = defs?.[s.$ref.replace("#/$defs/", "")] ?? {};
  if (depth > 8) return null;
  if (Array.isArray(s.anyOf)) return exampleValue(s.anyOf.find((o) => o?.type !== "null") ?? {}, defs, depth + 1);
  if (Array.isArray(s.oneOf) && s.oneOf.length) return exampleValue(s.oneOf[0], defs, depth + 1);
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  switch (s.type) {
    case "string":
      if (s.format === "date-time") return new Date().toISOString();
      if (s.format === "uri-reference") return "https://example.com/";
      if (s.format === "uuid") return globalThis.crypto?.randomUUID?.().toUpperCase() ?? "E621E1F8-C36C-495A-93FC-0C247A3E6E5F";
      return "";
    case "integer": case "number": return typeof s.minimum === "number" && s.minimum > 0 ? s.minimum : 0;
    case "boolean": return false;
    case "array": return [];
    case "object": {
      if (s.properties?.start?.format === "date-time" && s.properties?.end?.format === "date-time") {
        const now = new Date().toISOString();
        return { start: now, end: now };
      }
      const out = {};
      for (const key of s.required ?? []) out[key] = exampleValue(s.properties?.[key], defs, depth + 1);
      return out;
    }
    default: return null;
  }
}

/** A kind's START fields, built from its schema. */
export class SchemaForm {
  /**
   * @param {Document} doc
   * @param {object} kind the kind as `GET /kinds` lists it.
   * @param {object} schema `GET /kinds/{name}/schema`'s body (`attributes`, `contentState`, `fieldOrder`).
   */
  constructor(doc, kind, schema) {
    this.kind = kind;
    /** @type {Array<{part: string, key: string, shape: string, optional: boolean, input: HTMLElement}>} */
    this._fields = [];
    this.element = doc.createElement("fieldset");
    this.element.className = "schema-fields";
    this.element.dataset.kind = kind.name;
    const legend = doc.createElement("legend");
    legend.className = "visually-hidden";
    setText(legend, `${kind.label ?? kind.name} activity`);
    const folded = doc.createElement("details");
    folded.className = "schema-optional";
    const summary = doc.createElement("summary");
    setText(summary, "Optional fields");
    folded.append(summary);
    this.element.append(legend);
    let firstDate = true;
    for (const part of ["contentState", "attributes"]) {
      const partSchema = schema?.[part] ?? {};
      const properties = partSchema.properties ?? {};
      const order = schema?.fieldOrder?.[part] ?? Object.keys(properties);
      for (const key of order) {
        if (!properties[key] || key === "pausedAt") continue;
        const shape = fieldShape(properties[key], partSchema.$defs);
        const isCountdown = (shape.shape === "date" || shape.shape === "range") && (kind.countdown ? key === kind.countdown : firstDate);
        if (shape.shape === "date" || shape.shape === "range") firstDate = false;
        const field = this._field(doc, part, key, shape, isCountdown, kind, partSchema.$defs);
        (shape.optional && !isCountdown ? folded : this.element).append(field.wrap);
        this._fields.push({ part, key, ...shape, input: field.input });
      }
    }
    if (folded.children.length > 1) this.element.append(folded);
  }

  /** @private One labelled input for a field. */
  _field(doc, part, key, shape, isCountdown, kind, defs) {
    const wrap = doc.createElement("label");
    wrap.className = "schema-field";
    const span = doc.createElement("span");
    const id = `field-${kind.name}-${part}-${key}`.replace(/[^A-Za-z0-9_-]/g, "-");
    let input;
    let label = fieldLabel(key);
    if (shape.shape === "enum") {
      input = doc.createElement("select");
      const named = kind.enums?.[key];
      // An entry sent as its raw value (`"sentAs": "rawValue"`: an Int-raw enum kind.json does not list) is picked
      // by its label and sent as the app's number.
      const values = Array.isArray(named) && named.length
        ? named.map((e) => [e.sentAs === "rawValue" ? String(e.rawValue) : e.value, e.label ?? e.value])
        : shape.values.map((v) => [String(v), String(v)]);
      if (shape.optional) values.unshift(["", "—"]);
      for (const [value, text] of values) {
        const option = doc.createElement("option");
        option.value = value;
        setText(option, text);
        input.append(option);
      }
    } else if (shape.shape === "bool") {
      input = doc.createElement("input");
      input.type = "checkbox";
      wrap.classList.add("schema-check");
    } else {
      input = doc.createElement(shape.shape === "json" ? "textarea" : "input");
      if (shape.shape === "integer" || shape.shape === "number") {
        input.type = "number";
        input.step = shape.shape === "integer" ? "1" : "any";
        if (!shape.optional) input.value = "0";
      } else if (shape.shape === "date" || shape.shape === "range") {
        input.type = "number";
        input.min = "0";
        input.step = "1";
        input.value = shape.optional && !isCountdown ? "" : String(DEFAULT_MINUTES);
        label += shape.shape === "range" ? " (minutes from now)" : " (in minutes)";
      } else if (shape.shape === "list") {
        input.type = "text";
        // An enum's values said, as they are sent: an Int-raw enum's numbers (its case names are not accepted).
        const values = Array.isArray(shape.items?.enum) ? shape.items.enum : null;
        label += values ? ` (comma-separated: ${values.slice(0, 6).map(String).join(", ")}${values.length > 6 ? ", …" : ""})` : " (comma-separated)";
      } else if (shape.shape === "json") {
        input.rows = 2;
        input.value = shape.optional ? "" : JSON.stringify(exampleValue(shape.schema, defs));
        // A dictionary whose keys are not String or Int is a flat array of alternating key, value.
        label += shape.schema.type === "array" && !shape.schema.items ? " (JSON: [key, value, …])" : " (JSON)";
      } else {
        input.type = "text";
        // A UUID nobody types by hand: a fresh one to start with (editable).
        if (shape.schema.format === "uuid" && !shape.optional && globalThis.crypto?.randomUUID) input.value = crypto.randomUUID().toUpperCase();
      }
    }
    input.id = id;
    input.name = key;
    setAttr(input, "data-part", part);
    if (isCountdown) setAttr(input, "data-countdown", "true");
    setText(span, label);
    wrap.append(span, input);
    return { wrap, input };
  }

  /**
   * The start message from the fields' values.
   * @param {number} nowMs browser time, epoch ms.
   * @returns {{message?: object, error?: string}}
   */
  read(nowMs) {
    const parts = { attributes: {}, contentState: {} };
    for (const field of this._fields) {
      const { input, shape, optional, key } = field;
      const label = fieldLabel(key);
      const raw = shape === "bool" ? input.checked : String(input.value ?? "").trim();
      if (raw === "" && shape === "list" && !optional) { parts[field.part][key] = []; continue; }
      if (raw === "" && shape !== "text") {
        if (optional) continue;
        return { error: `${label}: fill it in.` };
      }
      let value;
      if (shape === "text") {
        if (raw === "" && optional) continue;
        value = raw;
      } else if (shape === "enum") {
        value = field.values.find((v) => String(v) === raw && typeof v === "string") ?? field.values.find((v) => String(v) === raw) ?? raw;
      } else if (shape === "integer" || shape === "number") {
        value = Number(raw);
        if (!Number.isFinite(value) || (shape === "integer" && !Number.isInteger(value))) {
          return { error: `${label}: expected ${shape === "integer" ? "a whole number" : "a number"}.` };
        }
        // A browser's numbers are Doubles: beyond 2^53 the one sent would not be the one typed (the server keeps
        // an Int64 exactly, from the CLI or the API).
        if (shape === "integer" && !Number.isSafeInteger(value)) {
          return { error: `${label}: ${raw} is beyond what this form sends exactly (±2^53); send it with the CLI or the API to keep every digit.` };
        }
      } else if (shape === "bool") {
        value = raw;
      } else if (shape === "date" || shape === "range") {
        const minutes = Number(raw);
        if (!Number.isFinite(minutes) || minutes < 0) return { error: `${label}: expected minutes, 0 or more.` };
        const end = new Date(nowMs + minutes * 60000).toISOString();
        value = shape === "range" ? { start: new Date(nowMs).toISOString(), end } : end;
      } else if (shape === "list") {
        const items = raw.split(",").map((s) => s.trim()).filter(Boolean);
        // Each item as the schema's type: an enum's value as listed (an Int-raw enum's 3, not "3"), a number as one.
        const item = field.items ?? {};
        const numeric = item.type === "integer" || item.type === "number";
        value = items.map((text) => {
          if (Array.isArray(item.enum)) return item.enum.find((v) => String(v) === text) ?? (numeric ? Number(text) : text);
          return numeric ? Number(text) : text;
        });
      } else {
        try { value = JSON.parse(raw); } catch (_) { return { error: `${label}: not valid JSON.` }; }
      }
      parts[field.part][key] = value;
    }
    return { message: { type: "start", attributesType: this.kind.name, attributes: parts.attributes,
      content: { state: parts.contentState, relevanceScore: 0 } } };
  }
}
