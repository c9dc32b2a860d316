// session-tree presenter: ←/→ and space step through the turns (by following the prev/next
// links, so the URL always says where we are), and the graph shows where the turn lies.
(function () {
  "use strict";
  document.addEventListener("keydown", (evt) => {
    if (evt.ctrlKey || evt.metaKey || evt.altKey) return;
    const tag = (evt.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select") return;
    const back = evt.key === "ArrowLeft" || (evt.key === " " && evt.shiftKey);
    const forward = evt.key === "ArrowRight" || (evt.key === " " && !evt.shiftKey);
    const link = document.querySelector(back ? 'a[rel="prev"]' : forward ? 'a[rel="next"]' : null);
    if (!back && !forward) return;
    evt.preventDefault();
    if (link) location.assign(link.href);
  });

  // Mark the path and the current turn's nodes, and frame the drawing around the turn.
  document.addEventListener("DOMContentLoaded", () => {
    const pane = document.querySelector(".present-graph");
    const svg = pane && pane.querySelector("svg");
    if (!svg) return;
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    const mark = (ids, cls) => ids.forEach((id) => { const g = document.getElementById(id); if (g) g.classList.add(cls); });
    const here = JSON.parse(pane.dataset.here);
    mark(JSON.parse(pane.dataset.path), "path");
    mark(here, "here");
    if (!here.some((id) => document.getElementById(id))) return;
    const toSvg = svg.getScreenCTM().inverse();
    const boxOf = (g) => { // a node's box in the drawing's coordinates
      const m = toSvg.multiply(g.getScreenCTM()), b = g.getBBox(), p = svg.createSVGPoint();
      p.x = b.x; p.y = b.y; const a = p.matrixTransform(m);
      p.x = b.x + b.width; p.y = b.y + b.height; const z = p.matrixTransform(m);
      return { x0: a.x, y0: a.y, x1: z.x, y1: z.y };
    };
    const nodes = [...svg.querySelectorAll("g.node")].map(boxOf);
    const turn = here.map((id) => document.getElementById(id)).filter(Boolean).map(boxOf);
    const c = { x: (turn[0].x0 + turn[0].x1) / 2, y: (turn[0].y0 + turn[0].y1) / 2 };
    // Read from afar: the drawing's smallest text (9 pt) at 14 px on a 1280x720 screen, larger in
    // proportion on a larger one (a projector's 1920x1080 gets 21 px).
    const px = 14 * Math.max(1, Math.min(window.innerWidth / 1280, window.innerHeight / 720));
    const box = svg.getBoundingClientRect();
    const scale = px / 9;
    const w = box.width / scale, h = box.height / scale;
    const all = svg.viewBox.baseVal;
    // Where the window starts along one axis: centred on the turn (a third from the top), kept
    // on the drawing, and moved to the nearest start that cuts no node in two (the turn's nodes
    // whole first), so that no node is shown clipped at the pane's edge. A drawing narrower than
    // the pane is centred in it; one shorter than the pane starts at its top.
    const place = (want, lo, size, span, key0, key1) => {
      if (size >= span) return key0 === "x0" ? lo - (size - span) / 2 : lo;
      const clamp = (v) => Math.min(Math.max(v, lo), lo + span - size);
      const cuts = (v, boxes) => boxes.filter((b) => (b[key0] < v && b[key1] > v) || (b[key0] < v + size && b[key1] > v + size)).length;
      const outside = (v) => turn.filter((b) => b[key0] < v || b[key1] > v + size).length; // the turn's nodes not whole in view
      const starts = [clamp(want)];
      for (const b of nodes) starts.push(clamp(b[key0] - 4), clamp(b[key1] + 4 - size), clamp(b[key1] + 4), clamp(b[key0] - 4 - size));
      const score = (v) => [outside(v), cuts(v, nodes), Math.abs(v - want)];
      return starts.reduce((best, v) => {
        const a = score(v), b = score(best);
        return a[0] < b[0] || (a[0] === b[0] && (a[1] < b[1] || (a[1] === b[1] && a[2] < b[2]))) ? v : best;
      });
    };
    const x = place(c.x - w / 2, all.x, w, all.width, "x0", "x1");
    const y = place(c.y - h / 3, all.y, h, all.height, "y0", "y1");
    svg.setAttribute("viewBox", [x, y, w, h].join(" "));
    // A node the window still cuts in two (a long column has one at its foot) is left out of the
    // view rather than shown clipped: the column's line goes on past the edge.
    const cut = (b) => (b.x0 < x && b.x1 > x) || (b.x0 < x + w && b.x1 > x + w) || (b.y0 < y && b.y1 > y) || (b.y0 < y + h && b.y1 > y + h);
    [...svg.querySelectorAll("g.node")].forEach((g, i) => { if (cut(nodes[i])) g.classList.add("cut"); });
  });
})();
