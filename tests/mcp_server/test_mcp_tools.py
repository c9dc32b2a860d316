"""The MCP tools' answers, asked by the SDK's own client of the server in-process: what each says,
the bounds of a long answer, errors as one-line tool errors, the corpus index used when there is
one, and the write tools offered only when writes are allowed."""

from __future__ import annotations

import re

import orjson

from tests.conftest import Builder
from tests.mcp_server.conftest import INVOICE, PIPELINE, REGRESSION, session_with, text_of, tool_names
from webapp.core.session import Session
from webapp.corpus.db import Index
from webapp.mcp.reading import MAX_ANSWER
from webapp.mcp.server import build_server
from webapp.mcp.sources import Sources

WRITE_TOOLS = {"label_entry", "give_branch_verdict"}
REPORT = "--home-ana-projects-report--"  # (a conversation of three files: a session and two forks)
READ_TOOLS = {"list_sessions", "search", "show_session", "read_branch", "get_context", "compare_branches",
              "corpus_figures"}


def test_reading_tools_only_unless_writes_are_allowed(samples):
    assert session_with(build_server(Sources.of_root(samples)), tool_names) == READ_TOOLS
    allowed = build_server(Sources.of_root(samples, allow_writes=True))
    assert session_with(allowed, tool_names) == READ_TOOLS | WRITE_TOOLS


def test_lists_and_searches_the_files_without_an_index(samples, tmp_path):
    sources = Sources.of_root(samples, db=tmp_path / "none.duckdb")

    async def talk(client):
        return (await text_of(client, "list_sessions"), await text_of(client, "list_sessions", query="invoice"),
                await text_of(client, "search", query="test_total_with_discount"),
                await text_of(client, "search", query="csv export"))

    listing, matching, hits, copied = session_with(build_server(sources), talk)
    assert "7 sessions" in listing and "(from the files: no corpus index" in listing
    assert "↳ fork of 2026-05-01T10-00-00-000Z_0196a1c0" in listing  # a conversation's files under its first
    assert INVOICE in listing and PIPELINE in listing
    assert "2 sessions matching 'invoice'" in matching and PIPELINE not in matching
    assert f"{INVOICE} [019cadd4-11fc-768e-9ae0-a30dfef64997] user" in hits
    assert "«test_total_with_discount»" in hits
    # an entry the report's two forks copied is one hit, as the index's search gives it
    asked = [line for line in copied.splitlines() if "[p0000002] user" in line]
    assert len(asked) == 1 and asked[0].startswith(f"{REPORT}/2026-05-01T10-00-00-000Z_0196a1c0")
    assert asked[0].endswith(f"[also in {REPORT}/2026-05-01T10-04-00-000Z_0196a1c4-0000-7000-8000-00000000000c.jsonl, "
                             f"{REPORT}/2026-05-01T10-08-00-000Z_0196a1c8-0000-7000-8000-00000000000e.jsonl]")


def test_lists_searches_and_counts_from_the_index_when_there_is_one(samples, tmp_path):
    db = tmp_path / "corpus.duckdb"
    index = Index(db)
    index.build([samples])
    index.close()
    sources = Sources.of_root(samples, db=db)

    async def talk(client):
        return (await text_of(client, "list_sessions"), await text_of(client, "search", query="rounding"),
                await text_of(client, "corpus_figures"), await text_of(client, "search", query="csv export"))

    listing, hits, figures, copied = session_with(build_server(sources), talk)
    assert "7 sessions, page 1 of 1 (from the corpus index)" in listing and INVOICE in listing
    assert "↳ fork of 2026-05-01T10-04-00-000Z_0196a1c4" in listing
    assert "(from the corpus index)" in hits and f"{INVOICE} [" in hits and "«rounding»" in hits
    # an entry the report's two forks copied is one hit, which names the forks that hold it too
    first = "--home-ana-projects-report--/2026-05-01T10-00-00-000Z_0196a1c0-0000-7000-8000-00000000000a.jsonl"
    asked = next(line for line in copied.splitlines() if line.startswith(f"{first} [p0000002] user"))
    assert asked.endswith("[also in --home-ana-projects-report--/2026-05-01T10-04-00-000Z_0196a1c4-0000-7000-8000-00000000000c"
                          ".jsonl, --home-ana-projects-report--/2026-05-01T10-08-00-000Z_0196a1c8-0000-7000-8000-"
                          "00000000000e.jsonl]")
    assert sum("[p0000002]" in line for line in copied.splitlines()) == 1
    assert figures.startswith("7 sessions, 3,174 entries, cost $")
    assert "by model (cost, input, output tokens, replies):\n  claude-sonnet-4-5:" in figures
    assert "recorded by the sessions, $" in figures and "computed from litellm" in figures  # (said as the page says)
    # A session added since is found: the index is brought up to date before it is read.
    b = Builder(cwd="/home/ana/new")
    b.user("a brand new question about zebras")
    b.write(samples / "new.jsonl")
    again = session_with(build_server(sources), lambda c: text_of(c, "search", query="zebras"))
    assert "new.jsonl [e1] user" in again


