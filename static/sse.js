// Server-sent events read from a fetch response (a POST, which EventSource cannot make): the
// reply of app.js and the summary of model.js stream through it.
window.readEvents = async function readEvents(res, onEvent) {
  "use strict";
  const parse = (raw) => {
    let event = "message", data = "";
    for (const line of raw.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) data += line.slice(6);
    }
    return { event, data: data ? JSON.parse(data) : {} };
  };
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const ev = parse(buf.slice(0, cut));
      buf = buf.slice(cut + 2);
      onEvent(ev);
    }
  }
};

// A form sent as a stream request (ask, replay): the events go to `onEvent`; when the app cannot
// be reached or refuses, `status` says why (its plain-text answer, or its error page's message)
// and the answer is false.
window.streamForm = async function streamForm(form, status, onEvent) {
  "use strict";
  let res;
  try {
    res = await fetch(form.action, { method: "POST", body: new FormData(form), headers: { Accept: "text/event-stream" } });
  } catch (err) {
    status.textContent = "The app could not be reached: " + err;
    return false;
  }
  if (!res.ok) {
    const body = await res.text();
    const why = (res.headers.get("Content-Type") || "").startsWith("text/html")
      ? new DOMParser().parseFromString(body, "text/html").querySelector(".error-page .error") : null;
    status.textContent = (why ? why.textContent : body).trim() || "Refused (" + res.status + ").";
    status.classList.add("error");
    return false;
  }
  await readEvents(res, onEvent);
  return true;
};

// An element with a class and text (the streamed pages build their columns and steps with it).
window.el = function el(tag, cls, text) {
  "use strict";
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};
