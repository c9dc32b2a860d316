"""Where the agents keep their sessions (`webapp/core/agents/places.py`): each agent's folder searched
as deep as that agent lays out its files, what a walk does not search said on `ls`'s stderr and
on the index page, and pi's folder found where pi's environment variable or setting puts it."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.conftest import FIXTURES, Builder
from tests.test_cli import run
from webapp.core.agents.places import discover, max_parts
from webapp.core.errors import SessionNotFound
from webapp.web.app import create_app
from webapp.web.store import SessionStore

CODEX_FILE = FIXTURES / "codex" / "agent-sessions_codex_small.jsonl"
CLAUDE_FILE = FIXTURES / "claude-code" / "daaain_dag_compact_after_rewind.jsonl"


def put(folder: Path, rel: str, data: bytes | None = None) -> Path:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(Builder().data() if data is None else data)
    return path


def rels(paths, root: Path) -> list[str]:
    return [Path(p).relative_to(root).as_posix() for p in paths]


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SESSION_TREE_ROOT", raising=False)
    return home


def ls(capsys, *argv) -> tuple[list[dict], str]:
    code, out, err = run(capsys, "ls", *argv, "--json")
    assert code == 0, err
    return orjson.loads(out), err


# -- depth ---------------------------------------------------------------------------------------


def test_a_codex_folder_is_searched_three_folders_deep_and_a_plain_root_says_what_lay_deeper(tmp_path, capsys):
    """A copy of Codex's sessions one folder further down than a plain ROOT is searched: the
    files are not listed, and `ls` names the folder it did not enter, which lists them as ROOT."""
    root = tmp_path / "backup"
    put(root, "codex/2026/08/03/rollout-a.jsonl", CODEX_FILE.read_bytes())
    put(root, "--home-ana--/s.jsonl")
    rows, err = ls(capsys, root)
    assert rels([r["path"] for r in rows], root) == ["--home-ana--/s.jsonl"]
    deeper = root / "codex" / "2026" / "08" / "03"
    assert err == (f"session-tree: 1 folder deeper than the agents keep their sessions was not searched ({deeper}); "
                   "name one as ROOT to list the sessions in it\n")
    rows, err = ls(capsys, deeper)
    assert [r["format"] for r in rows] == ["codex"] and err == ""


def test_each_agents_folder_is_searched_at_its_own_depth(home, capsys):
    codex = put(home, ".codex/sessions/2026/08/03/rollout-a.jsonl", CODEX_FILE.read_bytes())
    pi = put(home, ".pi/agent/sessions/--home-ana-proj--/s.jsonl")
    put(home, ".pi/agent/sessions/--home-ana-proj--/archive/old.jsonl")  # deeper than pi lays files
    claude = put(home, ".claude/projects/-home-ana/s1.jsonl", CLAUDE_FILE.read_bytes())
    put(home, ".claude/projects/-home-ana/s1/subagents/agent-1.jsonl", CLAUDE_FILE.read_bytes())
    put(home, ".claude/projects/-home-ana/s1/tool-results/x.txt", b"output")
    put(home, ".claude/projects/-home-ana/memory/MEMORY.md", b"notes")
    rows, err = ls(capsys)
    assert sorted(r["path"] for r in rows) == sorted(map(str, (codex, pi, claude)))
    # (a Claude Code session's own folder and its project's memory hold no sessions: not said)
    assert "1 folder deeper" in err and str(home / ".pi/agent/sessions/--home-ana-proj--/archive") in err


def test_a_listing_says_nothing_when_nothing_lies_deeper(home, capsys):
    put(home, ".codex/sessions/2026/08/03/rollout-a.jsonl", CODEX_FILE.read_bytes())
    put(home, ".pi/agent/sessions/--home-ana-proj--/s.jsonl")
    rows, err = ls(capsys)
    assert len(rows) == 2 and err == ""


def test_the_index_page_says_what_it_did_not_search(tmp_path):
    root = tmp_path / "root"
    put(root, "--home-ana--/s.jsonl")
    client = create_app(root).test_client()
    assert "not searched" not in client.get("/").get_data(as_text=True)
    put(root, "a/b/c/d/deep.jsonl")
    html = client.get("/").get_data(as_text=True)
    assert ('<p class="note skipped" role="note">1 folder deeper than the agents keep their sessions was not '
            "searched (a/b/c/d); name one as ROOT to list the sessions in it</p>") in html


def test_a_url_is_as_deep_as_the_agents_files_lie(home):
    put(home, ".codex/sessions/2026/08/03/rollout-a.jsonl", CODEX_FILE.read_bytes())
    deep = put(home, ".pi/agent/sessions/--p--/a/b/c/deep.jsonl")
    store = SessionStore(home, (".pi/agent/sessions", ".codex/sessions"))
    assert store.resolve(".codex/sessions/2026/08/03/rollout-a.jsonl").name == "rollout-a.jsonl"
    with pytest.raises(SessionNotFound):  # (a file that no listing shows is no session of the page's)
        store.resolve(deep.relative_to(home).as_posix())
    assert max_parts(home, [".pi/agent/sessions"]) == 5 and max_parts(home, [".codex/sessions"]) == 6
    assert max_parts(home) == 4  # a plain folder: as deep as the deepest agent's layout, and the file


def test_discover_skips_what_it_does_not_enter_and_names_it(tmp_path):
    root = tmp_path / "r"
    put(root, "x/y/z/w/deep.jsonl")
    put(root, "x/y/z/s.jsonl")
    put(root, "x/.hidden/a/b/c.jsonl")
    skipped: list[str] = []
    assert rels(discover(root, (), skipped), root) == ["x/y/z/s.jsonl"]
    assert skipped == [str(root / "x/y/z/w")]


# -- pi's folder ---------------------------------------------------------------------------------


def test_pi_sessions_are_found_where_its_environment_variable_points(home, tmp_path, monkeypatch, capsys):
    elsewhere = tmp_path / "pi-sessions"
    pi = put(elsewhere, "--home-ana-proj--/s.jsonl")
    put(home, ".pi/agent/sessions/--home-ana-old--/old.jsonl")  # (not where pi keeps them now)
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(elsewhere))
    rows, _ = ls(capsys, "--pi")
    assert [r["path"] for r in rows] == [str(pi)]


def test_pi_sessions_are_found_where_its_setting_points_and_the_variable_wins(home, tmp_path, monkeypatch, capsys):
    put(home, ".pi/agent/settings.json", orjson.dumps({"theme": "dark", "sessionDir": "~/pi/sessions"}))
    by_setting = put(home, "pi/sessions/--home-ana-proj--/s.jsonl")
    rows, _ = ls(capsys, "--pi")
    assert [r["path"] for r in rows] == [str(by_setting)]
    by_variable = put(tmp_path, "env/--p--/t.jsonl")
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "env"))
    rows, _ = ls(capsys, "--pi")
    assert [r["path"] for r in rows] == [str(by_variable)]


def test_pis_agent_folder_holds_its_settings_and_its_sessions(home, tmp_path, monkeypatch, capsys):
    agent = tmp_path / "config" / "pi"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    in_agent = put(agent, "sessions/--p--/s.jsonl")
    assert [r["path"] for r in ls(capsys, "--pi")[0]] == [str(in_agent)]
    put(agent, "settings.json", orjson.dumps({"sessionDir": str(tmp_path / "set")}))
    by_setting = put(tmp_path, "set/--p--/t.jsonl")
    assert [r["path"] for r in ls(capsys, "--pi")[0]] == [str(by_setting)]


@pytest.mark.parametrize("settings", [b'{"sessionDir": "relative/sessions"}', b"{not json", b'["a list"]',
                                      b'{"sessionDir": 5}', b'{"sessionDir": "  "}'])
def test_a_setting_pi_cannot_use_here_leaves_its_usual_folder(home, capsys, settings):
    put(home, ".pi/agent/settings.json", settings)
    usual = put(home, ".pi/agent/sessions/--p--/s.jsonl")
    assert [r["path"] for r in ls(capsys, "--pi")[0]] == [str(usual)]


def test_a_pi_folder_outside_the_home_is_served_beside_the_others(home, tmp_path, monkeypatch):
    claude = put(home, ".claude/projects/-home-ana/s1.jsonl", CLAUDE_FILE.read_bytes())
    elsewhere = tmp_path / "data" / "pi"
    pi = put(elsewhere, "--home-ana-proj--/s.jsonl")
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(elsewhere))
    seen = {}
    monkeypatch.setattr("webapp.cli.serve.serve", lambda root, **kw: seen.update(root=root, **kw) or 0)
    assert run_main("serve") == 0
    assert seen["root"] == tmp_path and set(seen["within"]) == {"data/pi", "home/.claude/projects"}
    store = SessionStore(seen["root"], seen["within"])
    assert sorted(rel for rel, _, _ in store.list()) == rels([pi, claude], tmp_path)


def test_no_pi_folder_says_where_it_looked(home, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "nowhere"))
    code, out, err = run(capsys, "ls", "--pi")
    assert code == 0 and out == "" and err == (
        f"session-tree: no sessions under the agents' usual folders ({tmp_path / 'nowhere'}); "
        "name a ROOT to look elsewhere\n")


def run_main(*argv: str) -> int:
    from webapp.cli import main

    return main(list(argv))
