"""The sandbox's limits on each tool call, run directly (no model): a call that runs too long is
stopped with everything it started, a long output is cut and says so, a link inside the copy
that points out of it is refused; each call runs in bubblewrap (no network, nothing of the
user's in view, limits on memory, file size and processes); the copy leaves devices, sockets
and FIFOs out; a cwd that is not an absolute folder is refused; an argument of the wrong type
gets an error result; a model's regular expression never holds the server's interpreter."""

from __future__ import annotations

import os
import socket
import stat
import threading
import time
from pathlib import Path

import pytest

from webapp.core.errors import InvalidWrite
from webapp.model import isolation as iso_module
from webapp.model import tool_runner
from webapp.model.isolation import NOBODY, isolation
from webapp.model.tool_runner import PROCESS_LIMIT, RAN, REFUSED, SandboxTools, checked_arguments


@pytest.fixture
def proj(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "big.txt").write_text("x" * 500)
    (tmp_path / "secret.txt").write_text("the user's own file\n")
    (proj / "link.txt").symlink_to(tmp_path / "secret.txt")
    return proj


@pytest.fixture
def box(proj):
    sandbox = SandboxTools.copy_of(str(proj), allow_bash=True, time_limit=4.0)  # (a loaded machine is slow)
    yield sandbox
    sandbox.close()


