// session-tree: the compare tray on the session page: in compare mode a click on the graph adds
// the node (the path to it) to the tray instead of selecting it; the picks stay marked on the
// drawing and live in the URL (`pick=A,B`), so a reload or a link brings the tray back.
(function () {
  "use strict";

  const G = (window.SessionTreeGraph = window.SessionTreeGraph || {});
  const $ = (sel, root) => (root || document).querySelector(sel);
  const tray = [];

  G.compareMode = function compareMode() { const b = $('[data-action="compare-mode"]'); return !!b && b.getAttribute("aria-pressed") === "true"; };
  // `g`: the drawn node, or null for an entry not drawn (folded) or picked from a list.
  G.pick = function pick(entryId, g, quiet) {
    if (!entryId || tray.some((t) => t.id === entryId)) return;
    const text = g && g.querySelector("text");
    tray.push({ id: entryId, dom: g ? g.id : "", label: (text ? text.textContent : entryId.slice(-8)).slice(0, 28) });
    if (!quiet) renderTray();
  };
  G.unpick = function unpick(entryId) {
    const i = tray.findIndex((t) => t.id === entryId);
    if (i >= 0) tray.splice(i, 1);
    renderTray();
  };
  function renderTray() {
    $("#compare-tray .tray-items").replaceChildren(...tray.map((t) => {
      const b = document.createElement("button");
      b.type = "button"; b.dataset.unpick = t.id; b.title = "Remove " + t.id; b.textContent = t.label + " ×";
      return b;
    }));
    const q = tray.map((t) => "id=" + encodeURIComponent(t.id)).join("&");
    $("#compare-go").href = $("#compare-tray").dataset.compareUrl + "?" + q;
    // Two nodes picked: their contexts side by side too (what the model sees at each).
    const diff = $("#diff-contexts-go");
    if (diff) {
      diff.hidden = tray.length !== 2;
      if (tray.length === 2) diff.href = $("#compare-tray").dataset.diffUrl + "?a=" + encodeURIComponent(tray[0].id) + "&b=" + encodeURIComponent(tray[1].id);
    }
    keepPicksInUrl();
    G.markPicked();
    document.dispatchEvent(new CustomEvent("compare:picks", { detail: { ids: tray.map((t) => t.id) } }));  // compare.js
  }
  function keepPicksInUrl() {
    const url = new URL(location.href);
    if (tray.length) url.searchParams.set("pick", tray.map((t) => t.id).join(","));
    else url.searchParams.delete("pick");
    url.search = url.search.replace(/%2C/g, ","); // ids joined by plain commas, as people read them
    if (url.href !== location.href) history.replaceState(history.state, "", url.href);
  }
  function restoreTray() {
    const picks = (new URLSearchParams(location.search).get("pick") || "").split(",").filter(Boolean);
    picks.forEach((id) => { const dom = G.drawnId(id); G.pick(id, dom && document.getElementById(dom), true); });
    if (!tray.length || !$("#compare-tray")) return;
    $('[data-action="compare-mode"]').setAttribute("aria-pressed", "true");
    $("#compare-tray").hidden = false;
    renderTray();
  }
  document.addEventListener("DOMContentLoaded", () => { if (G.layoutEl()) restoreTray(); });
  document.addEventListener("htmx:pushedIntoHistory", () => { if (tray.length) keepPicksInUrl(); });
  // A branch ticked in the Branches tab is a pick too (compare.js sends it).
  document.addEventListener("compare:pick", (evt) => {
    const { id, on } = evt.detail;
    if (!on) { G.unpick(id); return; }
    const dom = G.drawnId(id);
    G.pick(id, dom && document.getElementById(dom));
  });
  // The picked nodes stay marked on the graph, also after it is redrawn.
  G.markPicked = function markPicked() {
    document.querySelectorAll("#graph g.picked").forEach((g) => g.classList.remove("picked"));
    tray.forEach((t) => { const g = document.getElementById(t.dom); if (g) g.classList.add("picked"); });
  };
})();
