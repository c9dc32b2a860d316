"""`session-tree demo`, and `serve` with no folder where there are no agents' folders, serve a
fresh copy of the bundled samples, removed when the server stops: what a visitor writes never
lands in the package's own files (in a checkout, the git-tracked sample_sessions/)."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_wheel import browser, clean_env, free_port, get, served_url
from webapp.bundled import SAMPLES, bundled_folder
from webapp.web.app import create_app

PROJECT = Path(__file__).resolve().parents[1]


def digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("argv", [["demo"], ["serve"]])
def test_the_demo_and_a_serve_without_agents_folders_serve_a_fresh_copy_of_the_samples(argv, tmp_path):
    samples = digests(PROJECT / "sample_sessions")
    env = {**clean_env(tmp_path / "home"), "PYTHONPATH": str(PROJECT)}  # a home with no agents' folders
    proc = subprocess.Popen([sys.executable, "-m", "webapp.cli", *argv, "--port", str(free_port())], env=env,
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    try:
        url, served = served_url(proc)
        assert served.is_relative_to(tmp_path / "home" / "tmp") and digests(served) == samples
        assert get(browser(), url, proc, time.monotonic() + 60).status == 200
        (next(served.rglob("*.jsonl"))).write_bytes(b"")  # what a visitor's writes change is the copy
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    assert not served.exists()
    assert digests(PROJECT / "sample_sessions") == samples


def test_an_app_made_without_a_folder_serves_the_bundled_samples_read_only(monkeypatch):
    monkeypatch.delenv("SESSION_TREE_ROOT", raising=False)
    app = create_app()
    assert app.config["SESSION_TREE_ROOT"] == str(bundled_folder(SAMPLES)) and app.config["READ_ONLY"]
    page = app.test_client().get("/").get_data(as_text=True)
    assert "invoice-api" in page
