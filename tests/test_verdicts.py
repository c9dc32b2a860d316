"""Verdicts on branches (SPEC §5d): one appended custom entry on a pi v3 file, which keeps the
branch a branch; the data folder for a file we never write (byte-identical); the CLI, and the
web views that list branches."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import orjson
import pytest

from tests.test_cli import run
from tests.test_read_only_files import read_only_file  # noqa: F401  (a fixture: pi v1, Claude Code, Codex)
from webapp.core.context import build_context
from webapp.core.errors import InvalidWrite
from webapp.core.session import Session
from webapp.core.verdicts import VERDICT_TYPE, data_dir, give_verdict, persons, verdicts
from webapp.web.app import create_app

RICH = next((Path(__file__).resolve().parents[1] / "sample_sessions").rglob("*019cadd3-8025-7970-85d9-5954058b4714.jsonl"))


@pytest.fixture(autouse=True)
def data_home(tmp_path, monkeypatch):
    """The app's data folder in the test's own directory, never the user's."""
    home = tmp_path / "xdg-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


@pytest.fixture
def rich(tmp_path):
    folder = tmp_path / "sessions" / "--home-ana-projects-invoice-api--"
    folder.mkdir(parents=True)
    return Path(shutil.copy(RICH, folder / RICH.name))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_verdict_on_a_v3_file_is_one_custom_entry_and_the_branches_stay(rich, data_home):
    session = Session.open(rich)
    tree = session.tree
    leaves, active = tree.leaves(), tree.conversation_leaf(tree.active_leaf)
    context = [m.get("role") for m in build_context(tree, active).messages]
    before = rich.read_bytes()
    target = leaves[0]
    v = give_verdict(session, target, "winner", "the only one that asks before a wide change")
    after = rich.read_bytes()
    assert after.startswith(before)
    new = after[len(before):].splitlines()
    assert len(new) == 1
    entry = orjson.loads(new[0])
    assert entry["type"] == "custom" and entry["customType"] == VERDICT_TYPE
    assert entry["data"] == {"targetId": target, "verdict": "winner",
                             "note": "the only one that asks before a wide change", "by": "person"}
    assert entry["parentId"] == tree.active_leaf  # appended where a label is
    assert v.where == "file" and not data_dir().exists()
    tree = Session.open(rich).tree
    assert tree.leaves() == leaves  # the verdict is no branch of its own
    assert tree.conversation_leaf(tree.active_leaf) == active
    assert [m.get("role") for m in build_context(tree, active).messages] == context  # never in the context


def test_the_latest_verdict_stands(rich):
    session = Session.open(rich)
    target = session.tree.leaves()[1]
    give_verdict(session, target, "better")
    give_verdict(session, target, "worse", "broke the CLI")
    got = persons(verdicts(Session.open(rich)))
    assert (got[target].verdict, got[target].note) == ("worse", "broke the CLI")


def test_a_bad_verdict_is_refused_and_nothing_is_written(rich):
    session = Session.open(rich)
    before = rich.read_bytes()
    with pytest.raises(InvalidWrite, match="use one of better, worse, winner"):
        give_verdict(session, session.tree.leaves()[0], "great")
    with pytest.raises(InvalidWrite, match="at most 2000"):
        give_verdict(session, session.tree.leaves()[0], "better", "x" * 2001)
    assert rich.read_bytes() == before


def test_a_read_only_file_stays_byte_identical_and_its_verdict_is_kept_in_the_data_folder(read_only_file, data_home):  # noqa: F811
    before = sha256(read_only_file)
    files_before = sorted(p.name for p in read_only_file.parent.iterdir())
    session = Session.open(read_only_file)
    target = session.tree.leaves()[-1]
    v = give_verdict(session, target, "better", "clearer")
    assert v.where == "data folder"
    assert sha256(read_only_file) == before
    assert sorted(p.name for p in read_only_file.parent.iterdir()) == files_before  # nothing beside it
    kept = list((data_home / "session-tree" / "verdicts").iterdir())
    assert len(kept) == 1
    record = orjson.loads(kept[0].read_bytes().splitlines()[0])
    assert (record["targetId"], record["verdict"], record["note"], record["by"]) == (target, "better", "clearer", "person")
    got = persons(verdicts(Session.open(read_only_file)))
    assert got[target].verdict == "better" and got[target].where == "data folder"


