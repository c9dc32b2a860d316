// session-tree: the Transcript tab. The server renders everything; this file only keeps the
// reader's place: a node selected on the graph (app.js loads the panel for it) opens in the same
// path and with the same filters, and the transcript scrolls to the selected entry.
(function () {
  "use strict";

  function panel() { return document.querySelector("#panel .transcript-panel"); }

  // A panel request for the transcript carries the current path's leaf and reading options,
  // unless it names its own (a filter link does): the server keeps the leaf only when the
  // selected node lies on that path.
  document.addEventListener("htmx:configRequest", (evt) => {
    const current = panel();
    if (!current || !/\/-\/panel\/transcript$/.test(evt.detail.path.split("?")[0])) return;
    const url = new URL(evt.detail.path, location.href);
    const carry = Object.assign({ leaf: current.dataset.leaf }, JSON.parse(current.dataset.params || "{}"));
    const own = ["filter", "thinking", "output"].some((k) => url.searchParams.has(k));
    for (const [k, v] of Object.entries(carry)) {
      if (k === "leaf" ? !url.searchParams.has(k) : !own) url.searchParams.set(k, v);
    }
    evt.detail.path = url.pathname + url.search;
  });

  // The selected entry is brought to the top of the panel once its transcript is in.
  // (Below the sticky tabs and toolbar, whatever height they wrapped to.)
  // A selected tool result is opened under its call and shown itself.
  function showFocus() {
    const current = panel();
    let focus = document.querySelector("#panel .t-focus");
    const result = current && focus && focus.querySelector(`details.t-result[data-entry="${CSS.escape(current.dataset.node)}"]`);
    if (result) { result.open = true; result.classList.add("t-focus"); focus = result; }
    if (!focus) return;
    const above = [".tabs", ".t-toolbar"].map((s) => document.querySelector("#panel " + s));
    focus.style.scrollMarginTop = above.reduce((h, el) => h + (el ? el.offsetHeight : 0), 8) + "px";
    focus.scrollIntoView({ block: "start" });
  }
  document.addEventListener("htmx:afterSwap", (evt) => { if ((evt.detail.target || evt.target).id === "panel") showFocus(); }); // a history restore has no target
  document.addEventListener("DOMContentLoaded", showFocus);

  // "/" focuses the session's search box (unless one is typing already).
  document.addEventListener("keydown", (evt) => {
    if (evt.key !== "/" || evt.ctrlKey || evt.metaKey || evt.altKey) return;
    const tag = (evt.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select" || evt.target.isContentEditable) return;
    const box = document.getElementById("session-search");
    if (box) { evt.preventDefault(); box.focus(); box.select(); }
  });
})();
