// session-tree: "Lost in compaction". Marks on the graph the entries whose facts a summary lost
// (from the panel's #overlay data, like the context view), shows the summarized span when the tab
// opens, opens a lost fact's entry under the fact, and asks for the audit of the summary being
// edited in the compaction preview again as the user types (htmx waits for a pause).
(function () {
  "use strict";

  const CLASSES = ["audit-span", "audit-missing", "audit-summary"];

  function mark() {
    const svg = document.querySelector("#graph svg");
    const data = document.getElementById("overlay");
    if (!svg) return;
    svg.querySelectorAll("g.node").forEach((g) => g.classList.remove(...CLASSES));
    const audit = data ? JSON.parse(data.textContent).audit : null;
    svg.classList.toggle("audit-mode", !!audit);
    if (!audit) return;
    const span = new Set(audit.span), missing = new Set(audit.missing);
    svg.querySelectorAll("g.node").forEach((g) => {
      if (missing.has(g.id)) g.classList.add("audit-missing");
      else if (span.has(g.id)) g.classList.add("audit-span");
      if (g.id === audit.summary) g.classList.add("audit-summary");
    });
    return audit;
  }

  // Show a drawn node on the graph without changing the panel (app.js moves the view).
  function show(domId) {
    if (domId) document.dispatchEvent(new CustomEvent("graph:show", { detail: { dom: domId } }));
  }

  // A lost fact's entry opens under the fact: the audit stays, and the entry is marked on the graph.
  function opened(link) {
    document.querySelectorAll("#graph g.node.audit-focus").forEach((g) => g.classList.remove("audit-focus"));
    document.querySelectorAll(".fact.opened").forEach((li) => li.classList.remove("opened"));
    const g = document.getElementById(link.dataset.dom);
    if (g) g.classList.add("audit-focus");
    link.closest(".fact").classList.add("opened");
    show(link.dataset.dom);
  }

  function refresh() {
    const live = document.getElementById("audit-live");
    if (live && document.getElementById("summary-text")) htmx.trigger(live, "audit-refresh");
  }

  document.addEventListener("htmx:afterSwap", (evt) => {
    const id = (evt.detail.target || evt.target).id; // a history restore swaps the body: no target
    if (id === "graph") mark();
    if (id === "panel") {
      const audit = mark();
      if (audit && document.getElementById("audit-panel")) show(audit.focus);
    }
    if (id === "compact-summary-slot") refresh();
  });
  document.addEventListener("input", (evt) => { if (evt.target.id === "summary-text") refresh(); });
  document.addEventListener("click", (evt) => {
    const link = evt.target.closest("a.audit-open");
    if (link && !evt.ctrlKey && !evt.metaKey) opened(link);
  });
  document.addEventListener("DOMContentLoaded", () => {
    const audit = mark();
    if (audit && document.getElementById("audit-panel")) show(audit.focus);
  });
})();
