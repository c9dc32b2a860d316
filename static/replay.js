// Replay a branch on another model (templates/replay.html): the form is sent with fetch and the
// replay's steps stream in from the server-sent events of /-/replay (sse.js reads them, as for
// ask). Cancel stops it after the current step: what was written stands, and a stop entry says so.
(function () {
  "use strict";

  function link(text, href, cls) {
    const a = el("a", cls || "", text);
    a.href = href;
    return a;
  }

  async function submit(form, ev) {
    ev.preventDefault();
    const steps = document.getElementById("replay-steps");
    const end = document.getElementById("replay-end");
    const status = form.querySelector(".form-status");
    const send = form.querySelector(".replay-send");
    const stop = form.querySelector(".replay-cancel");
    send.disabled = true;
    status.classList.remove("error");
    status.textContent = "sending…";
    steps.replaceChildren();
    end.hidden = true;
    let current = null;
    const streamed = await streamForm(form, status, (e) => {  // sse.js
      const d = e.data;
      if (e.event === "start") {
        steps.hidden = false;
        status.textContent = "replaying " + d.prompts + " user message" + (d.prompts === 1 ? "" : "s") + " on " + d.model + " (" + d.tools + " tools)…";
        stop.hidden = false;
        stop.disabled = false;
        stop.onclick = () => {
          stop.disabled = true;
          const data = new FormData();
          data.append("csrf_token", form.querySelector("input[name=csrf_token]").value);
          data.append("run", d.run);
          fetch(form.dataset.cancel, { method: "POST", body: data });
        };
      } else if (e.event === "step") {
        current = el("li", "replay-step");
        if (d.prompt) current.append(el("div", "replay-prompt", "user: " + d.prompt));
        current.append(el("div", "replay-text"), el("div", "replay-tools muted"));
        steps.append(current);
      } else if (e.event === "delta" && current && d.kind === "text") {
        current.querySelector(".replay-text").append(d.text);
      } else if (e.event === "reply" && current) {
        current.dataset.entry = d.entry;
        if (d.calls.length) current.querySelector(".replay-tools").append("calls " + d.calls.join(", ") + ": ");
      } else if (e.event === "tool" && current) {
        const t = el("span", "replay-tool replay-" + d.how.replace(/ /g, "-"), d.name + " " + d.how);
        current.querySelector(".replay-tools").append(t, " ");
      } else if (e.event === "stopped") {
        steps.append(el("li", "replay-stopped", "stopped: " + d.reason));
      } else if (e.event === "failed") {
        steps.append(el("li", "replay-failed", d.error));
      } else if (e.event === "end") {
        stop.hidden = true;
        end.hidden = false;
        end.replaceChildren(el("span", "replay-summary", d.summary));
        if (d.open) end.append(" ", link("Open the replayed branch", d.open, "button replay-open"));
        if (d.compare) end.append(" ", link("Compare with the original", d.compare, "button"));
      }
    });
    if (streamed) status.textContent = "";
    stop.hidden = true;
    send.disabled = false;
  }

  // The form is replaced when another branch is picked (htmx): listen on the document.
  document.addEventListener("submit", (ev) => {
    if (ev.target.id === "replay-form") submit(ev.target, ev);
  });
})();
