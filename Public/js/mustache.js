// Mustache templates, the same engine as the server's (Sources/LiveActivityRendering/Templates): one markup,
// two renderers, identical output. Pure: no DOM, no globals.
//
// Implements the required modules of the Mustache spec vendored in Tests/fixtures/mustache-spec
// (interpolation, sections, inverted sections, comments, set delimiters, partials); no lambdas, no inheritance,
// no dynamic names. What the spec leaves open is decided as in the Swift engine:
// - `{{name}}` escapes & < > " ' (`&#39;`), after rendering bidirectional controls and NUL isolated
//   (bidi.js); `{{{name}}}` and `{{& name}}` do not.
// - Only JSON objects have names (no array indexes, no `length`, nothing from prototypes).
// - Strings are written as is, numbers as `String(n)`, booleans as `true` / `false`; null, arrays and objects
//   write nothing.
// - Falsey: false, null, a missing name, the empty array. "" and 0 are truthy, as in the spec.
// - Sections and partials nest at most MAXIMUM_DEPTH levels when rendering (deeper ones write nothing);
//   a template whose sections nest deeper does not compile. One render enters at most MAXIMUM_EXPANSIONS
//   section bodies and partials (later ones write nothing), so self-including partials cannot take exponential time.
// - Errors read `name:line:column: reason`, word for word as in Swift; columns count code points.

import { isolated } from "./bidi.js";

/** Deepest nesting of sections and partials rendered (the same limit as the Swift engine). */
export const MAXIMUM_DEPTH = 64;

/** Most section bodies (one per list element) and partials one render enters; past it they write nothing. */
export const MAXIMUM_EXPANSIONS = 20000;

/** A template that could not be compiled. `message` is `name:line:column: reason`. */
export class TemplateError extends Error {
  /**
   * @param {string} templateName
   * @param {number} line from 1
   * @param {number} column from 1, in code points
   * @param {string} reason
   */
  constructor(templateName, line, column, reason) {
    super(`${templateName}:${line}:${column}: ${reason}`);
    this.name = "TemplateError";
    this.templateName = templateName;
    this.line = line;
    this.column = column;
    this.reason = reason;
  }
}

/**
 * Compiles a template once; render it as often as needed.
 *
 * Node shapes (as MustacheNode in Swift): `{t: "text", text}`, `{t: "indent"}`, `{t: "var", path, escaped}`,
 * `{t: "section", path, inverted, children}`, `{t: "partial", name, indentation}` (indentation null when inline).
 *
 * @param {string} source the template text.
 * @param {string} name the name errors are reported under (for an activity kind, its file name).
 * @returns {{name: string, nodes: object[], render: (context: any, partials?: Object<string, object>) => string}}
 *   `render(context, partials)` takes the data (usually an object parsed from JSON) and compiled templates by name
 *   for `{{> name}}` (a missing name writes nothing); it never throws.
 * @throws {TemplateError} for a tag without its closing delimiter, a tag without a name, a malformed
 *   set-delimiter tag, a close tag that does not match the open section or has none, a section never closed,
 *   or sections nested deeper than MAXIMUM_DEPTH.
 */
export function compile(source, name) {
  const src = String(source);
  const nodes = build(tokenize(src, name), src, name);
  const template = {
    name,
    nodes,
    render(context, partials = {}) {
      const state = { out: "", stack: [context], partials: partials || {}, depth: 0, expansions: 0 };
      renderNodes(state, nodes, "");
      return state.out;
    },
  };
  return Object.freeze(template);
}

// -- Errors ------------------------------------------------------------------------------------------

function errorAt(src, offset, name, reason) {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < src.length; i += 1) {
    if (src[i] === "\n") {
      line += 1;
      lineStart = i + 1;
    }
  }
  const column = Array.from(src.slice(lineStart, offset)).length + 1;
  return new TemplateError(name, line, column, reason);
}

// -- Tokenizer: tags, standalone lines, indent markers (MustacheTokenizer.swift) ---------------------

const SIGILS = "!#^/>={&";
const isWhitespace = (c) => c === " " || c === "\t" || c === "\r" || c === "\n";
const isLineStart = (src, i) => i === 0 || src[i - 1] === "\n";

