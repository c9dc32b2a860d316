// session-tree: picking branches to compare. Fewer than two picks say so in place (the page is
// kept); a branch ticked in a list becomes a pick of the graph's compare tray (app.js), which
// keeps the picks in the URL, and a pick made in the tray ticks the branch in the list.
(function () {
  "use strict";

  function say(message, count) {
    if (!message) return;
    message.textContent = "Pick at least two branches to compare (" + count + " picked).";
    message.hidden = false;
  }

  document.addEventListener("submit", (evt) => {
    const form = evt.target.closest(".compare-form");
    if (!form) return;
    const count = form.querySelectorAll('input[name="id"]:checked').length;
    if (count >= 2) return;
    evt.preventDefault();
    say(form.querySelector(".compare-message"), count);
  });

  document.addEventListener("click", (evt) => {
    const go = evt.target.closest("#compare-go");
    if (!go) return;
    const count = document.querySelectorAll("#compare-tray [data-unpick]").length;
    if (count >= 2) return;
    evt.preventDefault();
    say(document.querySelector("#compare-tray .compare-message"), count);
  });

  document.addEventListener("change", (evt) => {
    const box = evt.target.closest('.branches-panel input[name="id"]');
    if (!box) return;
    document.dispatchEvent(new CustomEvent("compare:pick", { detail: { id: box.value, on: box.checked } }));
    const message = box.form && box.form.querySelector(".compare-message");
    if (message && box.form.querySelectorAll('input[name="id"]:checked').length >= 2) message.hidden = true;
  });

  // The Branches tab ticks what the tray holds: when the tray changes, and when the list is loaded.
  let picks = [];
  function tick() {
    document.querySelectorAll('.branches-panel input[name="id"]').forEach((box) => { box.checked = picks.includes(box.value); });
    const message = document.querySelector(".branches-panel .compare-message");
    if (message && picks.length >= 2) message.hidden = true;
  }
  document.addEventListener("compare:picks", (evt) => { picks = evt.detail.ids; tick(); });
  document.addEventListener("htmx:afterSwap", (evt) => {
    const target = evt.detail.target || evt.target;
    if (target && target.querySelector && target.querySelector(".branches-panel")) tick();
  });
})();
