"""Another account on the machine gets nothing from a running server (the threat: every account
can reach 127.0.0.1). A real `session-tree serve` runs as the test's user; a probe
(tests/second_user_probe.py) runs as `nobody` when the test runs as root (as here and in CI) and
tries every route, the SQL box, a replay with whatever CSRF token the pages gave away, and the
files beside the index: every answer is 401 or 403 or the way to the login page, no page shows a
word of a session, and
every file is refused (EACCES). The same probe with the owner's token shows the requests are
real ones (no 401, the session's words in the page, a CSRF token in it).

Not as root the uid cannot be changed: the probe then runs as the same user without the token
(the answers are checked alike), and the test says that the files' part needs root."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

import pytest
from flask import url_for

from tests.serve_process import start_serve
from webapp.web.app import create_app

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
PROBE = Path(__file__).resolve().parents[1] / "second_user_probe.py"
NOBODY = 65534
RICH = "--home-ana-projects-invoice-api--/2026-03-02T09-14-05-221Z_019cadd3-8025-7970-85d9-5954058b4714.jsonl"
SECRET_TEXT = "test_total_with_discount"  # (words of that session's first message, on its page and in the corpus)
SQL = "/corpus?sql=SELECT+text+FROM+entries+WHERE+text+LIKE+'%25yesterday%25'"  # (its answer holds them)


@pytest.fixture
def place():
    """A folder every account may enter (a pytest tmp_path is root's alone: the probe could not
    even reach the files, whatever their modes), removed after the test."""
    folder = Path(tempfile.mkdtemp(prefix="session-tree-second-user-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def every_request(rel: str) -> list[list[str]]:
    """[method, path] of every route of the app, with real arguments, and the red team's own."""
    app = create_app(SAMPLES)
    args = {"rel": rel, "kind": "children", "tab": "node", "cid": "x", "filename": "app.css", "name": "corpus-tables",
            "run": "lab-x"}
    out = []
    with app.test_request_context():
        for rule in app.url_map.iter_rules():
            if rule.endpoint not in ("static", "auth.favicon"):
                url = url_for(rule.endpoint, **{a: args[a] for a in rule.arguments})
                out += [[m, url] for m in sorted(rule.methods - {"HEAD", "OPTIONS"})]
    return out + [["GET", SQL],
                  ["GET", "/-/corpus/sql?sql=SELECT+1&how=json&limit=5&seconds=5"],
                  ["GET", f"/s/{rel}/export/review?patterns=invoice"],
                  ["GET", f"/s/{rel}/export?redact=none"]]


def probe(place: Path, plan: dict, as_nobody: bool) -> dict:
    """The probe's report, run from a copy in `place` (as `nobody` if asked)."""
    (place / "probe.py").write_bytes(PROBE.read_bytes())
    (place / "plan.json").write_text(json.dumps(plan))
    for name in ("probe.py", "plan.json"):
        os.chmod(place / name, 0o644)
    who = {"user": NOBODY, "group": NOBODY, "extra_groups": []} if as_nobody else {}
    python = _python_for(who)
    got = subprocess.run([python, "-I", str(place / "probe.py"), str(place / "plan.json")], capture_output=True,
                         text=True, cwd=place, env={"PATH": "/usr/bin:/bin", "HOME": str(place)}, timeout=600, **who)
    assert got.returncode == 0, got.stderr
    return json.loads(got.stdout)


def _python_for(who: dict) -> str:
    """An interpreter the probe's account may run (the venv's may sit in a home only root enters)."""
    for candidate in (sys.executable, os.path.realpath(sys.executable), shutil.which("python3"), "/usr/bin/python3"):
        try:
            if candidate and subprocess.run([candidate, "-I", "-c", "pass"], capture_output=True, cwd="/",
                                            **who).returncode == 0:
                return candidate
        except OSError:  # (not this account's to run)
            continue
    raise AssertionError("no Python interpreter the probe's account may run")


def refused(answer: dict) -> bool:
    """401 or 403, the way to the login page, or the login page itself (a form, nothing more)."""
    if answer["status"] in (401, 403):
        return True
    if answer["status"] == 303:
        return answer["where"].startswith("/-/login?next=")
    return answer["path"].startswith("/-/login") and answer["status"] == 200 and answer["bytes"] < 4000


