// session-tree: compaction bands on the graph. For each compaction on the selected path
// (webapp/web/bands.py sends them with the overlay), a bracket beside the path spans what its
// summary replaced, another what it kept, and a dashed line crosses the path at its cut.
// Placed from the laid-out drawing: the nodes' boxes are read from their shapes' coordinates
// (once per drawing, no re-layout on a selection change); a band goes to the nearer side of the
// path where it covers no node, no badge and no other band.
(function () {
  "use strict";

  const NS = "http://www.w3.org/2000/svg";
  const FONT = 9; // label size in drawing units (graph.css): the drawing's smallest node text
  const LANE = 15; // a band's width across the path: its bracket and its label
  const GAP = 5; // room kept between a band and what it must not touch
  const boxes = new WeakMap(); // svg -> Map(node id -> box), boxes in the drawing group's units
  const extents = new WeakMap(); // svg -> the bands' extent in the svg's units, or null
  const drawn = new WeakMap(); // svg -> the boxes the bands cover, in the drawing group's units
  let measure = null;

  function numbers(text) { return (text || "").match(/-?\d*\.?\d+(?:e[-+]?\d+)?/gi) || []; }

  // The box of a node's shape from its coordinates (dot writes absolute ones), without layout.
  function shapeBox(shape) {
    if (shape.tagName === "ellipse") {
      const [cx, cy, rx, ry] = ["cx", "cy", "rx", "ry"].map((k) => Number(shape.getAttribute(k)));
      return { x0: cx - rx, y0: cy - ry, x1: cx + rx, y1: cy + ry };
    }
    const n = numbers(shape.getAttribute(shape.tagName === "path" ? "d" : "points")).map(Number);
    const b = { x0: Infinity, y0: Infinity, x1: -Infinity, y1: -Infinity };
    for (let i = 0; i + 1 < n.length; i += 2) {
      b.x0 = Math.min(b.x0, n[i]); b.x1 = Math.max(b.x1, n[i]);
      b.y0 = Math.min(b.y0, n[i + 1]); b.y1 = Math.max(b.y1, n[i + 1]);
    }
    return b;
  }

  function nodeBoxes(svg) {
    let map = boxes.get(svg);
    if (map) return map;
    map = new Map();
    svg.querySelectorAll("g.node").forEach((g) => {
      const shape = g.querySelector("polygon, path, ellipse");
      if (shape) map.set(g.id, shapeBox(shape));
    });
    boxes.set(svg, map);
    return map;
  }

  // A text dot wrote, from its attributes: anchored at x (middle unless it says start), baseline y.
  function textBox(t) {
    const x = Number(t.getAttribute("x")), y = Number(t.getAttribute("y"));
    const size = Number(t.getAttribute("font-size")) || 10, w = textWidth(t.textContent) * size / FONT;
    const x0 = t.getAttribute("text-anchor") === "start" ? x : x - w / 2;
    return { x0: x0, y0: y - size, x1: x0 + w, y1: y + size / 3 };
  }

  function textWidth(text) {
    if (!measure) {
      measure = document.createElement("canvas").getContext("2d");
      measure.font = `italic ${FONT}px "DejaVu Sans", sans-serif`;
    }
    return measure.measureText(text).width;
  }

  // Along the path (a) and across it (c): y and x top-down, x and y left to right.
  function axes(lr) {
    return {
      of: (b) => (lr ? { a0: b.x0, a1: b.x1, c0: b.y0, c1: b.y1 } : { a0: b.y0, a1: b.y1, c0: b.x0, c1: b.x1 }),
      xy: (a, c) => (lr ? [a, c] : [c, a]),
      back: (r) => (lr ? { x0: r.a0, x1: r.a1, y0: r.c0, y1: r.c1 } : { x0: r.c0, x1: r.c1, y0: r.a0, y1: r.a1 }),
    };
  }

  function el(name, attrs, text) {
    const e = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text) e.textContent = text;
    return e;
  }

  const overlaps = (r, o) => o.c0 < r.c1 && r.c0 < o.c1 && o.a0 < r.a1 && r.a0 < o.a1;

  // The nearest lane [l0, l0 + LANE] across the path beside [c0, c1] that covers none of
  // `near`, on one side (dir -1: before the path, +1: after it).
  function lane(c0, c1, dir, near) {
    let c = dir < 0 ? c0 - GAP - LANE : c1 + GAP;
    for (let guard = 0; guard <= near.length; guard++) {
      const hit = near.find((o) => o.c0 < c + LANE && c < o.c1);
      if (!hit) return c;
      c = dir < 0 ? hit.c0 - GAP - LANE : hit.c1 + GAP;
    }
    return null;
  }

  // Draw `bands` (see bands.py) on `svg`, replacing the ones drawn before; `lr` when the tree is
  // drawn left to right. Returns nothing; extent(svg) then tells how far they reach.
  function draw(svg, bands, lr) {
    svg.querySelectorAll("g.bands").forEach((g) => g.remove());
    extents.set(svg, null);
    drawn.set(svg, []);
    const group = svg.querySelector("g.graph");
    if (!group || !bands || !bands.length) return;
    const ax = axes(lr);
    const map = nodeBoxes(svg);
    const obstacles = [];
    map.forEach((b, id) => obstacles.push({ ...ax.of(b), id }));
    svg.querySelectorAll("g.cluster > text").forEach((t) => obstacles.push(ax.of(textBox(t)))); // sub-agent titles
    const first = obstacles.length; // what is pushed from here on is the bands' own
    const layer = el("g", { class: "bands" });
    // The latest compaction, the one the context is built from, gets the lane nearest the path.
    for (const band of bands.slice().reverse()) {
      const S = band.summarized.map((id) => map.get(id)).filter(Boolean).map(ax.of);
      const K = band.kept.map((id) => map.get(id)).filter(Boolean).map(ax.of);
      const all = S.concat(K);
      if (!all.length) continue;
      const cutBox = band.cut && map.get(band.cut) ? ax.of(map.get(band.cut)) : null;
      const min = (bs, k) => Math.min(...bs.map((b) => b[k])), max = (bs, k) => Math.max(...bs.map((b) => b[k]));
      let cut = null;
      if (cutBox) cut = S.length ? (max(S, "a1") + cutBox.a0) / 2 : cutBox.a0 - GAP;
      const pieces = [];
      if (S.length) pieces.push(["sum", min(S, "a0"), cut === null ? max(S, "a1") : cut - 1.5, band.summaryLabels]);
      if (K.length) pieces.push(["kept", cut === null ? min(K, "a0") : cut + 1.5, max(K, "a1"), band.keptLabels]);
      const a0 = Math.min(...pieces.map((p) => p[1])), a1 = Math.max(...pieces.map((p) => p[2]));
      const c0 = min(all, "c0"), c1 = max(all, "c1");
      const near = obstacles.filter((o) => o.a0 < a1 + GAP && a0 - GAP < o.a1);
      const before = lane(c0, c1, -1, near), after = lane(c0, c1, 1, near);
      if (before === null && after === null) continue;
      // A bracket with another branch's node between it and the path reads as spanning that
      // node: the side with none between is taken, else the nearer side.
      const members = new Set(band.summarized.concat(band.kept));
      const between = (l0, dir) => l0 !== null && near.some((o) => o.id && !members.has(o.id)
        && (dir < 0 ? o.c0 >= l0 + LANE && o.c1 <= c0 + GAP : o.c0 >= c1 - GAP && o.c1 <= l0));
      const clear = { [-1]: before !== null && !between(before, -1), [1]: after !== null && !between(after, 1) };
      let dir = after === null || (before !== null && c0 - (before + LANE) <= after - c1) ? -1 : 1;
      if (!clear[dir] && clear[-dir]) dir = -dir;
      const l0 = dir < 0 ? before : after, l1 = l0 + LANE;
      const bar = dir < 0 ? l1 - 1.5 : l0 + 1.5, tick = dir < 0 ? 4 : -4;
      const baseline = dir < 0 ? l0 + 8 : l0 + 12; // the label's glyphs stay inside the lane
      const g = el("g", { class: "band" + (band.latest ? " latest" : ""), "data-band": band.key });
      for (const [kind, p0, p1, labels] of pieces) {
        if (p1 <= p0) continue;
        const [x0, y0] = ax.xy(p0, bar + tick), [x1, y1] = ax.xy(p0, bar), [x2, y2] = ax.xy(p1, bar), [x3, y3] = ax.xy(p1, bar + tick);
        const [bx, by] = ax.xy(p0, l0), [bw, bh] = ax.xy(p1 - p0, LANE);
        const piece = el("g", { class: "band-" + kind });
        piece.append(el("title", {}, labels[0]));
        piece.append(el("rect", { class: "band-bg", x: bx, y: by, width: Math.max(bw, 0), height: Math.max(bh, 0) }));
        piece.append(el("path", { class: "band-bracket", d: `M${x0},${y0}L${x1},${y1}L${x2},${y2}L${x3},${y3}` }));
        const room = p1 - p0 - 8;
        const text = labels.find((t) => textWidth(t) <= room);
        if (text) {
          const [tx, ty] = ax.xy((p0 + p1) / 2, baseline);
          const attrs = { class: "band-label", x: tx, y: ty };
          if (!lr) attrs.transform = `rotate(-90 ${tx} ${ty})`;
          piece.append(el("text", attrs, text));
        }
        g.append(piece);
      }
      obstacles.push({ a0: a0, a1: a1, c0: l0, c1: l1 });
      if (cut !== null) {
        // Across the path from the band to past the cut node; only across the node where a
        // longer line would touch something.
        const far = dir < 0 ? cutBox.c1 + GAP : cutBox.c0 - GAP;
        const line = (from) => ({ a0: cut - 1, a1: cut + 1, c0: Math.min(from, far), c1: Math.max(from, far) });
        let span = line(dir < 0 ? l1 : l0);
        if (obstacles.some((o) => overlaps(span, o))) span = line(dir < 0 ? cutBox.c0 - GAP : cutBox.c1 + GAP);
        if (!obstacles.some((o) => overlaps(span, o))) {
          const [x0, y0] = ax.xy(cut, span.c0), [x1, y1] = ax.xy(cut, span.c1);
          const mark = el("g", { class: "band-cut" });
          mark.append(el("title", {}, band.cutLabel));
          mark.append(el("line", { x1: x0, y1: y0, x2: x1, y2: y1 }));
          obstacles.push(span);
          const w = textWidth("cut") + 2;
          const at = dir < 0 ? span.c1 + 2 : span.c0 - 2 - (lr ? FONT + 2 : w);
          // The label's box on screen is its line box, a little more than its glyphs: 2 units of margin.
          const spot = lr ? { a0: cut - w / 2 - 2, a1: cut + w / 2 + 2, c0: at - 1, c1: at + FONT + 4 }
            : { a0: cut - FONT, a1: cut + 5, c0: at - 2, c1: at + w + 2 };
          if (!obstacles.some((o) => overlaps(spot, o))) {
            const [tx, ty] = lr ? [cut, at + FONT] : [at + w / 2, cut + 3];
            mark.append(el("text", { class: "band-cut-label", x: tx, y: ty }, "cut"));
            obstacles.push(spot);
          }
          g.append(mark);
        }
      }
      layer.append(g);
    }
    group.append(layer);
    const mine = obstacles.slice(first).map(ax.back);
    drawn.set(svg, mine);
    extents.set(svg, layerExtent(group, mine));
  }

  // A box in the drawing group's units as [x, y, width, height] in the svg's own units (dot
  // translates its drawing group), from the transform attribute: no layout.
  function inSvg(group, r) {
    const t = group.transform.baseVal.consolidate();
    const m = t ? t.matrix : null;
    const at = (x, y) => (m ? [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f] : [x, y]);
    const [x0, y0] = at(r.x0, r.y0), [x1, y1] = at(r.x1, r.y1);
    return [Math.min(x0, x1), Math.min(y0, y1), Math.abs(x1 - x0), Math.abs(y1 - y0)];
  }

  // The bands' extent in the svg's own units.
  function layerExtent(group, mine) {
    if (!mine.length) return null;
    const r = { x0: Math.min(...mine.map((b) => b.x0)), y0: Math.min(...mine.map((b) => b.y0)) };
    r.x1 = Math.max(...mine.map((b) => b.x1)); r.y1 = Math.max(...mine.map((b) => b.y1));
    return inSvg(group, r);
  }

  // A node's box in the svg's own units, or null when it is not drawn.
  function nodeBox(svg, id) {
    const b = nodeBoxes(svg).get(id), group = svg.querySelector("g.graph");
    return b && group ? inSvg(group, b) : null;
  }

  // What app.js places its badges and moves its view with: the nodes' boxes, the bands' boxes,
  // a text's width.
  window.SessionTreeBands = {
    draw, boxes: nodeBoxes, nodeBox, textWidth,
    extent: (svg) => extents.get(svg) || null,
    placed: (svg) => drawn.get(svg) || [],
  };
})();
