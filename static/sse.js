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
