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
    const first = here.map((id) => document.getElementById(id)).find(Boolean);
    if (!first) return;
    const m = svg.getScreenCTM().inverse().multiply(first.getScreenCTM());
    const b = first.getBBox();
    const pt = svg.createSVGPoint();
    pt.x = b.x + b.width / 2; pt.y = b.y + b.height / 2;
    const c = pt.matrixTransform(m);
    // As much of the drawing as fits where its smallest text (9 pt) reads at 11 px on screen (a
    // little more: the svg sits inside the pane's padding), centred on the turn but kept on the
    // drawing: no empty margin above the root or beside the widest rank while there is drawing to
    // show instead. A drawing narrower than the window is centred.
    const box = svg.getBoundingClientRect();
    const w = box.width * 0.8, h = w * box.height / box.width;
    const all = svg.viewBox.baseVal;
    const x = w >= all.width ? all.x - (w - all.width) / 2
      : Math.min(Math.max(c.x - w / 2, all.x), all.x + all.width - w);
    const y = h >= all.height ? all.y : Math.min(Math.max(c.y - h / 3, all.y), all.y + all.height - h);
    svg.setAttribute("viewBox", [x, y, w, h].join(" "));
  });
})();
