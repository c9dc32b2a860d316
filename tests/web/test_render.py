"""The reading view: markdown and code render; nothing from a session file becomes a live tag."""

from __future__ import annotations

import re

import pytest

from webapp.core.entries import Entry
from webapp.web.render import (
    highlight,
    pygments_css,
    raw_json,
    render_entry_body,
    render_markdown,
)

SCRIPT = '<script>alert("xss")</script>'
IMG = '<img src=x onerror="alert(1)">'
PAYLOAD = f"{SCRIPT} {IMG}"


def entry(raw: dict) -> Entry:
    return Entry(raw, 2, raw.get("id", "e1"), raw.get("parentId"))


def message(**msg) -> Entry:
    return entry({"type": "message", "id": "e1", "parentId": None, "message": msg})


def call(name: str, arguments) -> Entry:
    block = {"type": "toolCall", "id": "c1", "name": name, "arguments": arguments}
    return message(role="assistant", content=[block], stopReason="toolUse")


def tool_result(text: str, name: str = "bash", is_error: bool = False) -> Entry:
    return message(
        role="toolResult", toolCallId="c1", toolName=name,
        content=[{"type": "text", "text": text}], isError=is_error,
    )


def assert_inert(html: str) -> None:
    """No tag the payload could have opened: only escaped text of it remains."""
    assert "<script" not in html.lower()
    assert not re.search(r"<img[^>]*onerror", html, re.I)
    assert not re.search(r"<[^>]*\sonerror=", html, re.I)


# --- markdown -----------------------------------------------------------------------------------


def test_markdown_headings_lists_and_code():
    html = render_markdown("# Title\n\n- one\n- two\n\n1. first\n\nsome `code` and **bold**")
    assert "<h1>Title</h1>" in html
    assert "<ul>" in html and "<li>one</li>" in html
    assert "<ol>" in html and "<li>first</li>" in html
    assert "<code>code</code>" in html and "<strong>bold</strong>" in html


def test_markdown_fenced_python_is_highlighted():
    html = render_markdown("```python\ndef f():\n    return 1\n```")
    assert '<pre class="code"><code>' in html
    assert '<span class="hl-k">def</span>' in html
    assert '<span class="hl-nf">f</span>' in html


def test_markdown_unknown_fence_language_is_plain_and_escaped():
    html = render_markdown("```nosuchlang\n<b>x</b>\n```")
    assert "&lt;b&gt;x&lt;/b&gt;" in html
    assert "<b>" not in html


def test_markdown_table_and_strikethrough():
    html = render_markdown("| a | b |\n|:-|-:|\n| 1 | 2 |\n\n~~gone~~")
    assert "<table>" in html and '<td style="text-align:left">1</td>' in html
    assert "<s>gone</s>" in html or "<del>gone</del>" in html


def test_markdown_raw_html_is_text():
    html = render_markdown(f"hello {PAYLOAD}\n\n{SCRIPT}\n\n<div>block</div>")
    assert "&lt;script&gt;" in html
    assert "&lt;img src=x onerror=" in html
    assert "&lt;div&gt;block" in html
    assert_inert(html)


def test_markdown_links_only_web_and_mail():
    html = render_markdown(
        "[ok](https://example.com) [mail](mailto:a@b.c) [bad](javascript:alert(1)) "
        "<javascript:alert(2)> [rel](/delete)"
    )
    assert '<a href="https://example.com" rel="noopener noreferrer">ok</a>' in html
    assert 'href="mailto:a@b.c"' in html
    assert not re.search(r'href="\s*javascript:', html, re.I)
    assert 'href="/delete"' not in html
    assert "target=" not in html


def test_markdown_images_are_not_loaded():
    html = render_markdown("![pic](https://example.com/x.png)")
    assert "<img" not in html


# --- highlight and raw json ---------------------------------------------------------------------


def test_highlight_escapes_and_wraps():
    html = highlight(PAYLOAD, None)
    assert html.startswith('<pre class="code"><code>')
    assert "&lt;script&gt;" in html
    assert_inert(html)


def test_highlight_keeps_leading_blank_lines():
    assert highlight("\n\nx", None) == '<pre class="code"><code>\n\nx\n</code></pre>'


