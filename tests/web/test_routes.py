"""The browsing routes through the real app: pages, fragments, deep links and safety."""

from __future__ import annotations

import os
import re
from html import unescape

import orjson
import pytest

from webapp.core.session import Session, create_session
from webapp.web.app import create_app
from webapp.web.graph import dom_id

XSS = '<script>alert("xss")</script> and <img src=x onerror="alert(1)">'


def user(text):
    return {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def assistant(text, calls=()):
    content = [{"type": "text", "text": text}] + [
        {"type": "toolCall", "id": f"call-{i}", "name": name, "arguments": args} for i, (name, args) in enumerate(calls)
    ]
    return {
        "type": "message",
        "message": {"role": "assistant", "content": content, "provider": "openai", "model": "gpt-4o-mini",
                    "usage": {"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 120,
                              "cost": {"total": 0.002}}, "stopReason": "toolUse" if calls else "stop"},
    }


@pytest.fixture
def root(tmp_path):
    """A sessions root with one branching session (with an XSS payload) and one damaged file."""
    root = tmp_path / "sessions"
    path = create_session(root, "/home/ana/proj")
    s = Session.open(path)
    s.append({"type": "session_info", "name": "Branching demo"})
    first = s.append(user("Fix the failing test"))
    a1 = s.append(assistant("Reading it.", [("read", {"path": "tests/test_x.py"})]))
    s.append({"type": "message", "message": {"role": "toolResult", "toolCallId": "call-0", "toolName": "read",
                                             "content": [{"type": "text", "text": "def test_x(): assert 1 == 2"}],
                                             "isError": False}})
    s.append(assistant("The test asserts 1 == 2."))
    s.append(user(XSS))
    s.append(assistant("Those are shown as text."))
    s.fork(first["id"], "before")
    s.append(user("Fix the failing test, and explain why"))
    s.set_label(a1["id"], "good approach")
    damaged = root / "--home-ana-proj--" / "2026-01-01T00-00-00-000Z_damaged.jsonl"
    header = {"type": "session", "version": 3, "id": "damaged", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/home/ana/proj"}
    lines = [orjson.dumps(header), orjson.dumps({"type": "message", "id": "m1", "parentId": None,
             "timestamp": "2026-01-01T00:00:01.000Z", "message": {"role": "user", "content": "hello"}}),
             b'{"type": "message", "id": "broken", ', orjson.dumps({"type": "message", "id": "o1", "parentId": "ghost",
             "timestamp": "2026-01-01T00:00:02.000Z", "message": {"role": "user", "content": "orphan here"}})]
    damaged.write_bytes(b"\n".join(lines) + b"\n")
    return root


@pytest.fixture
def client(root):
    return create_app(root).test_client()


def rel_of(root, name_part):
    for dirpath, _, files in os.walk(root):
        for f in files:
            if name_part in f:
                return os.path.relpath(os.path.join(dirpath, f), root)
    raise AssertionError(name_part)


def session_rel(root):
    """The branching session's path relative to the root."""
    return next(
        os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs if "damaged" not in f
    )


def test_index_lists_sessions_grouped_by_cwd(client):
    r = client.get("/")
    assert r.status_code == 200
    html = r.get_data(as_text=True)
    assert "/home/ana/proj" in html
    assert "Branching demo" in html
    assert "2 problems" in html  # the damaged file: a bad line and an orphan


def test_index_filter_returns_only_the_list_fragment_for_htmx(client):
    r = client.get("/?q=branching", headers={"HX-Request": "true"})
    html = r.get_data(as_text=True)
    assert "<html" not in html
    assert "Branching demo" in html and "1 session matching" in html
    r = client.get("/?q=nothing-matches-this", headers={"HX-Request": "true"})
    assert "No session matches" in r.get_data(as_text=True)


def test_session_page_draws_every_node_as_a_clickable_svg_link(client, root):
    rel = session_rel(root)
    r = client.get(f"/s/{rel}")
    assert r.status_code == 200
    html = unescape(r.get_data(as_text=True))  # dot writes "-" in ids as &#45;
    tree = Session.open(root / rel).tree
    assert "<svg" in html
    for e in tree.entries:
        if e.type not in ("leaf", "label"):
            assert f'id="{dom_id(e.id)}"' in html
            assert f"node={e.id}" in html


def test_deep_link_selects_a_node_and_fragment_pushes_its_url(client, root):
    rel = session_rel(root)
    tree = Session.open(root / rel).tree
    target = next(e for e in tree.entries if e.role == "toolResult")
    page = client.get(f"/s/{rel}?node={target.id}").get_data(as_text=True)
    assert f'data-entry="{target.id}"' in page
    assert "assert 1 == 2" in page
    r = client.get(f"/s/{rel}/-/panel/node?node={target.id}", headers={"HX-Request": "true"})
    assert r.status_code == 200
    assert "<html" not in r.get_data(as_text=True)
    assert r.headers["HX-Push-Url"] == f"/s/{rel}?node={target.id}"


def test_the_node_panel_titles_a_tool_result_with_its_tools_name(client, root):
    rel = session_rel(root)
    target = next(e for e in Session.open(root / rel).tree.entries if e.role == "toolResult")
    tool = target.message["toolName"]
    html = client.get(f"/s/{rel}/-/panel/node?node={target.id}", headers={"HX-Request": "true"}).get_data(as_text=True)
    badge = re.search(r'<header class="entry-head">\s*<span class="kind k-toolResult">([^<]*)</span>', html)
    assert badge and badge.group(1) == f"tool result of {tool}"  # (the page capitalises its first letter only)


def test_fragment_without_htmx_redirects_to_the_full_page(client, root):
    rel = session_rel(root)
    r = client.get(f"/s/{rel}/-/panel/context?node=x")
    assert r.status_code == 302
    assert "tab=context" in r.headers["Location"]


def test_unknown_node_and_unknown_session_are_404(client, root):
    rel = session_rel(root)
    assert client.get(f"/s/{rel}?node=nope").status_code == 404
    assert client.get("/s/--nowhere--/missing.jsonl").status_code == 404
    assert client.get(f"/s/{rel}/-/panel/bogus", headers={"HX-Request": "true"}).status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "/s/../../etc/passwd",
        "/s/..%2f..%2fetc%2fpasswd",
        "/s/%2e%2e/%2e%2e/etc/passwd.jsonl",
        "/s//etc/passwd.jsonl",
        "/s/%2Fetc%2Fpasswd.jsonl",
        "/s/..\\..\\secret.jsonl",
        "/s/outside.jsonl",
    ],
)
def test_no_url_reads_outside_the_root(client, root, path):
    (root.parent / "outside.jsonl").write_text('{"type":"session","version":3,"id":"top-secret-id"}\n')
    r = client.get(path)
    assert r.status_code in (404, 308)
    assert b"top-secret-id" not in r.data