def test_a_second_user_gets_nothing_from_a_running_server(place, capsys):
    root, index, cache = place / "sessions", place / "index", place / "cache"
    shutil.copytree(SAMPLES, root)
    os.chmod(root, 0o700)  # (the sessions are the user's alone, as the agents write them)
    index.mkdir(mode=0o755)  # a folder others may enter: the files' own modes are all that keeps them out
    os.chmod(index, 0o755)
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "XDG_DATA_HOME": str(place / "data"),
           "XDG_CONFIG_HOME": str(place / "config")}
    served = start_serve([root, "--db", index / "corpus.duckdb"], env=env)
    try:
        requests = every_request(RICH)
        files = sorted(str(p) for p in index.iterdir())
        assert any(f.endswith("corpus.duckdb.server.json") for f in files)
        assert any(f.endswith("corpus.duckdb.text.sqlite") for f in files)
        plan = {"base": served.url, "requests": requests, "files": files, "rel": RICH, "secret_text": SECRET_TEXT}

        owner = probe(place, {**plan, "token": served.token,
                              "requests": [r for r in requests if r[0] == "GET"]}, as_nobody=False)
        answered = {(a["method"], a["path"]): a for a in owner["answers"]}
        assert not [a for a in owner["answers"] if a["status"] == 401]  # the requests are real ones
        assert answered["GET", f"/s/{RICH}"]["status"] == 200 and answered["GET", f"/s/{RICH}"]["shows_text"]
        # (a GET of the SQL box only fills the box: a query runs from its form, a POST; tests/corpus)
        assert answered["GET", SQL]["status"] == 200 and not answered["GET", SQL]["shows_text"]
        assert owner["csrf_tokens_found"] >= 1

        root_user = os.getuid() == 0
        stranger = probe(place, {**plan, "token": None}, as_nobody=root_user)
        let_in = [a for a in stranger["answers"] if not refused(a)]
        assert let_in == []
        assert [a for a in stranger["answers"] if a["shows_text"]] == []
        assert stranger["csrf_tokens_found"] == 0
        assert len(stranger["answers"]) > 3 * 45
        if root_user:
            # (a log may be removed by a checkpoint between the listing and the probe: gone, it is
            # read by no one; every other file must be refused)
            logs = {f for f in files if f.endswith((".wal", "-wal", "-shm"))}
            assert set(stranger["files"]) == set(files)
            assert all(v == "EACCES" or (v == "ENOENT" and f in logs) for f, v in stranger["files"].items()), \
                stranger["files"]
            assert all(stranger["files"][f] == "EACCES" for f in files if f not in logs), stranger["files"]
        else:
            with capsys.disabled():
                print("\ntest_second_user: not root, so the probe ran as this user without the token; "
                      "the uid separation (the files' modes) needs root")
    finally:
        served.stop()


def test_serve_prints_the_address_with_its_token_and_the_token_logs_in(place):
    root = place / "sessions"
    shutil.copytree(SAMPLES, root)
    served = start_serve([root, "--db", place / "c.duckdb"], env={**os.environ, "XDG_CONFIG_HOME": str(place)})
    try:
        assert served.token and len(served.token) >= 32
        assert f"on {served.url}?token={served.token}\n" in "".join(served.output)
        stay = urllib.request.build_opener(_Stay)
        way = stay.open(urllib.request.Request(served.url, headers={"Accept": "text/html"}), timeout=30)
        assert way.status == 303 and way.headers["Location"] == "/-/login?next=%2F"
        with urllib.request.urlopen(served.url.rstrip("/") + way.headers["Location"], timeout=30) as login:
            assert login.status == 200 and 'name="secret"' in login.read().decode()
        first = stay.open(f"{served.url}s/{RICH}?token={served.token}", timeout=30)
        assert first.status == 303 and first.headers["Location"] == f"/s/{RICH}"
        cookie = first.headers["Set-Cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        asked = urllib.request.Request(f"{served.url}s/{RICH}", headers={"Cookie": cookie.split(";")[0]})
        with urllib.request.urlopen(asked, timeout=60) as page:
            assert page.status == 200 and SECRET_TEXT in page.read().decode()
    finally:
        served.stop()


class _Stay(urllib.request.HTTPRedirectHandler):
    """A redirect is the answer read, not followed."""

    def redirect_request(self, *args, **kwargs):
        return None

    def http_error_303(self, req, fp, code, msg, headers):
        return fp
