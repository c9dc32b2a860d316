// session-tree: the graph's minimap: the whole drawing small, in a corner, with the part in view
// framed and the selected node marked; shown when the drawing is bigger than the pane at its
// natural size. It holds a copy of the drawing's shapes made once per drawing (no text, no ids,
// no links): a selection change only moves its marks, it never copies or restyles the drawing
// again (a <use> of the drawing was cloned anew on every change the overlay made). A click there
// moves the view (graph-view.js).
(function () {
  "use strict";

  const G = (window.SessionTreeGraph = window.SessionTreeGraph || {});
  const $ = (sel, root) => (root || document).querySelector(sel);
  const SVG_NS = "http://www.w3.org/2000/svg";
  const MINI_SHAPES = ":is(polygon, path, ellipse, polyline):not(g.bands *)"; // the drawing's, without its text

  G.initMinimap = function initMinimap() {
    let mm = $("#minimap");
    const svg = G.svgEl(), box = G.paneBox(), full = G.full;
    const big = svg && full && (full[2] * G.legibleScale() > box.width || full[3] * G.legibleScale() > box.height);
    if (!big) { if (mm) mm.hidden = true; return; }
    if (!mm) {
      mm = document.createElement("div");
      mm.id = "minimap";
      mm.className = "minimap";
      mm.setAttribute("aria-label", "Overview of the whole drawing: click to move there");
      const small = document.createElementNS(SVG_NS, "svg");
      small.setAttribute("preserveAspectRatio", "xMidYMid meet");
      const frame = document.createElementNS(SVG_NS, "rect");
      frame.setAttribute("class", "mm-view");
      small.append(frame);
      mm.append(small);
      $(".graph-pane").append(mm);
      mm.addEventListener("click", (evt) => {
        evt.preventDefault();
        const view = G.view;
        if (!view) return;
        const pt = small.createSVGPoint();
        pt.x = evt.clientX; pt.y = evt.clientY;
        const c = pt.matrixTransform(small.getScreenCTM().inverse());
        G.view = [c.x - view[2] / 2, c.y - view[3] / 2, view[2], view[3]];
        G.apply();
      });
    }
    mm.hidden = false;
    const small = mm.querySelector("svg");
    small.setAttribute("viewBox", full.join(" "));
    const w = 170, h = Math.min(220, Math.max(40, w * full[3] / full[2]));
    small.setAttribute("width", String(Math.min(w, h * full[2] / full[3])));
    small.setAttribute("height", String(h));
    const group = svg.querySelector("g.graph");
    const copy = document.createElementNS(SVG_NS, "g");
    copy.setAttribute("class", "mm-copy");
    if (group && group.hasAttribute("transform")) copy.setAttribute("transform", group.getAttribute("transform"));
    if (group) for (const shape of group.querySelectorAll(MINI_SHAPES)) copy.append(shape.cloneNode(false));
    const mark = document.createElementNS(SVG_NS, "rect");
    mark.setAttribute("class", "mm-selected");
    copy.append(mark);
    const old = small.querySelector(".mm-copy");
    if (old) old.replaceWith(copy); else small.prepend(copy);
    G.markMinimap();
    G.showView();
    G.placeMinimap();
  };

  // The selected node's mark in the minimap, from its shape's coordinates (no layout).
  G.markMinimap = function markMinimap() {
    const mark = $("#minimap .mm-selected"), g = $("#graph g.selected"), svg = G.svgEl();
    if (!mark) return;
    const b = g && svg && window.SessionTreeBands.boxes(svg).get(g.id);
    mark.style.display = b ? "" : "none";
    if (!b) return;
    mark.setAttribute("x", b.x0); mark.setAttribute("y", b.y0);
    mark.setAttribute("width", b.x1 - b.x0); mark.setAttribute("height", b.y1 - b.y0);
  };

  G.showView = function showView() {
    const frame = $("#minimap .mm-view"), view = G.view;
    if (!frame || !view) return;
    frame.setAttribute("x", view[0]); frame.setAttribute("y", view[1]);
    frame.setAttribute("width", view[2]); frame.setAttribute("height", view[3]);
  };

  // The minimap sits in the corner of the pane that covers no node of the view: the one it is in
  // when that is clear, else the first clear one; when every corner holds a node it steps aside
  // (hidden) until a view leaves one clear. Only arithmetic on the boxes read once per drawing
  // and on the pane's box: placing it lays nothing out.
  const CORNERS = ["br", "bl", "tr", "tl"];
  const MARGIN = 10;
  let corner = "br";
  const screenBoxes = new WeakMap(); // svg -> every node's box in the svg's units
  function drawnBoxes(svg) {
    let list = screenBoxes.get(svg);
    if (list) return list;
    const group = svg.querySelector("g.graph");
    const t = group && group.transform.baseVal.consolidate(), m = t ? t.matrix : null;
    const at = (x, y) => (m ? [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f] : [x, y]);
    list = [];
    for (const b of window.SessionTreeBands.boxes(svg).values()) {
      const [x0, y0] = at(b.x0, b.y0), [x1, y1] = at(b.x1, b.y1);
      list.push([Math.min(x0, x1), Math.min(y0, y1), Math.max(x0, x1), Math.max(y0, y1)]);
    }
    screenBoxes.set(svg, list);
    return list;
  }

  // The minimap's box on screen in a corner of the graph pane; what it adds around its svg is
  // read once (a read after a new drawing would lay it out).
  function cornerRect(mm, where) {
    const small = mm.querySelector("svg"), box = G.paneBox();
    if (!G.miniChrome) {
      const r = mm.getBoundingClientRect(), host = mm.offsetParent.getBoundingClientRect();
      G.miniChrome = { w: r.width - Number(small.getAttribute("width")), h: r.height - Number(small.getAttribute("height")), left: host.left, top: host.top };
    }
    const c = G.miniChrome;
    const w = Number(small.getAttribute("width")) + c.w, h = Number(small.getAttribute("height")) + c.h;
    const left = where.endsWith("l") ? box.left + MARGIN : box.left + box.width - MARGIN - w;
    const top = where.startsWith("t") ? box.top + MARGIN : box.top + box.height - MARGIN - h;
    return { left: left, top: top, right: left + w, bottom: top + h };
  }

  G.placeMinimap = function placeMinimap() {
    const mm = $("#minimap"), svg = G.svgEl(), view = G.view;
    if (!mm || mm.hidden || !svg || !view) return;
    const box = G.paneBox(), s = Math.min(box.width / view[2], box.height / view[3]);
    const ox = box.left + (box.width - view[2] * s) / 2, oy = box.top + (box.height - view[3] * s) / 2;
    const nodes = drawnBoxes(svg).map((b) => [ox + (b[0] - view[0]) * s, oy + (b[1] - view[1]) * s, ox + (b[2] - view[0]) * s, oy + (b[3] - view[1]) * s]);
    const covers = (r) => nodes.some((n) => n[0] < r.right && n[2] > r.left && n[1] < r.bottom && n[3] > r.top);
    const clear = [corner, ...CORNERS.filter((c) => c !== corner)].find((c) => !covers(cornerRect(mm, c)));
    mm.classList.toggle("stepped-aside", !clear);
    if (!clear) return;
    corner = clear;
    const r = cornerRect(mm, clear), c = G.miniChrome;
    mm.style.left = (r.left - c.left) + "px";
    mm.style.top = (r.top - c.top) + "px";
    mm.style.right = mm.style.bottom = "auto";
  };
})();
