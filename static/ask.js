// Ask several models (templates/ask.html): the form is sent with fetch, and the replies stream
// in side by side, one column per model, from the server-sent events of /-/ask (sse.js reads
// them). A column's Cancel stops that model only; nothing of its reply is written.
(function () {
  "use strict";
  const form = document.getElementById("ask-form");
  if (!form) return;
  const columns = document.getElementById("ask-columns");
  const end = document.getElementById("ask-end");
  const status = form.querySelector(".form-status");
  const message = form.querySelector("textarea[name=message]");

  form.addEventListener("change", (ev) => {  // an edit starts from the message as it was
    if (ev.target.name === "mode" && ev.target.value === "edit" && !message.value) message.value = message.dataset.editText;
  });

  function column(i, info, runId) {
    const col = el("section", "ask-column");
    col.dataset.col = String(i);
    const head = el("header", "ask-column-head");
    head.append(el("code", "ask-model", info.model), " ",
      el("span", "muted", info.cost === null ? "cost unknown" : "≈ $" + info.cost.toFixed(4)));
    const stop = el("button", "ask-cancel", "Cancel");
    stop.type = "button";
    stop.addEventListener("click", () => {
      stop.disabled = true;
      const data = new FormData();
      data.append("csrf_token", form.querySelector("input[name=csrf_token]").value);
      data.append("run", runId);
      data.append("col", String(i));
      fetch(form.dataset.cancel, { method: "POST", body: data });
    });
    head.append(" ", stop);
    col.append(head, el("div", "ask-text"), el("p", "ask-status", "waiting for the model…"));
    return col;
  }

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const named = [...form.querySelectorAll("input[name=model]:checked")].length;
    status.classList.toggle("error", !named);
    if (!named) {  // said once the form is sent, not while it is being filled in
      status.textContent = form.dataset.noModel;
      return;
    }
    const send = form.querySelector(".ask-send");
    send.disabled = true;
    status.classList.remove("error");
    status.textContent = "sending…";
    columns.replaceChildren();
    end.hidden = true;
    const cols = [];
    const streamed = await streamForm(form, status, (e) => {  // sse.js
      const d = e.data;
      if (e.event === "start") {
        columns.hidden = false;
        columns.style.setProperty("--n", String(d.columns.length));
        d.columns.forEach((info, i) => { cols.push(column(i, info, d.run)); columns.append(cols[i]); });
        status.textContent = "asking " + d.columns.length + " models at once…";
      } else if (e.event === "delta" && cols[d.col]) {
        if (d.kind === "text") cols[d.col].querySelector(".ask-text").append(d.text);
        cols[d.col].querySelector(".ask-status").textContent = "streaming…";
      } else if (["done", "failed", "cancelled"].includes(e.event) && cols[d.col]) {
        const col = cols[d.col];
        col.classList.add("ask-" + e.event);
        col.querySelector(".ask-cancel").remove();
        const line = col.querySelector(".ask-status");
        line.textContent = e.event === "done" ? "written in " + d.seconds + " s · context sent: "
          + d.sent_tokens.toLocaleString("en") + " tokens (" + (d.sent_estimated ? "estimated" : "the server's count") + ") " : d.error;
        if (e.event === "done") {
          const a = el("a", "", "open the branch");
          a.href = location.pathname.replace(/\/ask$/, "") + "?node=" + encodeURIComponent(d.entry);
          line.append(a);
        }
      } else if (e.event === "end") {
        status.textContent = "";
        send.disabled = false;
        end.hidden = false;
        end.replaceChildren();
        if (d.compare) {
          const a = el("a", "button ask-compare", "Compare these " + d.answers.length + " branches");
          a.href = d.compare;
          end.append(a);
        } else {
          end.append(d.answers.length === 1 ? "One model answered: nothing to compare." : "No model answered: nothing was written.");
        }
      }
    });
    if (!streamed) send.disabled = false;
  });
})();