def running(marker: str) -> list[int]:
    """Host PIDs of live processes whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if marker.encode() in (entry / "cmdline").read_bytes() and \
                    (entry / "stat").read_text().split(") ")[-1][0] != "Z":  # a zombie has stopped
                found.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return found


def wait_until(check, seconds: float = 60.0) -> bool:  # (a bound for a loaded machine, not a speed)
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        time.sleep(0.05)
    return check()


def test_this_machine_isolates_with_bubblewrap():
    # The rest of this file checks bubblewrap's isolation: the machine the suite runs on has it
    # (the Makefile installs the Debian package bubblewrap).
    assert isolation().available, isolation().reason


def test_a_call_over_the_time_limit_stops_with_what_it_started(box):
    # A process started in the background would outlive the shell if only the shell were stopped.
    marker = f"sandbox-marker-{os.getpid()}"
    result = box.run("bash", {"command": f"(exec -a {marker} sleep 60) & sleep 60"})
    assert result.is_error and result.text == "Stopped: the call took longer than 4 s."
    assert wait_until(lambda: not running(marker))


def test_a_long_output_is_cut_and_says_where(box):
    box.output_cap = 100
    result = box.run("read", {"path": "big.txt"})
    assert result.how == RAN and result.text == "x" * 100 + "\n[output cut at 100 characters of 500]"
    shell = box.run("bash", {"command": "printf 'y%.0s' $(seq 300)"})
    assert shell.text == "y" * 100 + "\n[output cut at 100 characters of 300]"
    flood = box.run("bash", {"command": "head -c 5000000 /dev/zero | tr '\\0' z"})
    assert flood.text.startswith("z" * 100 + "\n[output cut at 100 characters of about 5000000 bytes]")


def test_a_link_out_of_the_copy_is_refused(box):
    result = box.run("read", {"path": "link.txt"})
    assert result.how == REFUSED and "resolves outside the sandbox's copy" in result.text
    assert os.path.islink(box.root / "link.txt")


def test_bash_sees_only_the_copy_and_no_network(box, proj, tmp_path):
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    try:
        out = box.run("bash", {"command": f"pwd; id -u; cat {tmp_path}/secret.txt; ls {Path.home()}; ls /etc; "
                                          f"(echo hi > /dev/tcp/127.0.0.1/{port}) && echo reached"})
    finally:
        listener.close()
    lines = out.text.splitlines()
    assert lines[0] == str(proj)  # the copy, at the path the session had
    assert lines[1] == str(NOBODY if os.geteuid() == 0 else os.geteuid())
    assert "the user's own file" not in out.text and "No such file or directory" in out.text
    assert "passwd" not in out.text and "shadow" not in out.text
    assert "reached" not in out.text and "Connection refused" in out.text
    written = box.run("bash", {"command": "echo new > made.txt && cat big.txt | wc -c"})
    assert written.text.strip() == "500" and (box.root / "made.txt").read_text() == "new\n"
    assert not (proj / "made.txt").exists()


def test_memory_file_size_and_processes_are_limited(box, monkeypatch):
    memory = box.run("bash", {"command": "python3 -c 'bytearray(3 * 1024 ** 3)'"})
    assert memory.is_error and "MemoryError" in memory.text
    monkeypatch.setattr(tool_runner, "FILE_LIMIT", 1024 * 1024)  # (the limit is 64 MB: a smaller one is quicker)
    size = box.run("bash", {"command": "head -c 5000000 /dev/zero > big.bin"})
    assert size.is_error and "File size limit exceeded" in size.text
    assert (box.root / "big.bin").stat().st_size <= 1024 * 1024
    write = box.run("write", {"path": "w.txt", "content": "w" * (2 * 1024 * 1024)})
    assert write.is_error and "File too large" in write.text
    forks = box.run("bash", {"command": "python3 -c '\n"
                                        "import os, time\n"
                                        "n = 0\n"
                                        "try:\n"
                                        "    for _ in range(300):\n"
                                        "        if os.fork() == 0:\n"
                                        "            os.close(1); os.close(2); time.sleep(1); os._exit(0)\n"
                                        "        n += 1\n"
                                        "except OSError:\n"
                                        "    pass\n"
                                        "print(n)'"})
    assert int(forks.text.strip()) < PROCESS_LIMIT


def test_a_models_pattern_runs_outside_the_server_and_stops_at_the_time_limit(box):
    (box.root / "a.txt").write_text("a" * 40 + "!\n")
    done = threading.Event()
    answer = {}

    def call():
        answer["result"] = box.run("grep", {"pattern": "(a+)+$"})
        done.set()

    threading.Thread(target=call).start()
    # While the match runs, this thread keeps running: the pattern is not in this interpreter.
    steps = 0
    while not done.is_set():
        sum(range(1000))
        steps += 1
    assert answer["result"].text == "Stopped: the call took longer than 4 s."
    assert steps > 1000


def test_the_copy_leaves_out_devices_sockets_and_fifos(tmp_path):
    proj = tmp_path / "odd"
    proj.mkdir()
    (proj / "a.txt").write_text("kept")
    os.mkfifo(proj / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(proj / "sock"))
    specials = 2
    if os.geteuid() == 0:  # (making a device node needs root; the suite runs as root here)
        os.mknod(proj / "zero", stat.S_IFCHR | 0o666, os.makedev(1, 5))
        specials = 3
    try:
        box = SandboxTools.copy_of(str(proj), max_copy_mb=1)
    finally:
        sock.close()
    try:
        assert sorted(p.name for p in box.root.iterdir()) == ["a.txt"] and box.skipped == specials
        assert box.run("read", {"path": "a.txt"}).text == "kept"
    finally:
        box.close()


def test_the_copy_counts_the_bytes_it_reads(tmp_path):
    proj = tmp_path / "sparse"
    proj.mkdir()
    with open(proj / "holes.bin", "wb") as f:
        f.truncate(30 * 1024 * 1024)  # 30 MB that take no room on the disk
    with pytest.raises(InvalidWrite, match="holds more than 1 MB"):
        SandboxTools.copy_of(str(proj), max_copy_mb=1)
    for bad in (float("inf"), float("nan"), 0, -1):
        with pytest.raises(InvalidWrite, match="copy limit must be a number"):
            SandboxTools.copy_of(str(proj), max_copy_mb=bad)


@pytest.mark.parametrize("cwd", [".", "proj", "./proj", "~", ""])
def test_a_cwd_that_is_not_an_absolute_folder_is_refused(tmp_path, monkeypatch, cwd):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "proj").mkdir()
    with pytest.raises(InvalidWrite, match="not an absolute path|names no working directory"):
        SandboxTools.copy_of(cwd)


@pytest.mark.parametrize("args,says", [
    ({"path": "big.txt", "limit": [1]}, "read's argument limit must be a whole number, not list [1]"),
    ({"path": "big.txt", "limit": float("inf")}, "read's argument limit must be a whole number, not float inf"),
    ({"path": "big.txt", "offset": "2"}, "read's argument offset must be a whole number, not str '2'"),
    ({"path": ["big.txt"]}, "read's argument path must be a string, not list"),
])
def test_an_argument_of_the_wrong_type_gets_an_error_result(box, args, says):
    result = box.run("read", args)
    assert result.is_error and result.how == REFUSED and says in result.text
    assert box.run("read", {"path": "big.txt", "limit": 1.0}).text == "x" * 500  # 1.0 is a whole number
    assert checked_arguments("grep", {"pattern": "x", "ignoreCase": True}) == {"pattern": "x", "ignoreCase": True}


def test_without_bubblewrap_the_file_tools_run_and_bash_is_refused(proj, monkeypatch):
    monkeypatch.setenv("SESSION_TREE_NO_BWRAP", "1")
    isolation.cache_clear()
    try:
        assert not isolation().available and "bash is refused" in isolation().describe()
        with pytest.raises(InvalidWrite, match="bash is refused: no OS isolation on this machine"):
            SandboxTools.copy_of(str(proj), allow_bash=True)
        box = SandboxTools.copy_of(str(proj), time_limit=4.0)
        try:
            assert box.run("read", {"path": "big.txt"}).text == "x" * 500
            assert box.run("bash", {"command": "id"}).how == REFUSED
            (box.root / "a.txt").write_text("a" * 40 + "!\n")
            assert box.run("grep", {"pattern": "(a+)+$"}).text == "Stopped: the call took longer than 4 s."
        finally:
            box.close()
    finally:
        monkeypatch.delenv("SESSION_TREE_NO_BWRAP")
        isolation.cache_clear()
    assert iso_module.isolation().available
