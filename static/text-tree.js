// session-tree: the text tree's keys and folding. Its lines are plain links that select their node
// (selection.js's a[data-select] click); here: ↑/↓ (and Home/End) move the focus, Enter selects,
// ← folds a branch (or goes to the line it hangs from), → unfolds it (or goes into it). What is
// folded is kept when the tree is redrawn beside a new drawing. The Graph/Text/Both links carry
// the page's current address (a selection changes it without a reload).
(function () {
  "use strict";

  const G = (window.SessionTreeGraph = window.SessionTreeGraph || {});
  const folded = new Set(); // data-key of folded lines
  const lines = () => Array.from(document.querySelectorAll("#text-tree .tt-line"));
  const shown = (a) => !a.parentElement.hidden;

  // Hide what folded lines hold: a line's subtree is the lines after it up to its data-end.
  function applyFolds() {
    let hideUntil = -1;
    lines().forEach((a, i) => {
      a.parentElement.hidden = i <= hideUntil;
      if (!a.hasAttribute("aria-expanded")) return;
      const isFolded = folded.has(a.dataset.key);
      a.setAttribute("aria-expanded", String(!isFolded));
      a.dataset.hidden = String(Number(a.dataset.end) - i);
      if (isFolded) hideUntil = Math.max(hideUntil, Number(a.dataset.end));
    });
  }

  function focusLine(a) {
    if (!a) return;
    for (const b of document.querySelectorAll('#text-tree .tt-line[tabindex="0"]')) b.tabIndex = -1;
    a.tabIndex = 0;
    a.focus();
    a.scrollIntoView({ block: "nearest" });
  }

  // The line a line hangs from: the nearest foldable line above whose subtree holds it.
  function parentLine(all, i) {
    for (let j = i - 1; j >= 0; j--) {
      if (all[j].hasAttribute("aria-expanded") && Number(all[j].dataset.end) >= i) return all[j];
    }
    return null;
  }

  document.addEventListener("keydown", (evt) => {
    const a = evt.target.closest && evt.target.closest("#text-tree .tt-line");
    if (!a || evt.ctrlKey || evt.metaKey || evt.altKey) return;
    const all = lines(), i = all.indexOf(a), visible = all.filter(shown);
    const at = visible.indexOf(a);
    const expandable = a.hasAttribute("aria-expanded");
    const open = a.getAttribute("aria-expanded") === "true";
    if (evt.key === "ArrowDown") focusLine(visible[Math.min(at + 1, visible.length - 1)]);
    else if (evt.key === "ArrowUp") focusLine(visible[Math.max(at - 1, 0)]);
    else if (evt.key === "Home") focusLine(visible[0]);
    else if (evt.key === "End") focusLine(visible[visible.length - 1]);
    else if (evt.key === "ArrowLeft") {
      if (expandable && open) { folded.add(a.dataset.key); applyFolds(); } else focusLine(parentLine(all, i));
    } else if (evt.key === "ArrowRight") {
      if (expandable && !open) { folded.delete(a.dataset.key); applyFolds(); } else if (expandable) focusLine(all[i + 1]);
    } else if (evt.key === "Enter") {
      return evt.stopPropagation(); // the link's own click selects (the graph's Enter would too)
    } else return;
    evt.preventDefault();
    evt.stopPropagation(); // the graph's keys (selection.js) move the selection on the same arrows
  }, true); // (before them)

  // The selected node's line (called by markSelected): the drawn node's, else the entry's own.
  G.markTextTree = function markTextTree(domId) {
    const tree = document.getElementById("text-tree");
    if (!tree) return;
    const node = G.state("node");
    let line = null;
    for (const a of tree.querySelectorAll(".tt-line")) {
      const here = !line && ((domId && a.dataset.dom === domId) || (node && a.dataset.select === node));
      a.classList.toggle("selected", here);
      if (here) { a.setAttribute("aria-current", "true"); line = a; } else a.removeAttribute("aria-current");
    }
    if (line && !tree.contains(document.activeElement)) {
      for (const b of tree.querySelectorAll('.tt-line[tabindex="0"]')) b.tabIndex = -1;
      line.tabIndex = 0;
    }
  };

  // A new drawing brings a new text tree (out of band): the folds and the focus come back.
  document.addEventListener("htmx:oobAfterSwap", (evt) => {
    const target = evt.detail.target;
    if (!target || target.id !== "text-tree") return;
    applyFolds();
    if (document.activeElement === document.body) focusLine(target.querySelector('.tt-line[tabindex="0"]'));
  });

  // Graph / Text / Both: the address as it is now, with the view asked for.
  document.addEventListener("click", (evt) => {
    const toggle = evt.target.closest("a[data-view]");
    if (!toggle) return;
    const url = new URL(location.href);
    if (toggle.dataset.view === "graph") url.searchParams.delete("view"); else url.searchParams.set("view", toggle.dataset.view);
    toggle.setAttribute("href", url.pathname + url.search);
  });

  document.addEventListener("DOMContentLoaded", applyFolds);
})();
