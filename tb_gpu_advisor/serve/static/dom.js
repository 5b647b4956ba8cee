// Tiny DOM builders. Profile text (kernel and op names) is untrusted: it only
// ever becomes a Text node or an attribute value, never HTML (no innerHTML).

const SVG_NS = "http://www.w3.org/2000/svg";

/** Appends children: strings/numbers become text nodes; arrays are flattened; null/false skipped. */
function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === "object" ? child : el.ownerDocument.createTextNode(String(child)));
  }
  return el;
}

/** Sets attributes; `on*` functions become listeners, `class` a className, true/false toggles booleans. */
function setAttrs(el, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  return el;
}

/** An HTML element: h("td", {class: "num"}, "42"). */
export function h(tag, attrs, ...children) {
  return append(setAttrs(document.createElement(tag), attrs), children);
}

/** An SVG element: s("rect", {x: 1, y: 2}). */
export function s(tag, attrs, ...children) {
  return append(setAttrs(document.createElementNS(SVG_NS, tag), attrs), children);
}

/** Replaces a node's children (keeps the node itself, so focus and layout outside stay put). */
export function replaceChildren(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/**
 * Text whose `backticked` parts name code (step sources, event names): those become <code> elements, the rest
 * text nodes -- still never HTML. An unpaired backtick stays as it is.
 */
export function codeText(text) {
  const parts = String(text).split("`");
  if (parts.length < 3 || parts.length % 2 === 0) return units(String(text));
  return parts.map((p, i) => (i % 2 ? h("code", {}, p) : units(p))).filter((p) => p !== "");
}

/**
 * The server's prose in the tab's unit style: microseconds as "µs" (the CLI writes ASCII "us"), so one screen never
 * shows "880 µs/step" beside "~880 us/step" (issue #36).  Only a number's unit: "us" as a word stays.
 */
export function units(text) {
  return String(text).replace(/(\d)( ?)us\b/g, "$1$2µs");
}

/** A column's title in the tab's unit style: a title ending in the unit "us" ("offset us", "mean us", "gap us/step",
 * the CLI's ASCII) reads "µs"; "us" inside a title stays. */
export function unitsTitle(text) {
  return String(text).replace(/(^|[\s(])us(\/step)?(\)?)$/, "$1µs$2$3");
}