def test_raw_json_is_pretty_and_highlighted():
    html = raw_json({"a": [1, 2], "s": SCRIPT})
    assert "hl-nt" in html  # Pygments JSON key token
    assert '\n<span class="hl-w">  </span><span class="hl-nt">"a"</span>' in html  # indented by 2
    assert_inert(html)


def test_raw_json_handles_big_integers():
    assert "123456789012345678901234567890" in raw_json({"n": 123456789012345678901234567890})


def test_pygments_css_is_scoped_to_code_blocks():
    css = pygments_css()
    assert ".code .hl-k" in css
    assert not re.search(r"^pre\s*\{", css, re.M)


# --- messages -----------------------------------------------------------------------------------


def test_user_message_is_markdown():
    html = render_entry_body(message(role="user", content="**hi** there"))
    assert "<strong>hi</strong>" in html


def test_user_image_block_is_a_thumbnail():
    content = [
        {"type": "text", "text": "see"},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
    ]
    html = render_entry_body(message(role="user", content=content))
    assert '<img class="thumb" alt="image" src="data:image/png;base64,iVBORw0KGgo=">' in html


@pytest.mark.parametrize(
    "block",
    [
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/svg+xml"},
        {"type": "image", "data": 'x" onerror="alert(1)', "mimeType": "image/png"},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": 'image/png" onerror="alert(1)'},
    ],
)
def test_bad_images_become_a_note(block):
    html = render_entry_body(message(role="user", content=[block]))
    assert "[image: unsupported]" in html
    assert "<img" not in html


def test_assistant_blocks_in_order_with_thinking_collapsed():
    content = [
        {"type": "thinking", "thinking": "let me think about it"},
        {"type": "text", "text": "Answer"},
        {"type": "toolCall", "id": "c1", "name": "read",
         "arguments": {"path": "/a/b.py", "offset": 10, "limit": 5}},
    ]
    html = render_entry_body(message(role="assistant", content=content, stopReason="toolUse"))
    assert '<details class="thinking"><summary>Thinking (5 words)</summary>' in html
    assert html.index("Thinking") < html.index("Answer") < html.index('class="tool-call"')
    assert "<code>/a/b.py</code>" in html
    assert "<dt>offset</dt><dd>10</dd>" in html and "<dt>limit</dt><dd>5</dd>" in html


def test_assistant_error_and_abort_are_flagged():
    html = render_entry_body(
        message(role="assistant", content=[], stopReason="aborted", errorMessage=SCRIPT)
    )
    assert "stopped: aborted" in html
    assert '<div class="error">&lt;script&gt;' in html
    assert_inert(html)


def test_bash_call_is_highlighted_shell():
    html = render_entry_body(call("bash", {"command": "ls -la | grep x", "timeout": 5}))
    assert '<div class="tool-name">bash</div>' in html
    assert 'class="hl-' in html and "ls" in html
    assert "<dt>timeout</dt><dd>5</dd>" in html


def test_edit_call_shows_a_unified_diff():
    args = {"path": "src/a.py", "oldText": "old line", "newText": "new line"}
    html = render_entry_body(call("edit", args))
    assert "<code>src/a.py</code>" in html
    assert re.search(r'<span class="hl-gd">-old line\n?</span>', html)
    assert re.search(r'<span class="hl-gi">\+new line\n?</span>', html)


def test_write_call_is_highlighted_by_extension():
    html = render_entry_body(call("write", {"path": "x.py", "content": "import os\n"}))
    assert "<code>x.py</code>" in html
    assert '<span class="hl-kn">import</span>' in html


def test_other_tool_args_are_pretty_json():
    html = render_entry_body(call("grep", {"pattern": "foo", "glob": "*.py"}))
    assert '<div class="tool-name">grep</div>' in html
    assert '<span class="hl-nt">"pattern"</span>' in html


def test_tool_result_folds_after_20_lines():
    text = "\n".join(f"line {i}" for i in range(1, 51))
    html = str(render_entry_body(tool_result(text)))
    head, more = html.split('<details class="more">')
    assert "line 20\n" in head and "line 21" not in head
    assert "<summary>show all 50 lines</summary>" in more
    assert "line 21\n" in more and "line 50\n" in more
    assert "is-error" not in html


def test_short_tool_result_is_not_folded():
    html = render_entry_body(tool_result("a\nb"))
    assert "<details" not in html


