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

// -- the compaction preview -------------------------------------------------------------------------
(function () {
  "use strict";
  const $ = (sel, root) => (root || document).querySelector(sel);
  let timer = null;

  // The slider and the number field say the same thing; the form redraws the cut as either moves.
  document.addEventListener("input", (evt) => {
    if (evt.target.id === "keep-range") {
      const number = $("#keep-number");
      number.value = evt.target.value;
      number.dispatchEvent(new Event("input", { bubbles: true }));
    } else if (evt.target.id === "keep-number") {
      const range = $("#keep-range");
      if (range && evt.target.value) {
        if (+evt.target.value > +range.max) range.max = evt.target.value;
        range.value = evt.target.value;
      }
    } else if (evt.target.id === "summary-text") {
      commitReady();
      markEdited(evt.target);
    }
  });

  // Once a person changed the drafted text, the editor says so: the file will record `edited`.
  function markEdited(text) {
    const editor = text.closest(".summary-editor");
    const state = editor && editor.querySelector(".draft-state");
    if (!state) return;
    const edited = text.value !== text.defaultValue;
    if (state.dataset.draft === undefined) state.dataset.draft = state.textContent;
    state.textContent = edited ? state.dataset.edited : state.dataset.draft;
    state.classList.toggle("edited", edited);
    const warning = editor.querySelector('[data-when="draft"]');
    if (warning) warning.hidden = edited;
  }

  // Commit only once there is a summary to commit (the compaction's, or a regenerated summary's,
  // whose row stays hidden until then), and not the drafted text the server said it would refuse
  // (a compaction that would not shrink the context): changed, the server checks it again.
  function commitReady() {
    for (const commit of document.querySelectorAll(".commit-summary")) {
      const text = commit.form.querySelector("textarea[name=summary]");
      const refused = !!text && text.closest("[data-refused]") !== null && text.value === text.defaultValue;
      const ready = !!text && text.value.trim() !== "" && !refused;
      commit.disabled = !ready;
      commit.classList.toggle("primary", ready);
      const row = commit.closest("[data-until-summary]");
      if (row) row.hidden = !ready;
      const hint = commit.form.querySelector(".commit-hint");
      if (hint && ready) { hint.textContent = ""; hint.classList.remove("commit-hint"); }
      if (hint && refused) { hint.textContent = "Not as drafted: it would not shrink the context (the figures are under the summary)."; hint.classList.add("commit-hint"); }
    }
  }

  // Summary generation (the compaction's, the branch summary of the fork form, a regenerated
  // summary): one at a time, the model's text streamed into the editor as it comes, elapsed
  // seconds while it runs, and a way to give up on it (a model that hangs would otherwise keep the
  // page silent). One draft on the page at a time: another button's draft goes.
  let running = null;
  function generate(button) {
    const form = button.closest("form");
    const row = button.parentElement;
    const progress = row.querySelector(".summary-progress"), elapsed = progress.querySelector(".elapsed");
    const outcome = row.querySelector(".summary-outcome");
    const slot = $(button.dataset.slot);
    const started = Date.now();
    for (const other of document.querySelectorAll(".generate-summary")) {
      if (other !== button) { const s = $(other.dataset.slot); if (s) s.replaceChildren(); }
    }
    running = new AbortController();
    button.disabled = true;
    progress.hidden = false;
    outcome.hidden = true;
    elapsed.textContent = "0 s";
    const timer = setInterval(() => { elapsed.textContent = Math.round((Date.now() - started) / 1000) + " s"; }, 1000);
    const say = (text) => { outcome.textContent = text; outcome.hidden = false; };
    // The editor shown before stays aside until the new one is whole: given up, it comes back.
    const before = document.createDocumentFragment();
    before.append(...slot.childNodes);
    const live = streamingEditor();
    slot.append(live.box);
    commitReady();
    let html = null, failed = null;
    streamPost(button.dataset.url, new FormData(form), (ev) => {  // sse.js
      if (ev.event === "delta") live.text.value += ev.data.text;
      else if (ev.event === "done") html = ev.data.html;
      else if (ev.event === "error") failed = ev.data;
    }, running.signal)
      .then(() => {
        if (failed) throw Object.assign(new Error(failed.message), { details: failed.details });
        if (html === null) throw new Error("The server stopped before the summary was complete: nothing was written.");
        slot.innerHTML = html;
        htmx.process(slot);
        // what an htmx swap would announce, so the page's other parts (the audit) see the summary
        slot.dispatchEvent(new CustomEvent("htmx:afterSwap", { bubbles: true, detail: { target: slot, elt: slot } }));
      })
      .catch((e) => {
        slot.replaceChildren(before);
        say(e.name === "AbortError" ? "Cancelled: nothing was written." : e.message);
      })
      .finally(() => { clearInterval(timer); progress.hidden = true; button.disabled = false; running = null; commitReady(); });
  }

  // Where the summary shows while it streams: read-only, and not part of the form.
  function streamingEditor() {
    const box = document.createElement("div");
    box.className = "summary-editor summary-streaming";
    const label = document.createElement("p");
    label.className = "muted";
    label.textContent = "Summary — arriving from the model; it can be edited once it is complete";
    const text = document.createElement("textarea");
    text.rows = 16;
    text.readOnly = true;
    text.setAttribute("aria-label", "the summary as it arrives");
    box.append(label, text);
    return { box, text };
  }

  document.addEventListener("click", (evt) => {
    const button = evt.target.closest(".generate-summary");
    if (button) evt.preventDefault();  // a regenerate button submits its form only without JavaScript
    if (button && !button.disabled && !running) generate(button);
    if (evt.target.closest(".cancel-summary") && running) running.abort();
  });

  // A new preview: when its cut lies inside a fold of the graph, unfold that fold (through the
  // page's `expand` state, as a click on the fold would) and load the preview again to draw it.
  let unfolded = null;
  document.addEventListener("htmx:afterSwap", (evt) => {
    const target = evt.detail.target || evt.target; // a history restore swaps the body: no target
    if (!target || target.id !== "panel" || !$("#compact-panel")) return;
    commitReady();
    const data = $("#overlay");
    const o = data && JSON.parse(data.textContent);
    const cut = o && o.compact;
    if (!cut || !cut.cutFold || unfolded === cut.cutFold) return;
    unfolded = cut.cutFold;
    const layout = $(".session-layout");
    const input = (name) => $(`#graph-state [name="${name}"]`);
    const expand = new Set(input("expand").value.split(",").filter(Boolean));
    expand.add(cut.cutFold);
    input("expand").value = Array.from(expand).join(",");
    const q = new URLSearchParams();
    for (const k of ["collapse", "expand", "node"]) if (input(k).value) q.set(k, input(k).value);
    const panel = new URLSearchParams(q);
    panel.set("keep_recent_tokens", $("#keep-number").value);
    panel.set("node", o.node || "");
    // The preview is loaded again once the new drawing has settled, so its overlay (and the view
    // app.js moves to the cut) applies to the unfolded drawing.
    $("#graph").addEventListener("htmx:afterSettle", () => {
      htmx.ajax("GET", layout.dataset.panelUrl.replace("__tab__", "compact") + "?" + panel.toString(),
                { target: "#panel", swap: "innerHTML" });
    }, { once: true });
    htmx.ajax("GET", layout.dataset.graphUrl + "?" + q.toString(), { target: "#graph", swap: "innerHTML" });
  });
})();
