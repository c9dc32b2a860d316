"""Reads never wait on a writer's lock: while a web write waits for the file lock another
process holds, every GET of that session still answers."""

from __future__ import annotations

import subprocess
import sys
import threading

from tests.conftest import Builder
from webapp.web.app import create_app

HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.readline()  # hold the lock until told
"""


def test_gets_answer_while_a_write_waits_for_another_process_lock(tmp_path):
    b = Builder()
    b.user("hello", id="u1")
    b.assistant("hi", id="a1")
    path = b.write(tmp_path / "s.jsonl")
    app = create_app(tmp_path)
    session = app.extensions["session_store"].session("s.jsonl")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        writer = threading.Thread(target=session.set_label, args=("a1", "waited"))
        writer.start()
        writer.join(0.5)
        assert writer.is_alive()  # the write waits for the other process
        answers = {}

        def read_all():
            client = app.test_client()
            for url in ("/s/s.jsonl", "/s/s.jsonl?node=u1&tab=context", "/s/s.jsonl/-/raw?id=a1"):
                answers[url] = client.get(url).status_code

        reader = threading.Thread(target=read_all)
        reader.start()
        reader.join(60)  # (a liveness bound, not a speed measure: before the fix this hung)
        assert not reader.is_alive(), "a GET waited for the writer's lock"
        assert set(answers.values()) == {200}
        assert writer.is_alive()  # and the write was still waiting all along
    finally:
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(60)
    writer.join(60)
    assert not writer.is_alive()
    assert session.tree.labels == {"a1": "waited"}
