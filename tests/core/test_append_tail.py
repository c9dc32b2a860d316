"""`session-tree append` reads the end of the file, not all of it, and appends after the
same entry a full read would; it reads everything when the end cannot tell."""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import Builder
from webapp.core.session import Session


def appended_parent(path) -> tuple[str | None, Session]:
    session = Session.open_for_append(path)
    entry = session.append({"type": "message", "message": {"role": "user", "content": "more"}})
    assert orjson.loads(path.read_bytes().splitlines()[-1]) == entry
    return entry["parentId"], session


def long_session(path, extra: list[bytes] = ()) -> tuple[str | None, object]:
    b = Builder()
    first = b.user("hello")
    for i in range(200):
        b.assistant(f"answer {i}")
    b.raw(b"{damaged in the middle")
    b.add("label", targetId=first, label="x")
    for line in extra:
        b.raw(line)
    b.write(path)
    return Session.open(path).tree.active_leaf, b


def test_the_end_of_the_file_names_the_active_leaf(tmp_path):
    path = tmp_path / "s.jsonl"
    expected, _ = long_session(path)
    parent, session = appended_parent(path)
    assert parent == expected
    assert len(session._log.entries) == 1  # the last line: nothing else was parsed


@pytest.mark.parametrize("case", ["leaf", "torn", "bad", "blank"])
def test_an_end_that_cannot_tell_is_read_in_full(tmp_path, case):
    path = tmp_path / "s.jsonl"
    extra = {
        "leaf": [orjson.dumps({"type": "leaf", "id": "lf", "parentId": "e200", "timestamp": "2026-01-01T00:00:00Z",
                               "targetId": "e5"})],
        "torn": [b'{"type": "message", "id": "torn"'],
        "bad": [b"not json"],
        "blank": [b""],
    }[case]
    expected, b = long_session(path, extra)
    if case == "torn":
        path.write_bytes(path.read_bytes()[:-1])  # no newline at the end
    parent, session = appended_parent(path)
    assert parent == expected
    assert len(session._log.entries) > 200  # read in full


def test_a_header_only_session_and_a_v1_session(tmp_path):
    path = Builder().write(tmp_path / "new.jsonl")
    assert appended_parent(path)[0] is None
    v1 = Builder(version=None)
    v1.raw({"type": "message", "timestamp": "2025-01-01T00:00:00Z", "message": {"role": "user", "content": "a"}})
    path = v1.write(tmp_path / "v1.jsonl")
    session = Session.open_for_append(path)
    assert session.log.active_leaf == "L2"  # no ids: read in full, ids from line numbers
