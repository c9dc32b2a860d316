"""The sandbox's limits on each tool call, run directly (no model): a call that runs too long is
stopped with everything it started, a long output is cut and says so, and a link inside the copy
that points out of it is refused."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from webapp.model.tool_runner import RAN, REFUSED, SandboxTools


@pytest.fixture
def box(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "big.txt").write_text("x" * 500)
    (tmp_path / "secret.txt").write_text("the user's own file\n")
    (proj / "link.txt").symlink_to(tmp_path / "secret.txt")
    sandbox = SandboxTools.copy_of(str(proj), allow_bash=True, time_limit=2.0)
    yield sandbox
    sandbox.close()


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] != "Z"  # a zombie has stopped
    except FileNotFoundError:
        return False


def test_a_call_over_the_time_limit_stops_with_what_it_started(box):
    # A process started in the background would outlive the shell if only the shell were stopped.
    result = box.run("bash", {"command": "(echo $BASHPID > child.pid; exec sleep 60) & sleep 60"})
    assert result.is_error and result.text == "Stopped: the call took longer than 2 s."
    pid = int((box.root / "child.pid").read_text())
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


def test_a_long_output_is_cut_and_says_where(box):
    box.output_cap = 100
    result = box.run("read", {"path": "big.txt"})
    assert result.how == RAN and result.text == "x" * 100 + "\n[output cut at 100 characters of 500]"
    shell = box.run("bash", {"command": "printf 'y%.0s' $(seq 300)"})
    assert shell.text == "y" * 100 + "\n[output cut at 100 characters of 300]"


def test_a_link_out_of_the_copy_is_refused(box):
    result = box.run("read", {"path": "link.txt"})
    assert result.how == REFUSED and "resolves outside the sandbox's copy" in result.text
    assert os.path.islink(box.root / "link.txt")
