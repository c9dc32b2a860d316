// session-tree: the handle between the graph and the panel. Dragged (pointer events) or moved
// with the arrow keys when focused, it sets the panel's width, which this browser keeps
// (localStorage) for every session page; without it the panel takes 40% of the page.
(function () {
  "use strict";

  const KEY = "session-tree.panel-width";
  const MIN_PANEL = 320, MIN_GRAPH = 360, STEP = 32;
  const $ = (sel) => document.querySelector(sel);

  function clampWidth(px) {
    return Math.round(Math.max(MIN_PANEL, Math.min(px, window.innerWidth - MIN_GRAPH)));
  }
  function saved() {
    try { return Number(localStorage.getItem(KEY)) || 0; } catch (e) { return 0; }
  }
  function setWidth(px, keep) {
    const layout = $(".session-layout"), handle = $(".splitter");
    if (!layout || !handle) return;
    const w = clampWidth(px);
    layout.style.setProperty("--panel-width", w + "px");
    handle.setAttribute("aria-valuenow", String(w));
    handle.setAttribute("aria-valuemax", String(Math.max(MIN_PANEL, window.innerWidth - MIN_GRAPH)));
    if (keep) { try { localStorage.setItem(KEY, String(w)); } catch (e) { /* private mode: this page only */ } }
  }
  const panelWidth = () => $(".session-layout > .side").getBoundingClientRect().width;

  let drag = null;
  document.addEventListener("pointerdown", (evt) => {
    const handle = evt.target.closest(".splitter");
    if (!handle || evt.button !== 0) return;
    evt.preventDefault();
    handle.setPointerCapture(evt.pointerId);
    const right = $(".session-layout").getBoundingClientRect().right;
    drag = { right: right, grip: panelWidth() - (right - evt.clientX) }; // (no jump to the pointer)
    handle.classList.add("dragging");
  });
  document.addEventListener("pointermove", (evt) => {
    if (drag) setWidth(drag.right - evt.clientX + drag.grip, false);
  });
  document.addEventListener("pointerup", (evt) => {
    if (!drag) return;
    drag = null;
    const handle = $(".splitter");
    handle.classList.remove("dragging");
    if (handle.hasPointerCapture(evt.pointerId)) handle.releasePointerCapture(evt.pointerId);
    setWidth(panelWidth(), true);
  });
  document.addEventListener("keydown", (evt) => {
    if (!evt.target.closest || !evt.target.closest(".splitter")) return;
    const moves = { ArrowLeft: STEP, ArrowRight: -STEP, PageUp: 4 * STEP, PageDown: -4 * STEP };
    if (!(evt.key in moves)) return;
    evt.preventDefault();
    evt.stopPropagation(); // the graph's arrow keys move the selection
    setWidth(panelWidth() + moves[evt.key], true);
  }, true);

  // A width this browser kept (clamped to the window as it is now); else the stylesheet's 40%.
  function restore() {
    const handle = $(".splitter");
    if (!handle) return;
    if (saved()) setWidth(saved(), false);
    else handle.setAttribute("aria-valuenow", String(Math.round(panelWidth())));
  }
  document.addEventListener("DOMContentLoaded", restore);
  window.addEventListener("resize", restore);
})();
