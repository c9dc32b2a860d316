"""The drawing stays bounded whatever the file: a node cap, a time limit on `dot`, one run per
drawing, clean dot source from hostile text, and selection that never lays out again."""

from __future__ import annotations

import os
import re
import threading
import time
from html import unescape
from pathlib import Path

import orjson
import pytest

from tests.conftest import Builder
import samplegen
from webapp.core.reader import parse_bytes
from webapp.core.session import Session
from webapp.core.tree import SessionTree
from webapp.web import graph, sessions
from webapp.web.graph import dot as graph_dot
from webapp.web.app import create_app

PROJECT = "--home-ana-proj--"


def write(root, name: str, lines: list[bytes]) -> str:
    folder = root / PROJECT
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(b"\n".join(lines) + b"\n")
    return f"{PROJECT}/{name}"


@pytest.fixture
def root(tmp_path):
    return tmp_path / "sessions"


@pytest.fixture
def dot_sources(monkeypatch):
    """Every dot source the app runs, and how many runs there were."""
    seen: list[str] = []
    real = graph_dot.run_dot

    def counting(source, timeout=None):
        seen.append(source)
        return real(source, timeout)

    monkeypatch.setattr(graph_dot, "run_dot", counting)
    return seen


def node_count(source: str) -> int:
    return len(re.findall(r"^\s*\S+ \[.*\bid=", source, re.M))


def many_branches(root, branches: int, trunk: int = 400) -> str:
    header, entries = samplegen.many_branches_session(branches, trunk=trunk)
    return write(root, "2026-01-01T00-00-00-000Z_wide.jsonl", [orjson.dumps(x) for x in (header, *entries)])


def test_dot_never_gets_more_than_the_cap_on_a_5000_branch_session(root, dot_sources):
    rel = many_branches(root, 5_000)
    client = create_app(root).test_client()
    r = client.get(f"/s/{rel}")
    assert r.status_code == 200
    html = unescape(r.get_data(as_text=True))
    assert len(dot_sources) == 1
    assert 0 < node_count(dot_sources[0]) <= graph.MAX_DRAWN
    assert "more branches here" in html
    # Drawing every entry is asked for: still at most the cap.
    assert client.get(f"/s/{rel}?collapse=off").status_code == 200
    assert all(node_count(s) <= graph.MAX_DRAWN for s in dot_sources)


def test_a_more_branches_node_opens_the_branches_it_stands_for(root):
    rel = many_branches(root, 3_000)
    client = create_app(root).test_client()
    html = unescape(client.get(f"/s/{rel}?collapse=auto").get_data(as_text=True))  # by turns
    link = re.search(r'<a xlink:href="(\?node=[^"]*&open=[^"]*)"', html).group(1)
    opened = link.split("open=")[1].split("&")[0].replace("%2C", ",").split(",")
    page = client.get(f"/s/{rel}/-/graph{link}&collapse=auto", headers={"HX-Request": "true"})
    after = unescape(page.get_data(as_text=True))
    state = re.search(r'name="expand" value="([^"]*)"', after).group(1)
    assert set(opened) <= set(state.split(","))  # kept in the state (and so in every link and the URL)
    tree = client.application.extensions["session_store"].session(rel).tree
    fork = opened[0]
    drawn_children = [k for k in tree.conversation_children(fork) if f'id="e-{k}"' in after]
    assert len(drawn_children) >= 2  # branches from that fork point are drawn now


