// session-tree project export, the index: a filter box and sortable columns. The page reads
// fully without this script (the table is sorted newest first); it shows the filter box and
// turns the column headings into sort buttons. Only textContent, classes and attributes are set.
(function () {
  "use strict";
  const body = document.querySelector(".project-sessions tbody");
  const rows = Array.from(body.querySelectorAll("tr.session-row"));
  const texts = rows.map((tr) => tr.textContent.toLowerCase());
  const form = document.querySelector(".project-filter");
  const box = document.getElementById("project-filter");
  const count = document.getElementById("project-count");
  form.hidden = false;
  form.addEventListener("submit", (evt) => evt.preventDefault());
  box.addEventListener("input", () => {
    const words = box.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    let n = 0;
    rows.forEach((tr, i) => {
      const hit = words.every((w) => texts[i].includes(w));
      tr.hidden = !hit;
      if (hit) n += 1;
    });
    count.textContent = words.length ? n + " of " + rows.length : "";
  });

  function key(tr, column, numeric) {
    const td = tr.children[column];
    const value = td && td.dataset.value !== undefined ? td.dataset.value : (td ? td.textContent.trim().toLowerCase() : "");
    return numeric ? parseFloat(value) || 0 : value;
  }
  const heads = Array.from(document.querySelectorAll(".project-sessions th[data-sort]"));
  heads.forEach((th, column) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "sort";
    button.textContent = th.textContent;
    th.textContent = "";
    th.appendChild(button);
    button.addEventListener("click", () => {
      const down = th.getAttribute("aria-sort") !== "descending";
      const numeric = th.dataset.sort === "num";
      heads.forEach((h) => h.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      const sorted = rows.slice().sort((a, b) => {
        const x = key(a, column, numeric), y = key(b, column, numeric);
        return (x < y ? -1 : x > y ? 1 : 0) * (down ? -1 : 1);
      });
      sorted.forEach((tr) => body.appendChild(tr));
    });
  });
})();
