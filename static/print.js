// The print page: every fold (tool results, thinking, summaries) open before printing, closed
// again after, so that paper holds all of the branch (print.css does the same without a script
// where the browser can).
(function () {
  "use strict";
  let opened = [];
  window.addEventListener("beforeprint", () => {
    opened = [...document.querySelectorAll(".print-sheet details:not([open])")];
    opened.forEach((d) => { d.open = true; });
  });
  window.addEventListener("afterprint", () => { opened.forEach((d) => { d.open = false; }); opened = []; });
})();
