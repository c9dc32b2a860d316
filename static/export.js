// session-tree export: the entries past the first screens, search, and the branch a clicked node
// belongs to. The server renders the header, the text tree, the drawing and the first screens;
// every other entry is held once in the page as JSON (#export-data) and rendered here when it is
// scrolled to, when its branch is opened, when a link leads to it, and all of it before printing.
// Session text becomes HTML only through `esc` (and `md`, which escapes first): nothing from the
// session is ever markup, a link is kept only for http(s), and images only as clean base64.
(function () {
  "use strict";
  const holder = document.getElementById("export-data");
  const data = holder ? JSON.parse(holder.textContent) : { entries: [], ids: [], blocks: [], labels: {}, dom: {} };
  const CHUNK = 100; // items rendered per step while scrolling
  const FOLD = data.fold || 20;
  const CAP = data.cap || 100000;

  // --- escaping and the small markdown subset --------------------------------------------------
  const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  function esc(value) { return String(value).replace(/[&<>"']/g, (c) => ESC[c]); }
  function capped(text) {
    text = String(text);
    if (text.length <= CAP) return [text, ""];
    return [text.slice(0, CAP), note("… " + (text.length - CAP).toLocaleString("en") + " more characters are not shown here")];
  }

  // Inline: `code`, [text](http(s) link), **strong**, *em*, _em_. The text is cut at code spans and
  // links first, so no formatting reaches into them; every piece is escaped before it is marked.
  const INLINE = /(`+)([\s\S]+?)\1|\[([^\]\n]+)\]\((https?:\/\/[^\s()<>]+)\)/g;
  function emphasis(text) {
    return esc(text)
      .replace(/\*\*([^*\n]+)\*\*/g, "<strong>$1</strong>")
      .replace(/(^|[^*\w])\*([^*\n]+)\*(?![*\w])/g, "$1<em>$2</em>")
      .replace(/(^|[^_\w])_([^_\n]+)_(?![_\w])/g, "$1<em>$2</em>");
  }
  function inline(text) {
    let out = "", at = 0, m;
    INLINE.lastIndex = 0;
    while ((m = INLINE.exec(text)) !== null) {
      out += emphasis(text.slice(at, m.index));
      if (m[1]) out += "<code>" + esc(m[2]) + "</code>";
      else out += '<a href="' + esc(m[4]) + '" rel="noopener noreferrer">' + emphasis(m[3]) + "</a>";
      at = INLINE.lastIndex;
    }
    return out + emphasis(text.slice(at));
  }
  // Blocks: fenced code, headings, lists (- * + or 1.), paragraphs.
  function md(source) {
    const [text, more] = capped(source);
    const lines = text.split("\n");
    const out = [];
    let para = [], list = null, items = [];
    const flushPara = () => { if (para.length) out.push("<p>" + inline(para.join("\n")) + "</p>"); para = []; };
    const flushList = () => { if (list) out.push("<" + list + ">" + items.map((x) => "<li>" + inline(x) + "</li>").join("") + "</" + list + ">"); list = null; items = []; };
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      const fence = /^\s*(```+|~~~+)/.exec(line);
      if (fence) {
        flushPara(); flushList();
        const code = [];
        for (i++; i < lines.length && !lines[i].trim().startsWith(fence[1]); i++) code.push(lines[i]);
        out.push('<pre class="code"><code>' + esc(code.join("\n")) + "</code></pre>");
        continue;
      }
      const heading = /^(#{1,6})\s+(.*)$/.exec(line);
      if (heading) { flushPara(); flushList(); out.push("<h" + heading[1].length + ">" + inline(heading[2]) + "</h" + heading[1].length + ">"); continue; }
      const bullet = /^\s*(?:([-*+])|\d+[.)])\s+(.*)$/.exec(line);
      if (bullet) {
        flushPara();
        const kind = bullet[1] ? "ul" : "ol";
        if (list !== kind) flushList();
        list = kind; items.push(bullet[2]);
        continue;
      }
      if (!line.trim()) { flushPara(); flushList(); continue; }
      if (list) flushList();
      para.push(line);
    }
    flushPara(); flushList();
    return '<div class="markdown">' + out.join("") + "</div>" + more;
  }

  // --- the pieces of an entry, as the server's partials draw them ------------------------------
  function note(text, cls) { return '<div class="' + (cls || "note") + '">' + esc(text) + "</div>"; }
  function pre(text) { return '<pre class="code"><code>' + esc(text) + "</code></pre>"; }
  function json(value) { return JSON.stringify(value === undefined ? null : value, null, 2); }
  function folded(source) {
    const [text, more] = capped(source);
    const lines = text.split("\n");
    if (lines.length <= FOLD) return pre(text) + more;
    return pre(lines.slice(0, FOLD).join("\n")) + '<details class="more"><summary>show all ' + lines.length +
      " lines</summary>" + pre(lines.slice(FOLD).join("\n")) + more + "</details>";
  }
  function blocksOf(content) {
    if (typeof content === "string") return [{ type: "text", text: content }];
    return Array.isArray(content) ? content.filter((b) => b && typeof b === "object") : [];
  }
  function image(block) {
    if (typeof block.mimeType === "string" && /^image\/(png|jpeg|gif|webp)$/.test(block.mimeType) &&
        typeof block.data === "string" && block.data.length <= CAP && /^[A-Za-z0-9+/]+={0,2}$/.test(block.data)) {
      return '<img class="thumb" alt="image" src="data:' + block.mimeType + ";base64," + block.data + '">';
    }
    return note(typeof block.data === "string" && block.data.length > CAP
      ? "[image: " + block.data.length.toLocaleString("en") + " characters of data, too large to show here]" : "[image: unsupported]");
  }
  function unknown(what, raw) { return note("unknown " + what + ", shown raw") + pre(json(raw)); }
  function toolCall(block) {
    const args = block.arguments;
    const body = args && typeof args === "object" && typeof args.command === "string" && Object.keys(args).length === 1
      ? pre(args.command) : pre(json(args));
    return '<div class="tool-call"><div class="tool-name">' + esc(block.name == null ? "?" : block.name) + "</div>" + body + "</div>";
  }
  function thinking(block) {
    const text = String(block.thinking || "");
    const words = text.split(/\s+/).filter(Boolean).length;
    return '<details class="thinking"><summary>Thinking (' + words + " words)</summary>" + md(text) + "</details>";
  }
  function block(b) {
    if (b.type === "text") return md(b.text == null ? "" : b.text);
    if (b.type === "thinking") return thinking(b);
    if (b.type === "toolCall") return toolCall(b);
    if (b.type === "image") return image(b);
    return unknown("block type " + b.type, b);
  }
  function content(c) { return blocksOf(c).map(block).join(""); }
  function resultText(msg) { return blocksOf(msg.content).filter((b) => b.type === "text").map((b) => String(b.text == null ? "" : b.text)).join("\n"); }
  function result(ei) {
    const msg = data.entries[ei].message || {};
    const text = resultText(msg);
    const lines = text ? text.split("\n").length : 0;
    const error = !!msg.isError;
    const images = blocksOf(msg.content).filter((b) => b.type === "image").map(image).join("");
    return '<details class="t-result' + (error ? " is-error" : "") + '" id="t-' + esc(dom(ei)) + '" data-entry="' + esc(data.ids[ei]) +
      '"><summary>' + (error ? "error" : "result") + " · " + lines + " line" + (lines === 1 ? "" : "s") + "</summary>" + folded(text) + images + "</details>";
  }
  function assistant(msg, results) {
    const byCall = new Map();
    results.forEach((ei) => { const m = data.entries[ei].message || {}; byCall.set(m.toolCallId, ei); });
    const out = [];
    blocksOf(msg.content).forEach((b) => {
      out.push(block(b));
      if (b.type === "toolCall" && byCall.has(b.id)) out.push(result(byCall.get(b.id)));
    });
    if (msg.stopReason === "aborted" || msg.stopReason === "error") out.push(note("stopped: " + msg.stopReason, "flag stop-" + msg.stopReason));
    if (msg.errorMessage) out.push(note(String(msg.errorMessage), "error"));
    return out.join("");
  }
  function bash(msg) {
    const code = msg.exitCode;
    const flags = ['<span class="exit-code' + (code === 0 ? "" : " nonzero") + '">exit ' + esc(code == null ? "?" : code) + "</span>"];
    [["cancelled", "cancelled"], ["truncated", "truncated"], ["excludeFromContext", "excluded from context"]].forEach(([k, label]) => {
      if (msg[k]) flags.push('<span class="flag">' + label + "</span>");
    });
    return pre("$ " + String(msg.command == null ? "" : msg.command)) + folded(String(msg.output || "")) + '<div class="flags">' + flags.join(" ") + "</div>";
  }
  function files(details) {
    const list = (title, xs) => Array.isArray(xs) && xs.length
      ? '<div class="files"><h4>' + title + "</h4><ul>" + xs.map((f) => "<li><code>" + esc(f) + "</code></li>").join("") + "</ul></div>" : "";
    details = details && typeof details === "object" ? details : {};
    return list("Files read", details.readFiles) + list("Files modified", details.modifiedFiles);
  }
  function fields(pairs, internal) { // (`internal`: the file's machinery, left out of print, as render.py's)
    const rows = pairs.filter(([, v]) => v !== undefined && v !== null)
      .map(([k, v]) => "<dt>" + esc(k) + "</dt><dd>" + (typeof v === "object" ? pre(json(v)) : esc(v)) + "</dd>").join("");
    return rows ? '<dl class="fields' + (internal ? " internal" : "") + '">' + rows + "</dl>" : "";
  }
  function body(e, kind, results) {
    const msg = e.message && typeof e.message === "object" ? e.message : null;
    if (e.type === "message") {
      if (!msg) return unknown("message shape", e);
      if (msg.role === "user" || msg.role === "custom") return content(msg.content);
      if (msg.role === "assistant") return assistant(msg, results);
      if (msg.role === "toolResult") {
        const images = blocksOf(msg.content).filter((b) => b.type === "image").map(image).join("");
        return '<div class="tool-result' + (msg.isError ? " is-error" : "") + '"><div class="tool-name">' + esc(msg.toolName || "?") +
          "</div>" + folded(resultText(msg)) + images + "</div>";
      }
      if (msg.role === "bashExecution") return bash(msg);
      return unknown("message role " + msg.role, e);
    }
    if (e.type === "custom_message") return content(e.content) + fields([["custom type", e.customType], ["display", e.display], ["details", e.details]], true);
    if (kind === "compaction") return md(e.summary || "") + fields([["first kept entry", e.firstKeptEntryId]], true) + files(e.details);
    if (kind === "branch-summary") return md(e.summary || "") + fields([["from", e.fromId]], true) + files(e.details);
    return unknown("entry type " + e.type, e);
  }
  function when(iso) {
    if (!iso) return "–";
    const d = typeof iso === "string" ? new Date(iso) : null;
    return d && !isNaN(d) ? d.toISOString().slice(0, 16).replace("T", " ") : String(iso);
  }
  function own(obj, key) { return Object.prototype.hasOwnProperty.call(obj, key); }
  function dom(ei) { return own(data.dom, ei) ? data.dom[ei] : "e-" + data.ids[ei]; }
  function tokens(n) { return n >= 1000 ? (n / 1000).toFixed(n >= 10000 ? 0 : 1) + "k" : String(n); }
  function links(cls, intro, list) {
    if (!list || !list.length) return "";
    return '<div class="' + cls + '">' + intro(list.length) + " " + list.map(([id, d, text]) =>
      '<a href="#t-' + esc(d) + '" data-select="' + esc(id) + '" data-dom="' + esc(d) + '">' + esc(text) + "</a>").join(" · ") + "</div>";
  }
  // One item: [entry index, kind, only tool calls, result entry indexes]; a tool result follows
  // the call it answers, as `transcript.items_of` folds it.
  function textOf(content) { return blocksOf(content).filter((b) => b.type === "text").map((b) => String(b.text == null ? "" : b.text)).join(""); }
  function rowsOf(order) {
    const rows = [];
    let open = new Map();
    order.forEach((ei) => {
      const kind = data.kinds[ei], msg = data.entries[ei].message || {};
      if (kind === "tool" && open.has(msg.toolCallId)) { open.get(msg.toolCallId)[3].push(ei); return; }
      const row = [ei, kind, 0, []];
      if (kind === "assistant") {
        const calls = blocksOf(msg.content).filter((b) => b.type === "toolCall");
        open = new Map(calls.filter((c) => typeof c.id === "string").map((c) => [c.id, row]));
        row[2] = calls.length && !textOf(msg.content).trim() ? 1 : 0;
      } else if (kind === "user") open = new Map();
      rows.push(row);
    });
    return rows;
  }
  function item(row, b) {
    const [ei, kind, onlyTools, results] = row;
    const summary = own(data.sums, ei) ? data.sums[ei] : "";
    const branches = own(b.forks, ei) ? b.forks[ei] : null, subs = own(b.subs, ei) ? b.subs[ei] : null;
    const e = data.entries[ei], id = data.ids[ei], d = dom(ei);
    const label = own(data.labels, id) ? data.labels[id] : undefined;
    const tag = label !== undefined ? '<span class="tag">' + esc(label) + "</span>" : "";
    const time = '<time datetime="' + esc(e.timestamp == null ? "" : e.timestamp) + '">' + esc(when(e.timestamp)) + "</time>";
    const select = (cls, text) => '<a class="t-select' + cls + '" href="#t-' + esc(d) + '" data-select="' + esc(id) + '" data-dom="' + esc(d) + '">' + esc(text) + "</a>";
    let inner;
    if (kind === "mark" || kind === "meta") {
      inner = '<div class="t-mark">' + select("", summary) + tag + time + "</div>";
    } else if (kind === "compaction" || kind === "branch-summary") {
      let head;
      if (kind === "compaction") {
        const before = e.tokensBefore, after = e.tokensAfter;
        head = '<span class="kind k-compaction">compaction</span> ' + (typeof before === "number"
          ? "Compacted from " + tokens(before) + " tokens" + (typeof after === "number" ? " to " + tokens(after) : "")
          : typeof after === "number" ? "Compacted to " + tokens(after) + " tokens (the size before it is not recorded)"
            : "Compacted (the file records no token counts for it)");
      } else {
        head = '<span class="kind k-branch-summary">branch summary</span> Summary of the branch left at <code>' + esc(String(e.fromId || "?").slice(-8)) + "</code>";
      }
      inner = '<details class="t-summary"><summary>' + head + tag + time + '</summary><div class="t-body entry-body">' + body(e, kind, results) +
        "</div><p>" + select("", "Select on the graph") + "</p></details>";
    } else {
      const role = e.type === "message" && e.message ? e.message.role : e.type;
      const model = kind === "assistant" && e.message && e.message.model ? '<span class="muted">' + esc(e.message.model) + "</span>" : "";
      inner = '<header class="t-who">' + select(" kind k-" + esc(String(role).replace(/_/g, "-")), e.type === "message" ? role || "entry" : String(e.type).replace(/_/g, " ")) +
        tag + model + time + '</header><div class="t-body entry-body">' + body(e, kind, results) + "</div>";
    }
    return '<li class="t-item t-' + kind + (label !== undefined ? " labelled" : "") + (onlyTools ? " only-tools" : "") + '" id="t-' + esc(d) +
      '" data-entry="' + esc(id) + '">' + inner +
      links("t-branches", (n) => n + " other branch" + (n === 1 ? "" : "es") + " here:", branches) +
      links("t-subagents", (n) => "Sub-agent conversation" + (n === 1 ? "" : "s") + " it started:", subs) + "</li>";
  }

  // --- rendering as the reader goes --------------------------------------------------------------
  let query = "";
  // A part of the page: its rows (those the server rendered, then the rest), and how many show.
  const views = data.blocks.map((b) => {
    const list = document.querySelector('ol.transcript[data-block="' + b.key + '"]');
    const more = document.querySelector('.export-more[data-block="' + b.key + '"]');
    const first = rowsOf(b.entries.slice(0, b.shown));
    const rows = first.concat(rowsOf(b.entries.slice(b.shown)));
    return { b, list, more, rows, next: first.length };
  });
  const observer = "IntersectionObserver" in window ? new IntersectionObserver((seen) => {
    seen.forEach((s) => { if (s.isIntersecting) grow(views[Number(s.target.dataset.view)]); });
  }, { rootMargin: "1500px 0px" }) : null;

  function matches(row) { return !query || searchText(row).includes(query); }
  function renderTo(view, n) {
    n = Math.min(n, view.rows.length);
    if (n <= view.next || !view.list) return;
    const rows = view.rows.slice(view.next, n);
    view.list.insertAdjacentHTML("beforeend", rows.map((row) => item(row, view.b)).join(""));
    if (query) {
      const lis = view.list.children;
      rows.forEach((row, k) => mark(lis[view.next + k], row));
    }
    view.next = n;
    told(view);
  }
  function told(view) {
    if (!view.more) return;
    const left = view.rows.length - view.next;
    view.more.hidden = left === 0;
    view.more.textContent = left + " more entr" + (left === 1 ? "y" : "ies") + " of this part below: shown as you scroll.";
  }
  function grow(view) {
    renderTo(view, view.next + (query ? CHUNK * 5 : CHUNK));
    if (observer && view.more && !view.more.hidden) { observer.unobserve(view.more); observer.observe(view.more); } // (asks again: still in sight?)
  }
  views.forEach((view, i) => {
    if (!view.more) return;
    view.more.dataset.view = i;
    told(view);
    if (observer) observer.observe(view.more);
  });
  const partial = document.getElementById("export-partial");
  if (partial) partial.hidden = true; // (with scripts on, nothing is left out)
  // Before printing: every entry rendered and every fold open (paper has no click); closed again after.
  let opened = [];
  function renderAll() {
    views.forEach((v) => renderTo(v, v.rows.length));
    opened = [...document.querySelectorAll("main details:not([open])")];
    opened.forEach((d) => { d.open = true; });
  }
  window.addEventListener("beforeprint", renderAll);
  window.addEventListener("afterprint", () => { opened.forEach((d) => { d.open = false; }); opened = []; });
  if (window.matchMedia) window.matchMedia("print").addEventListener("change", (m) => { if (m.matches) renderAll(); });

  // Where an entry (or a tool result, shown under its call) is: [view, item position].
  let places = null;
  function placeOf(id) {
    if (!places) {
      places = new Map();
      views.forEach((v, vi) => v.rows.forEach((row, k) => {
        places.set(data.ids[row[0]], [vi, k]);
        row[3].forEach((ei) => places.set(data.ids[ei], [vi, k]));
      }));
    }
    return places.get(id);
  }
  function byDom(domId) {
    const found = document.getElementById(domId);
    if (found) return found;
    const t = domId.replace(/^t-/, "");
    let id = t.startsWith("e-") ? t.slice(2) : null;
    if (id === null) { const k = Object.keys(data.dom).find((ei) => data.dom[ei] === t); id = k === undefined ? null : data.ids[k]; }
    const at = id !== null && placeOf(id);
    if (!at) return null;
    renderTo(views[at[0]], at[1] + 1 + CHUNK);
    return document.getElementById(domId);
  }

  // --- search over every entry, rendered or not --------------------------------------------------
  const texts = new Map();
  function strings(value, out) {
    if (typeof value === "string") out.push(value);
    else if (value && typeof value === "object") Object.values(value).forEach((v) => strings(v, out));
    return out;
  }
  function searchText(row) {
    let t = texts.get(row);
    if (t === undefined) {
      const out = strings(data.entries[row[0]], []);
      row[3].forEach((ei) => strings(data.entries[ei], out));
      if (own(data.sums, row[0])) out.push(data.sums[row[0]]);
      t = out.join("\n").toLowerCase();
      texts.set(row, t);
    }
    return t;
  }
  function mark(li, row) {
    const hit = matches(row);
    li.classList.toggle("no-match", !hit);
    if (hit && query) li.querySelectorAll("details").forEach((d) => { if (d.textContent.toLowerCase().includes(query)) d.open = true; });
  }
  const form = document.querySelector(".search-form");
  const box = document.getElementById("export-search");
  const count = document.getElementById("export-count");
  form.hidden = false;
  form.addEventListener("submit", (evt) => evt.preventDefault());
  box.addEventListener("input", () => {
    query = box.value.trim().toLowerCase();
    let n = 0;
    views.forEach((v) => {
      v.rows.forEach((row, k) => {
        if (query && matches(row)) n += 1;
        if (k < v.next && v.list) mark(v.list.children[k], row);
      });
      if (observer && v.more && !v.more.hidden) { observer.unobserve(v.more); observer.observe(v.more); }
    });
    count.textContent = query ? n + " entr" + (n === 1 ? "y" : "ies") : "";
  });
  document.addEventListener("keydown", (evt) => {
    if (evt.key === "/" && document.activeElement !== box) { evt.preventDefault(); box.focus(); }
  });

  // A branch is its section and the sections it continues: those stay bright, the rest dim.
  function showBranch(index) {
    const keep = new Set();
    for (let i = index; i !== "" && i !== undefined; ) {
      keep.add(String(i));
      const s = document.getElementById("b-" + i);
      i = s ? s.dataset.parent : "";
    }
    document.querySelectorAll("section.branch[data-branch]").forEach((s) => {
      s.classList.toggle("dim", !keep.has(s.dataset.branch));
      s.classList.toggle("current", s.dataset.branch === String(index));
      if (keep.has(s.dataset.branch)) s.querySelector("details").open = true;
    });
  }
  function follow(hash) {
    const el = hash && byDom(decodeURIComponent(hash.slice(1)));
    if (!el) return;
    const section = el.closest("section.branch");
    if (section && section.dataset.branch !== undefined) showBranch(section.dataset.branch); // (not a sub-agent's)
    const d = el.closest("details:not([open])");
    if (d) d.open = true;
    document.querySelectorAll(".graph g.node.here").forEach((g) => g.classList.remove("here"));
    const id = el.id.replace(/^t-/, "");
    const g = document.getElementById(id);
    if (g) g.classList.add("here");
    el.scrollIntoView({ block: "start" });
  }
  window.addEventListener("hashchange", () => follow(location.hash));
  if (location.hash) follow(location.hash);
})();