def test_tool_result_error_class():
    html = render_entry_body(tool_result("boom", is_error=True))
    assert '<div class="tool-result is-error">' in html


def test_read_result_highlighted_by_the_calls_path():
    block = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "m.py"}}
    html = render_entry_body(tool_result("def f(): pass", name="read"), tool_call=block)
    assert '<span class="hl-k">def</span>' in html


def test_bash_execution():
    html = render_entry_body(message(
        role="bashExecution", command="echo hi", output="hi\n", exitCode=1,
        cancelled=True, truncated=True, excludeFromContext=True,
    ))
    assert '<span class="hl-gp">$ </span>' in html and "echo" in html
    assert "exit 1" in html and "nonzero" in html
    for flag in ("cancelled", "truncated", "excluded from context"):
        assert f'<span class="flag">{flag}</span>' in html


# --- other entry types --------------------------------------------------------------------------


def test_compaction():
    html = render_entry_body(entry({
        "type": "compaction", "id": "c", "parentId": "p", "summary": "## Goal\nship it",
        "firstKeptEntryId": "abc123", "tokensBefore": 1000, "tokensAfter": 200,
        "details": {"readFiles": ["r.py"], "modifiedFiles": ["m.py"]},
    }))
    assert "<h2>Goal</h2>" in html
    assert "1.0k → 200 tokens (after: estimated)" in html and "abc123" in html  # one format: tokens.py
    assert "<li><code>r.py</code></li>" in html and "<li><code>m.py</code></li>" in html


def test_branch_summary():
    html = render_entry_body(entry({
        "type": "branch_summary", "id": "b", "parentId": "p", "fromId": "leaf9",
        "summary": "*tried*",
        "details": {"modifiedFiles": ["x.ts"]},
    }))
    assert "<em>tried</em>" in html and "leaf9" in html and "<code>x.ts</code>" in html


@pytest.mark.parametrize(
    "raw, expected",
    [
        ({"type": "model_change", "provider": "anthropic", "modelId": "opus"}, "<dd>opus</dd>"),
        ({"type": "thinking_level_change", "thinkingLevel": "high"}, "<dd>high</dd>"),
        ({"type": "active_tools_change", "tools": ["read", "bash"]}, '"bash"'),
        ({"type": "session_info", "name": "my session"}, "<dd>my session</dd>"),
        ({"type": "label", "targetId": "t1", "label": ""}, "(cleared)"),
        ({"type": "leaf", "targetId": None}, "(none: empty conversation)"),
        ({"type": "custom", "customType": "e", "data": {"k": 1}}, '<span class="hl-nt">"k"</span>'),
    ],
)
def test_meta_entries_are_definition_lists(raw, expected):
    html = render_entry_body(entry({"id": "m", "parentId": "p", "timestamp": "t", **raw}))
    assert '<dl class="fields">' in html
    assert expected in html
    assert "<dt>parentId</dt>" not in html


def test_custom_message_is_markdown():
    raw = {"type": "custom_message", "customType": "note", "content": "# Hi", "display": True}
    html = render_entry_body(entry(raw))
    assert "<h1>Hi</h1>" in html


def test_unknown_type_is_shown_raw():
    html = render_entry_body(entry({"type": "mystery", "id": "u", "weird": [1, 2]}))
    assert "unknown entry type mystery, shown raw" in html
    assert '<span class="hl-nt">"weird"</span>' in html


# --- the payload, everywhere --------------------------------------------------------------------


def _thinking(text):
    return message(role="assistant", content=[{"type": "thinking", "thinking": text}])