def test_cli_verdict_writes_and_compare_shows_it(capsys, rich):
    tips = Session.open(rich).tree.leaves()[:2]
    code, out, err = run(capsys, "verdict", rich, tips[0][-8:], "winner", "--note", "asks first")
    assert code == 0 and err == ""
    assert out.strip() == f"winner on {tips[0][-8:]} (asks first): appended to the session"
    code, out, _ = run(capsys, "compare", rich, *tips)
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("verdict"))
    assert line.split()[1:] == ["winner", "(person)", "–"]


def test_cli_verdict_refuses_a_wrong_word(capsys, rich):
    with pytest.raises(SystemExit) as exc:
        run(capsys, "verdict", rich, "whatever", "great")
    assert exc.value.code == 2
    assert "invalid choice: 'great'" in capsys.readouterr().err


# -- web -------------------------------------------------------------------------------------------


@pytest.fixture
def web(rich):
    root = rich.parent.parent
    app = create_app(root)
    return app, app.test_client(), "/s/" + rich.relative_to(root).as_posix()


def post(app, client, url, data, **headers):
    return client.post(url, data={"csrf_token": app.config["CSRF_TOKEN"], **data}, headers=headers)


def test_the_verdict_form_writes_and_every_branch_list_shows_it(web, rich):
    app, client, url = web
    tips = Session.open(rich).tree.leaves()
    back = f"{url}/compare?ids={tips[0]},{tips[1]}"
    r = post(app, client, f"{url}/-/verdict", {"target": tips[1], "verdict": "winner", "note": "tidy", "next": back})
    assert r.status_code == 303 and r.headers["Location"].endswith(back)
    post(app, client, f"{url}/-/verdict", {"target": tips[0], "verdict": "worse", "next": back})
    page = client.get(back).get_data(as_text=True)
    assert page.count('class="verdict verdict-winner"') == 1 and page.count('class="verdict verdict-worse"') == 1
    assert 'class="verdict-form"' in page
    branches = client.get(f"{url}?tab=branches").get_data(as_text=True)
    assert 'verdict verdict-winner' in branches and 'verdict verdict-worse' in branches
    picker = client.get(f"{url}/-/transcript/branches", headers={"HX-Request": "true"}).get_data(as_text=True)
    rows = {t: next(li for li in picker.split("<li")[1:] if f'data-select="{t}"' in li) for t in tips[:2]}
    assert 'verdict verdict-worse' in rows[tips[0]] and 'verdict verdict-winner' in rows[tips[1]]
    every = client.get(f"{url}/compare/all?sort=verdict").get_data(as_text=True)
    order = [every.index(f'data-leaf="{t}"') for t in (tips[1], tips[2], tips[0])]
    assert order == sorted(order)  # winner first, then no verdict, worse last
    asc = client.get(f"{url}/compare/all?sort=verdict&order=asc").get_data(as_text=True)
    assert asc.index(f'data-leaf="{tips[0]}"') < asc.index(f'data-leaf="{tips[1]}"')


def test_a_bad_verdict_from_the_web_is_a_clear_400_and_nothing_is_written(web, rich):
    app, client, url = web
    before = rich.read_bytes()
    r = post(app, client, f"{url}/-/verdict", {"target": Session.open(rich).tree.leaves()[0], "verdict": "meh"})
    assert r.status_code == 400 and "use one of better, worse, winner" in r.get_data(as_text=True)
    assert post(app, client, f"{url}/-/verdict", {"target": "nope", "verdict": "better"}).status_code == 404
    assert client.post(f"{url}/-/verdict", data={"target": "x", "verdict": "better"}).status_code == 403  # no token
    assert rich.read_bytes() == before


def test_a_verdict_on_a_read_only_file_from_the_web(tmp_path, read_only_file, data_home):  # noqa: F811
    root = read_only_file.parent.parent
    app = create_app(root)
    client = app.test_client()
    url = "/s/" + read_only_file.relative_to(root).as_posix()
    before = sha256(read_only_file)
    target = Session.open(read_only_file).tree.leaves()[-1]
    r = post(app, client, f"{url}/-/verdict", {"target": target, "verdict": "better"})
    assert r.status_code == 303
    assert sha256(read_only_file) == before
    assert 'verdict verdict-better' in client.get(f"{url}?tab=branches").get_data(as_text=True)


def test_read_only_mode_refuses_verdicts_and_hides_the_form(web, rich):
    app, client, url = web
    app.config["READ_ONLY"] = True
    tips = Session.open(rich).tree.leaves()
    r = post(app, client, f"{url}/-/verdict", {"target": tips[0], "verdict": "better"})
    assert r.status_code == 403
    assert 'class="verdict-form"' not in client.get(f"{url}/compare?ids={tips[0]},{tips[1]}").get_data(as_text=True)
