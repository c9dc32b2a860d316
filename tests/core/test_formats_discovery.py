"""Discovery (#12 part 4): the agents' usual sessions folders under a (fake) home folder, their
nested layouts, `ls --claude/--codex`, `serve` without ROOT, and the grouping of a listing."""

from pathlib import Path

import orjson
import pytest

from tests.conftest import FIXTURES, Builder
from webapp.cli import main
from webapp.core.catalog import group_sessions, summarize_session
from webapp.core.errors import SessionNotFound
from webapp.core.agents.places import discover
from webapp.web.store import SessionStore

PI = ".pi/agent/sessions/--home-ana-proj--/2026-01-01T00-00-00-000Z_x.jsonl"
CLAUDE = ".claude/projects/-tmp/s1.jsonl"
SUBAGENT = ".claude/projects/-tmp/s1/subagents/agent-1.jsonl"
CODEX = ".codex/sessions/2026/08/03/rollout-2026-08-03T10-48-56-019fc8be.jsonl"


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    for rel, data in ((PI, Builder().data()),
                      (CLAUDE, (FIXTURES / "claude-code" / "daaain_dag_compact_after_rewind.jsonl").read_bytes()),
                      (SUBAGENT, (FIXTURES / "claude-code" / "daaain_dag_compact_after_rewind.jsonl").read_bytes()),
                      (CODEX, (FIXTURES / "codex" / "agent-sessions_codex_small.jsonl").read_bytes())):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_bytes(data)
    (home / "notes.jsonl").write_bytes(b"{}\n")  # not in an agent's folder: never listed
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SESSION_TREE_ROOT", raising=False)
    return home


def ls(capsys, *argv) -> list[dict]:
    assert main(["ls", *argv, "--json"]) == 0
    return orjson.loads(capsys.readouterr().out)


def test_ls_without_root_finds_every_agent_folder_and_their_nested_layouts(home, capsys):
    rows = ls(capsys)
    assert sorted((Path(r["path"]).relative_to(home).as_posix(), r["format"]) for r in rows) == sorted([
        (PI, "pi-v3"), (CLAUDE, "claude-code"), (CODEX, "codex")])  # sub-agent transcripts are not sessions


def test_ls_claude_and_codex_list_one_agent_each(home, capsys):
    assert [Path(r["path"]).relative_to(home).as_posix() for r in ls(capsys, "--claude")] == [CLAUDE]
    assert [Path(r["path"]).relative_to(home).as_posix() for r in ls(capsys, "--codex")] == [CODEX]
    assert len(ls(capsys, "--claude", "--codex")) == 2


def test_ls_says_when_no_agent_folder_exists(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["ls", "--codex"]) == 0  # an empty listing, said as ls --index and index say it
    assert "no sessions under the agents' usual folders (~/.codex/sessions)" in capsys.readouterr().err


def test_ls_with_a_root_reads_that_root(home, capsys):
    rows = ls(capsys, str(home / ".codex" / "sessions"))
    assert [r["format"] for r in rows] == ["codex"]


def test_discover_goes_down_to_codex_day_folders_and_skips_subagents(home):
    found = discover(home, [".claude/projects", ".codex/sessions"])
    assert [p.relative_to(home).as_posix() for p in found] == [CLAUDE, CODEX]


def test_the_store_serves_only_the_agent_folders_of_a_home(home):
    store = SessionStore(home, (".pi/agent/sessions", ".claude/projects", ".codex/sessions"))
    assert sorted(rel for rel, _, _ in store.list()) == sorted([PI, CLAUDE, CODEX])
    assert store.resolve(CODEX) == home / CODEX
    with pytest.raises(SessionNotFound):
        store.resolve("notes.jsonl")


def test_sessions_group_by_agent_then_project(home):
    rows = [(p, summarize_session(home / p), None) for p in (CODEX, CLAUDE, PI)]
    assert list(group_sessions(rows)) == [("pi", "/home/ana/proj"), ("Claude Code", "/tmp"), ("Codex", "/tmp/repo")]


def test_serve_without_root_serves_the_agent_folders(home, monkeypatch):
    seen = {}
    monkeypatch.setattr("webapp.cli.serve.serve", lambda root, **kw: seen.update(root=root, **kw) or 0)
    assert main(["serve"]) == 0
    assert seen["root"] == home and set(seen["within"]) == {".pi/agent/sessions", ".claude/projects",
                                                             ".codex/sessions"}


def test_sub_agents_whose_session_is_gone_are_found_and_served_however_deep_they_lie(home):
    """Claude Code's `<sessionId>/subagents/agent-<id>.jsonl` and a workflow run's
    `…/subagents/workflows/<run>/agent-<id>.jsonl` are listed once `<sessionId>.jsonl` is gone,
    never said skipped, and their pages open under `.claude/projects` (one folder deep)."""
    workflow = ".claude/projects/-tmp/s1/subagents/workflows/wf_1/agent-2.jsonl"
    (home / workflow).parent.mkdir(parents=True)
    (home / workflow).write_bytes((home / SUBAGENT).read_bytes())
    (home / "journal.jsonl").write_bytes(b"{}\n")
    (home / workflow).with_name("journal.jsonl").write_bytes(b'{"type":"agent_started"}\n')
    store = SessionStore(home, (".claude/projects",))
    assert [rel for rel, _, _ in store.list()] == [CLAUDE]
    with pytest.raises(SessionNotFound):
        store.resolve(SUBAGENT)  # read with its session, as long as the session is here
    (home / CLAUDE).unlink()
    skipped: list[str] = []
    found = discover(home, [".claude/projects"], skipped)
    assert [p.relative_to(home).as_posix() for p in found] == [SUBAGENT, workflow] and skipped == []
    store = SessionStore(home, (".claude/projects",))
    assert sorted(rel for rel, _, _ in store.list()) == [SUBAGENT, workflow]
    assert store.resolve(workflow) == home / workflow and store.resolve(SUBAGENT) == home / SUBAGENT
    with pytest.raises(SessionNotFound):
        store.resolve(".claude/projects/-tmp/s1/subagents/workflows/wf_1/journal.jsonl")