PLACES = {
    "user text": lambda p: message(role="user", content=p),
    "user text block": lambda p: message(role="user", content=[{"type": "text", "text": p}]),
    "assistant text": lambda p: message(role="assistant", content=[{"type": "text", "text": p}]),
    "thinking": _thinking,
    "tool name": lambda p: call(p, {"x": 1}),
    "tool args": lambda p: call("grep", {"pattern": p}),
    "bash arg": lambda p: call("bash", {"command": p}),
    "edit args": lambda p: call("edit", {"path": p, "oldText": p, "newText": "x"}),
    "write path and content": lambda p: call("write", {"path": p, "content": p}),
    "read path": lambda p: call("read", {"path": p}),
    "tool result": lambda p: tool_result(p),
    "tool result name": lambda p: tool_result("ok", name=p),
    "bash command": lambda p: message(role="bashExecution", command=p, output=p, exitCode=p),
    "custom data": lambda p: entry({"type": "custom", "customType": p, "data": {"v": p}}),
    "label": lambda p: entry({"type": "label", "targetId": p, "label": p}),
    "compaction": lambda p: entry({
        "type": "compaction", "summary": p, "firstKeptEntryId": p, "tokensBefore": p,
        "details": {"readFiles": [p], "modifiedFiles": [p]},
    }),
    "custom message": lambda p: entry(
        {"type": "custom_message", "customType": p, "content": p, "details": p}
    ),
    "unknown type": lambda p: entry({"type": p, "field": p}),
    "unknown role": lambda p: message(role=p, content=p),
    "unknown block": lambda p: message(role="user", content=[{"type": p, "text": p}]),
}


@pytest.mark.parametrize("place", sorted(PLACES))
def test_payload_is_inert_everywhere(place):
    html = str(render_entry_body(PLACES[place](PAYLOAD)))
    assert_inert(html)
    assert "&lt;script&gt;" in html


def test_a_huge_tool_result_shows_its_start_and_says_what_is_left_out():
    text = "\n".join(f"line {i} " + "x" * 60 for i in range(50_000))  # about 3.4 MB
    html = str(render_entry_body(tool_result(text)))
    assert len(html) < 1_000_000
    assert "line 0 " in html and "line 49999 " not in html
    assert "more characters" in html and f"all {len(text):,}" in html
    assert "show all 50000 lines" in html


def test_huge_write_and_edit_calls_stay_small():
    big = "\n".join(f"x{i} = {i}" for i in range(300_000))  # about 3.5 MB
    for name, args in (("write", {"path": "a.py", "content": big}), ("edit", {"path": "a.py", "oldText": big, "newText": big + "\ny = 1"})):
        html = str(render_entry_body(call(name, args)))
        assert len(html) < 2_000_000
        assert "more characters" in html


def test_a_tool_result_of_many_megabytes_is_not_counted_line_by_line(monkeypatch):
    """Counting the lines left out of a 200 MB output took a tenth of a second per view, holding
    the server: past COUNTED_CHARS the note says the characters only."""
    from webapp.web import render

    monkeypatch.setattr(render, "COUNTED_CHARS", 1_000_000)
    text = "\n".join(f"line {i} " + "x" * 60 for i in range(50_000))  # about 3.4 MB
    html = str(render_entry_body(tool_result(text)))
    assert "line 0 " in html and "more characters are not shown here" in html and f"all {len(text):,}" in html
    assert "lines) are not shown" not in html and "show the first" in html


def test_every_token_colour_of_the_highlighting_reads_at_aa_on_the_code_blocks():
    from webapp.web.code_style import contrast
    from webapp.web.render import pygments_css

    def rgb(colour: str) -> tuple[int, int, int]:
        digits = colour.lstrip("#")
        digits = "".join(d * 2 for d in digits) if len(digits) == 3 else digits
        return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)

    # (the whitespace token's colour is never seen: it colours only spaces)
    colours = {c for rule in pygments_css().splitlines() if "hl-w " not in rule
               for c in re.findall(r"(?<![-\w])color: (#[0-9a-fA-F]{3,6})\b", rule)}
    assert len(colours) > 10  # (the rules were read: friendly has some thirty colours)
    for block in ("#f0f0f0", "#f9fafb"):  # Pygments' block and the pages' code background
        faint = sorted(c for c in colours if contrast(rgb(c), rgb(block)) < 4.5)
        assert faint == [], block


