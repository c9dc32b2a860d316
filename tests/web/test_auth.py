"""Who may use the server (webapp/web/auth.py): every route but the static assets refuses a
request that shows neither the token, nor the cookie a login set; the token in the address sets
a cookie no script reads and no other site sends, and leaves the address; the password set with
`session-tree password` logs in too; `serve --no-auth` says on every page that it is open.

These tests use anonymous clients (`FlaskClient`): the suite's own (conftest.py) is the owner."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from flask import url_for
from flask.testing import FlaskClient

from tests.conftest import Builder
from webapp.cli import main
from webapp.web.app import create_app
from webapp.web.auth import owner

ARGS = {"rel": "p/s.jsonl", "kind": "children", "tab": "node", "cid": "e1", "filename": "app.css", "name": "corpus-tables",
        "run": "lab-x"}
LOGIN_FORM = 'name="secret"'


@pytest.fixture
def root(tmp_path) -> Path:
    b = Builder()
    b.user("the words only the owner may read")
    b.assistant("a reply")
    (tmp_path / "root" / "p").mkdir(parents=True)
    b.write(tmp_path / "root" / "p" / "s.jsonl")
    return tmp_path / "root"


@pytest.fixture
def app(root, tmp_path):
    return create_app(root, CORPUS_DB=tmp_path / "c.duckdb")


@pytest.fixture(autouse=True)
def own_config_folder(tmp_path, monkeypatch):
    """The password of the test's own (never the user's)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def anonymous(app) -> FlaskClient:
    return FlaskClient(app, app.response_class)


def refused(got) -> bool:
    """A bare 401, or (a page asked without proof) the way to the login page."""
    return got.status_code == 401 or (got.status_code == 303 and got.headers["Location"].startswith("/-/login?next="))


def every_route(app) -> list[tuple[str, str, str]]:
    """(method, URL, endpoint) of every route of the app but the assets (its static files, its icon)."""
    out = []
    with app.test_request_context():
        for rule in app.url_map.iter_rules():
            if rule.endpoint in ("static", "auth.favicon"):
                continue
            url = url_for(rule.endpoint, **{a: ARGS[a] for a in rule.arguments})
            out += [(m, url, rule.endpoint) for m in sorted(rule.methods - {"HEAD", "OPTIONS"})]
    return out


def test_every_route_but_the_assets_refuses_a_request_that_shows_nothing(app):
    client = anonymous(app)
    routes = every_route(app)
    assert len(routes) > 45 and ("POST", "/-/login", "auth.login") in routes
    for method, url, endpoint in routes:
        got = client.open(url, method=method, data={"csrf_token": "guessed"})
        if (method, endpoint) == ("GET", "auth.login"):  # the login page itself: a form, nothing of a session
            assert got.status_code == 200 and LOGIN_FORM in got.text
        else:
            assert refused(got), (method, url, got.status_code)
        assert b"only the owner" not in got.data and b"csrf" not in got.data.lower(), (method, url)
    assert refused(client.get("/no/such/page"))  # (not even which pages exist)
    assert client.get("/no/such/page", headers={"Accept": "text/html"}).headers["Location"] == \
        "/-/login?next=%2Fno%2Fsuch%2Fpage"
    assert client.get("/static/app.css").status_code == 200  # the assets are nobody's secret
    assert client.get("/static/favicon.svg").status_code == 200
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.mimetype == "image/svg+xml"


def test_a_page_refused_leads_to_the_login_page_and_a_fragment_or_a_stream_gets_a_bare_401(app):
    client = anonymous(app)
    way = client.get("/s/p/s.jsonl?view=text", headers={"Accept": "text/html"})
    assert way.status_code == 303 and way.headers["Cache-Control"] == "no-store"
    assert way.headers["Location"] == "/-/login?next=%2Fs%2Fp%2Fs.jsonl%3Fview%3Dtext"
    page = client.get(way.headers["Location"], headers={"Accept": "text/html"})
    assert page.status_code == 200 and LOGIN_FORM in page.text and "Token or password" in page.text
    assert 'name="next" value="/s/p/s.jsonl?view=text"' in page.text and page.headers["Cache-Control"] == "no-store"
    assert "the words only the owner may read" not in page.text and 'role="alert"' not in page.text
    for headers in ({"HX-Request": "true"}, {"Accept": "text/event-stream"}, {"Accept": "application/json"}):
        got = client.get("/s/p/s.jsonl/-/graph", headers=headers)
        assert got.status_code == 401 and LOGIN_FORM not in got.text
        assert got.text == "Not logged in: open the address `session-tree serve` printed"
    cli = client.get("/-/corpus/sql?sql=SELECT+1")
    assert cli.status_code == 401 and "token it wrote beside its index" in cli.json["error"]