def slow_dot(tmp_path, monkeypatch) -> None:
    """A `dot` on PATH that never finishes, and a one-second limit."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "dot"
    fake.write_text(f"#!/bin/sh\necho $$ > {tmp_path}/dot.pid\nexec sleep 60\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(graph_dot, "DOT_TIMEOUT", 1.0)


def small_session(root) -> str:
    b = Builder()
    b.user("first question")
    b.assistant("first answer")
    return write(root, "2026-01-01T00-00-00-000Z_small.jsonl", b.lines)


def test_a_dot_past_its_time_limit_gives_the_fallback_page_and_is_killed(root, tmp_path, monkeypatch):
    rel = small_session(root)
    slow_dot(tmp_path, monkeypatch)
    t = time.monotonic()
    r = create_app(root).test_client().get(f"/s/{rel}")
    assert time.monotonic() - t < 30  # the fake dot sleeps 60 s: it was killed at its 1 s limit, not waited for
    assert r.status_code == 200
    html = r.get_data(as_text=True)
    assert "took too long" in html
    assert "first question" in html  # the panel is there: the page still works
    pid = int((tmp_path / "dot.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the slow dot is gone, not left running: killed and waited for before the answer


def test_concurrent_cold_requests_start_one_dot(root, monkeypatch):
    rel = small_session(root)
    runs = []
    real = graph_dot.run_dot

    def slow(source, timeout=None):
        runs.append(1)
        time.sleep(0.5)
        return real(source, timeout)

    monkeypatch.setattr(graph_dot, "run_dot", slow)
    app = create_app(root)
    statuses = []

    def get():
        statuses.append(app.test_client().get(f"/s/{rel}").status_code)

    threads = [threading.Thread(target=get) for _ in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert statuses == [200] * 6
    assert len(runs) == 1


def test_junk_expand_values_never_reach_the_cache_key(root, monkeypatch):
    rel = small_session(root)
    built = []
    real = sessions.build_layout
    monkeypatch.setattr(sessions, "build_layout", lambda *a, **k: built.append(a) or real(*a, **k))
    client = create_app(root).test_client()
    for junk in ("zzz", "a,b,c", "x" * 5000, "e1,nope"):
        assert client.get(f"/s/{rel}?expand={junk}").status_code == 200
    assert len(built) == 2  # no expand, and the one known entry id "e1"


def test_selecting_a_drawn_node_costs_no_layout_and_no_dot(root, monkeypatch, dot_sources):
    rel = small_session(root)
    built = []
    real = sessions.build_layout
    monkeypatch.setattr(sessions, "build_layout", lambda *a, **k: built.append(a) or real(*a, **k))
    client = create_app(root).test_client()
    assert client.get(f"/s/{rel}").status_code == 200
    for node in ("e1", "e2", "e1"):
        r = client.get(f"/s/{rel}/-/panel/node?node={node}", headers={"HX-Request": "true"})
        assert r.status_code == 200
        assert client.get(f"/s/{rel}?node={node}").status_code == 200
    assert len(built) == 1
    assert len(dot_sources) == 1


HOSTILE = [
    {"type": "message", "message": {"role": "user", "content": "a\u0000b\u0007c\u001bd"}},
    {"type": "x\\"},
    {"type": "t" * 20_000},
    {"type": "message", "message": {"role": "r" * 20_000, "content": "long role"}},
    {"type": "message", "message": {"role": 5, "content": "role is a number"}},
    {"type": "message", "message": {"role": "user", "content": "ends in a backslash \\"}},
]


@pytest.mark.parametrize("entry", HOSTILE, ids=["nul", "type-backslash", "long-type", "long-role", "role-number", "text-backslash"])
def test_hostile_text_is_cleaned_before_it_reaches_dot(root, entry, dot_sources):
    b = Builder()
    b.user("before")
    fields = {k: v for k, v in entry.items() if k != "type"}
    b.add(entry["type"], **fields)
    b.add("message", id="i" * 20_000, message={"role": "user", "content": "a very long id"})
    rel = write(root, "2026-01-01T00-00-00-000Z_hostile.jsonl", b.lines)
    r = create_app(root).test_client().get(f"/s/{rel}")
    assert r.status_code == 200
    assert "<svg" in r.get_data(as_text=True)
    source = dot_sources[0]
    assert "\x00" not in source and "\x07" not in source and "\x1b" not in source
    assert max(len(line) for line in source.splitlines()) < 2_000


def test_dot_text_is_the_one_cleaner():
    assert graph.dot_text("a\x00b\tc\nd") == "a b c d"
    assert graph.dot_text("x\\") == "x\\\\"
    assert len(graph.dot_text("y" * 100_000)) == graph.LABEL_WIDTH
    assert graph.dot_text(5) == "5"
    assert graph.css_token("a b<c>\"d") == "a-b-c--d"


SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"


def test_the_overview_folds_by_turns_and_never_hides_what_the_user_said():
    path = next(SAMPLES.rglob("*019c6579-1ae3-78f7-9da1-494c73cf256d.jsonl"))  # 3,000 entries
    tree = Session.open(path).tree
    layout = graph.build_layout(tree)
    assert layout.collapsed and layout.segments
    drawn = {e.id for e in layout.nodes}
    users = [e.id for e in tree.entries if e.role == "user"]
    assert users and all(u in drawn for u in users)
    work = [s for s in layout.segments if not s.user_turns()]
    assert work and all(s.entries[0].role in ("assistant", "toolResult") or s.entries[0].type != "message" for s in work)
    source = graph.to_dot(tree, layout, lambda i: "?node=" + i).source
    assert "⚙ assistant ·" in source and re.search(r"(bash|read|edit|write)( ×\d+)?", source)


def test_a_path_too_long_to_draw_turn_by_turn_folds_chains_of_turns_under_the_cap(tmp_path):
    header, entries = samplegen.synthetic_session(12_000, seed=12, deep=True)
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(x) for x in (header, *entries)) + b"\n")
    tree = Session.open(path).tree
    layout = graph.build_layout(tree)
    assert layout.size() <= graph.MAX_DRAWN
    assert [s for s in layout.segments if s.user_turns() > 1]
    source = graph.to_dot(tree, layout, lambda i: "?node=" + i).source
    assert re.search(r"⋯ \d+ turns · \d+ entries · [\d.]+k? tokens ⋯", source)


def with_sub_agents(root) -> Path:
    """The Claude Code fixture with five sub-agents, copied under `root`: its path there."""
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "claude-code" / "d-kimuson_fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
    folder = root / PROJECT
    folder.mkdir(parents=True)
    (folder / fixture.name).write_bytes(fixture.read_bytes())
    return fixture


def test_claude_code_sub_agents_are_drawn_boxed_off_the_main_path(root):
    fixture = with_sub_agents(root)
    r = create_app(root).test_client().get(f"/s/{PROJECT}/{fixture.name}")
    assert r.status_code == 200
    html = unescape(r.get_data(as_text=True))
    svg = html[html.index("<svg"):html.index("</svg>")]
    clusters = re.findall(r'<g id="clust\d+" class="cluster">(.*?)</g>', svg, re.S)
    assert clusters and all("sub-agent" in c for c in clusters)
    tree = Session.open(fixture).tree
    main_path = [e for e in tree.path(tree.active_leaf) if not e.sidechain]
    # The main path is outside every box; sub-agent entries are inside one.
    layout = graph.build_layout(tree)
    boxed = graph_dot._subagent_clusters(tree, layout)
    assert all(layout.dom_for(e.id) not in boxed for e in main_path)
    assert any(e.sidechain for e in tree.entries) and boxed


def test_sub_agent_runs_are_not_counted_as_branches_on_the_page(root):
    fixture = with_sub_agents(root)
    client = create_app(root).test_client()
    page = client.get(f"/s/{PROJECT}/{fixture.name}").get_data(as_text=True)
    stats = re.findall(r'<span class="stat">([^<]*)</span>', page)
    assert "1 branch" in stats  # not the five sub-agent runs' ends as well
    branches = client.get(f"/s/{PROJECT}/{fixture.name}?tab=branches").get_data(as_text=True)
    assert re.search(r"<h3>1 branch\s", branches)


def test_a_one_branch_export_of_a_session_with_sub_agents_says_their_work_is_left_out(root):
    fixture = with_sub_agents(root)
    tree = Session.open(fixture).tree
    html = unescape(create_app(root).test_client().get(f"/s/{PROJECT}/{fixture.name}/export?reviewed=1&leaf={tree.active_leaf}").text)
    svg = html[html.index("<svg"):html.index("</svg>")]
    more = re.findall(r'<g id="more-[^"]*" class="node segment more">(.*?)</g>', svg, re.S)
    assert more and all(re.search(r"⊞ \d+ more entries here", m) for m in more)
    assert all("sub-agent work is left out here: this file holds one branch" in m for m in more)
    assert "more branch" not in svg and "click to draw" not in svg


def test_a_path_with_more_kept_entries_than_the_cap_folds_them_and_stays_under_it():
    """Branch summaries, compactions and labelled entries never fold in a drawing that has room;
    a path that carries more of them than a drawing holds folds them too (all but the active
    leaf and what the user asked to see), so that the cap holds."""
    b = Builder()
    b.user("start")
    kept = []
    for i in range(150):
        asked = b.user(f"question {i}")
        b.add("label", targetId=asked, label=f"q{i}")
        answer = b.assistant(f"answer {i}")
        kept += [asked, b.add("branch_summary", parent=answer, fromId=answer, summary=f"went back {i}")]
    leaf = b.assistant("last answer")
    tree = SessionTree(parse_bytes(b.data()))
    assert len(tree.labels) == 150 and tree.active_leaf == leaf and not tree.branch_points()
    roomy = graph.build_layout(tree, cap=1000)
    assert all(roomy.member(x) is None for x in kept)  # drawn as themselves when there is room
    tight = graph.build_layout(tree, cap=100)
    assert tight.size() <= 100 and tight.capped
    assert tight.member(leaf) is None  # the active leaf stays drawn
    assert sum(tight.member(x) is not None for x in kept) > 250  # nearly all the rest folded
    source = graph.to_dot(tree, tight, lambda i: "?node=" + i).source
    assert node_count(source) <= 100