def test_a_long_text_is_rendered_once_and_what_is_held_stays_within_its_bound(monkeypatch):
    """markdown-it takes up to a second for 100,000 characters, and each panel, fragment, print
    and export of an entry renders it again: a long text's HTML is held, the least recently asked
    forgotten past the bound; a short one is rendered each time (it costs less than it holds)."""
    from webapp.web import render
    from webapp.web.held_html import HeldHtml

    held = HeldHtml(chars=100_000, shortest=2_000)  # (two of the texts below with their HTML)
    monkeypatch.setattr(render, "_markdown_html", held)
    rendered: list[str] = []
    real = render._MD.render
    monkeypatch.setattr(render, "_MD", type("Counting", (), {"render": staticmethod(
        lambda text: rendered.append(text) or real(text))})())
    long_a, long_b = "# A\n\n" + "*a* " * 3_000, "# B\n\n" + "*b* " * 3_000  # 12,005 characters each
    first = str(render_markdown(long_a))
    assert "<h1>A</h1>" in first and "<em>a</em>" in first
    assert str(render_markdown(long_a)) == first and rendered == [long_a]  # asked again: held
    render_markdown("short *one*"), render_markdown("short *one*")
    assert rendered.count("short *one*") == 2  # (not held)
    render_markdown(long_b)
    render_markdown(long_a)  # (asked last: b is now the least recently asked)
    render_markdown("# C\n\n" + "*c* " * 3_000)  # past 100,000 characters of text and HTML: b forgotten
    assert held.held <= 100_000 and ("markdown", long_a) in held.by_key and ("markdown", long_b) not in held.by_key
    assert rendered.count(long_a) == 1 and rendered.count(long_b) == 1
    render_markdown(long_b)
    assert rendered.count(long_b) == 2


@pytest.fixture
def new_response():
    """`render.start_response`, as a request calls it before it renders; the budgets it sets are
    taken back after the test (they would hold for every later test of this process)."""
    from webapp.web import lexers, render

    before = render._response_left.get(), lexers._spent.get()
    yield render.start_response
    render._response_left.set(before[0])
    lexers._spent.set(before[1])


def test_highlighted_code_is_held_but_never_what_a_spent_budget_showed_plain(monkeypatch, new_response):
    """Code highlighted whole is held by its text and lexer, and costs a later response's
    highlighting time nothing; code a response showed plain (its time spent, or an export's first
    screens) is not held as if highlighted, and a later response highlights it."""
    from webapp.web import lexers, render
    from webapp.web.held_html import HeldHtml

    monkeypatch.setattr(lexers, "_highlighted", HeldHtml(chars=1_000_000, shortest=200))
    lexed: list[int] = []
    real = lexers._pygmentize
    monkeypatch.setattr(lexers, "_pygmentize", lambda code, lexer, fmt: lexed.append(len(code)) or real(code, lexer, fmt))
    code = "def f(x):\n    return x + 1\n" * 20  # 560 characters
    py = lexers.for_path("a.py")
    with lexers.plain_code():
        shown_plain = "".join(render.highlight_lines(code, py))
    assert 'class="hl-k"' not in shown_plain and lexers._highlighted.by_key == {}
    new_response()
    first = "".join(render.highlight_lines(code, py))
    assert 'class="hl-k"' in first and len(lexed) == 2
    new_response()
    assert "".join(render.highlight_lines(code, py)) == first and len(lexed) == 2  # held
    assert "".join(render.highlight_lines(code, lexers.for_path("a.rb"))) != first and len(lexed) == 3  # (another lexer)
    with lexers.plain_code():  # an export's first screens stay plain, held or not
        assert "".join(render.highlight_lines(code, py)) == shown_plain


def test_a_long_markdown_text_whose_fences_were_shown_plain_is_not_held(monkeypatch, new_response):
    """A markdown text's fences are highlighted code: rendered where code is shown plain (an
    export's first screens, a response whose highlighting time is spent), its HTML is not held,
    and a text held with its fences highlighted is not served there."""
    from webapp.web import lexers, render
    from webapp.web.held_html import HeldHtml

    monkeypatch.setattr(render, "_markdown_html", HeldHtml(chars=1_000_000, shortest=2_000))
    monkeypatch.setattr(lexers, "_highlighted", HeldHtml(chars=1_000_000, shortest=200))
    text = "Some words.\n\n```python\ndef f():\n    return 1\n```\n\n" + "More prose. " * 200
    with lexers.plain_code():
        plain = str(render_markdown(text))
    assert 'class="hl-k"' not in plain and render._markdown_html.by_key == {}
    new_response()
    highlighted = str(render_markdown(text))
    assert 'class="hl-k"' in highlighted and len(render._markdown_html.by_key) == 1
    with lexers.plain_code():
        assert str(render_markdown(text)) == plain
