// Live follow: the session page holds one server-sent-events stream (webapp/web/follow.py) that
// says when the file changed; it then redraws the graph (new entries, the active-leaf mark) and,
// when the selection was the active leaf, moves the selection and the panel along to the new one.
// A file rewritten in place reloads the page, which says so. The "Live" toolbar button turns
// following off (the stream is closed) and on (it is opened again and catches up at once).
(function () {
  "use strict";
  let busy = false;
  let pending = null; // the latest version told, not yet shown
  let source = null;

  const $ = (sel) => document.querySelector(sel);
  function layout() { return $(".session-layout[data-events-url]"); }
  function following() { const t = $("[data-follow]"); return !t || t.getAttribute("aria-pressed") === "true"; }
  function stateValue(name) { const i = $(`#graph-state [name="${name}"]`); return i ? i.value : ""; }
  function rewrites(version) { return String(version).split("-").pop(); }

  // A panel someone is typing in, or waiting on (a reply streaming, a status shown), stays put:
  // the graph still moves, and the panel follows on the next change after it is done.
  function inUse() {
    const panel = $("#panel");
    if (!panel) return false;
    if (panel.contains(document.activeElement) && document.activeElement.matches("input, textarea, select")) return true;
    if ([...panel.querySelectorAll("textarea")].some((t) => t.value.trim())) return true;
    return [...panel.querySelectorAll(".form-status")].some((s) => s.textContent.trim());
  }

  async function update(el, v) {
    const selected = stateValue("node");
    const atTip = !selected || selected === el.dataset.activeLeaf;
    el.dataset.version = v.version;
    el.dataset.activeLeaf = v.activeLeaf || "";
    const q = new URLSearchParams();
    for (const k of ["collapse", "expand"]) if (stateValue(k)) q.set(k, stateValue(k));
    const node = atTip ? v.activeLeaf || "" : selected;
    if (node) q.set("node", node);
    await htmx.ajax("GET", el.dataset.graphUrl + "?" + q.toString(), { target: "#graph", swap: "innerHTML" });
    if (atTip && node && !inUse()) {
      const body = $("#panel .panel-body");
      const tab = (body && body.dataset.tab) || "node";
      await htmx.ajax("GET", el.dataset.panelUrl.replace("__tab__", tab) + "?" + q.toString(), { target: "#panel", swap: "innerHTML" });
    }
  }

  // One change at a time, the latest: changes told while one is shown (or the tab is hidden)
  // wait, and only the last of them is shown.
  async function show() {
    const el = layout();
    if (!el || busy || !pending || !following() || document.hidden) return;
    const v = pending;
    pending = null;
    if (v.version === el.dataset.version) return;
    if (rewrites(v.version) !== rewrites(el.dataset.version)) { location.reload(); return; }
    busy = true;
    try {
      await update(el, v);
    } catch (e) {
      // the server is away or busy: the stream reconnects by itself and tells the version again
    } finally {
      busy = false;
      if (pending) show();
    }
  }

  function connect() {
    const el = layout();
    if (!el || source || !following()) return;
    source = new EventSource(el.dataset.eventsUrl);
    source.addEventListener("version", (evt) => { pending = JSON.parse(evt.data); show(); });
  }

  function disconnect() {
    if (source) { source.close(); source = null; }
  }

  document.addEventListener("click", (evt) => {
    const button = evt.target.closest("[data-follow]");
    if (!button) return;
    const on = button.getAttribute("aria-pressed") !== "true";
    button.setAttribute("aria-pressed", on ? "true" : "false");
    button.title = on ? "Showing what is appended to the file as it is written (click to stop)" : "Not following the file (click to follow it)";
    if (on) connect(); else disconnect();
  });

  document.addEventListener("visibilitychange", show);
  document.addEventListener("DOMContentLoaded", connect);
})();
