"""`ls` lists one row per conversation across files (SPEC §5e), its other files under its first,
`--files` a row each; a file whose source is not here says what it names. From the files and
from the index alike."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import FIXTURES
from tests.test_cli import run, run_json

CONV = FIXTURES / "conversations"
P, C, G, M = ("2026-05-01T10-00-00-000Z_0196a1c0-0000-7000-8000-00000000000a.jsonl",
              "2026-05-01T10-04-00-000Z_0196a1c4-0000-7000-8000-00000000000c.jsonl",
              "2026-05-01T10-08-00-000Z_0196a1c8-0000-7000-8000-00000000000e.jsonl",
              "2026-05-01T10-16-00-000Z_0196a1d0-0000-7000-8000-000000000010.jsonl")
GONE = ("parentSession /home/ana/.pi/agent/sessions/--home-ana-projects-report--/"
        "2026-04-30T09-00-00-000Z_0196a000-0000-7000-8000-000000000000.jsonl")


@pytest.fixture(params=["files", "index"])
def listing(request, tmp_path):
    root = tmp_path / "pi"
    shutil.copytree(CONV / "pi", root)
    extra = ["--index", "--db", tmp_path / "c.duckdb"] if request.param == "index" else []
    return root, extra


def test_ls_folds_a_conversations_files_under_its_first_and_says_a_missing_source(capsys, listing):
    root, extra = listing
    code, out, err = run(capsys, "ls", root, *extra)
    assert code == 0, err
    firsts = [line for line in out.splitlines() if line.endswith(".jsonl") and not line.startswith(" ")]
    assert [f.rsplit("/", 1)[-1] for f in firsts] == [P, M]
    block = out[out.index(P):out.index(M)]
    assert "one conversation of 3 files; the others:" in block
    assert f"      fork of {P}:\n        {root}/--home-ana-projects-report--/{C}" in block
    assert f"      fork of {C}:\n        {root}/--home-ana-projects-report--/{G}" in block
    assert out.endswith(f"continues a file that is not here: {GONE}\n")


def test_ls_json_gives_a_row_per_conversation_and_with_files_a_row_per_file(capsys, listing):
    root, extra = listing
    rows = run_json(capsys, "ls", root, "--json", *extra)
    assert [r["path"].rsplit("/", 1)[-1] for r in rows] == [P, M]
    first, alone = rows
    assert [(f["path"].rsplit("/", 1)[-1], f["parent"].rsplit("/", 1)[-1], f["linkKind"]) for f in first["files"]] == [
        (C, P, "fork"), (G, C, "fork")]
    assert alone["files"] == [] and alone["missing"] == GONE and first["missing"] is None
    flat = run_json(capsys, "ls", root, "--json", "--files", *extra)
    assert sorted(r["path"].rsplit("/", 1)[-1] for r in flat) == [P, C, G, M]
    by_name = {r["path"].rsplit("/", 1)[-1]: r for r in flat}
    assert {n: r["conversation"].rsplit("/", 1)[-1] for n, r in by_name.items()} == {P: P, C: P, G: P, M: M}
    assert "files" not in by_name[P] and by_name[G]["parent"].endswith(C)


def test_ls_files_lists_every_file_on_its_own_row(capsys, listing):
    root, extra = listing
    code, out, _ = run(capsys, "ls", root, "--files", *extra)
    assert code == 0 and "one conversation of" not in out
    assert [line.rsplit("/", 1)[-1] for line in out.splitlines() if not line.startswith(" ")] == [P, C, G, M]


def test_context_at_a_paginated_codex_forks_leaf_reads_its_parent_found_in_another_days_folder(capsys):
    fork = next((CONV / "codex" / "2026" / "05" / "07").glob("*.jsonl"))
    got = run_json(capsys, "context", fork, "--json")
    said = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
            for m in got["messages"] if m.get("content")]
    assert len(got["messages"]) == 7 and said[1] == "Add a --verbose flag" and said[-1] == "Moved the version to -V."
    assert "Make it -v too" not in said
    alone = run_json(capsys, "context", fork, "--json", "--alone")
    assert len(alone["messages"]) == 2  # what the file holds by itself


@pytest.mark.parametrize("index", [False, True])
def test_ls_lists_claude_code_sub_agents_whose_session_is_gone_each_saying_the_session_it_names(capsys, tmp_path, index):
    """A 2.1 sub-agent's and a workflow agent's transcripts stay in the session's folder when its
    `<sessionId>.jsonl` is gone: each is then a session of its own, from the files and the index
    alike; with the session here they are read with it, never listed."""
    root = tmp_path / "claude-code"
    shutil.copytree(CONV / "claude-code", root)
    extra = ["--index", "--db", tmp_path / "c.duckdb"] if index else []
    folder = root / "-home-ana-projects-shop"
    nested = [folder / "aaaaaaaa-0000-4000-8000-000000000001" / "subagents" / "agent-a1b2c3.jsonl",
              folder / "aaaaaaaa-0000-4000-8000-000000000001" / "subagents" / "workflows" / "wf_0001" / "agent-wf1.jsonl"]
    listed = [r["path"] for r in run_json(capsys, "ls", root, "--json", "--files", *extra)]
    assert len(listed) == 6 and not set(map(str, nested)) & set(listed)
    (folder / "aaaaaaaa-0000-4000-8000-000000000001.jsonl").unlink()
    by_path = {r["path"]: r for r in run_json(capsys, "ls", root, "--json", *extra)}
    for agent, prompt in zip(nested, ("Find the callers of total()", "Check that total() handles empty carts")):
        row = by_path[str(agent)]
        assert row["missing"] == "sessionId aaaaaaaa-0000-4000-8000-000000000001" and row["firstMessage"] == prompt
    assert len(by_path) == 6  # the two sub-agents, the two forks of the session gone, and the others
    code, out, err = run(capsys, "ls", root, *extra)
    assert code == 0, err
    block = out[out.index(str(nested[1])):]
    assert block.splitlines()[3] == "    continues a file that is not here: sessionId aaaaaaaa-0000-4000-8000-000000000001"
