"""Where the app must not write: a session file we may not change (SPEC §5c), and read-only mode
(`create_app(READ_ONLY=True)`, `serve --read-only`). Write routes are enumerated from the app's
url_map, so a new POST route is covered without being named here."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from webapp.core.context import build_context
from webapp.core.session import Session
from webapp.web.app import create_app
from webapp.web.guard import READ_ONLY_MODE

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
RICH = "--home-ana-projects-invoice-api--/2026-03-02T09-14-05-221Z_019cadd3-8025-7970-85d9-5954058b4714.jsonl"
CLAUDE = "--tmp-claude--/daaain_dag_compact_after_rewind.jsonl"
CODEX = "--tmp-codex--/agent-sessions_codex_small.jsonl"
V1 = "--home-ana-projects-legacy-cli--/2025-11-18T10-05-33-910Z_019a966d-4156-7b5f-a5c6-ef5f3ad16722.jsonl"
# What a write control looks like in a page: the action of a form, or the GET that opens one.
WRITE_MARKS = ("/-/fork", "/-/reply", "/-/settings", "/-/label", "/-/compact\"", "/-/regenerate", "/-/continue-new",
               "Commit the compaction")


@pytest.fixture
def root(tmp_path, monkeypatch):
    for var in ("SESSION_TREE_MODEL", "SESSION_TREE_API_BASE"):
        monkeypatch.delenv(var, raising=False)
    shutil.copytree(SAMPLES, tmp_path / "s")
    for rel, source in ((CLAUDE, FIXTURES / "claude-code" / "daaain_dag_compact_after_rewind.jsonl"),
                        (CODEX, FIXTURES / "codex" / "agent-sessions_codex_small.jsonl")):
        (tmp_path / "s" / rel).parent.mkdir()
        shutil.copy(source, tmp_path / "s" / rel)
    return tmp_path / "s"


def digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*.jsonl")}


def write_routes(app) -> list[str]:
    """Every POST route that is not marked as only computing, nor as refusing writes itself (the
    MCP endpoint, which offers no write tool on a read-only server: tests/mcp_server)."""
    return sorted(r.endpoint for r in app.url_map.iter_rules()
                  if "POST" in r.methods and not any(getattr(app.view_functions[r.endpoint], mark, False)
                                                     for mark in ("computes_only", "own_write_rule")))


def post(client, app, url, data=None, **headers):
    return client.post(url, data={"csrf_token": app.config["CSRF_TOKEN"], **(data or {})}, headers=headers)


def pages(client, rel: str, node: str) -> str:
    """The session page and every panel a person can open, as one text."""
    html = [client.get(f"/s/{rel}?node={node}").get_data(as_text=True)]
    for tab in ("node", "context", "branches", "summaries", "compact"):
        url = f"/s/{rel}/-/panel/{tab}?node={node}&keep_recent_tokens=0"  # 0: the compaction can be made
        html.append(client.get(url, headers={"HX-Request": "true"}).get_data(as_text=True))
    return "\n".join(html)


def test_every_write_route_is_refused_in_read_only_mode(root):
    app = create_app(root, READ_ONLY=True)
    client = app.test_client()
    before = digests(root)
    leaf = Session.open(root / RICH).tree.active_leaf
    routes = write_routes(app)
    assert {"actions.fork", "actions.label", "actions.compact", "actions.continue_new"} <= set(routes)
    for endpoint in routes:
        rule = next(r for r in app.url_map.iter_rules() if r.endpoint == endpoint)
        url = rule.rule.replace("<path:rel>", RICH)
        for headers in ({}, {"Accept": "text/event-stream"}):
            r = post(client, app, url, {"node": leaf, "leaf": leaf, "label": "x", "message": "hi", "summary": "s"}, **headers)
            assert r.status_code == 403, endpoint
            assert READ_ONLY_MODE in r.get_data(as_text=True)
    assert digests(root) == before


def test_read_only_mode_shows_no_write_control_and_keeps_previews(root):
    app = create_app(root, READ_ONLY=True)
    client = app.test_client()
    leaf = Session.open(root / RICH).tree.conversation_leaf(Session.open(root / RICH).tree.active_leaf)
    html = pages(client, RICH, leaf)
    assert "What the model sees here" in html  # the page is whole: only its write controls are gone
    for mark in WRITE_MARKS + ("Continue in a new session",):
        assert mark not in html, mark
    assert READ_ONLY_MODE in html  # the node and compaction panels say why they offer no write
    assert client.get(f"/s/{RICH}/-/fork-form?node={leaf}").status_code == 403
    # a route that only computes still answers
    r = post(client, app, f"/s/{RICH}/-/compact/summary", {"leaf": leaf, "keep_recent_tokens": "0"})
    assert r.status_code == 200 and "<textarea" in r.get_data(as_text=True)


def test_a_writable_app_shows_the_write_controls(root):
    client = create_app(root).test_client()
    tree = Session.open(root / RICH).tree
    html = pages(client, RICH, tree.conversation_leaf(tree.active_leaf))
    for mark in ("/-/fork-form", "/-/label", "/-/compact\"", "Commit the compaction"):
        assert mark in html, mark


@pytest.mark.parametrize("rel", [CLAUDE, CODEX, V1])
def test_a_file_we_may_not_write_offers_only_continue_in_a_new_session(root, rel):
    app = create_app(root)
    client = app.test_client()
    session = Session.open(root / rel)
    leaf = session.tree.conversation_leaf(session.tree.active_leaf)
    before = digests(root)
    html = pages(client, rel, leaf)
    for mark in WRITE_MARKS[:-2]:
        assert mark not in html, mark
    assert "Continue in a new session" in html and "/-/continue-new" in html
    for endpoint in write_routes(app):
        view = app.view_functions[endpoint]
        if endpoint == "actions.continue_new" or getattr(view, "keeps_app_data", False) or \
                getattr(view, "writes_or_continues", False):
            continue  # (a new file; a verdict kept in the app's data folder; a context edit written in a
            # continuation: the digests below hold the file)
        rule = next(r for r in app.url_map.iter_rules() if r.endpoint == endpoint)
        r = post(client, app, rule.rule.replace("<path:rel>", rel), {"node": leaf, "label": "x", "message": "hi"},
                 Accept="text/event-stream")
        assert r.status_code == 403 and session.read_only_reason in r.get_data(as_text=True), endpoint
    assert digests(root) == before
    r = post(client, app, f"/s/{rel}/-/continue-new", {"node": leaf})
    assert r.status_code == 303
    assert digests(root).items() >= before.items()  # nothing changed, one file more
    new_rel = r.headers["Location"].split("/s/", 1)[1]
    new = root / new_rel
    assert new.parent == (root / rel).parent and len(digests(root)) == len(before) + 1
    copy = Session.open(new)
    assert copy.tree.header["parentSession"] == str((root / rel).resolve())
    strip = lambda msgs: [{k: v for k, v in m.items() if k != "entryId"} for m in msgs]  # noqa: E731
    assert strip(build_context(copy.tree, copy.tree.conversation_leaf(copy.tree.active_leaf)).messages) == \
        strip(build_context(session.tree, leaf).messages)
    page = client.get(r.headers["Location"]).get_data(as_text=True)
    assert "/-/fork-form" in page and "Continue in a new session" not in page  # the copy takes writes


def test_a_file_without_write_permission_gets_a_clear_403(root, monkeypatch):
    app = create_app(root)
    client = app.test_client()
    path = (root / RICH).resolve()
    real_access = __import__("os").access
    monkeypatch.setattr("os.access", lambda p, mode, **kw: False if Path(p) == path else real_access(p, mode, **kw))
    leaf = Session.open(path).tree.active_leaf
    before = digests(root)
    for headers in ({}, {"Accept": "text/event-stream"}):
        r = post(client, app, f"/s/{RICH}/-/fork", {"node": leaf, "message": "hi"}, **headers)
        assert r.status_code == 403 and "permission denied" in r.get_data(as_text=True)
    assert digests(root) == before


def test_an_unreadable_file_is_a_clear_403(root, monkeypatch):
    client = create_app(root).test_client()
    path = (root / RICH).resolve()
    real_open = open

    def refuse(file, *args, **kw):
        if Path(str(file)).resolve() == path:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kw)

    monkeypatch.setattr("builtins.open", refuse)
    r = client.get(f"/s/{RICH}")
    assert r.status_code == 403
    assert "cannot be read (Permission denied)" in r.get_data(as_text=True)


@pytest.mark.parametrize("argv, read_only", [([], False), (["--read-only"], True)])
def test_serve_read_only_sets_the_setting(root, monkeypatch, capsys, argv, read_only):
    from webapp.cli import main

    served = {}
    monkeypatch.setattr("flask.Flask.run", lambda app, **kw: served.update(app.config))
    assert main(["serve", str(root), *argv]) == 0
    assert served["READ_ONLY"] is read_only
    assert ("read-only" in capsys.readouterr().out) is read_only
