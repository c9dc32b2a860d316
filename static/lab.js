// The compaction lab (templates/lab.html): the form is sent with fetch and the run streams in
// as server-sent events (sse.js). Each candidate's card is made when the run names it, its summary
// text is appended as the model writes it, and the server's own card (audit, test, judge) takes
// its place as each part ends; at the end the ranked table and the cards come whole from the
// server, and the address becomes the run's page. Cancel (or leaving the page) stops the run:
// what it found is kept and shown.
(function () {
  "use strict";

  function fragment(html) {
    const t = document.createElement("template");
    t.innerHTML = html;
    return t.content;
  }

  function place(html, old, parent) {
    const frag = fragment(html);
    const made = frag.firstElementChild;
    if (old) old.replaceWith(frag); else parent.append(frag);
    if (made && window.htmx) window.htmx.process(made);
    return made;
  }

  function card(live, id, name) {
    let c = document.getElementById("card-" + id);
    if (!c) {
      c = el("article", "lab-card streaming");
      c.id = "card-" + id;
      c.dataset.id = id;
      const head = el("header");
      head.append(el("strong", "", name || id));
      c.append(head, el("p", "lab-state muted", "waiting…"), el("pre", "lab-stream"));
      live.append(c);
    }
    return c;
  }

  async function submit(form, ev) {
    ev.preventDefault();
    const live = document.getElementById("lab-live");
    const results = document.getElementById("lab-results");
    const status = form.querySelector(".form-status");
    const spent = form.querySelector(".lab-spent");
    const run = form.querySelector(".lab-run");
    const stop = form.querySelector(".lab-cancel");
    const controller = new AbortController();
    run.disabled = true;
    status.classList.remove("error");
    status.textContent = "starting…";
    spent.textContent = "";
    live.replaceChildren();
    live.hidden = false;
    stop.hidden = false;
    stop.disabled = false;
    stop.onclick = () => { stop.disabled = true; controller.abort(); };
    let page = null;
    const ok = await streamForm(form, status, (e) => {  // sse.js
      const d = e.data;
      if (e.event === "run") {
        page = d.page;
        status.textContent = "run " + d.run + "…";
      } else if (e.event === "target") {
        if (d.error) { status.textContent = d.error; status.classList.add("error"); return; }
        for (const c of d.candidates || []) card(live, c.id, c.name);
        status.textContent = (d.candidates || []).length + " candidates: writing their summaries…";
      } else if (e.event === "candidate-start") {
        card(live, d.id, d.name).querySelector(".lab-state").textContent = "the model is writing…";
      } else if (e.event === "delta") {
        const c = card(live, d.id);
        const pre = c.querySelector(".lab-stream");
        if (pre) pre.append(d.text);
        const state = c.querySelector(".lab-state");
        if (state) state.textContent = "the model is writing…";
      } else if (e.event === "card") {
        const made = place(d.html, document.getElementById("card-" + d.id), live);
        if (made && d.event === "candidate" && !made.classList.contains("failed")) {
          made.querySelector("header").append(el("span", "muted lab-testing", " · being tested…"));
        }
      } else if (e.event === "test-reply") {
        const c = document.getElementById("card-" + d.candidate);
        const note = c && c.querySelector(".lab-testing");
        if (note) note.textContent = " · being tested: " + (d.text || "").slice(0, 60) + "…";
      } else if (e.event === "spent") {
        spent.textContent = "spent: " + d.calls + " calls, " + d.tokens.toLocaleString() + " tokens" +
          (d.cost ? ", $" + d.cost.toFixed(4) : "");
      } else if (e.event === "failed" || e.event === "error") {
        status.textContent = d.error || d.message;
        status.classList.add("error");
      } else if (e.event === "end") {
        live.hidden = true;
        live.replaceChildren();
        results.replaceChildren(fragment(d.html));
        if (window.htmx) window.htmx.process(results);
        status.textContent = d.reason === "finished" ? "done" : d.reason;
        if (d.page) history.replaceState(null, "", d.page);
      }
    }, controller.signal);
    if (!ok && page) {  // cancelled or refused: what the run kept is on its page
      status.append(" ", Object.assign(el("a", "", "Open what it kept"), { href: page }));
    }
    stop.hidden = true;
    run.disabled = false;
  }

  document.addEventListener("submit", (ev) => {
    if (ev.target.id === "lab-form") submit(ev.target, ev);
  });
})();
