// session-tree: overlays on the graph: the selected path, the context view's and the compaction
// plan's marks, the compaction bands beside the path (bands.js) and the "summarized by" badges.
// Read from the panel's #overlay data and applied by classes, so that a selection change restyles
// its path, never the whole drawing, and never lays it out again.
(function () {
  "use strict";

  const G = (window.SessionTreeGraph = window.SessionTreeGraph || {});
  const $ = (sel, root) => (root || document).querySelector(sel);
  const OVERLAY_CLASSES = ["ctx-in", "ctx-replaced", "ctx-path", "ctx-off", "cp-summarize", "cp-kept", "cp-cut", "cp-off"];

  // `fromPanel`: the panel just changed, so its node becomes the selected one.
  // Returns the selected node's drawn id.
  G.applyOverlay = function applyOverlay(fromPanel) {
    const data = $("#overlay");
    const svg = G.svgEl();
    if (!data || !svg) return null;
    const o = JSON.parse(data.textContent);
    // Only the nodes that carry a mark are touched: a selection change restyles its path, not
    // the whole drawing.
    svg.querySelectorAll(".replaced-by").forEach((x) => x.remove());
    const path = new Set(o.path || []);
    svg.querySelectorAll("g.sel-path").forEach((g) => { if (!path.has(g.id)) g.classList.remove("sel-path"); });
    for (const id of path) { const g = document.getElementById(id); if (g && !g.classList.contains("sel-path")) g.classList.add("sel-path"); }
    svg.classList.toggle("context-mode", !!o.context);
    svg.classList.toggle("compact-mode", !!o.compact);
    if (o.selected) G.markSelected(o.selected);
    if (fromPanel && o.node) G.setState("node", o.node);
    const badges = [];
    let mark = () => null;
    if (o.compact) {
      const summarize = new Set(o.compact.summarize), kept = new Set(o.compact.kept);
      mark = (g) => (g.id === o.compact.cut ? "cp-cut" : summarize.has(g.id) ? "cp-summarize" : kept.has(g.id) ? "cp-kept" : "cp-off");
    } else if (o.context) {
      mark = (g) => {
        const s = o.context.nodes[g.id];
        if (!s) return "ctx-off";
        if (s.state === "replaced") badges.push([g, "⤷ " + s.byLabel]);
        if (s.count) badges.push([g, "⤷ " + s.count, "ctx-count"]); // a fold partly in the context
        return s.state === "in-context" ? "ctx-in" : s.state === "replaced" ? "ctx-replaced" : "ctx-path";
      };
    }
    // A node's class changes only where its mark does: a class removed and added back would
    // restyle every node of the drawing.
    svg.querySelectorAll("g.node").forEach((g) => {
      const want = mark(g);
      for (const c of OVERLAY_CLASSES) if (c !== want && g.classList.contains(c)) g.classList.remove(c);
      if (want && !g.classList.contains(want)) g.classList.add(want);
    });
    // The branches a person marked winner: marked on the drawing in every mode (the chosen branch).
    const winners = (G.layoutEl().dataset.winners || "").split(",").filter(Boolean).map((x) => G.drawnId(x)).filter(Boolean);
    svg.querySelectorAll("g.node.winner").forEach((g) => { if (!winners.includes(g.id)) g.classList.remove("winner"); });
    for (const id of winners) {
      const g = document.getElementById(id);
      if (!g) continue;
      g.classList.add("winner");
      badges.unshift([g, "★ winner", "winner-badge"]);
    }
    if (!o.context) {
      drawBands(svg, o.compact ? o.compact.bands : []);
      placeBadges(svg, badges);
      return o.focus || o.selected; // focus: a compaction's cut
    }
    drawBands(svg, o.context.bands); // first: the brackets hug the path, the badges take what is left
    placeBadges(svg, badges);
    if (G.drawing) { // the view reaches out to the badges too (they may stand beyond the drawing's edge)
      G.full = G.withBands(G.drawing);
      const small = $("#minimap svg");
      if (small) small.setAttribute("viewBox", G.full.join(" "));
    }
    return o.selected;
  };

  // The compaction bands beside the path (bands.js); the view may then reach out to them.
  function drawBands(svg, bands) {
    const lr = $("#graph .graph-svg").dataset.rankdir === "LR";
    window.SessionTreeBands.draw(svg, bands || [], lr);
    G.layoutEl().classList.toggle("has-bands", !!(bands && bands.length));
    if (!G.drawing) return;
    const before = G.full && G.full.join(" ");
    G.full = G.withBands(G.drawing);
    const small = $("#minimap svg");
    if (small && G.full.join(" ") !== before) small.setAttribute("viewBox", G.full.join(" "));
  }

  // The drawing with what the overlay adds beside it (bands, badges): "Fit" and the minimap
  // show all of it, so that no bracket or badge is cut at the pane's edge.
  G.withBands = function withBands(box) {
    const svg = G.svgEl(), geo = window.SessionTreeBands;
    const added = svg ? [geo.extent(svg), badgeExtent(svg)].filter(Boolean) : [];
    if (!added.length) return box.slice();
    let x0 = box[0], y0 = box[1], x1 = box[0] + box[2], y1 = box[1] + box[3];
    for (const b of added) {
      x0 = Math.min(x0, b[0] - 4); y0 = Math.min(y0, b[1] - 4);
      x1 = Math.max(x1, b[0] + b[2] + 4); y1 = Math.max(y1, b[1] + b[3] + 4);
    }
    return [x0, y0, x1 - x0, y1 - y0];
  };

  const badgeBoxes = new WeakMap(); // svg -> the badges placed, in the svg's own units
  function badgeExtent(svg) {
    const placed = badgeBoxes.get(svg);
    if (!placed || !placed.length) return null;
    const x0 = Math.min(...placed.map((b) => b[0])), y0 = Math.min(...placed.map((b) => b[1]));
    const x1 = Math.max(...placed.map((b) => b[0] + b[2])), y1 = Math.max(...placed.map((b) => b[1] + b[3]));
    return [x0, y0, x1 - x0, y1 - y0];
  }

  // The "summarized by compaction X" badges go beside their node, right or left, wherever they
  // cover no other node, no band and no other badge; where neither side is free the node's own
  // tooltip (its <title>) says it instead. Placed from the nodes' coordinates and the text's
  // measured width (bands.js), never by asking the page for a layout: a hundred badges on a big
  // drawing cost a few milliseconds, not a layout each.
  // A badge keeps inside the drawing's width where it can (right, else left of its node): one
  // beyond the drawing's edge is where the pane cuts it first.
  function placeBadges(svg, badges) {
    badgeBoxes.set(svg, []);
    if (!badges.length) return;
    const geo = window.SessionTreeBands;
    const boxes = geo.boxes(svg);
    const taken = Array.from(boxes.values()).concat(geo.placed(svg));
    const hits = (r) => taken.some((b) => r.x0 < b.x1 && b.x0 < r.x1 && r.y0 < b.y1 && b.y0 < r.y1);
    let left = Infinity, right = -Infinity;
    boxes.forEach((b) => { left = Math.min(left, b.x0); right = Math.max(right, b.x1); });
    const group = svg.querySelector("g.graph");
    for (const [g, label, kind] of badges) {
      const b = boxes.get(g.id);
      if (!b) continue;
      const text = label;
      const w = geo.textWidth(text) + 2, mid = (b.y0 + b.y1) / 2; // 2: an italic glyph overhangs its advance
      const room = (x) => ({ x0: x - 1, y0: mid - 8, x1: x + w + 1, y1: mid + 4 });
      const sides = [b.x1 + 4, b.x0 - 4 - w];
      const inside = (at) => at >= left && at + w <= right;
      const x = sides.filter(inside).concat(sides.filter((at) => !inside(at))).find((at) => !hits(room(at)));
      const mark = document.createElementNS("http://www.w3.org/2000/svg", x === undefined ? "title" : "text");
      mark.setAttribute("class", "replaced-by" + (kind ? " " + kind : ""));
      mark.textContent = x === undefined ? label.replace(/^⤷ /, "") : text;
      if (x !== undefined) {
        mark.setAttribute("x", x);
        mark.setAttribute("y", mid + 3);
        taken.push(room(x));
        const r = room(x), m = group && group.transform.baseVal.consolidate();
        const [dx, dy] = m ? [m.matrix.e, m.matrix.f] : [0, 0]; // (dot's group is only translated)
        badgeBoxes.get(svg).push([r.x0 + dx, r.y0 + dy, r.x1 - r.x0, r.y1 - r.y0]);
      }
      g.appendChild(mark);
    }
  }
})();