def test_symlink_out_of_the_root_is_refused(client, root, tmp_path):
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"type":"session","version":3,"id":"secret-id"}\n')
    (root / "link.jsonl").symlink_to(secret)
    assert client.get("/s/link.jsonl").status_code == 404
    assert b"secret-id" not in client.get("/").data


def test_foreign_host_is_rejected(client):
    assert client.get("/", headers={"Host": "evil.example:8000"}).status_code == 400
    assert client.get("/", headers={"Host": "127.0.0.1:8000"}).status_code == 200


def test_session_content_is_escaped_everywhere(client, root):
    rel = session_rel(root)
    tree = Session.open(root / rel).tree
    xss = next(e for e in tree.entries if e.role == "user" and "script" in str(e.raw))
    for url in (f"/s/{rel}", f"/s/{rel}?node={xss.id}", f"/s/{rel}?node={xss.id}&tab=context", f"/s/{rel}?tab=branches"):
        html = client.get(url).get_data(as_text=True)
        assert "<script>alert" not in html
        assert not re.search(r"<img[^>]*onerror", html)
    page = client.get(f"/s/{rel}?node={xss.id}").get_data(as_text=True)
    assert "&lt;script&gt;" in page
    csp = client.get(f"/s/{rel}").headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp


def test_problems_tab_lists_bad_lines_and_orphans_with_line_numbers(client, root):
    rel = rel_of(root, "damaged")
    html = client.get(f"/s/{rel}?tab=problems").get_data(as_text=True)
    assert "line 3" in html and "invalid JSON" in html
    assert '{"type": "message", "id": "broken", ' in html.replace("&#34;", '"')
    assert "orphan" in html and "ghost" in html


def test_context_tab_lists_the_messages_with_links_to_their_nodes(client, root):
    rel = session_rel(root)
    tree = Session.open(root / rel).tree
    html = client.get(f"/s/{rel}?tab=context").get_data(as_text=True)
    leaf_path = tree.path(tree.active_leaf)
    for e in leaf_path:
        if e.role == "user":
            assert f'data-select="{e.id}"' in html
    overlay = re.search(r'<script type="application/json" id="overlay">(.*?)</script>', html, re.S).group(1)
    data = orjson.loads(overlay)
    # The active leaf is the label entry (labels move the leaf); it is drawn as its message.
    shown = tree.conversation_leaf(tree.active_leaf)
    assert tree.by_id[shown].role == "user"
    assert data["context"]["nodes"][dom_id(shown)]["state"] == "in-context"


def test_branches_and_summaries_tabs(client, root):
    rel = session_rel(root)
    html = client.get(f"/s/{rel}?tab=branches").get_data(as_text=True)
    assert "2 branches" in html
    assert "Fix the failing test, and explain why" in html
    assert "good approach" in html
    html = client.get(f"/s/{rel}?tab=summaries").get_data(as_text=True)
    assert "No compaction or branch summary" in html