def test_the_token_in_the_address_sets_a_private_cookie_and_leaves_the_address(app):
    client = anonymous(app)
    token = owner(app).token
    got = client.get(f"/s/p/s.jsonl?view=text&token={token}&x=1", headers={"Host": "127.0.0.1:8123"})
    assert got.status_code == 303
    assert got.headers["Location"] == "/s/p/s.jsonl?view=text&x=1"  # the token is in no history nor Referer
    assert got.headers["Cache-Control"] == "no-store"
    cookie = got.headers["Set-Cookie"]
    name, _, value = cookie.split(";")[0].partition("=")
    assert name == "session-tree-8123" and value and value != token  # (the cookie is not the token)
    attributes = {a.strip().lower() for a in cookie.split(";")[1:]}
    assert {"httponly", "samesite=strict", "path=/"} <= attributes
    page = client.get("/s/p/s.jsonl", headers={"Host": "127.0.0.1:8123"})  # the cookie now logs in
    assert page.status_code == 200 and "the words only the owner may read" in page.text
    other_port = client.get("/s/p/s.jsonl", headers={"Host": "127.0.0.1:8124"})  # another server's cookie name
    assert refused(other_port)


def test_a_redirect_after_the_token_stays_on_this_server(app):
    # (what a browser sends for http://127.0.0.1:8000//evil.example/x?token=...)
    got = anonymous(app).get("/", environ_overrides={"PATH_INFO": "//evil.example/x",
                                                     "QUERY_STRING": f"token={owner(app).token}"})
    assert got.status_code == 303 and got.headers["Location"] == "/evil.example/x"


@pytest.mark.parametrize("how", ["address", "cookie", "header", "other scheme"])
def test_a_wrong_token_or_cookie_is_refused(app, how):
    client = anonymous(app)
    token = owner(app).token
    wrong = token[:-1] + ("A" if token[-1] != "A" else "B")
    if how == "address":
        got = client.get(f"/s/p/s.jsonl?token={wrong}", headers={"Accept": "text/html"})
        assert got.headers["Location"] == "/-/login?next=%2Fs%2Fp%2Fs.jsonl&why=stale" and "Set-Cookie" not in got.headers
        login = client.get(got.headers["Location"])
        assert "That link&#39;s token is not this server&#39;s" in login.text and wrong not in login.text
    elif how == "cookie":
        client.set_cookie("session-tree-80", token)  # (the token is not what the cookie holds)
        got = client.get("/s/p/s.jsonl")
    elif how == "header":
        got = client.get("/s/p/s.jsonl", headers={"Authorization": f"token {wrong}"})
    else:
        got = client.get("/s/p/s.jsonl", headers={"Authorization": f"Basic {token}"})
    assert refused(got) and "only the owner" not in got.text


def test_the_token_in_a_header_is_accepted(app):
    token = owner(app).token
    for scheme in ("token", "Bearer"):
        got = anonymous(app).get("/s/p/s.jsonl", headers={"Authorization": f"{scheme} {token}"})
        assert got.status_code == 200 and "the words only the owner may read" in got.text


def test_the_login_form_takes_the_token(app):
    client = anonymous(app)
    got = client.post("/-/login", data={"secret": owner(app).token, "next": "/s/p/s.jsonl"})
    assert got.status_code == 303 and got.headers["Location"] == "/s/p/s.jsonl"
    assert client.get("/s/p/s.jsonl").status_code == 200
    assert client.get("/-/login?next=/s/p/s.jsonl").headers["Location"] == "/s/p/s.jsonl"  # (logged in already)