def test_figures_without_an_index_say_how_to_make_one(samples, tmp_path):
    sources = Sources.of_root(samples, db=tmp_path / "none.duckdb")
    said = session_with(build_server(sources), lambda c: text_of(c, "corpus_figures"))
    assert said.startswith("the corpus figures are read from the corpus index, and there is none")
    assert "session-tree index ROOT" in said


def test_show_read_and_context_of_a_session(samples):
    async def talk(client):
        return (await text_of(client, "show_session", session=INVOICE),
                await text_of(client, "read_branch", session=INVOICE, leaf="019cadda-3858"),
                await text_of(client, "get_context", session=INVOICE, leaf="019cadda-3858"),
                await text_of(client, "get_context", session=INVOICE, request=True))

    shown, branch, context, request = session_with(build_server(Sources.of_root(samples)), talk)
    assert f"4 branches (tip id, name):\n  019cadda-3858-7e6e-899b-3953f3074e43  {REGRESSION}" in shown
    assert "label 019cadd5-4547-793f-ae6d-00b2e72993a4: good approach" in shown
    tree = Session.open(samples / INVOICE).tree
    path = tree.path("019cadda-3858-7e6e-899b-3953f3074e43")
    assert branch.startswith(f"branch of {INVOICE} to 019cadda-3858-7e6e-899b-3953f3074e43: {len(path)} entries")
    assert [f"[{e.id}]" for e in path] == re.findall(r"^\[[0-9a-f-]+\]", branch, re.M)
    assert "[019cadd8-4837-7519-91dd-8f2ebab8091e] user:\nRun the tests and fix whatever fails in" in branch
    assert "] toolResult of bash [call toolu_01d7KWuC9PtUR6nNawVDYG6T] (error):\n.F......" in branch
    assert context.startswith("leaf 019cadda-3858-7e6e-899b-3953f3074e43  model ")
    assert "--- user [019cadd8-4837-7519-91dd-8f2ebab8091e]\nRun the tests and fix whatever fails in" in context
    assert request.startswith(f"leaf {tree.active_leaf}  model ") and " messages (" in request.splitlines()[0]


def test_a_long_branch_is_cut_with_a_note_and_read_on_from_where_it_stopped(tmp_path):
    b = Builder()
    for i in range(3000):
        b.user(f"question {i} " + "x" * 200)
    b.write(tmp_path / "long.jsonl")
    sources = Sources.of_root(tmp_path)

    async def talk(client):
        first = await text_of(client, "read_branch", session="long.jsonl")
        start = int(re.search(r"call read_branch with start=(\d+)\]$", first).group(1))
        second = await text_of(client, "read_branch", session="long.jsonl", start=start)
        return first, start, second

    first, start, second = session_with(build_server(sources), talk)
    assert len(first) <= MAX_ANSWER + 200 and len(second) <= MAX_ANSWER + 200
    assert f"[cut: entries 1–{start:,} of 3,000 shown" in first
    assert f"[e{start}] user:\nquestion {start - 1} " in first and f"[e{start + 1}]" not in first
    assert second.splitlines()[1] == f"[e{start + 1}] user:"