def test_a_file_appended_by_another_process_shows_on_the_next_request(client, root):
    rel = session_rel(root)
    assert "appended elsewhere" not in client.get(f"/s/{rel}").get_data(as_text=True)
    Session.open(root / rel).append(user("appended elsewhere"))
    html = client.get(f"/s/{rel}").get_data(as_text=True)
    assert "appended elsewhere" in html


def test_graph_fragment_expands_a_folded_segment(root):
    rel = session_rel(root)
    s = Session.open(root / rel)
    for i in range(30):
        s.append(user(f"step {i}"))
    client = create_app(root).test_client()
    folded = unescape(client.get(f"/s/{rel}?collapse=on").get_data(as_text=True))
    assert 'class="node segment' in folded
    seg = re.search(r'id="(seg-[^"]+)"', folded).group(1)
    first = seg[len("seg-e-"):]
    r = client.get(f"/s/{rel}/-/graph?collapse=on&expand={first}", headers={"HX-Request": "true"})
    expanded = unescape(r.get_data(as_text=True))
    assert f'id="{seg}"' not in expanded
    assert "step 15" in expanded


def test_a_message_that_looks_like_a_dot_html_label_is_drawn_as_text(root):
    rel = session_rel(root)
    Session.open(root / rel).append(user("<b>hi</b>"))
    r = create_app(root).test_client().get(f"/s/{rel}")
    assert r.status_code == 200
    assert "&lt;b&gt;hi&lt;/b&gt;" in r.get_data(as_text=True)


def test_the_host_check_compares_names_on_any_port(root):
    client = create_app(root).test_client()  # as `flask --app webapp run --port 8777` builds it
    assert client.get("/", headers={"Host": "127.0.0.1:8777"}).status_code == 200
    assert client.get("/", headers={"Host": "localhost:8777"}).status_code == 200
    assert client.get("/", headers={"Host": "[::1]:8777"}).status_code == 200
    assert client.get("/", headers={"Host": "127.0.0.1.evil.example:8777"}).status_code == 400
    everywhere = create_app(root, host="0.0.0.0").test_client()  # binding all interfaces opens no name
    assert everywhere.get("/", headers={"Host": "rebound.example:8000"}).status_code == 400
    named = create_app(root, host="0.0.0.0", allow_hosts=("lan-box",)).test_client()
    assert named.get("/", headers={"Host": "lan-box:8000"}).status_code == 200


def test_fields_of_the_wrong_type_do_not_break_any_page(tmp_path):
    root = tmp_path / "odd"
    root.mkdir()
    lines = [
        {"type": "session", "version": 3, "id": 12345, "timestamp": 99, "cwd": ["x"]},
        {"type": "model_change", "id": "a", "parentId": None, "timestamp": "2026-01-01T00:00:00Z", "provider": ["p"], "modelId": 7},
        {"type": "message", "id": "b", "parentId": "a", "timestamp": "2026-01-01T00:00:01Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}], "usage": {"cost": {"total": "lots"}}}},
        {"type": "branch_summary", "id": "c", "parentId": "b", "timestamp": "2026-01-01T00:00:02Z", "fromId": [1], "summary": "s"},
    ]
    (root / "odd.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    (root / "empty.jsonl").write_bytes(b"")
    client = create_app(root).test_client()
    assert client.get("/").status_code == 200
    for name in ("odd", "empty"):
        for query in ("", "?tab=context", "?tab=branches", "?tab=summaries", "?tab=problems", "?tab=compact"):
            assert client.get(f"/s/{name}.jsonl{query}").status_code == 200, (name, query)
    assert client.get("/s/odd.jsonl?node=b").status_code == 200


def test_raw_json_is_a_fragment_for_htmx_and_a_page_otherwise(client, root):
    rel = session_rel(root)
    tree = Session.open(root / rel).tree
    entry = tree.entries[-1]
    fragment = client.get(f"/s/{rel}/-/raw?id={entry.id}", headers={"HX-Request": "true"}).get_data(as_text=True)
    page = client.get(f"/s/{rel}/-/raw?id={entry.id}").get_data(as_text=True)
    assert "<html" not in fragment and entry.id in fragment
    assert "<html" in page and f"line {entry.line}" in page
    assert client.get(f"/s/{rel}/-/raw?id=nope").status_code == 404


def test_stats_bar_counts_in_words_that_agree_with_the_number(client, root):
    def stats(rel):
        html = client.get(f"/s/{rel}").get_data(as_text=True)
        return re.sub(r"<[^>]+>|\s+", " ", html[html.index('id="stats"'):html.index('id="stats"') + 3000])

    assert "2 branches" in stats(session_rel(root)) and "0 compactions" in stats(session_rel(root))
    path = create_session(root, "/home/ana/one")
    Session.open(path).append(user("Only this"))
    line = stats(os.path.relpath(path, root))
    assert " 1 entry " in line and " 1 branch " in line and "1 branches" not in line
