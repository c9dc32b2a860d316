// session-tree: graph interaction on the session page (select, pan, zoom, keys, overlays).
// Everything else is plain HTML and htmx; this file only adds what a drawing needs.
(function () {
  "use strict";

  const $ = (sel, root) => (root || document).querySelector(sel);
  let view = null; // current viewBox [x, y, w, h] of the graph svg
  let focusAfterDraw = null; // the node to show once the graph is redrawn (an expanded segment)
  let drawing = null; // the svg's own viewBox
  let full = null; // what the view may show: the drawing and the compaction bands beside it

  function layoutEl() { return $(".session-layout"); }
  function svgEl() { return $("#graph svg"); }
  function state(name) { const i = $(`#graph-state [name="${name}"]`); return i ? i.value : ""; }
  function setState(name, value) { const i = $(`#graph-state [name="${name}"]`); if (i) i.value = value; }

  // -- pan and zoom ------------------------------------------------------------------------------
  function initSvg() {
    const svg = svgEl();
    if (!svg) { const mm = $("#minimap"); if (mm) mm.hidden = true; return; }
    const vb = svg.viewBox.baseVal;
    drawing = [vb.x, vb.y, vb.width, vb.height];
    full = withBands(drawing);
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
    legible = null;
    const selected = $("#graph .graph-svg").dataset.selected;
    const focusId = focusAfterDraw && drawnId(focusAfterDraw);
    const focus = focusId && document.getElementById(focusId);
    focusAfterDraw = null;
    markSelected(selected);
    initMinimap(); // before the view: where it sits is kept clear of the node shown
    if (focus) zoomTo(focus.id, false);
    else fit();
  }

  // The smallest scale (pixels per drawing unit) at which the drawing's smallest text renders at
  // MIN_TEXT_PX: "Fit" and the first view never zoom out below it.
  const MIN_TEXT_PX = 11;
  let legible = null;
  function legibleScale() {
    if (legible) return legible;
    let smallest = Infinity;
    for (const t of svgEl().querySelectorAll("text[font-size]")) {
      const size = parseFloat(t.getAttribute("font-size"));
      if (size > 0 && size < smallest) smallest = size;
    }
    legible = MIN_TEXT_PX / (Number.isFinite(smallest) ? smallest : 10);
    return legible;
  }

  // Where the graph pane is on screen, read once per drawing and size (a read after the page
  // changed would lay the page out again: a selection change reads no layout).
  let pane = null, miniChrome = null, watched = null;
  const resized = () => { pane = null; miniChrome = null; };
  const paneWatch = new ResizeObserver(resized);
  window.addEventListener("resize", resized);
  function paneBox() {
    const el = $("#graph");
    if (el !== watched) { paneWatch.disconnect(); paneWatch.observe(el); watched = el; pane = null; }
    if (!pane) { const r = el.getBoundingClientRect(); pane = { left: r.left, top: r.top, width: r.width, height: r.height }; }
    return pane;
  }

  function apply() {
    const svg = svgEl();
    if (svg && view) svg.setAttribute("viewBox", view.join(" "));
    showView();
  }

  // -- minimap: the whole drawing small, in a corner, with the part in view framed and the
  // selected node marked; shown when the drawing is bigger than the pane at its natural size. It
  // holds a copy of the drawing's shapes made once per drawing (no text, no ids, no links): a
  // selection change only moves its marks, it never copies or restyles the drawing again (a <use>
  // of the drawing was cloned anew on every change the overlay made). A click there moves the view.
  const SVG_NS = "http://www.w3.org/2000/svg";
  const MINI_SHAPES = ":is(polygon, path, ellipse, polyline):not(g.bands *)"; // the drawing's, without its text
  function initMinimap() {
    let mm = $("#minimap");
    const svg = svgEl(), box = paneBox();
    const big = svg && full && (full[2] * legibleScale() > box.width || full[3] * legibleScale() > box.height);
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
        if (!view) return;
        const pt = small.createSVGPoint();
        pt.x = evt.clientX; pt.y = evt.clientY;
        const c = pt.matrixTransform(small.getScreenCTM().inverse());
        view = [c.x - view[2] / 2, c.y - view[3] / 2, view[2], view[3]];
        apply();
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
    markMinimap();
    showView();
  }

  // The selected node's mark in the minimap, from its shape's coordinates (no layout).
  function markMinimap() {
    const mark = $("#minimap .mm-selected"), g = $("#graph g.selected"), svg = svgEl();
    if (!mark) return;
    const b = g && svg && window.SessionTreeBands.boxes(svg).get(g.id);
    mark.style.display = b ? "" : "none";
    if (!b) return;
    mark.setAttribute("x", b.x0); mark.setAttribute("y", b.y0);
    mark.setAttribute("width", b.x1 - b.x0); mark.setAttribute("height", b.y1 - b.y0);
  }

  function showView() {
    const frame = $("#minimap .mm-view");
    if (!frame || !view) return;
    frame.setAttribute("x", view[0]); frame.setAttribute("y", view[1]);
    frame.setAttribute("width", view[2]); frame.setAttribute("height", view[3]);
  }

  // The whole drawing when it fits at a legible scale; else as much as fits around the
  // selected node (or the active leaf), and the minimap gives the overview.
  function fit() {
    if (!full) return;
    const box = paneBox();
    if (Math.min(box.width / full[2], box.height / full[3]) >= legibleScale()) {
      view = full.slice();
      apply();
      return;
    }
    const g = $("#graph g.selected") || document.getElementById(drawnId(layoutEl().dataset.activeLeaf || "") || "");
    if (g) { zoomTo(g.id, false); return; }
    const w = box.width / legibleScale(), h = box.height / legibleScale();
    view = [full[0] + (full[2] - w) / 2, full[1], w, h];
    apply();
  }

  function zoom(factor, cx, cy) {
    if (!view) return;
    const [x, y, w, h] = view;
    cx = cx === undefined ? x + w / 2 : cx;
    cy = cy === undefined ? y + h / 2 : cy;
    const nw = Math.max(40, Math.min(w * factor, full[2] * 4 + 2000));
    const nh = nw * h / w;
    view = [cx - (cx - x) * nw / w, cy - (cy - y) * nh / h, nw, nh];
    apply();
  }

  function pan(dx, dy) { if (!view) return; view[0] += dx * view[2]; view[1] += dy * view[3]; apply(); }

  function zoomTo(domId, onlyIfHidden) {
    const svg = svgEl();
    const b = svg && full && window.SessionTreeBands.nodeBox(svg, domId);
    if (!b) return;
    if (!view) view = full.slice();
    const cx = b[0] + b[2] / 2, cy = b[1] + b[3] / 2;
    if (onlyIfHidden && cx > view[0] && cx < view[0] + view[2] && cy > view[1] && cy < view[1] + view[3]) return;
    const box = paneBox();
    const w = box.width / legibleScale(); // the smallest text at MIN_TEXT_PX
    const h = w * box.height / box.width;
    const pad = 12 / legibleScale(); // a node at the drawing's edge keeps a little room around it
    view = [clamp(cx - w / 2, full[0] - pad, full[2] + 2 * pad, w), clamp(cy - h / 2, full[1] - pad, full[3] + 2 * pad, h), w, h];
    apply();
    clearOfMinimap(b);
  }

  // Move the view the least that takes a node (its box in the svg's units) out from under the
  // minimap, if it is there. Its place on screen follows from the view (the svg meets the pane).
  function clearOfMinimap(b) {
    const mm = $("#minimap");
    if (!mm || mm.hidden || !view) return;
    const box = paneBox(), m = minimapRect(mm);
    const s = Math.min(box.width / view[2], box.height / view[3]);
    const ox = box.left + (box.width - view[2] * s) / 2, oy = box.top + (box.height - view[3] * s) / 2;
    const n = { left: ox + (b[0] - view[0]) * s, top: oy + (b[1] - view[1]) * s };
    n.right = n.left + b[2] * s; n.bottom = n.top + b[3] * s;
    if (n.right <= m.left || n.left >= m.right || n.bottom <= m.top || n.top >= m.bottom) return;
    const left = n.right - m.left + 8, up = n.bottom - m.top + 8; // pixels to move the node by
    const canLeft = n.left - left >= box.left, canUp = n.top - up >= box.top;
    if (!canLeft && !canUp) return;
    const byX = canLeft && (!canUp || left <= up);
    if (byX) view[0] += left / s; else view[1] += up / s;
    apply();
  }

  // Where the minimap is on screen: in the pane's corner, its size from its svg's. What it adds
  // around the svg and its margins are read once (a read after a new drawing would lay it out).
  function minimapRect(mm) {
    const small = mm.querySelector("svg"), box = paneBox();
    const w = Number(small.getAttribute("width")), h = Number(small.getAttribute("height"));
    if (!miniChrome) {
      const r = mm.getBoundingClientRect();
      miniChrome = { w: r.width - w, h: r.height - h, right: box.left + box.width - r.right, bottom: box.top + box.height - r.bottom };
    }
    const right = box.left + box.width - miniChrome.right, bottom = box.top + box.height - miniChrome.bottom;
    return { left: right - w - miniChrome.w, top: bottom - h - miniChrome.h, right: right, bottom: bottom };
  }

  // Keep a view inside the drawing where the drawing is larger, so no half screen stays empty.
  function clamp(start, fullStart, fullSize, size) {
    if (fullSize <= size) return fullStart + (fullSize - size) / 2;
    return Math.min(Math.max(start, fullStart), fullStart + fullSize - size);
  }

  function svgPoint(evt) {
    const svg = svgEl();
    const pt = svg.createSVGPoint();
    pt.x = evt.clientX; pt.y = evt.clientY;
    return pt.matrixTransform(svg.getScreenCTM().inverse());
  }

  // -- selection -----------------------------------------------------------------------------------
  function markSelected(domId) {
    document.querySelectorAll("#graph g.selected").forEach((g) => g.classList.remove("selected"));
    const g = domId && document.getElementById(domId);
    if (g) g.classList.add("selected");
    markMinimap();
  }

  function panelUrl(tab, params) {
    const base = layoutEl().dataset.panelUrl.replace("__tab__", tab);
    const q = new URLSearchParams();
    for (const k of ["collapse", "expand", "dir"]) if (state(k)) q.set(k, state(k));
    for (const [k, v] of Object.entries(params || {})) if (v) q.set(k, v);
    return base + "?" + q.toString();
  }

  function currentTab() { const b = $("#panel .panel-body"); return b ? b.dataset.tab : "node"; }

  // Select an entry: load its panel; if the graph folds it inside a segment, redraw the graph
  // with the entry pinned first, so the selected node is never hidden.
  // The drawn node of an entry (not a folded segment that holds it), found by its link, which
  // the server writes as `?node=<id>` percent-encoded like Python's quote(safe="").
  function drawnId(entryId) {
    const tame = document.getElementById("e-" + entryId); // graph.dom_id of a tame id: no search
    if (tame && tame.matches("#graph g.node:not(.segment)")) return tame.id;
    const q = encodeURIComponent(entryId).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
    for (const a of document.querySelectorAll("#graph svg a")) {
      const href = a.getAttribute("xlink:href") || a.getAttribute("href") || "";
      if (href === "?node=" + q || href.startsWith("?node=" + q + "&")) {
        const g = a.closest("g.node");
        if (g && !g.classList.contains("segment")) return g.id;
      }
    }
    return null;
  }

  function select(entryId, domId, tab) {
    if (!entryId) return;
    domId = domId || drawnId(entryId);
    tab = tab || (["context", "transcript"].includes(currentTab()) ? currentTab() : "node");
    setState("node", entryId);
    const load = () => htmx.ajax("GET", panelUrl(tab, { node: entryId }), { target: "#panel", swap: "innerHTML" });
    if (domId && document.getElementById(domId)) {
      markSelected(domId);
      zoomTo(domId, true);
      load();
    } else {
      redrawGraph({ node: entryId }).then(load);
    }
  }

  function redrawGraph(params) {
    const q = new URLSearchParams();
    for (const k of ["collapse", "expand", "dir", "node"]) if (state(k)) q.set(k, state(k));
    for (const [k, v] of Object.entries(params || {})) q.set(k, v);
    return htmx.ajax("GET", layoutEl().dataset.graphUrl + "?" + q.toString(), { target: "#graph", swap: "innerHTML" });
  }

  function entryFromHref(href) {
    try { return new URL(href, location.href).searchParams.get("node"); } catch (e) { return null; }
  }

  // -- overlays (context view) ---------------------------------------------------------------------
  const OVERLAY_CLASSES = ["ctx-in", "ctx-replaced", "ctx-path", "ctx-off", "cp-summarize", "cp-kept", "cp-cut", "cp-off"];
  // `fromPanel`: the panel just changed, so its node becomes the selected one.
  // Returns the selected node's drawn id.
  function applyOverlay(fromPanel) {
    const data = $("#overlay");
    const svg = svgEl();
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
    if (o.selected) markSelected(o.selected);
    if (fromPanel && o.node) setState("node", o.node);
    const badges = [];
    let mark = () => null;
    if (o.compact) {
      const summarize = new Set(o.compact.summarize), kept = new Set(o.compact.kept);
      mark = (g) => (g.id === o.compact.cut ? "cp-cut" : summarize.has(g.id) ? "cp-summarize" : kept.has(g.id) ? "cp-kept" : "cp-off");
    } else if (o.context) {
      mark = (g) => {
        const s = o.context.nodes[g.id];
        if (!s) return "ctx-off";
        if (s.state === "replaced") badges.push([g, s.byLabel]);
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
    if (!o.context) { drawBands(svg, o.compact ? o.compact.bands : []); return o.focus || o.selected; }  // focus: a compaction's cut
    drawBands(svg, o.context.bands); // first: the brackets hug the path, the badges take what is left
    placeBadges(svg, badges);
    return o.selected;
  }

  // The compaction bands beside the path (bands.js); the view may then reach out to them.
  function drawBands(svg, bands) {
    const lr = $("#graph .graph-svg").dataset.rankdir === "LR";
    window.SessionTreeBands.draw(svg, bands || [], lr);
    layoutEl().classList.toggle("has-bands", !!(bands && bands.length));
    if (!drawing) return;
    const before = full && full.join(" ");
    full = withBands(drawing);
    const small = $("#minimap svg");
    if (small && full.join(" ") !== before) small.setAttribute("viewBox", full.join(" "));
  }

  function withBands(box) {
    const svg = svgEl(), b = svg && window.SessionTreeBands.extent(svg);
    if (!b) return box.slice();
    const x0 = Math.min(box[0], b[0] - 4), y0 = Math.min(box[1], b[1] - 4);
    const x1 = Math.max(box[0] + box[2], b[0] + b[2] + 4), y1 = Math.max(box[1] + box[3], b[1] + b[3] + 4);
    return [x0, y0, x1 - x0, y1 - y0];
  }

  // The "summarized by compaction X" badges go beside their node, right or left, wherever they
  // cover no other node, no band and no other badge; where neither side is free the node's own
  // tooltip (its <title>) says it instead. Placed from the nodes' coordinates and the text's
  // measured width (bands.js), never by asking the page for a layout: a hundred badges on a big
  // drawing cost a few milliseconds, not a layout each.
  function placeBadges(svg, badges) {
    if (!badges.length) return;
    const geo = window.SessionTreeBands;
    const boxes = geo.boxes(svg);
    const taken = Array.from(boxes.values()).concat(geo.placed(svg));
    const hits = (r) => taken.some((b) => r.x0 < b.x1 && b.x0 < r.x1 && r.y0 < b.y1 && b.y0 < r.y1);
    for (const [g, label] of badges) {
      const b = boxes.get(g.id);
      if (!b) continue;
      const text = "⤷ " + label;
      const w = geo.textWidth(text) + 2, mid = (b.y0 + b.y1) / 2; // 2: an italic glyph overhangs its advance
      const room = (x) => ({ x0: x - 1, y0: mid - 8, x1: x + w + 1, y1: mid + 4 });
      const x = [b.x1 + 4, b.x0 - 4 - w].find((at) => !hits(room(at)));
      const mark = document.createElementNS("http://www.w3.org/2000/svg", x === undefined ? "title" : "text");
      mark.setAttribute("class", "replaced-by");
      mark.textContent = x === undefined ? label : text;
      if (x !== undefined) {
        mark.setAttribute("x", x);
        mark.setAttribute("y", mid + 3);
        taken.push(room(x));
      }
      g.appendChild(mark);
    }
  }

  // -- events --------------------------------------------------------------------------------------
  document.addEventListener("click", (evt) => {
    const action = evt.target.closest("[data-action]");
    if (action) { evt.preventDefault(); runAction(action.dataset.action); return; }
    const node = evt.target.closest("#graph svg a");
    if (node && !evt.ctrlKey && !evt.metaKey) {
      evt.preventDefault();
      const g = node.closest("g.node");
      const entryId = entryFromHref(node.getAttribute("xlink:href") || node.getAttribute("href"));
      if (g && compareMode() && !g.classList.contains("segment")) {
        pick(entryId, g);
      } else if (g && g.classList.contains("segment")) {
        // A folded run opens at its first entry; a "more branches" node at the fork points it names.
        const href = node.getAttribute("xlink:href") || node.getAttribute("href");
        const open = new URL(href, location.href).searchParams.get("open");
        const expand = new Set(state("expand").split(",").filter(Boolean));
        (open ? open.split(",") : [entryId]).forEach((x) => expand.add(x));
        setState("expand", Array.from(expand).join(","));
        focusAfterDraw = entryId;
        redrawGraph({ expand: Array.from(expand).join(",") });
      } else {
        select(entryId, g && g.id);
      }
      return;
    }
    const picked = evt.target.closest("[data-unpick]");
    if (picked) { unpick(picked.dataset.unpick); return; }
    const link = evt.target.closest("a[data-select]");
    if (link && layoutEl() && !evt.ctrlKey && !evt.metaKey) {
      evt.preventDefault();
      select(link.dataset.select, link.dataset.dom, link.dataset.tab);
    }
  });

  // -- compare mode: a click adds the node (the path to it) to the tray instead of selecting it ----
  const tray = [];
  function compareMode() { const b = $('[data-action="compare-mode"]'); return !!b && b.getAttribute("aria-pressed") === "true"; }
  // `g`: the drawn node, or null for an entry not drawn (folded) or picked from a list.
  function pick(entryId, g, quiet) {
    if (!entryId || tray.some((t) => t.id === entryId)) return;
    const text = g && g.querySelector("text");
    tray.push({ id: entryId, dom: g ? g.id : "", label: (text ? text.textContent : entryId.slice(-8)).slice(0, 28) });
    if (!quiet) renderTray();
  }
  function unpick(entryId) {
    const i = tray.findIndex((t) => t.id === entryId);
    if (i >= 0) tray.splice(i, 1);
    renderTray();
  }
  function renderTray() {
    $("#compare-tray .tray-items").replaceChildren(...tray.map((t) => {
      const b = document.createElement("button");
      b.type = "button"; b.dataset.unpick = t.id; b.title = "Remove " + t.id; b.textContent = t.label + " ×";
      return b;
    }));
    const q = tray.map((t) => "id=" + encodeURIComponent(t.id)).join("&");
    $("#compare-go").href = $("#compare-tray").dataset.compareUrl + "?" + q;
    keepPicksInUrl();
    markPicked();
    document.dispatchEvent(new CustomEvent("compare:picks", { detail: { ids: tray.map((t) => t.id) } }));  // compare.js
  }
  // The picks live in the URL (`pick=A,B`), so a reload or a link brings the tray back.
  function keepPicksInUrl() {
    const url = new URL(location.href);
    if (tray.length) url.searchParams.set("pick", tray.map((t) => t.id).join(","));
    else url.searchParams.delete("pick");
    url.search = url.search.replace(/%2C/g, ","); // ids joined by plain commas, as people read them
    if (url.href !== location.href) history.replaceState(history.state, "", url.href);
  }
  function restoreTray() {
    const picks = (new URLSearchParams(location.search).get("pick") || "").split(",").filter(Boolean);
    picks.forEach((id) => { const dom = drawnId(id); pick(id, dom && document.getElementById(dom), true); });
    if (!tray.length || !$("#compare-tray")) return;
    $('[data-action="compare-mode"]').setAttribute("aria-pressed", "true");
    $("#compare-tray").hidden = false;
    renderTray();
  }
  document.addEventListener("DOMContentLoaded", () => { if (layoutEl()) restoreTray(); });
  document.addEventListener("htmx:pushedIntoHistory", () => { if (tray.length) keepPicksInUrl(); });
  // A branch ticked in the Branches tab is a pick too (compare.js sends it).
  document.addEventListener("compare:pick", (evt) => {
    const { id, on } = evt.detail;
    if (!on) { unpick(id); return; }
    const dom = drawnId(id);
    pick(id, dom && document.getElementById(dom));
  });
  // The picked nodes stay marked on the graph, also after it is redrawn.
  function markPicked() {
    document.querySelectorAll("#graph g.picked").forEach((g) => g.classList.remove("picked"));
    tray.forEach((t) => { const g = document.getElementById(t.dom); if (g) g.classList.add("picked"); });
  }

  function runAction(name) {
    if (name === "fit") fit();
    else if (name === "zoom-in") zoom(0.8);
    else if (name === "zoom-out") zoom(1.25);
    else if (name === "compare-mode") {
      const on = !compareMode();
      $('[data-action="compare-mode"]').setAttribute("aria-pressed", String(on));
      $("#compare-tray").hidden = !on;
    }
    else if (name === "help") { const h = $("#help"); h.hidden = !h.hidden; }
    else if (name === "active") {
      const leaf = layoutEl().dataset.activeLeaf;
      if (leaf) select(leaf, null, "node");
    }
  }

  function navTarget(key) {
    const nav = $("#nav");
    if (!nav) return null;
    const d = nav.dataset;
    return { parent: d.parent, child: d.child, prev: d.prev, next: d.next, branch: d.branch, prevBranch: d.prevBranch, root: d.root }[key] || null;
  }

  document.addEventListener("keydown", (evt) => {
    if (!layoutEl() || evt.ctrlKey || evt.metaKey || evt.altKey) return;
    const tag = (evt.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select" || evt.target.isContentEditable) return;
    const moves = { ArrowUp: "parent", k: "parent", ArrowDown: "child", j: "child", ArrowLeft: "prev", h: "prev", ArrowRight: "next", l: "next", b: "branch", B: "prevBranch", Home: "root" };
    if (evt.shiftKey && evt.key.startsWith("Arrow")) {
      const d = { ArrowUp: [0, -0.2], ArrowDown: [0, 0.2], ArrowLeft: [-0.2, 0], ArrowRight: [0.2, 0] }[evt.key];
      pan(d[0], d[1]); evt.preventDefault(); return;
    }
    const node = state("node");
    if (moves[evt.key]) {
      const target = navTarget(moves[evt.key]);
      const branchKey = evt.key === "b" || evt.key === "B";
      if (branchKey && !target) note("No branch point in this session: the conversation never splits.");
      else if (branchKey && target === node) note("This is the only branch point in this session.");
      else if (target) select(target, null);
      evt.preventDefault();
    } else if (evt.key === "Enter" && node) { select(node, null, "node"); evt.preventDefault(); }
    else if (evt.key === "c" && node) { select(node, null, "context"); }
    else if (evt.key === "a" || evt.key === "End") { runAction("active"); evt.preventDefault(); }
    else if (evt.key === "f") fit();
    else if (evt.key === "+" || evt.key === "=") zoom(0.8);
    else if (evt.key === "-") zoom(1.25);
    else if (evt.key === "?") runAction("help");
    else if (evt.key === "Escape") { const h = $("#help"); if (h) h.hidden = true; }
  });

  // Before a new drawing goes in, the old one leaves: htmx would walk each of its thousands of
  // elements to clean it up (an event each, 40-50 ms on a big drawing), though no element of a
  // drawing has anything of htmx's to clean.
  document.addEventListener("htmx:beforeSwap", (evt) => {
    const target = evt.detail.target;
    if (target && target.id === "graph" && evt.detail.shouldSwap) { const old = svgEl(); if (old) old.remove(); }
  });

  // After a swap: a new drawing gets its view, overlay and picks back; a new panel marks its
  // node on the drawing and brings it into view.
  document.addEventListener("htmx:afterSwap", (evt) => {
    const target = evt.detail.target || evt.target; // a history restore swaps the body, no target
    if (!target) return;
    // An out-of-band swap (the stats beside a new drawing) reports the request's target too:
    // running initSvg again would take the zoomed view for the drawing's full extent.
    if (evt.detail.elt && evt.detail.elt.id === "stats") return;
    if (target.id === "graph") { applyOverlay(); initSvg(); markPicked(); keepFoldsInUrl(); }
    if (target.id === "panel") {
      const selected = applyOverlay(true);
      if (selected) zoomTo(selected, true);
    }
  });
  // What is unfolded is part of the address: a reload or a shared link draws the same.
  function keepFoldsInUrl() {
    const url = new URL(location.href);
    for (const k of ["expand", "collapse", "dir"]) {
      const v = state(k);
      if (v && !(k === "collapse" && v === "auto")) url.searchParams.set(k, v); else url.searchParams.delete(k);
    }
    if (url.href !== location.href) history.replaceState(history.state, "", url.href);
    syncDirection();
  }
  // The layout toggle names the drawing's direction and links to the other one, with what is
  // unfolded now ("auto" may have chosen another direction for the redrawn drawing).
  function syncDirection() {
    const toggle = $("[data-direction]"), drawing = $("#graph .graph-svg");
    if (!toggle || !drawing) return;
    const now = drawing.dataset.rankdir === "LR" ? "LR" : "TB";
    toggle.textContent = now === "LR" ? "→ left-right" : "↓ top-down";
    const url = new URL(location.href);
    url.searchParams.set("dir", now === "LR" ? "TB" : "LR");
    toggle.setAttribute("href", url.pathname + url.search);
  }
  // Back/Forward: htmx puts the whole page back (historyCacheSize 0); draw it as a fresh load.
  document.addEventListener("htmx:historyRestore", () => {
    if (!layoutEl()) return;
    view = null;
    initSvg();
    applyOverlay();
    markPicked();
  });

  // -- writes: forms posted with fetch, the answer read as server-sent events -----------------------
  async function postStream(url, body, form) {
    const status = form.querySelector(".form-status");
    const stream = form.querySelector(".reply-stream");
    const out = stream && stream.querySelector(".reply-text");
    const say = (text, cls) => { if (status) { status.textContent = text; status.className = "form-status " + (cls || ""); } };
    form.querySelectorAll("button").forEach((b) => { b.disabled = true; });
    say("Working…", "busy");
    let node = null, user = null, failed = null;
    try {
      const res = await fetch(url, { method: "POST", body, headers: { Accept: "text/event-stream" } });
      if (!res.ok) throw new Error((await res.text()).trim().slice(0, 500) || `The server answered ${res.status}`);
      await readEvents(res, (ev) => {  // sse.js
        if (ev.event === "user") {
          user = node = ev.data.node;
          say("Message added; the model is answering…", "busy");
          if (stream) { stream.hidden = false; out.textContent = ""; }
        } else if (ev.event === "delta" && out && ev.data.kind === "text") {
          out.textContent += ev.data.text;
        } else if (ev.event === "done") {
          node = ev.data.node; say(ev.data.message, "ok");
        } else if (ev.event === "error") {
          failed = ev.data; user = ev.data.user || user;
        }
      });
    } catch (e) {
      failed = { message: e.message === "Failed to fetch" ? "The server did not answer: is session-tree still running?" : e.message };
    }
    form.querySelectorAll("button").forEach((b) => { b.disabled = false; });
    if (!failed) { refreshAll(node); return; }
    say(failed.message, "error");
    form.dispatchEvent(new CustomEvent("reply-failed", { detail: failed, bubbles: true }));  // model.js
    if (stream) stream.hidden = true;
    if (user) offerRetry(form, user);
  }

  // After a failed reply the user message stays: show it on the graph and offer to ask again.
  function offerRetry(form, user) {
    setState("node", user);
    redrawGraph({ node: user });
    let retry = form.querySelector("button.retry");
    if (!retry) {
      retry = document.createElement("button");
      retry.type = "button";
      retry.className = "retry";
      retry.textContent = "Retry the reply";
      form.querySelector(".form-status").after(retry);
    }
    retry.onclick = () => {
      const body = new FormData();
      body.set("csrf_token", form.querySelector("[name=csrf_token]").value);
      body.set("node", user);
      const model = form.querySelector("[name=model]");
      if (model) body.set("model", model.value);
      postStream(layoutEl().dataset.replyUrl, body, form);
    };
  }

  function refreshAll(node) {
    node = node || state("node");
    setState("node", node);
    const tab = currentTab() === "compact" ? "context" : "node";
    redrawGraph({ node }).then(() => {
      htmx.ajax("GET", panelUrl(tab, { node }), { target: "#panel", swap: "innerHTML" });
    });
  }

  document.addEventListener("submit", (evt) => {
    const form = evt.target.closest("form[data-stream]");
    if (!form || !layoutEl()) return;
    evt.preventDefault();
    postStream(form.action, new FormData(form), form);
  });

  // A key that has nowhere to go says so, briefly, over the drawing.
  function note(message) {
    const n = $("#graph-note");
    if (!n) return;
    n.textContent = message;
    n.hidden = false;
    clearTimeout(note.timer);
    note.timer = setTimeout(() => { n.hidden = true; }, 4000);
  }

  // A failed request says what went wrong, in the page, instead of doing nothing.
  function toast(message) {
    const t = $("#toast");
    if (!t) return;
    t.textContent = message;
    t.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { t.hidden = true; }, 8000);
  }
  document.addEventListener("htmx:responseError", (evt) => {
    const xhr = evt.detail.xhr;
    toast((xhr.responseText || "").trim().slice(0, 400) || `Request failed (${xhr.status})`);
  });
  document.addEventListener("htmx:sendError", () => toast("The server did not answer: is session-tree still running?"));

  document.addEventListener("wheel", (evt) => {
    if (!evt.target.closest("#graph") || !svgEl()) return;
    evt.preventDefault();
    const p = svgPoint(evt);
    zoom(evt.deltaY > 0 ? 1.15 : 1 / 1.15, p.x, p.y);
  }, { passive: false });

  let drag = null;
  document.addEventListener("pointerdown", (evt) => {
    if (!evt.target.closest("#graph") || evt.target.closest("a") || !svgEl() || evt.button !== 0) return;
    drag = { x: evt.clientX, y: evt.clientY, view: view.slice() };
  });
  document.addEventListener("pointermove", (evt) => {
    if (!drag) return;
    const box = paneBox();
    const sx = drag.view[2] / box.width, sy = drag.view[3] / box.height;
    const s = Math.max(sx, sy);
    view = [drag.view[0] - (evt.clientX - drag.x) * s, drag.view[1] - (evt.clientY - drag.y) * s, drag.view[2], drag.view[3]];
    apply();
  });
  document.addEventListener("pointerup", () => { drag = null; });

  document.addEventListener("DOMContentLoaded", () => {
    if (!layoutEl()) return;
    applyOverlay(); // first: the first view takes in the bands it draws
    initSvg();
  });
})();
