"""Adding an agent is one module and one line: a toy agent (tests/toy_agent.py) registered with
`agents.register` is listed by `ls` (and its `--toy` flag), grouped on the index page, read on
the session page, its tool calls read as what they do, and every write to its files refused with
its own reason, while its files stay as they were."""

from __future__ import annotations

import orjson
import pytest

from tests.test_cli import run
from tests.toy_agent import TOY, WHY, toy_log
from webapp.core import agents
from webapp.cli import _parser
from webapp.core.errors import ReadOnlySession
from webapp.core.agents.tools import READ, tool_action
from webapp.core.session import Session
from webapp.web.app import create_app

REL = ".toy/logs/first.jsonl"


@pytest.fixture
def toy():
    agents.register(TOY)  # the line a new agent adds to the registry's list
    _parser.cache_clear()  # (a process builds its parser once: this one outlives the registration)
    yield TOY
    agents.unregister(TOY)
    _parser.cache_clear()


@pytest.fixture
def home(tmp_path, monkeypatch, toy):
    """A home folder with one toy log, and pi's folder with nothing in it."""
    home = tmp_path / "home"
    (home / ".pi" / "agent" / "sessions").mkdir(parents=True)
    log = home / REL
    log.parent.mkdir(parents=True)
    log.write_bytes(toy_log(("me", "Which file holds the totals?"), ("did", "totals.csv"), ("it", "totals.csv, line 3.")))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SESSION_TREE_ROOT", raising=False)
    return home


def test_ls_lists_the_toy_agents_files_under_its_own_flag(home, capsys):
    code, out, err = run(capsys, "ls", "--toy", "--json")
    assert code == 0 and err == ""
    [row] = orjson.loads(out)
    assert row["path"] == str(home / REL) and row["format"] == "toy" and row["version"] is None
    assert row["firstMessage"] == "Which file holds the totals?" and row["entries"] == 3 and row["leaves"] == 1
    assert [r["format"] for r in orjson.loads(run(capsys, "ls", "--json")[1])] == ["toy"]  # every agent's folder
    assert [r["format"] for r in orjson.loads(run(capsys, "ls", home, "--json")[1])] == ["toy"]  # a home as ROOT


def test_without_the_registration_line_the_toy_is_unknown(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        run(capsys, "ls", "--toy")
    assert exited.value.code == 2 and "unrecognized arguments: --toy" in capsys.readouterr().err
    log = tmp_path / "first.jsonl"
    log.write_bytes(toy_log(("me", "hello")))
    assert Session.open(log).log.format == "unknown"  # (read as lines of no known format)


def test_the_index_page_and_the_session_page_read_the_toy_agents_files(home):
    client = create_app(home).test_client()
    index = client.get("/").get_data(as_text=True)
    assert '<span class="badge source">Toy</span> /home/ana/toybox' in index
    assert "Which file holds the totals?" in index and f'href="/s/{REL}"' in index
    page = client.get(f"/s/{REL}")
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and "Which file holds the totals?" in text and "totals.csv, line 3." in text


def test_the_toy_agents_tool_names_read_as_what_they_do(home):
    call = next(b for e in Session.open(home / REL).tree.entries for b in e.message.get("content", [])
                if b.get("type") == "toolCall")
    action = tool_action(call)
    assert action.kind == READ and action.path == "totals.csv"
    assert tool_action({"name": "run", "arguments": {"cmd": "make"}}).command == "make"


def test_writes_to_the_toy_agents_files_are_refused_with_its_own_reason(home, capsys):
    path = home / REL
    before = path.read_bytes()
    session = Session.open(path)
    with pytest.raises(ReadOnlySession, match=WHY):
        session.set_label(session.tree.active_leaf, "mine")
    code, _, err = run(capsys, "label", path, session.tree.active_leaf, "mine")
    assert code == 2 and WHY in err
    app = create_app(home)
    client = app.test_client()
    r = client.post(f"/s/{REL}/-/label", data={"csrf_token": app.config["CSRF_TOKEN"], "node": session.tree.active_leaf,
                                               "label": "mine"})
    assert r.status_code == 403 and WHY in r.get_data(as_text=True)
    assert "Continue in a new session" in client.get(f"/s/{REL}").get_data(as_text=True)
    assert path.read_bytes() == before
