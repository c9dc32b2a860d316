"""Several writers and a crash (SPEC §7): appends take turns under the lock, each one a whole
line, and a file cut short by a crash still opens and takes the next append on a line of its own."""

import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson

from webapp.core.session import Session, create_session

CLI = Path(sys.executable).with_name("session-tree")
N = 1000


def entries_of(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]


WRITER = """
import sys
import orjson
from webapp.core.session import Session
path, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
session = Session.open(path)
sys.stdin.read(1)  # start when told, so both write at once
for i in range(n):
    print(session.append_entry({"type": "custom", "customType": tag, "data": i})["id"])
"""


def _run_at_once(argvs: dict[str, list], stdins: dict[str, bytes]) -> dict[str, tuple[bytes, bytes]]:
    procs = {tag: subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for tag, argv in argvs.items()}
    with ThreadPoolExecutor(2) as pool:  # both get their stdin at the same moment
        results = dict(zip(procs, pool.map(lambda t: procs[t].communicate(stdins[t], timeout=120), procs)))
    for tag, (out, err) in results.items():
        assert procs[tag].returncode == 0, err
    return results


def _one_chain(path: Path, results, n: int) -> list[dict]:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    entries = entries_of(path)  # every line parses
    assert len(entries) == 2 * n
    ids = [e["id"] for e in entries]
    assert len(set(ids)) == 2 * n
    assert {i for out, _ in results.values() for i in out.decode().split()} == set(ids)
    # Each append continued from the active leaf as it was under the lock: one chain, no orphan.
    assert entries[0]["parentId"] is None
    assert all(e["parentId"] == prev["id"] for prev, e in zip(entries, entries[1:]))
    for tag in "ab":
        assert [e["data"] for e in entries if e["customType"] == tag] == list(range(n))
    tree = Session.open(path).tree
    assert tree.problems == [] and tree.bad_lines == [] and len(tree.entries) == 2 * n
    return entries


def test_two_processes_appending_at_once_interleave_whole_lines_in_one_chain(tmp_path):
    n = 300
    path = create_session(tmp_path, "/work")
    argvs = {tag: [sys.executable, "-c", WRITER, str(path), tag, str(n)] for tag in "ab"}
    results = _run_at_once(argvs, {"a": b"go", "b": b"go"})
    entries = _one_chain(path, results, n)
    switches = sum(1 for x, y in zip(entries, entries[1:]) if x["customType"] != y["customType"])
    assert switches > 1, "the two writers did not overlap; the test proved nothing"


def test_a_json_lines_append_is_one_write_that_no_other_writer_splits(tmp_path):
    path = create_session(tmp_path, "/work")
    payloads = {
        tag: b"".join(orjson.dumps({"type": "custom", "customType": tag, "data": i}) + b"\n" for i in range(N))
        for tag in "ab"
    }
    results = _run_at_once({tag: [CLI, "append", str(path)] for tag in "ab"}, payloads)
    entries = _one_chain(path, results, N)
    switches = sum(1 for x, y in zip(entries, entries[1:]) if x["customType"] != y["customType"])
    assert switches == 1  # each batch went in whole, one after the other


CHILD = """
import sys
from webapp.core.session import Session
s = Session.open(sys.argv[1])
i = 0
while True:
    s.append({"type": "custom", "customType": "loop", "data": "x" * (i % 700), "i": i})
    i += 1
"""


def test_a_writer_killed_mid_loop_leaves_a_file_that_opens(tmp_path):
    path = create_session(tmp_path, "/work")
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path)])
    try:
        deadline = time.monotonic() + 30
        while path.read_bytes().count(b"\n") < 200:
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.005)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -signal.SIGKILL

    s = Session.open(path)
    tree = s.tree
    assert len(tree.entries) >= 199
    # Every write was one whole line; at most the very last one can have been cut by the kill.
    assert all(b.torn and b.line == s.log.lines + 1 for b in tree.bad_lines)
    assert [e.get("i") for e in tree.entries] == list(range(len(tree.entries)))
    assert tree.orphans == [] and len(tree.roots) == 1
    last = tree.active_leaf
    assert last == tree.entries[-1].id

    entry = s.append({"type": "custom", "customType": "after"})
    assert entry["parentId"] == last
    assert path.read_bytes().endswith(b"\n" + orjson.dumps(entry) + b"\n")


def test_after_a_torn_write_the_next_append_stands_on_its_own_line(tmp_path):
    path = create_session(tmp_path, "/work")
    s = Session.open(path)
    for i in range(5):
        s.append({"type": "custom", "customType": "c", "i": i})
    data = path.read_bytes()
    cut = len(data) - 20  # the crash cut the last line short
    os.truncate(path, cut)
    torn = data[data.rfind(b"\n", 0, cut) + 1 : cut]

    out = subprocess.run([CLI, "append", str(path)], input=b'{"type":"custom","customType":"next"}',
                         capture_output=True, check=True)
    new_id = out.stdout.decode().strip()
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert lines[-3] == torn  # kept as it was, ended by the newline written before the append
    assert orjson.loads(lines[-2])["id"] == new_id

    tree = Session.open(path).tree
    (bad,) = tree.bad_lines
    assert bad.line == 6 and bad.raw == torn.decode() and not bad.torn
    assert "invalid JSON" in bad.reason
    assert tree.entry(new_id).line == 7
    assert tree.parent[new_id] == tree.entries[3].id  # the last entry that survived
    assert tree.active_leaf == new_id


def test_threads_reading_one_session_see_each_line_once(tmp_path):
    """The web app shares one Session between request threads: catching up must not run twice."""
    from concurrent.futures import ThreadPoolExecutor

    from webapp.core.session import Session, create_session

    path = create_session(tmp_path, "/p")
    shared = Session.open(path)
    assert shared.tree.entries == []
    writer = Session.open(path)
    lines = b"".join(
        orjson.dumps({"type": "message", "id": f"m{i}", "parentId": f"m{i - 1}" if i else None,
                      "timestamp": "2026-01-01T00:00:00.000Z", "message": {"role": "user", "content": "x" * 200}}) + b"\n"
        for i in range(3000)
    )
    with writer.storage.locked():
        writer.storage.append_bytes(lines)
    with ThreadPoolExecutor(8) as pool:
        trees = list(pool.map(lambda _: shared.tree, range(8)))
    for tree in trees:
        assert len(tree.entries) == 3000 and tree.problems == []
