// The model's side of the page (app.js does the rest): the request and raw response of a failed
// reply in a "details" fold, and the compaction preview (live cut, summary streaming, Commit).
(function () {
  "use strict";

  // A failed reply: app.js says why in the form's status; the fold holds what a person debugging
  // the server needs (the request sent, the raw response).
  document.addEventListener("reply-failed", (evt) => {
    const form = evt.target;
    const status = form.querySelector(".form-status");
    let fold = form.querySelector("details.error-details");
    if (fold) fold.remove();
    if (!status || !evt.detail.details) return;
    fold = document.createElement("details");
    fold.className = "error-details";
    const summary = document.createElement("summary");
    summary.textContent = "details: the request and the raw response";
    const pre = document.createElement("pre");
    pre.textContent = evt.detail.details;
    fold.append(summary, pre);
    status.after(fold);
  });
})();
