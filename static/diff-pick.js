// session-tree: "Diff with a node you click…" (the Context tab). The button starts a pick: the
// next node clicked on the graph (or a line of the text tree, or an entry link) is the other
// side of the diff, and its page opens; Esc, or the button again, ends the pick. Nobody types an
// entry id that a click can give.
(function () {
  "use strict";
  let picking = null; // {from, url, button}: the button says what to do (a note over the graph would cover a node)

  function stop() {
    if (!picking) return;
    picking.button.setAttribute("aria-pressed", "false");
    picking.button.textContent = "Diff with a node you click…";
    document.body.classList.remove("picking-diff");
    picking = null;
  }

  function start(button) {
    picking = { from: button.dataset.diffFrom, url: button.dataset.diffUrl, button };
    button.setAttribute("aria-pressed", "true");
    button.textContent = "Click a node to diff with… (Esc cancels)";
    document.body.classList.add("picking-diff");
  }

  function entryOf(target) {
    const node = target.closest("#graph svg a");
    if (node) {
      const g = node.closest("g.node");
      if (g && g.classList.contains("more")) return null; // (a group of branches is no node)
      const href = node.getAttribute("xlink:href") || node.getAttribute("href");
      try { return new URL(href, location.href).searchParams.get("node"); } catch (e) { return null; }
    }
    const link = target.closest("a[data-select]");
    return link ? link.dataset.select : null;
  }

  // Capture: the pick is taken before the graph's own click (which would select the node).
  document.addEventListener("click", (evt) => {
    const button = evt.target.closest(".cx-diff-pick");
    if (button) { evt.preventDefault(); if (picking) stop(); else start(button); return; }
    if (!picking) return;
    const other = entryOf(evt.target);
    if (!other) return;
    evt.preventDefault();
    evt.stopImmediatePropagation();
    const url = picking.url + "?a=" + encodeURIComponent(picking.from) + "&b=" + encodeURIComponent(other);
    stop();
    location.assign(url);
  }, true);
  document.addEventListener("keydown", (evt) => { if (evt.key === "Escape" && picking) { evt.preventDefault(); stop(); } });
  // The panel redrawn (another node selected, another tab): its button is gone, so is the pick.
  document.addEventListener("htmx:afterSwap", (evt) => { if (picking && !document.body.contains(picking.button)) stop(); });
})();
