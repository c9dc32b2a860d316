// session-tree: selecting on the graph: a click on a node loads its panel (a folded run or a
// "more branches" node unfolds instead), the toolbar's actions and the keys move the selection
// along the tree. The selected node is marked by a class, so selecting never lays the drawing out
// again; an entry the drawing folds away is drawn first (the graph is fetched with it pinned).
(function () {
  "use strict";

  const G = (window.SessionTreeGraph = window.SessionTreeGraph || {});
  const $ = (sel, root) => (root || document).querySelector(sel);

  G.markSelected = function markSelected(domId) {
    document.querySelectorAll("#graph g.selected").forEach((g) => g.classList.remove("selected"));
    const g = domId && document.getElementById(domId);
    if (g) g.classList.add("selected");
    G.markMinimap();
    if (G.markTextTree) G.markTextTree(domId);
  };

  G.panelUrl = function panelUrl(tab, params) {
    const base = G.layoutEl().dataset.panelUrl.replace("__tab__", tab);
    const q = new URLSearchParams();
    for (const k of ["collapse", "expand", "dir", "view"]) if (G.state(k)) q.set(k, G.state(k));
    for (const [k, v] of Object.entries(params || {})) if (v) q.set(k, v);
    return base + "?" + q.toString();
  };

  G.currentTab = function currentTab() { const b = $("#panel .panel-body"); return b ? b.dataset.tab : "node"; };

  // The drawn node of an entry (not a folded segment that holds it), found by its link, which
  // the server writes as `?node=<id>` percent-encoded like Python's quote(safe="").
  G.drawnId = function drawnId(entryId) {
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
  };

  // Select an entry: load its panel; if the graph folds it inside a segment, redraw the graph
  // with the entry pinned first, so the selected node is never hidden.
  G.select = function select(entryId, domId, tab) {
    if (!entryId) return;
    domId = domId || G.drawnId(entryId);
    const current = G.currentTab();
    tab = tab || (["context", "transcript"].includes(current) ? current : "node");
    G.setState("node", entryId);
    const load = () => htmx.ajax("GET", G.panelUrl(tab, { node: entryId }), { target: "#panel", swap: "innerHTML" });
    if ((domId && document.getElementById(domId)) || G.layoutEl().dataset.view === "text") { // (text only: nothing to draw)
      G.markSelected(domId);
      G.zoomTo(domId, true);
      load();
    } else {
      G.redrawGraph({ node: entryId }).then(load);
    }
  };

  G.redrawGraph = function redrawGraph(params) {
    const q = new URLSearchParams();
    for (const k of ["collapse", "expand", "dir", "view", "node"]) if (G.state(k)) q.set(k, G.state(k));
    for (const [k, v] of Object.entries(params || {})) q.set(k, v);
    return htmx.ajax("GET", G.layoutEl().dataset.graphUrl + "?" + q.toString(), { target: "#graph", swap: "innerHTML" });
  };

  function entryFromHref(href) {
    try { return new URL(href, location.href).searchParams.get("node"); } catch (e) { return null; }
  }

  document.addEventListener("click", (evt) => {
    const action = evt.target.closest("[data-action]");
    if (action) { evt.preventDefault(); runAction(action.dataset.action); return; }
    const node = evt.target.closest("#graph svg a");
    if (node && !evt.ctrlKey && !evt.metaKey) {
      evt.preventDefault();
      const g = node.closest("g.node");
      const entryId = entryFromHref(node.getAttribute("xlink:href") || node.getAttribute("href"));
      if (g && G.compareMode() && !g.classList.contains("more")) {
        G.pick(entryId, g); // a folded turn too: picked, not unfolded
      } else if (g && g.classList.contains("segment")) {
        // A folded run opens at its first entry; a "more branches" node at the fork points it names.
        const href = node.getAttribute("xlink:href") || node.getAttribute("href");
        const open = new URL(href, location.href).searchParams.get("open");
        const expand = new Set(G.state("expand").split(",").filter(Boolean));
        (open ? open.split(",") : [entryId]).forEach((x) => expand.add(x));
        G.setState("expand", Array.from(expand).join(","));
        G.focusAfterDraw = entryId;
        G.redrawGraph({ expand: Array.from(expand).join(",") });
      } else {
        G.select(entryId, g && g.id);
      }
      return;
    }
    const picked = evt.target.closest("[data-unpick]");
    if (picked) { G.unpick(picked.dataset.unpick); return; }
    const link = evt.target.closest("a[data-select]");
    if (link && G.layoutEl() && !evt.ctrlKey && !evt.metaKey) {
      evt.preventDefault();
      G.select(link.dataset.select, link.dataset.dom, link.dataset.tab);
    }
  });

  function runAction(name) {
    if (name === "fit") G.fitAll();
    else if (name === "zoom-in") G.zoom(0.8);
    else if (name === "zoom-out") G.zoom(1.25);
    else if (name === "compare-mode") {
      const on = !G.compareMode();
      $('[data-action="compare-mode"]').setAttribute("aria-pressed", String(on));
      $("#compare-tray").hidden = !on;
    }
    else if (name === "help") { const h = $("#help"); h.hidden = !h.hidden; }
    else if (name === "active") {
      const leaf = G.layoutEl().dataset.activeLeaf;
      if (leaf) G.select(leaf, null, "node");
    }
  }

  function navTarget(key) {
    const nav = $("#nav");
    if (!nav) return null;
    const d = nav.dataset;
    return { parent: d.parent, child: d.child, prev: d.prev, next: d.next, branch: d.branch, prevBranch: d.prevBranch, root: d.root }[key] || null;
  }

  document.addEventListener("keydown", (evt) => {
    if (!G.layoutEl() || evt.ctrlKey || evt.metaKey || evt.altKey) return;
    const tag = (evt.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select" || evt.target.isContentEditable) return;
    const moves = { ArrowUp: "parent", k: "parent", ArrowDown: "child", j: "child", ArrowLeft: "prev", h: "prev", ArrowRight: "next", l: "next", b: "branch", B: "prevBranch", Home: "root" };
    if (evt.shiftKey && evt.key.startsWith("Arrow")) {
      const d = { ArrowUp: [0, -0.2], ArrowDown: [0, 0.2], ArrowLeft: [-0.2, 0], ArrowRight: [0.2, 0] }[evt.key];
      G.pan(d[0], d[1]); evt.preventDefault(); return;
    }
    const node = G.state("node");
    if (moves[evt.key]) {
      const target = navTarget(moves[evt.key]);
      const branchKey = evt.key === "b" || evt.key === "B";
      if (branchKey && !target) note("No branch point in this session: the conversation never splits.");
      else if (branchKey && target === node) note("This is the only branch point in this session.");
      else if (target) G.select(target, null);
      evt.preventDefault();
    } else if (evt.key === "Enter" && node) { G.select(node, null, "node"); evt.preventDefault(); }
    else if (evt.key === "c" && node) { G.select(node, null, "context"); }
    else if (evt.key === "a" || evt.key === "End") { runAction("active"); evt.preventDefault(); }
    else if (evt.key === "f") G.fitAll();
    else if (evt.key === "+" || evt.key === "=") G.zoom(0.8);
    else if (evt.key === "-") G.zoom(1.25);
    else if (evt.key === "?") runAction("help");
    else if (evt.key === "Escape") { const h = $("#help"); if (h) h.hidden = true; }
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
})();
