// Tiny DOM helpers (after TodoMVC's helpers.js).

/**
 * @param {string} selector
 * @param {ParentNode} [scope=document]
 * @returns {Element|null} the first match.
 */
export const qs = (selector, scope = document) => scope.querySelector(selector);

/**
 * @param {string} selector
 * @param {ParentNode} [scope=document]
 * @returns {Element[]} every match, as an array.
 */
export const qsa = (selector, scope = document) => [...scope.querySelectorAll(selector)];

/**
 * Adds an event listener.
 * @param {EventTarget} target
 * @param {string} type
 * @param {(ev: Event) => void} handler
 */
export function on(target, type, handler) {
  target.addEventListener(type, handler);
}

/**
 * Listens on `root` for events from descendants matching `selector` (re-rendered children need no rebinding).
 * @param {Element} root
 * @param {string} selector
 * @param {string} type
 * @param {(ev: Event, match: Element) => void} handler called with the matching element.
 */
export function delegate(root, selector, type, handler) {
  root.addEventListener(type, (ev) => {
    const match = ev.target instanceof Element ? ev.target.closest(selector) : null;
    if (match && root.contains(match)) handler(ev, match);
  });
}

/**
 * Sets `textContent` only when it differs (avoids needless DOM writes on every clock frame).
 * @param {Node} node
 * @param {string} text
 */
export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/**
 * Sets or removes an attribute, writing only on change.
 * @param {Element} el
 * @param {string} name
 * @param {string|null} value null removes it.
 */
export function setAttr(el, name, value) {
  if (value === null) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
  } else if (el.getAttribute(name) !== value) {
    el.setAttribute(name, value);
  }
}