def test_errors_are_one_line_tool_errors(samples):
    asked = [("read_branch", {"session": "nope.jsonl"}, "no session 'nope.jsonl'"),
             ("read_branch", {"session": "../sessions/x.jsonl"}, "no session '../sessions/x.jsonl'"),
             ("get_context", {"session": INVOICE, "leaf": "zzzz9999"}, "zzzz9999"),
             ("compare_branches", {"session": INVOICE, "a": "019c", "b": "019cadda-3858"},
              "'019c' could be 101 entries")]

    async def talk(client):
        return [await client.call_tool(tool, args) for tool, args, _ in asked]

    for result, (tool, _, said) in zip(session_with(build_server(Sources.of_root(samples)), talk), asked):
        text = result.content[0].text
        assert result.is_error and "\n" not in text and "Traceback" not in text, text
        assert text.startswith(f"Error executing tool {tool}: ") and said in text, text


def test_writes_append_a_label_and_a_verdict_to_the_session(samples):
    before = (samples / INVOICE).read_bytes()

    async def talk(client):
        return (await text_of(client, "label_entry", session=INVOICE, entry="019cadeb-7687", label="all currencies"),
                await text_of(client, "give_branch_verdict", session=INVOICE, leaf="019cadeb-7687",
                              verdict="winner", note="handles every currency"))

    labelled, judged = session_with(build_server(Sources.of_root(samples, allow_writes=True)), talk)
    after = (samples / INVOICE).read_bytes()
    assert after.startswith(before)
    added = [orjson.loads(line) for line in after[len(before):].splitlines()]
    assert [(e["type"], e.get("label"), e.get("targetId")) for e in added[:1]] == [
        ("label", "all currencies", "019cadeb-7687-7768-9902-114ae4cc7698")]
    assert added[1]["customType"] == "session-tree.verdict"
    assert added[1]["data"] == {"targetId": "019cadeb-7687-7768-9902-114ae4cc7698", "verdict": "winner",
                                "note": "handles every currency", "by": "person"}
    assert labelled.startswith("label 'all currencies' set on 019cadeb-7687-7768-9902-114ae4cc7698")
    assert judged == "winner on 019cadeb-7687-7768-9902-114ae4cc7698: appended to the session"


def test_compare_two_branches(samples):
    a, b = "019cadda-3858-7e6e-899b-3953f3074e43", "019cadeb-7687-7768-9902-114ae4cc7698"
    said = session_with(build_server(Sources.of_root(samples)),
                        lambda c: text_of(c, "compare_branches", session=INVOICE, a=a[:13], b=b[:13]))
    lines = said.splitlines()
    assert lines[0].startswith(f"A = {a}, B = {b}: they share ")
    assert lines[1].startswith(f"A ({REGRESSION}): ")
    assert "figures (A after the divergence / on its whole path | B likewise):" in lines
    assert any(line.startswith("  turns: ") and " | " in line for line in lines)
    diff = lines[lines.index(next(x for x in lines if x.startswith("their contexts compared"))) + 1:]
    assert diff[0].startswith(f"A {a[-8:]}  ") and diff[1].startswith(f"B {b[-8:]}  ")
    assert diff[3:] and all(line[0] in "-+~" for line in diff[3:] if not line.startswith(("model:", "thinking")))


def test_every_reading_tool_on_every_hostile_file_answers_text_or_a_one_line_error(tmp_path):
    """The hostile files of tests/test_hostile_files.py (damaged lines, wrong types, a 2 MB message,
    loops, control characters), each read by every reading tool: an answer, or a one-line tool
    error, never a traceback and never an answer past the bound."""
    from tests.test_hostile_files import FILES

    for name, data in FILES.items():
        (tmp_path / f"{name}.jsonl").write_bytes(data)

    async def talk(client):
        got = [await client.call_tool("list_sessions", {}), await client.call_tool("search", {"query": "x"})]
        for name in sorted(FILES):
            session = f"{name}.jsonl"
            for tool, args in (("show_session", {}), ("read_branch", {}), ("get_context", {}),
                               ("get_context", {"request": True})):
                got.append(await client.call_tool(tool, {"session": session, **args}))
        return got

    answers = session_with(build_server(Sources.of_root(tmp_path)), talk)
    assert len(answers) == 2 + 4 * len(FILES)
    assert sum(r.is_error for r in answers) < len(answers) / 4  # (each file is read: damage is said, not refused)
    for result in answers:
        text = result.content[0].text
        assert "Traceback" not in text and len(text) <= MAX_ANSWER + 200, text[:300]
        if result.is_error:
            assert "\n" not in text, text
