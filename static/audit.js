// session-tree: "Lost in compaction". Marks on the graph the entries whose facts a summary lost
// (from the panel's #overlay data, like the context view), and asks for the audit of the summary
// being edited in the compaction preview again as the user types (htmx waits for a pause).
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
  }

  function refresh() {
    const live = document.getElementById("audit-live");
    if (live && document.getElementById("summary-text")) htmx.trigger(live, "audit-refresh");
  }

  document.addEventListener("htmx:afterSwap", (evt) => {
    const id = (evt.detail.target || evt.target).id; // a history restore swaps the body: no target
    if (id === "graph" || id === "panel") mark();
    if (id === "compact-summary-slot") refresh();
  });
  document.addEventListener("input", (evt) => { if (evt.target.id === "summary-text") refresh(); });
  document.addEventListener("DOMContentLoaded", mark);
})();
