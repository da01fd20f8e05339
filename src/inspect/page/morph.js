// Brings a part of the page to what a freshly built copy of it shows, changing only what differs: elements of the
// same tag are kept (their attributes and text brought up to date), others replaced. Following a stream, the
// selected step's panel is built anew every frame; putting the new one in whole made the browser style and lay out
// all of it each time, where only a few texts had changed. For parts made of plain elements and text only: event
// listeners and form state of the fresh copy are not carried over.

/** Makes `parent`'s children match `next` (nodes built for it, not in the document). */
export function morph(parent, next) {
  for (let i = 0; i < next.length; i++) {
    const current = parent.childNodes[i];
    const wanted = next[i];
    if (!current) parent.append(wanted);
    else if (current.nodeType === wanted.nodeType && current.nodeName === wanted.nodeName) patch(current, wanted);
    else parent.replaceChild(wanted, current);
  }
  while (parent.childNodes.length > next.length) parent.lastChild.remove();
}

function patch(current, wanted) {
  if (current.nodeType !== Node.ELEMENT_NODE) {
    if (current.nodeValue !== wanted.nodeValue) current.nodeValue = wanted.nodeValue;
    return;
  }
  for (const { name } of [...current.attributes]) if (!wanted.hasAttribute(name)) current.removeAttribute(name);
  for (const { name, value } of wanted.attributes) if (current.getAttribute(name) !== value) current.setAttribute(name, value);
  morph(current, [...wanted.childNodes]);
}
