// session-tree: writes from the session page: a form marked `data-stream` is posted with fetch
// and its answer read as server-sent events (sse.js), the model's reply shown as it comes, with
// a Cancel that closes the stream (the server then stops the model and writes no reply); then
// the graph and the panel are drawn again at the new entry. A failed or cancelled reply keeps
// the user's message, shows it on the graph and offers to ask again.
(function () {
  "use strict";

  const G = (window.SessionTreeGraph = window.SessionTreeGraph || {});

  async function postStream(url, body, form) {
    const status = form.querySelector(".form-status");
    const stream = form.querySelector(".reply-stream");
    const out = stream && stream.querySelector(".reply-text");
    const say = (text, cls) => { if (status) { status.textContent = text; status.className = "form-status " + (cls || ""); } };
    form.querySelectorAll("button").forEach((b) => { b.disabled = true; });
    say("Working…", "busy");
    const running = new AbortController();
    const cancel = cancelButton(form, running);
    let node = null, user = null, failed = null;
    try {
      await streamPost(url, body, (ev) => {  // sse.js
        if (ev.event === "user") {
          user = node = ev.data.node;
          say("Message added; the model is answering…", "busy");
          if (stream) { stream.hidden = false; out.textContent = ""; }
          cancel.hidden = false;
        } else if (ev.event === "delta" && out && ev.data.kind === "text") {
          out.textContent += ev.data.text;
        } else if (ev.event === "done") {
          node = ev.data.node; say(ev.data.message, ev.data.cut ? "error" : "ok");
        } else if (ev.event === "error") {
          failed = ev.data; user = ev.data.user || user;
        }
      }, running.signal);
    } catch (e) {
      failed = { message: e.name === "AbortError" ? "Cancelled: no reply was written; your message was kept." : e.message };
    }
    cancel.remove();
    form.querySelectorAll("button").forEach((b) => { b.disabled = false; });
    if (!failed) { refreshAll(node); return; }
    say(failed.message, "error");
    form.dispatchEvent(new CustomEvent("reply-failed", { detail: failed, bubbles: true }));  // model.js
    if (stream) stream.hidden = true;
    if (user) offerRetry(form, user);
  }

  // While the model answers: a Cancel beside the status, which closes the stream.
  function cancelButton(form, running) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "cancel-reply";
    button.textContent = "Cancel";
    button.hidden = true;
    button.addEventListener("click", () => running.abort());
    const status = form.querySelector(".form-status");
    if (status) status.after(button); else form.append(button);
    return button;
  }

  // After a failed reply the user message stays: show it on the graph and offer to ask again.
  function offerRetry(form, user) {
    G.setState("node", user);
    G.redrawGraph({ node: user });
    let retry = form.querySelector("button.retry");
    if (!retry) {
      retry = document.createElement("button");
      retry.type = "button";
      retry.className = "retry";
      retry.textContent = "Retry the reply";
      form.querySelector(".form-status").after(retry);
    }
    retry.onclick = () => {
      const body = new FormData();
      body.set("csrf_token", form.querySelector("[name=csrf_token]").value);
      body.set("node", user);
      const model = form.querySelector("[name=model]");
      if (model) body.set("model", model.value);
      postStream(G.layoutEl().dataset.replyUrl, body, form);
    };
  }

  function refreshAll(node) {
    node = node || G.state("node");
    G.setState("node", node);
    const tab = G.currentTab() === "compact" ? "context" : "node";
    G.redrawGraph({ node }).then(() => {
      htmx.ajax("GET", G.panelUrl(tab, { node }), { target: "#panel", swap: "innerHTML" });
    });
  }

  document.addEventListener("submit", (evt) => {
    const form = evt.target.closest("form[data-stream]");
    if (!form || !G.layoutEl()) return;
    evt.preventDefault();
    postStream(form.action, new FormData(form), form);
  });
})();
