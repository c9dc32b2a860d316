// session-tree: the graph's view on the session page: the drawing fitted to the pane at a legible
// scale, zoomed and panned (wheel, drag, toolbar and keys). The graph's other scripts (minimap.js,
// selection.js, overlays.js, tray.js, writes.js, app.js) share this view and its helpers through
// window.SessionTreeGraph; each is loaded after this one.
(function () {
  "use strict";

  const G = (window.SessionTreeGraph = window.SessionTreeGraph || {});
  const $ = (sel, root) => (root || document).querySelector(sel);
  G.$ = $;
  G.view = null; // current viewBox [x, y, w, h] of the graph svg
  G.focusAfterDraw = null; // the node to show once the graph is redrawn (an expanded segment)
  G.drawing = null; // the svg's own viewBox
  G.full = null; // what the view may show: the drawing and the compaction bands beside it

  G.layoutEl = () => $(".session-layout");
  G.svgEl = () => $("#graph svg");
  G.state = (name) => { const i = $(`#graph-state [name="${name}"]`); return i ? i.value : ""; };
  G.setState = (name, value) => { const i = $(`#graph-state [name="${name}"]`); if (i) i.value = value; };

  G.initSvg = function initSvg() {
    const svg = G.svgEl();
    if (!svg) { const mm = $("#minimap"); if (mm) mm.hidden = true; return; }
    const vb = svg.viewBox.baseVal;
    G.drawing = [vb.x, vb.y, vb.width, vb.height];
    G.full = G.withBands(G.drawing);
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
    legible = null;
    const selected = $("#graph .graph-svg").dataset.selected;
    const focusId = G.focusAfterDraw && G.drawnId(G.focusAfterDraw);
    const focus = focusId && document.getElementById(focusId);
    G.focusAfterDraw = null;
    G.markSelected(selected);
    G.initMinimap(); // before the view: the view places it clear of every node
    if (focus) G.zoomTo(focus.id, false);
    else G.fit();
  };

  // The smallest scale (pixels per drawing unit) at which the drawing's smallest text renders at
  // MIN_TEXT_PX: "Fit" and the first view never zoom out below it.
  const MIN_TEXT_PX = 11;
  let legible = null;
  G.legibleScale = function legibleScale() {
    if (legible) return legible;
    let smallest = Infinity;
    for (const t of G.svgEl().querySelectorAll("text[font-size]")) {
      const size = parseFloat(t.getAttribute("font-size"));
      if (size > 0 && size < smallest) smallest = size;
    }
    legible = MIN_TEXT_PX / (Number.isFinite(smallest) ? smallest : 10);
    return legible;
  };

  // Where the graph pane is on screen, read once per drawing and size (a read after the page
  // changed would lay the page out again: a selection change reads no layout).
  let pane = null, watched = null;
  G.miniChrome = null; // what the minimap adds around its svg (minimap.js), read with the pane
  const resized = () => { pane = null; G.miniChrome = null; };
  const paneWatch = new ResizeObserver(resized);
  window.addEventListener("resize", resized);
  G.paneBox = function paneBox() {
    const el = $("#graph .graph-svg") || $("#graph"); // (a banner above the drawing is not the pane's)
    if (el !== watched) { paneWatch.disconnect(); paneWatch.observe(el); watched = el; pane = null; }
    if (!pane) { const r = el.getBoundingClientRect(); pane = { left: r.left, top: r.top, width: r.width, height: r.height }; }
    return pane;
  };

  G.apply = function apply() {
    const svg = G.svgEl();
    if (svg && G.view) svg.setAttribute("viewBox", G.view.join(" "));
    G.showView();
    G.placeMinimap();
  };

  // The whole drawing when it fits at a legible scale; else as much as fits around the
  // selected node (or the active leaf), and the minimap gives the overview.
  G.fit = function fit() {
    const full = G.full;
    if (!full) return;
    const box = G.paneBox();
    const edge = 4; // (room for a selected node's thick outline at the drawing's edge)
    if (Math.min(box.width / (full[2] + 2 * edge), box.height / (full[3] + 2 * edge)) >= G.legibleScale()) {
      G.view = [full[0] - edge, full[1] - edge, full[2] + 2 * edge, full[3] + 2 * edge];
      G.apply();
      return;
    }
    const g = $("#graph g.selected") || document.getElementById(G.drawnId(G.layoutEl().dataset.activeLeaf || "") || "");
    if (g && frameWithWinners(g.id, box)) return;
    if (g) { G.zoomTo(g.id, false); return; }
    const w = box.width / G.legibleScale(), h = box.height / G.legibleScale();
    G.view = [full[0] + (full[2] - w) / 2, full[1], w, h];
    G.apply();
  };

  // Fit on a drawing too big to show whole: the selected node and the branches marked winner
  // (the chosen branch every overview shows) framed together when they fit at a legible size.
  function frameWithWinners(selectedId, box) {
    const svg = G.svgEl(), geo = window.SessionTreeBands;
    const ids = (G.layoutEl().dataset.winners || "").split(",").filter(Boolean).map((x) => G.drawnId(x)).filter(Boolean);
    if (!ids.length) return false;
    const boxes = [selectedId, ...ids].map((id) => geo.nodeBox(svg, id)).filter(Boolean);
    if (boxes.length < 2) return false;
    const x0 = Math.min(...boxes.map((b) => b[0])), y0 = Math.min(...boxes.map((b) => b[1]));
    const x1 = Math.max(...boxes.map((b) => b[0] + b[2])), y1 = Math.max(...boxes.map((b) => b[1] + b[3]));
    const w = box.width / G.legibleScale(), h = box.height / G.legibleScale(), pad = 12 / G.legibleScale();
    if (x1 - x0 + 2 * pad > w || y1 - y0 + 2 * pad > h) return false;
    const full = G.full;
    G.view = [clamp((x0 + x1) / 2 - w / 2, full[0] - pad, full[2] + 2 * pad, w), clamp((y0 + y1) / 2 - h / 2, full[1] - pad, full[3] + 2 * pad, h), w, h];
    G.apply();
    return true;
  }

  // "Fit" (the button and the key): on a session that opens at its skeleton (no level named in
  // the URL), what was unfolded folds again and the skeleton is drawn and fitted; else the
  // drawing in view is fitted.
  G.fitAll = function fitAll() {
    const box = $("#graph .graph-svg");
    if (box && box.dataset.level === "skeleton" && !G.state("collapse") && G.state("expand")) {
      G.setState("expand", "");
      G.redrawGraph({ expand: "" }); // its first view is fitted (initSvg)
      return;
    }
    G.fit();
  };

  G.zoom = function zoom(factor, cx, cy) {
    if (!G.view) return;
    const [x, y, w, h] = G.view;
    cx = cx === undefined ? x + w / 2 : cx;
    cy = cy === undefined ? y + h / 2 : cy;
    const nw = Math.max(40, Math.min(w * factor, G.full[2] * 4 + 2000));
    const nh = nw * h / w;
    G.view = [cx - (cx - x) * nw / w, cy - (cy - y) * nh / h, nw, nh];
    G.apply();
  };

  G.pan = function pan(dx, dy) {
    const view = G.view;
    if (!view) return;
    view[0] += dx * view[2]; view[1] += dy * view[3];
    G.apply();
  };

  G.zoomTo = function zoomTo(domId, onlyIfHidden) {
    const svg = G.svgEl(), full = G.full;
    const b = svg && full && window.SessionTreeBands.nodeBox(svg, domId);
    if (!b) return;
    if (!G.view) G.view = full.slice();
    const view = G.view;
    const cx = b[0] + b[2] / 2, cy = b[1] + b[3] / 2;
    if (onlyIfHidden && cx > view[0] && cx < view[0] + view[2] && cy > view[1] && cy < view[1] + view[3]) return;
    const box = G.paneBox();
    const w = box.width / G.legibleScale(); // the smallest text at MIN_TEXT_PX
    const h = w * box.height / box.width;
    const pad = 12 / G.legibleScale(); // a node at the drawing's edge keeps a little room around it
    G.view = [clamp(cx - w / 2, full[0] - pad, full[2] + 2 * pad, w), clamp(cy - h / 2, full[1] - pad, full[3] + 2 * pad, h), w, h];
    G.apply(); // (the minimap moves off the node shown: placeMinimap)
  };

  // Keep a view inside the drawing where the drawing is larger, so no half screen stays empty.
  function clamp(start, fullStart, fullSize, size) {
    if (fullSize <= size) return fullStart + (fullSize - size) / 2;
    return Math.min(Math.max(start, fullStart), fullStart + fullSize - size);
  }

  function svgPoint(evt) {
    const svg = G.svgEl();
    const pt = svg.createSVGPoint();
    pt.x = evt.clientX; pt.y = evt.clientY;
    return pt.matrixTransform(svg.getScreenCTM().inverse());
  }

  // Another script shows a node without changing the panel (audit.js: a lost fact's entry).
  document.addEventListener("graph:show", (evt) => { if (document.getElementById(evt.detail.dom)) G.zoomTo(evt.detail.dom, false); });

  document.addEventListener("wheel", (evt) => {
    if (!evt.target.closest("#graph") || !G.svgEl()) return;
    evt.preventDefault();
    const p = svgPoint(evt);
    G.zoom(evt.deltaY > 0 ? 1.15 : 1 / 1.15, p.x, p.y);
  }, { passive: false });

  let drag = null;
  document.addEventListener("pointerdown", (evt) => {
    if (!evt.target.closest("#graph") || evt.target.closest("a") || !G.svgEl() || evt.button !== 0) return;
    drag = { x: evt.clientX, y: evt.clientY, view: G.view.slice() };
  });
  document.addEventListener("pointermove", (evt) => {
    if (!drag) return;
    const box = G.paneBox();
    const sx = drag.view[2] / box.width, sy = drag.view[3] / box.height;
    const s = Math.max(sx, sy);
    G.view = [drag.view[0] - (evt.clientX - drag.x) * s, drag.view[1] - (evt.clientY - drag.y) * s, drag.view[2], drag.view[3]];
    G.apply();
  });
  document.addEventListener("pointerup", () => { drag = null; });
})();