function trim(text) {
  let lower = 0;
  let upper = text.length;
  while (lower < upper && isWhitespace(text[lower])) lower += 1;
  while (upper > lower && isWhitespace(text[upper - 1])) upper -= 1;
  return text.slice(lower, upper);
}

function tokenize(src, name) {
  const tokens = [];
  let open = "{{";
  let close = "}}";
  let position = 0;
  const count = src.length;

  const emitText = (start, end) => {
    let p = start;
    while (p < end) {
      if (isLineStart(src, p)) tokens.push({ t: "indent" });
      let lineEnd = p;
      while (lineEnd < end && src[lineEnd] !== "\n") lineEnd += 1;
      if (lineEnd < end) lineEnd += 1;
      tokens.push({ t: "text", text: src.slice(p, lineEnd) });
      p = lineEnd;
    }
  };
  const endOfBlankLine = (offset) => {
    let i = offset;
    while (i < count && (src[i] === " " || src[i] === "\t")) i += 1;
    if (i === count) return i;
    if (src[i] === "\n") return i + 1;
    if (src[i] === "\r" && i + 1 < count && src[i + 1] === "\n") return i + 2;
    return -1;
  };

  while (position < count) {
    const tagStart = src.indexOf(open, position);
    if (tagStart === -1) {
      emitText(position, count);
      break;
    }
    let contentStart = tagStart + open.length;
    const sigil = contentStart < count && SIGILS.includes(src[contentStart]) ? src[contentStart] : "";
    if (sigil) contentStart += 1;
    const closing = sigil === "{" ? "}" + close : close;
    const contentEnd = src.indexOf(closing, contentStart);
    if (contentEnd === -1) throw errorAt(src, tagStart, name, `unclosed tag: no "${closing}" after "${open}"`);
    const tagEnd = contentEnd + closing.length;
    const content = trim(src.slice(contentStart, contentEnd));

    let lineStart = -1;
    let resume = tagEnd;
    if (sigil !== "" && sigil !== "{" && sigil !== "&") {
      // Only spaces and tabs back to the line start (looking no further back than the blanks).
      let start = tagStart;
      while (start > 0 && (src[start - 1] === " " || src[start - 1] === "\t")) start -= 1;
      const blank = isLineStart(src, start);
      const next = blank && start >= position ? endOfBlankLine(tagEnd) : -1;
      if (next !== -1) {
        lineStart = start;
        resume = next;
      }
    }
    if (lineStart !== -1) {
      emitText(position, lineStart);
    } else {
      emitText(position, tagStart);
      if (isLineStart(src, tagStart)) tokens.push({ t: "indent" });
    }

    if (sigil === "=") {
      const inner = src.slice(contentStart, contentEnd);
      if (!inner.endsWith("=")) {
        throw errorAt(src, tagStart, name, `invalid set-delimiter tag: it must end with "=${close}"`);
      }
      const parts = inner.slice(0, -1).split(/[ \t\r\n]+/).filter((part) => part !== "");
      if (parts.length !== 2 || parts[0].includes("=") || parts[1].includes("=")) {
        throw errorAt(src, tagStart, name,
          'invalid set-delimiter tag: two delimiters without "=" are expected, such as {{=<% %>=}}');
      }
      [open, close] = parts;
    } else if (sigil !== "!") {
      if (content === "") throw errorAt(src, tagStart, name, "empty tag: a name is expected");
      if (sigil === "#" || sigil === "^") {
        tokens.push({ t: "open", name: content, inverted: sigil === "^", offset: tagStart });
      } else if (sigil === "/") {
        tokens.push({ t: "close", name: content, offset: tagStart });
      } else if (sigil === ">") {
        tokens.push({ t: "partial", name: content, indentation: lineStart === -1 ? null : src.slice(lineStart, tagStart) });
      } else {
        tokens.push({ t: "var", name: content, escaped: sigil === "" });
      }
    }
    position = resume;
  }
  return tokens;
}

// -- Tree (MustacheTemplate.swift) --------------------------------------------------------------------

const pathOf = (name) => (name === "." ? [] : name.split("."));

