"""One conversation across files (SPEC §5e), for every shape of shared/formats/conversations.md
(tests/fixtures/conversations/, made by samplegen/conversations.py): each conversation is one
tree from the page of any of its files, the context at every leaf is what its agent sends, the
listing groups the files, and a file whose source is gone says what it names."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from samplegen.conversations import main as generate
from tests.conftest import FIXTURES
from webapp.core.agents.places import discover
from webapp.core.catalog import summarize_session
from webapp.core.context import build_context
from webapp.core.conversations import group, head_facts, session_of_name
from webapp.core.entries import content_text
from webapp.core.joined import join
from webapp.core.session import Session
from webapp.core.timeline import timeline

CONV = FIXTURES / "conversations"


def trees(agent: str) -> dict[str, object]:
    """Every session file of an agent's fixtures (not the sub-agents read with their session)."""
    return {p.relative_to(CONV).as_posix(): Session.open(p).tree
            for p in sorted((CONV / agent).rglob("*.jsonl")) if "subagents" not in p.parts}


def named(found: dict, part: str) -> str:
    return next(n for n in found if part in n)


def said(tree, leaf: str) -> list[tuple[str, str]]:
    """(role, text) of each message of the context at `leaf` (a tool call as `call:<name>`)."""
    out = []
    for m in build_context(tree, leaf).messages:
        text = content_text(m.get("content"), " ") if m.get("content") else ""
        if not text and m.get("tool_calls"):
            text = "call:" + m["tool_calls"][0]["function"]["name"]
        out.append((m["role"], text))
    return out


def texts(tree, leaf: str) -> list[str]:
    return [t for _, t in said(tree, leaf)]


