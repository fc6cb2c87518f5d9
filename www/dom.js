// The page's two DOM helpers: an element by id, and an element built from properties, never from
// markup, so no text a provider or a user sends is ever parsed as HTML.

export const $ = (id) => document.getElementById(id);

/** Builds an element; `props` are properties (not attributes), so no markup is ever parsed. */
export function h(tag, props = {}, ...children) {
  const el = Object.assign(document.createElement(tag), props);
  el.append(...children.filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}