function build(tokens, src, name) {
  const frames = [{ name: "", inverted: false, offset: 0, children: [] }];
  for (const token of tokens) {
    const top = frames[frames.length - 1];
    switch (token.t) {
      case "text":
      case "indent":
        top.children.push(token);
        break;
      case "var":
        top.children.push({ t: "var", path: pathOf(token.name), escaped: token.escaped });
        break;
      case "partial":
        top.children.push({ t: "partial", name: token.name, indentation: token.indentation });
        break;
      case "open":
        if (frames.length > MAXIMUM_DEPTH) {
          throw errorAt(src, token.offset, name, `sections nest deeper than ${MAXIMUM_DEPTH} levels`);
        }
        frames.push({ name: token.name, inverted: token.inverted, offset: token.offset, children: [] });
        break;
      case "close": {
        if (frames.length === 1) {
          throw errorAt(src, token.offset, name, `close tag "${token.name}" without an open section`);
        }
        const frame = frames.pop();
        if (frame.name !== token.name) {
          const opened = errorAt(src, frame.offset, name, "");
          throw errorAt(src, token.offset, name, `close tag "${token.name}" does not match section "${frame.name}" `
            + `opened at line ${opened.line}, column ${opened.column}`);
        }
        frames[frames.length - 1].children.push(
          { t: "section", path: pathOf(frame.name), inverted: frame.inverted, children: frame.children });
        break;
      }
      default:
        break;
    }
  }
  if (frames.length > 1) {
    const frame = frames[frames.length - 1];
    throw errorAt(src, frame.offset, name, `unclosed section "${frame.name}"`);
  }
  return frames[0].children;
}

// -- Rendering (MustacheRenderer.swift, JSONValue+Mustache.swift) -------------------------------------

const hasOwn = (object, key) => Object.prototype.hasOwnProperty.call(object, key);
const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
const isFalsey = (value) => value === undefined || value === null || value === false
  || (Array.isArray(value) && value.length === 0);

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

function text(value, escaped) {
  let out;
  if (typeof value === "string") out = value;
  else if (typeof value === "number" || typeof value === "boolean") return String(value);
  else return "";
  // Escaped values render bidirectional controls and NUL isolated (bidi.js), as the server's renderer does.
  return escaped ? isolated(out).replace(/[&<>"']/g, (c) => ESCAPES[c]) : out;
}

function lookup(stack, path) {
  if (path.length === 0) return stack[stack.length - 1];
  let value;
  let found = false;
  for (let i = stack.length - 1; i >= 0; i -= 1) {
    if (isObject(stack[i]) && hasOwn(stack[i], path[0])) {
      value = stack[i][path[0]];
      found = true;
      break;
    }
  }
  if (!found) return undefined;
  for (let i = 1; i < path.length; i += 1) {
    if (!isObject(value) || !hasOwn(value, path[i])) return undefined;
    value = value[path[i]];
  }
  return value;
}

function enter(state, nodes, context, pushes, indentation) {
  if (state.depth >= MAXIMUM_DEPTH || state.expansions >= MAXIMUM_EXPANSIONS) return;
  state.depth += 1;
  state.expansions += 1;
  if (pushes) state.stack.push(context);
  renderNodes(state, nodes, indentation);
  if (pushes) state.stack.pop();
  state.depth -= 1;
}

function renderNodes(state, nodes, indentation) {
  for (const node of nodes) {
    switch (node.t) {
      case "text":
        state.out += node.text;
        break;
      case "indent":
        state.out += indentation;
        break;
      case "var":
        state.out += text(lookup(state.stack, node.path), node.escaped);
        break;
      case "section": {
        const value = lookup(state.stack, node.path);
        if (node.inverted) {
          if (isFalsey(value)) enter(state, node.children, undefined, false, indentation);
        } else if (!isFalsey(value)) {
          if (Array.isArray(value)) {
            for (const element of value) enter(state, node.children, element, true, indentation);
          } else {
            enter(state, node.children, value, true, indentation);
          }
        }
        break;
      }
      case "partial": {
        if (!hasOwn(state.partials, node.name)) break;
        const partial = state.partials[node.name];
        if (!partial || !Array.isArray(partial.nodes)) break;
        // A standalone tag indents every line of the partial; an inline one does not.
        enter(state, partial.nodes, undefined, false, node.indentation === null ? "" : indentation + node.indentation);
        break;
      }
      default:
        break;
    }
  }
}