def test_a_password_set_with_the_command_logs_in(app, tmp_path, capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"correct horse battery\n")))
    assert main(["password"]) == 0
    assert "the password is set" in capsys.readouterr().out
    kept = tmp_path / "config" / "session-tree" / "password.json"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    assert b"correct horse" not in kept.read_bytes()  # a salted hash, not the password
    client = anonymous(app)
    wrong = client.post("/-/login", data={"secret": "correct horse", "next": "/"})
    assert wrong.headers["Location"] == "/-/login?next=%2F&why=wrong" and "Set-Cookie" not in wrong.headers
    assert "neither this server&#39;s token nor its password" in client.get(wrong.headers["Location"]).text
    got = client.post("/-/login", data={"secret": "correct horse battery", "next": "/s/p/s.jsonl"})
    assert got.status_code == 303 and "HttpOnly" in got.headers["Set-Cookie"]
    assert client.get("/s/p/s.jsonl").status_code == 200
    cross_site = anonymous(app).post("/-/login", data={"secret": "correct horse battery"},
                                      headers={"Origin": "http://evil.example"})
    assert cross_site.status_code == 403  # (the same-origin check of every POST still holds)
    # A password file others may write is not read (anyone could have put a hash there).
    os.chmod(kept, 0o666)
    assert "why=wrong" in anonymous(app).post("/-/login", data={"secret": "correct horse battery"}).headers["Location"]
    os.chmod(kept, 0o600)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert main(["password", "--remove"]) == 0 and not kept.exists()
    assert "why=wrong" in anonymous(app).post("/-/login", data={"secret": "correct horse battery"}).headers["Location"]


def test_a_short_password_is_refused_in_one_line(capsys, monkeypatch, tmp_path):
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"short\n")))
    assert main(["password"]) == 2
    err = capsys.readouterr().err
    assert err == "session-tree: error: the password has 5 characters; at least 8, please\n"
    assert not (tmp_path / "config" / "session-tree" / "password.json").exists()


def test_an_open_server_says_so_on_every_page_and_a_closed_one_does_not(root, tmp_path):
    opened = create_app(root, CORPUS_DB=tmp_path / "c.duckdb", NO_AUTH=True)
    for url in ("/", "/s/p/s.jsonl"):
        page = anonymous(opened).get(url)
        assert page.status_code == 200 and "Open to every account on this machine" in page.text
    assert anonymous(opened).get("/-/corpus/sql?sql=SELECT+1").status_code == 401  # (the CLI's: the token only)
    closed = create_app(root, CORPUS_DB=tmp_path / "c.duckdb")
    assert "Open to every account" not in closed.test_client().get("/").text


def test_serve_no_auth_warns_and_prints_no_token(root, monkeypatch, capsys, tmp_path):
    served = {}
    monkeypatch.setattr("flask.Flask.run", lambda app, **kw: served.update(app=app))
    assert main(["serve", str(root), "--no-auth", "--db", str(tmp_path / "c.duckdb")]) == 0
    out, err = capsys.readouterr()
    assert "token=" not in out and "session-tree: warning: this server asks nobody who they are" in err
    assert owner(served["app"]).open
    served["app"].extensions["corpus"].join()
    served["app"].extensions["corpus"].index.close()


def test_serve_takes_the_token_of_the_environment_and_refuses_a_weak_one(root, monkeypatch, capsys, tmp_path):
    served = {}
    monkeypatch.setattr("flask.Flask.run", lambda app, **kw: served.update(app=app))
    monkeypatch.setenv("SESSION_TREE_TOKEN", "short")
    assert main(["serve", str(root), "--db", str(tmp_path / "c.duckdb")]) == 2
    assert capsys.readouterr().err == ("session-tree: error: $SESSION_TREE_TOKEN must be at least 16 printable ASCII "
                                       "characters without spaces\n")
    monkeypatch.setenv("SESSION_TREE_TOKEN", "a-token-of-my-own-choosing")
    assert main(["serve", str(root), "--db", str(tmp_path / "c.duckdb")]) == 0
    assert "?token=a-token-of-my-own-choosing" in capsys.readouterr().out
    assert owner(served["app"]).token == "a-token-of-my-own-choosing"
    served["app"].extensions["corpus"].join()
    served["app"].extensions["corpus"].index.close()
