// session-tree: the session page's graph between swaps: a new drawing gets its view, overlay and
// picks back, a new panel marks its node on the drawing, what is unfolded is kept in the URL, and
// a failed request says so in the page. Everything else is plain HTML and htmx; the graph's view
// (graph-view.js), minimap (minimap.js), selection and keys (selection.js), overlays
// (overlays.js), compare tray (tray.js) and streamed writes (writes.js) are loaded before it.
(function () {
  "use strict";

  const G = (window.SessionTreeGraph = window.SessionTreeGraph || {});
  const $ = (sel, root) => (root || document).querySelector(sel);

  // Before a new drawing goes in, the old one leaves: htmx would walk each of its thousands of
  // elements to clean it up (an event each, 40-50 ms on a big drawing), though no element of a
  // drawing has anything of htmx's to clean.
  document.addEventListener("htmx:beforeSwap", (evt) => {
    const target = evt.detail.target;
    if (target && target.id === "graph" && evt.detail.shouldSwap) { const old = G.svgEl(); if (old) old.remove(); }
  });

  // After a swap: a new drawing gets its view, overlay and picks back; a new panel marks its
  // node on the drawing and brings it into view.
  document.addEventListener("htmx:afterSwap", (evt) => {
    const target = evt.detail.target || evt.target; // a history restore swaps the body, no target
    if (!target) return;
    // An out-of-band swap (the stats beside a new drawing) reports the request's target too:
    // running initSvg again would take the zoomed view for the drawing's full extent.
    if (evt.detail.elt && (evt.detail.elt.id === "stats" || evt.detail.elt.id === "text-tree")) return;
    if (target.id === "graph") { G.applyOverlay(); G.initSvg(); G.markPicked(); keepFoldsInUrl(); }
    if (target.id === "panel") {
      const selected = G.applyOverlay(true);
      if (selected) G.zoomTo(selected, true);
    }
  });
  // What is unfolded is part of the address: a reload or a shared link draws the same.
  function keepFoldsInUrl() {
    const url = new URL(location.href);
    for (const k of ["expand", "collapse", "dir", "view"]) {
      const v = G.state(k);
      if (v) url.searchParams.set(k, v); else url.searchParams.delete(k); // (no collapse: the session's default)
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
    if (!G.layoutEl()) return;
    G.view = null;
    G.initSvg();
    G.applyOverlay();
    G.markPicked();
  });

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

  // The index's filter asks with the fields that say something: an empty field means "any",
  // and the address it leaves in the history (a link a person shares) should not list them.
  document.addEventListener("htmx:configRequest", (evt) => {
    if (evt.detail.verb !== "get" || !evt.detail.elt.closest("form.filter")) return;
    for (const [name, value] of [...evt.detail.formData.entries()]) {
      if (value === "") delete evt.detail.parameters[name];
    }
  });

  document.addEventListener("DOMContentLoaded", () => {
    if (!G.layoutEl()) return;
    G.applyOverlay(); // first: the first view takes in the bands it draws
    G.initSvg();
  });
})();