def test_the_generator_writes_the_committed_fixtures(tmp_path, capsys):
    assert generate([str(tmp_path)]) == 0
    made = {p.relative_to(tmp_path).as_posix(): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    kept = {p.relative_to(CONV).as_posix(): p.read_bytes() for p in CONV.rglob("*") if p.is_file()}
    assert len(kept) >= 20 and made == kept


# -- pi: a fork, a fork of the fork, a fork whose source is gone --------------------------------------------


def test_a_pi_fork_and_its_fork_are_one_tree_from_each_file():
    found = trees("pi")
    files = [named(found, k) for k in ("0196a1c0", "0196a1c4", "0196a1c8")]
    views = [join(f, found) for f in files]
    nodes = {frozenset(t.by_id) for t in views}
    assert len(nodes) == 1  # the same nodes whichever file the page is of: each copy drawn once
    for t, active in zip(views, ("p0000008", "c0000008", "g0000010")):
        # c0000008 goes on in the grandchild: a leaf only where it is the file's active leaf
        assert set(t.leaves()) == {"p0000008", "g0000010", active} and t.active_leaf == active
        assert [(p.relation, p.parent) for p in t.joined.parts] == [("", None), ("fork", 0), ("fork", 1)]
        assert t.children["p0000005"] != ["c0000007"] and t.parent["c0000007"] == "c0000006"
    child = views[1]
    assert child.joined.shown.name == files[1] and child.active_leaf == "c0000008"
    # The file's own entries are its own (their lines); the others' name their file.
    assert child.by_id["c0000007"].file is None and child.by_id["p0000007"].file == files[0]
    assert child.joined.elsewhere("p0000002") is None  # the fork holds a copy: it may go on from it
    assert child.joined.elsewhere("p0000007").name == files[0]


def test_the_context_at_each_pi_leaf_is_its_own_path_and_nothing_after_the_fork_point():
    found = trees("pi")
    tree = join(named(found, "0196a1c4"), found)
    assert texts(tree, "g0000010") == [
        "Add a CSV export to the report command", "call:read", "def build_rows(data):\n    ...",
        "The report builds its rows in build_rows(); the export goes there.", "Use pandas instead",
        "Done: report --csv writes a DataFrame with to_csv().", "Also add --tsv", "Added --tsv: the same writer with sep='\\t'."]
    assert "Write it with the csv module" not in texts(tree, "c0000008")
    assert texts(tree, "p0000008")[-2:] == ["Write it with the csv module", "Done: report --csv writes the rows with csv.writer."]


def test_a_pi_fork_whose_source_is_gone_reads_alone_and_says_what_it_names():
    found = trees("pi")
    orphan = named(found, "0196a1d0")
    tree = join(orphan, found)
    (part,) = tree.joined.parts
    assert part.missing == ("parentSession /home/ana/.pi/agent/sessions/--home-ana-projects-report--/"
                            "2026-04-30T09-00-00-000Z_0196a000-0000-7000-8000-000000000000.jsonl")
    assert texts(tree, tree.active_leaf) == ["Where did we leave the parser?", "In parse_args(), half done.",
                                             "Finish it", "Finished parse_args()."]


# -- Claude Code: /branch, SDK fork, resumed copy, rewind, sub-agents, workflow, double compaction -------------


def test_claude_code_branch_sdk_fork_and_resumed_copy_join_their_session_as_one_tree():
    found = trees("claude-code")
    a, b, s, r = (named(found, k) for k in ("aaaaaaaa", "bbbbbbbb", "55555555", "eeeeeeee"))
    views = {f: join(f, found) for f in (a, b, s, r)}
    assert len({len(t.by_id) for t in views.values()}) == 1  # every copy is its original: drawn once
    for t in views.values():
        by_name = {p.name: p for p in t.joined.parts}
        assert set(by_name) == {a, b, s, r}
        assert (by_name[a].relation, by_name[b].relation, by_name[s].relation, by_name[r].relation) == (
            "", "fork", "fork", "copy that goes on")
        assert len(t.leaves()) == 4
        starts = [e.id for e in t.entries if e.parent_id is None and not e.sidechain]
        assert len(starts) == 1  # one root: the shared first prompt
    tree = views[b]
    leaf_b, leaf_s, leaf_r = "0000000b-0000-4000-8000-000000000008", "00000005-0000-4000-8000-000000000006", \
        "0000000e-0000-4000-8000-000000000010"
    shared = ["Why does checkout fail for empty carts?", "call:Read", "def total(items):\n    return sum(items) / len(items)",
              "total() divides by len(items), which is 0 for an empty cart."]
    assert texts(tree, leaf_b) == [*shared, "Fix it with a guard", "Added `if not items: return 0` to total().",
                                   "Now add a test for it", "Added test_total_empty()."]
    assert texts(tree, leaf_s) == [*shared, "Return 0.0 for an empty cart", "total() returns 0.0 for no items."]
    assert texts(tree, leaf_r) == [*shared, "Fix it by raising EmptyCart instead",
                                   "total() now raises EmptyCart for an empty cart.", "Log the error too",
                                   "EmptyCart is logged before it is raised."]
    # The SDK fork's copies (new uuids) are their originals: from its own page they stand for them.
    sdk = views[s]
    assert "0000000a-0000-4000-8000-000000000002" not in sdk.by_id
    assert sdk.joined.elsewhere("00000005-0000-4000-8000-000000000002") is None


def test_a_rewind_in_one_file_is_a_branch_and_sub_agents_and_a_workflow_hang_under_their_calls():
    found = trees("claude-code")
    tree = found[named(found, "aaaaaaaa")]
    a = lambda n: f"0000000a-0000-4000-8000-{n:012d}"  # noqa: E731
    assert tree.conversation_children(a(4)) == [a(5), a(7)]  # the rewind: a second prompt under the same answer
    task, flow = tree.by_id[a(9)], tree.by_id[a(13)]
    runs = {tree.by_id[c].file: c for c in (*tree.children[task.id], *tree.children[flow.id]) if tree.by_id[c].sidechain}
    assert set(runs) == {"agent-a1b2c3.jsonl", "workflows/wf_0001/agent-wf1.jsonl"}
    assert content_text(tree.by_id[runs["workflows/wf_0001/agent-wf1.jsonl"]].message["content"]) == \
        "Check that total() handles empty carts"
    assert all(not tree.by_id[x].sidechain for x in tree.leaves())
    assert not [p for p in tree.problems if p.kind.startswith("subagent")]


def test_the_context_at_a_sub_agents_last_entry_is_its_own_run_from_its_prompt():
    """A sub-agent is sent its prompt and its own turns, not the session that called it."""
    found = trees("claude-code")
    tree = found[named(found, "aaaaaaaa")]
    a = lambda n: f"0000000a-0000-4000-8000-{n:012d}"  # noqa: E731
    for caller, prompt in ((a(9), None), (a(13), "Check that total() handles empty carts")):
        (start,) = [c for c in tree.children[caller] if tree.by_id[c].sidechain]
        node = start
        while kids := [c for c in tree.children.get(node, ()) if tree.by_id[c].sidechain]:
            node = kids[-1]
        got = build_context(tree, node)
        assert got.sources[0].id == start and all(e.sidechain for e in got.sources)
        points = timeline(tree, node)  # the context's turns over its path: the sub-agent's only
        assert points and all(p.entry.sidechain for p in points)
        assert got.messages[0]["role"] == "user"
        if prompt:
            assert texts(tree, node)[0] == prompt
    codex = trees("codex")
    joined = join(named(codex, "0196b000"), codex)
    sub = [e for e in joined.entries if joined.joined.part_of(e.id).relation == "sub-agent"]
    assert texts(joined, sub[-1].id)[0] == "Write tests for -v"
    assert {e.id for e in build_context(joined, sub[-1].id).sources} <= {e.id for e in sub}


def test_a_second_compact_in_one_process_reads_as_one_line_with_the_latest_summary_first():
    found = trees("claude-code")
    tree = found[named(found, "dddddddd")]
    d = lambda n: f"0000000d-0000-4000-8000-{n:012d}"  # noqa: E731
    assert tree.problems == []  # no duplicate-id for the re-appended rows, no dangling first kept entry
    assert tree.leaves() == [d(10)]
    path = [e.id for e in tree.path(d(10))]
    assert path == [d(1), d(2), d(3), d(4), d(5), d(6), d(50), d(7), d(8), d(60), d(70), d(9), d(10)]
    got = said(tree, d(10))
    assert "schema, data copy and indexes written" in got[0][1]  # the latest summary, first
    assert [t for _, t in got[1:]] == ["Wrote migrations/003_indexes.sql.", "Now the rollback plan",
                                       "Wrote migrations/rollback.md."]
    assert sum(1 for _, o in tree.metadata if o.get("uuid") in {d(1), d(2), d(3), d(4)}) == 4  # kept, as lines


def test_a_claude_code_branch_whose_source_is_gone_reads_alone_and_says_what_it_names():
    found = trees("claude-code")
    tree = join(named(found, "ffffffff"), found)
    assert [p.missing for p in tree.joined.parts] == ["forkedFrom 99999999-0000-4000-8000-000000000009"]
    assert texts(tree, tree.active_leaf)[-1] == "Updated 4 imports."
    assert build_context(tree, tree.active_leaf).problems == []  # its rows are copies: nothing lacks


# -- Codex: legacy and paginated forks, a sub-agent's rollout --------------------------------------------------


def test_a_paginated_codex_fork_reads_its_parent_up_to_history_base_and_no_further():
    found = trees("codex")
    fork = named(found, "0196b800")
    alone = found[fork]
    by_itself = build_context(alone, alone.active_leaf)
    assert len(by_itself.messages) == 2  # what the file holds by itself, and it says what it lacks
    assert by_itself.problems == ["this file inherits the lines before ordinal 10 of forked_from_id "
                                  "0196b000-0000-7000-8000-000000000001, which is not read with it: the context lacks them"]
    tree = join(fork, found)
    assert build_context(tree, tree.active_leaf).problems == []
    assert said(tree, tree.active_leaf) == [
        ("user", "<permissions instructions>workspace-write</permissions instructions>"), ("user", "Add a --verbose flag"),
        ("assistant", "call:shell"), ("tool", "cli.py:3:import argparse"), ("assistant", "Added --verbose to cli.py."),
        ("user", "Use -V for the version instead"), ("assistant", "Moved the version to -V.")]
    parent_view = join(named(found, "0196b000"), found)
    leaf = next(x for x in parent_view.leaves() if parent_view.joined.part_of(x).name == fork)
    assert texts(parent_view, leaf) == texts(tree, tree.active_leaf)


def test_a_legacy_codex_fork_is_its_parent_up_to_its_own_lines_drawn_once():
    found = trees("codex")
    legacy, parent = named(found, "0196b400"), named(found, "0196b000")
    mine, theirs = join(legacy, found), join(parent, found)
    assert len(mine.by_id) == len(theirs.by_id)
    assert texts(mine, mine.active_leaf)[-3:] == ["Added --verbose to cli.py.", "Print the flag in --help",
                                                  "Documented -v in the help text."]
    assert "Make it -v too" not in texts(mine, mine.active_leaf)
    assert sum(1 for e in mine.entries if e.role == "user" and texts(mine, e.id)[-1] == "Add a --verbose flag") == 1
    # The copy of the parent's session_meta is no node: the copies start where the parent does.
    assert not [e for e in mine.entries if e.get("customType") == "codex/session_meta"]


def test_a_codex_sub_agent_hangs_under_the_call_that_spawned_it():
    found = trees("codex")
    tree = join(named(found, "0196b000"), found)
    sub = [e for e in tree.entries if tree.joined.part_of(e.id).relation == "sub-agent"]
    assert sub and all(e.sidechain for e in sub)
    first = next(e for e in sub if not tree.by_id[e.parent_id].sidechain)
    caller = tree.by_id[first.parent_id]
    assert [c["name"] for c in caller.message["content"] if c.get("type") == "toolCall"] == ["spawn_agent"]
    assert [content_text(e.message.get("content")) for e in sub if e.role == "user"] == ["Write tests for -v"]
    assert not any(tree.by_id[x].sidechain for x in tree.leaves()) and len(tree.leaves()) == 3


def test_a_codex_fork_whose_parent_is_gone_reads_alone_and_says_what_it_names():
    found = trees("codex")
    tree = join(named(found, "0196bf00"), found)
    assert [p.missing for p in tree.joined.parts] == ["forked_from_id 0196a999-0000-7000-8000-000000000999"]
    assert texts(tree, tree.active_leaf) == ["Carry on with the config loader", "The config loader reads TOML now."]
    assert build_context(tree, tree.active_leaf).problems == [  # a paginated fork: what it lacks is said
        "this file inherits the lines before ordinal 7 of forked_from_id 0196a999-0000-7000-8000-000000000999, "
        "which is not here: the context lacks them"]


# -- the listing -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("read", ["summaries", "first lines"])
def test_the_listing_groups_every_conversation_and_names_the_missing_sources(read):
    files = [p for p in sorted(CONV.rglob("*.jsonl")) if "subagents" not in p.parts]
    facts = [summarize_session(p).facts(p.name) if read == "summaries" else head_facts(p, p.name) for p in files]
    got = group(facts)
    short = lambda name: session_of_name(name)[:8]  # noqa: E731
    assert sorted([short(f) for f in c] for c in got.conversations) == sorted([
        ["0196a1c0", "0196a1c4", "0196a1c8"], ["0196a1d0"],
        ["aaaaaaaa", "55555555", "bbbbbbbb", "eeeeeeee"], ["dddddddd"], ["ffffffff"],
        ["0196b000", "0196bc00", "0196b400", "0196b800"], ["0196bf00"]])
    assert sorted(short(f) for f in got.missing) == ["0196a1d0", "0196bf00", "ffffffff"]


@pytest.mark.parametrize("agent, child, gone, names, said_last", [
    ("claude-code", "55555555", "aaaaaaaa", "forkedFrom aaaaaaaa-0000-4000-8000-000000000001", "total() returns 0.0 for no items."),
    ("claude-code", "bbbbbbbb", "aaaaaaaa", "forkedFrom aaaaaaaa-0000-4000-8000-000000000001", "Added test_total_empty()."),
    ("claude-code", "subagents/agent-a1b2c3", "aaaaaaaa", "sessionId aaaaaaaa-0000-4000-8000-000000000001",
     "checkout.py, invoice.py and the tests call total()."),
    ("claude-code", "workflows/wf_0001/agent-wf1", "aaaaaaaa", "sessionId aaaaaaaa-0000-4000-8000-000000000001",
     "Verified: total([]) raises EmptyCart and checkout shows the message."),
    ("codex", "0196b400", "0196b000", "forked_from_id 0196b000-0000-7000-8000-000000000001", "Documented -v in the help text."),
    ("codex", "0196bc00", "0196b000", "parent_thread_id 0196b000-0000-7000-8000-000000000001",
     "Added tests/test_cli.py::test_verbose."),
])
def test_each_shape_whose_source_is_gone_says_what_it_names_in_its_tree_and_the_listing(
        tmp_path, agent, child, gone, names, said_last):
    """The SDK fork, the /branch, the legacy Codex fork and the sub-agents' files (Codex's rollout,
    Claude Code's transcripts under the session's folder, a workflow's among them), each without
    the file it names: each is listed, the tree and the listing say the reference; the context is
    what it holds (each copied what it inherits, or, for a sub-agent, never had it). Only the
    session file is gone: Claude Code's session folder stays, its sub-agents listed alone."""
    root = tmp_path / agent
    shutil.copytree(CONV / agent, root)
    for p in root.rglob(f"*{gone}*.jsonl"):
        p.unlink()
    files = discover(root)
    left = {p.relative_to(root).as_posix(): Session.open(p).tree for p in files}
    tree = join(named(left, child), left)
    assert names in [p.missing for p in tree.joined.parts]
    assert texts(tree, tree.active_leaf)[-1] == said_last and build_context(tree, tree.active_leaf).problems == []
    grouping = group([head_facts(p, p.relative_to(root).as_posix()) for p in files])
    assert grouping.missing[named(left, child)] == names


def test_a_claude_code_sub_agents_file_whose_session_is_here_is_read_with_it_and_joins_nothing():
    """Read as its page reads the files beside it, a sub-agent's transcript names its session,
    which reads it already: neither joined to it again nor said missing, nor taken for it."""
    folder = CONV / "claude-code" / "-home-ana-projects-shop"
    files = [*sorted(folder.glob("*.jsonl")), *sorted(folder.rglob("subagents/**/agent-*.jsonl"))]
    grouping = group([head_facts(p, p.name) for p in files])
    for agent in ("agent-a1b2c3.jsonl", "agent-wf1.jsonl"):
        assert grouping.members(agent) == [agent] and agent not in grouping.missing
    session = "aaaaaaaa-0000-4000-8000-000000000001.jsonl"
    assert grouping.parent["bbbbbbbb-0000-4000-8000-000000000002.jsonl"] == session
    assert "agent-a1b2c3.jsonl" not in grouping.members(session)
