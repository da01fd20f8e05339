// A virtualised list that keeps its rows: only the rows in view (and a margin) are in the DOM, between two spacers
// as tall as the rest, and a redraw builds only the rows that came into the window (or went stale), moving none of
// the others. Rebuilding the whole window every frame while thousands of events stream in cost most of each frame.

/** The rows to draw for a list scrolled to `scrollTop` in a box `height` px tall: [first, last). */
export function rowWindow(scrollTop, height, count, rowHeight, overscan) {
  const visible = Math.max(1, Math.ceil((height || 400) / rowHeight));
  const first = Math.min(Math.max(0, count - 1), Math.max(0, Math.floor(scrollTop / rowHeight) - overscan));
  return { first, last: Math.min(count, first + visible + 2 * overscan) };
}

/** Sets an attribute only when it changes: an unchanged write still invalidates the style of the element. */
export function setAttr(el, name, value) {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

export class VirtualRows {
  /**
   * `list` is the element the rows go in; `spacerClass` the class of the two spacers ("" for none). The rows are
   * `li` elements the caller builds; the spacers are `li role="presentation"`.
   */
  constructor(list, rowHeight, spacerClass = "") {
    this.list = list;
    this.rowHeight = rowHeight;
    this.spacerClass = spacerClass;
    this.reset();
  }

  /** Forgets every row (another session, or rows drawn differently): the next draw builds the window afresh. */
  reset() {
    this.rows = new Map();
    this.top = this.spacer();
    this.bottom = this.spacer();
    this.list.replaceChildren(this.top, this.bottom);
  }

  spacer() {
    const li = document.createElement("li");
    li.setAttribute("role", "presentation");
    if (this.spacerClass) li.className = this.spacerClass;
    li.style.height = "0px";
    return li;
  }

  /**
   * Draws rows [first, last) of `count`. `make(i)` builds row i; `fresh(i, el)` says whether a row built earlier
   * still shows row i (else it is built again); `update(i, el)` refreshes what changes without a rebuild (selection).
   * `refill(i, el)`, when given, makes a row built earlier show row i in place.
   */
  draw(count, first, last, make, fresh, update, refill) {
    if (this.top.parentNode !== this.list || this.bottom.parentNode !== this.list) this.reset();
    // Following a stream, a frame often brings more new rows than the window holds: none of the rows drawn stays.
    // Then they are filled in place with the new ones rather than removed and built again: the browser keeps their
    // boxes and styles and lays out only the texts that changed.
    if (refill && this.rows.size > 0 && ![...this.rows].some(([i, el]) => i >= first && i < last && fresh(i, el))) {
      const kept = [...this.rows].sort((a, b) => a[0] - b[0]).map(([, el]) => el);
      this.rows = new Map();
      let cursor = this.top;
      for (let i = first; i < last; i++) {
        let el = kept[i - first];
        if (el) refill(i, el);
        else {
          el = make(i);
          cursor.after(el);
        }
        this.rows.set(i, el);
        update(i, el);
        cursor = el;
      }
      for (let k = last - first; k < kept.length; k++) kept[k].remove();
      this.sizeSpacers(count, first, last);
      return;
    }
    for (const [i, el] of this.rows) {
      if (i < first || i >= last || !fresh(i, el)) {
        el.remove();
        this.rows.delete(i);
      }
    }
    let cursor = this.top;
    for (let i = first; i < last; i++) {
      let el = this.rows.get(i);
      if (!el) {
        el = make(i);
        this.rows.set(i, el);
        cursor.after(el);
      }
      update(i, el);
      cursor = el;
    }
    this.sizeSpacers(count, first, last);
  }

  /** The spacers stand for the rows above and below the window. */
  sizeSpacers(count, first, last) {
    const top = `${first * this.rowHeight}px`;
    const bottom = `${Math.max(0, count - last) * this.rowHeight}px`;
    if (this.top.style.height !== top) this.top.style.height = top;
    if (this.bottom.style.height !== bottom) this.bottom.style.height = bottom;
  }
}
