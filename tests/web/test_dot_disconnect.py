"""A `dot` run lives as long as a client waits for its drawing: through a real server on
127.0.0.1, a client that hangs up takes its `dot` with it, unless another client waits for the
same drawing."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
import urllib.request

import pytest
from werkzeug.serving import make_server

from tests.conftest import Builder
from webapp.web.graph import dot as graph
from webapp.web.app import create_app
from webapp.web import sessions

PROJECT = "--home-ana-proj--"
TOKEN = "the-tests-own-token-for-this-server"  # (the server asks every request for it: auth.py)
OWNER = {"Authorization": f"token {TOKEN}"}
PATIENCE = 60.0  # seconds a poll below waits at most for what must happen (no speed is measured)


@pytest.fixture
def held_dot(tmp_path, monkeypatch):
    """A `dot` on PATH that notes its pid and waits for the file `go` before running the real
    one; a time limit far away, so that only a client leaving can stop it."""
    real = shutil.which("dot")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "dot"
    fake.write_text(
        f"#!/bin/sh\necho $$ >> {tmp_path}/dot.pids\n"
        f"while [ ! -e {tmp_path}/go ]; do sleep 0.05; done\nexec {real} \"$@\"\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(graph, "DOT_TIMEOUT", 120.0)
    yield tmp_path
    (tmp_path / "go").touch()
    graph.kill_running_dots()


@pytest.fixture
def server(tmp_path):
    """The app served by Werkzeug's threaded server (as `session-tree serve` does) on a free port."""
    root = tmp_path / "sessions"
    folder = root / PROJECT
    folder.mkdir(parents=True)
    b = Builder()
    b.user("first question")
    b.assistant("first answer")
    (folder / "2026-01-01T00-00-00-000Z_small.jsonl").write_bytes(b"\n".join(b.lines) + b"\n")
    app = create_app(root, AUTH_TOKEN=TOKEN)
    srv = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv.server_port, f"/s/{PROJECT}/2026-01-01T00-00-00-000Z_small.jsonl"
    srv.shutdown()
    thread.join()


def ask(port: int, path: str) -> socket.socket:
    """A client that sends a GET and then waits (reads nothing yet)."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: token {TOKEN}\r\n\r\n".encode())
    return sock


def until(condition) -> bool:
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def pids(folder) -> list[int]:
    path = folder / "dot.pids"
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_client_that_hangs_up_takes_its_dot_with_it(server, held_dot):
    port, path = server
    sock = ask(port, path)
    assert until(lambda: pids(held_dot))
    (pid,) = pids(held_dot)
    assert alive(pid)
    sock.close()
    assert until(lambda: not alive(pid)), "dot still runs after its client left"
    # Nothing was remembered of the abandoned run: the next visitor gets the drawing.
    (held_dot / "go").touch()
    with urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=OWNER)) as r:
        html = r.read().decode()
    assert "<svg" in html and "took too long" not in html
    assert len(pids(held_dot)) == 2


def waiting_for_one_drawing() -> int:
    """How many requests wait for the drawing being made (the server's own count)."""
    return max((len(waiting) for _, waiting in list(sessions._one_run._locks.values())), default=0)


def test_dot_goes_on_while_another_client_waits_for_the_same_drawing(server, held_dot, monkeypatch):
    port, path = server
    looks = [0]
    real = graph.client.still_wanted
    monkeypatch.setattr(graph.client, "still_wanted", lambda: looks.__setitem__(0, looks[0] + 1) or real())
    first = ask(port, path)
    assert until(lambda: pids(held_dot))
    second = ask(port, path)
    assert until(lambda: waiting_for_one_drawing() == 2)  # the second waits before the first leaves
    first.close()
    # The first client has left; the drawing is still wanted by the second: after ten more
    # looks at the clients (one every DOT_POLL seconds), dot runs on.
    since = looks[0]
    assert until(lambda: looks[0] >= since + 10)
    (pid,) = pids(held_dot)
    assert alive(pid)
    (held_dot / "go").touch()
    second.settimeout(PATIENCE)
    answer = b""
    while b"</html>" not in answer:
        chunk = second.recv(65536)
        if not chunk:
            break
        answer += chunk
    second.close()
    assert answer.startswith(b"HTTP/1.1 200") and b"<svg" in answer
    assert pids(held_dot) == [pid]  # one dot made the drawing for both


def test_when_every_waiting_client_leaves_the_dot_is_killed(server, held_dot):
    port, path = server
    first = ask(port, path)
    assert until(lambda: pids(held_dot))
    second = ask(port, path)
    assert until(lambda: waiting_for_one_drawing() == 2)
    (pid,) = pids(held_dot)
    first.close()
    second.close()
    assert until(lambda: not alive(pid))
