// session-tree export: search, and the branch a clicked node belongs to. The page reads fully
// without this script (every branch is a section; filters are CSS), it only adds to it.
// Session text is never turned into HTML here: only classes and textContent are set.
(function () {
  "use strict";
  const items = Array.from(document.querySelectorAll(".t-item"));
  const texts = items.map((li) => li.textContent.toLowerCase());
  const form = document.querySelector(".search-form");
  const box = document.getElementById("export-search");
  const count = document.getElementById("export-count");
  form.hidden = false;
  form.addEventListener("submit", (evt) => evt.preventDefault());
  box.addEventListener("input", () => {
    const q = box.value.trim().toLowerCase();
    let n = 0;
    items.forEach((li, i) => {
      const hit = !q || texts[i].includes(q);
      li.classList.toggle("no-match", !hit);
      if (hit && q) { n += 1; li.querySelectorAll("details").forEach((d) => { if (d.textContent.toLowerCase().includes(q)) d.open = true; }); }
    });
    count.textContent = q ? n + " entr" + (n === 1 ? "y" : "ies") : "";
  });
  document.addEventListener("keydown", (evt) => {
    if (evt.key === "/" && document.activeElement !== box) { evt.preventDefault(); box.focus(); }
  });

  // A branch is its section and the sections it continues: those stay bright, the rest dim.
  function showBranch(index) {
    const keep = new Set();
    for (let i = index; i !== "" && i !== undefined; ) {
      keep.add(String(i));
      const s = document.getElementById("b-" + i);
      i = s ? s.dataset.parent : "";
    }
    document.querySelectorAll("section.branch").forEach((s) => {
      s.classList.toggle("dim", !keep.has(s.dataset.branch));
      s.classList.toggle("current", s.dataset.branch === String(index));
      if (keep.has(s.dataset.branch)) s.querySelector("details").open = true;
    });
  }
  function follow(hash) {
    const el = hash && document.getElementById(decodeURIComponent(hash.slice(1)));
    if (!el) return;
    const section = el.closest("section.branch");
    if (section) showBranch(section.dataset.branch);
    const d = el.closest("details:not([open])");
    if (d) d.open = true;
    document.querySelectorAll(".graph g.node.here").forEach((g) => g.classList.remove("here"));
    const id = el.id.replace(/^t-/, "");
    const g = document.getElementById(id);
    if (g) g.classList.add("here");
    el.scrollIntoView({ block: "start" });
  }
  window.addEventListener("hashchange", () => follow(location.hash));
  if (location.hash) follow(location.hash);
})();
