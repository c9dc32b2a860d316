"""`make serve` serves a fresh copy of sample_sessions/: a fork made in the browser lands in the
copy, which goes when the server stops, and leaves the tracked sample files byte-identical."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from playwright.sync_api import expect

from tests.serve_process import SERVING, free_port
from webapp.core.session import Session

PROJECT = Path(__file__).resolve().parents[2]
SAMPLES = PROJECT / "sample_sessions"
RICH = "--home-ana-projects-invoice-api--/2026-03-02T09-14-05-221Z_019cadd3-8025-7970-85d9-5954058b4714.jsonl"
GOOD_APPROACH = "019cadd5-4547-793f-ae6d-00b2e72993a4"  # an assistant message inside the tree


def digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*")
            if p.is_file()}


def printed_address(proc: subprocess.Popen) -> tuple[str, Path]:
    """The address the server prints (with its token), once it accepts connections, and the
    folder it says it serves."""
    for line in proc.stdout:
        found = SERVING.match(line)
        if found:
            break
    else:
        raise AssertionError(f"make serve-demo exited: {proc.wait(30)}")
    threading.Thread(target=proc.stdout.read, daemon=True).start()  # (its request log: a full pipe would stop it)
    folder = Path(line.split("serving ", 1)[1].rsplit(" on ", 1)[0])
    port = int(found[1].rstrip("/").rpartition(":")[2])
    while True:
        assert proc.poll() is None, "make serve-demo exited"
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            return f"{found[1]}?token={found[2]}", folder
        except OSError:
            time.sleep(0.1)


def test_a_fork_on_the_demo_copy_leaves_the_samples_untouched(page, tmp_path):
    before = digests(SAMPLES)
    port = free_port()
    # The recipe `make serve` runs after installing (serve-demo), with this test's venv and folder.
    proc = subprocess.Popen(["make", "-s", "-C", str(PROJECT), "serve-demo", f"BIN={Path(sys.executable).parent}",
                             f"PORT={port}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "TMPDIR": str(tmp_path)},
                            start_new_session=True)  # its own group: make and the server stop together
    try:
        url = f"http://127.0.0.1:{port}"
        address, demo = printed_address(proc)
        assert demo.is_relative_to(tmp_path)  # a fresh copy in a temporary folder
        page.goto(address)  # as a person opens what it printed: logged in
        expect(page.locator("body")).to_contain_text("sessions")
        assert "token" not in page.url
        page.goto(f"{url}/s/{RICH}?node={GOOD_APPROACH}")
        page.click("#node-panel button:has-text('Fork here')")
        form = page.locator("#fork-form")
        expect(form).to_contain_text("The active leaf moves to")
        form.locator("button[type=submit]").click()
        expect(page.locator("#node-panel .badge.active")).to_be_visible()
        page.wait_for_function(f"document.querySelector('#graph g.node.active-leaf')?.id === 'e-{GOOD_APPROACH}'")
        assert Session.open(demo / RICH).tree.active_leaf == GOOD_APPROACH  # the fork landed in the copy
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
    assert not demo.exists()
    assert digests(SAMPLES) == before
    assert page.errors == []
