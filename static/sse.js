// The one way the page reads a model's work as it streams: a POST sent with fetch (EventSource
// cannot POST), its answer read as server-sent events. The reply of writes.js, the summaries of
// model.js, the columns of ask.js and the steps of replay.js all come through `streamPost`.
// Aborting its `signal` (a Cancel button, or leaving the page) closes the connection: the
// server notices, closes its own connection to the model server, and writes nothing.
(function () {
  "use strict";

  function parse(raw) {
    let event = "message", data = "";
    for (const line of raw.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) data += line.slice(6);
    }
    return { event, data: data ? JSON.parse(data) : {} };
  }

  // Why the app refused (its plain-text answer, or its error page's message), in one line.
  async function refusal(res) {
    const body = await res.text();
    const why = (res.headers.get("Content-Type") || "").startsWith("text/html")
      ? new DOMParser().parseFromString(body, "text/html").querySelector(".error-page .error") : null;
    return ((why ? why.textContent : body).trim() || "The server answered " + res.status + ".").slice(0, 600);
  }

  // Send `body` to `url` and call `onEvent({event, data})` for each event until the stream ends.
  // Rejects with the app's words when it refuses or cannot be reached, and with an AbortError
  // when `signal` is aborted.
  window.streamPost = async function streamPost(url, body, onEvent, signal) {
    let res;
    try {
      res = await fetch(url, { method: "POST", body, headers: { Accept: "text/event-stream" }, signal });
    } catch (err) {
      if (err.name === "AbortError") throw err;
      throw new Error("The server did not answer: is session-tree still running?");
    }
    if (!res.ok) throw new Error(await refusal(res));
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        const raw = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        if (!raw.startsWith(":")) onEvent(parse(raw));  // a ":" line only checks that the page is still there
      }
    }
  };

  // A form sent as a stream (ask, replay): its refusal is said in `status` and the answer is
  // false; the events go to `onEvent`.
  window.streamForm = async function streamForm(form, status, onEvent, signal) {
    try {
      await streamPost(form.action, new FormData(form), onEvent, signal);
      return true;
    } catch (err) {
      status.textContent = err.name === "AbortError" ? "Cancelled." : err.message;
      status.classList.add("error");
      return false;
    }
  };

  // An element with a class and text (the streamed pages build their columns and steps with it).
  window.el = function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
})();
