"""Line-by-line reading (SPEC §1, §2, §7): header, entries, v1 ids, bad and blank lines, tails."""

import orjson

from tests.conftest import Builder, header
from webapp.core.entries import Entry
from webapp.core.reader import SessionLog, first_kept_id, generated_id, parse_bytes


def v1_lines(*entries: dict) -> bytes:
    return b"".join(orjson.dumps(x) + b"\n" for x in (header(version=None), *entries))


def test_header_is_not_an_entry_and_gives_version_and_id():
    b = Builder()
    b.user("a")
    log = parse_bytes(b.data())
    assert log.header["type"] == "session"
    assert log.version == 3
    assert log.session_id == header()["id"]
    assert [e.id for e in log.entries] == ["e1"]
    assert log.problems == []


def test_header_without_version_is_v1_and_no_header_is_none():
    assert parse_bytes(v1_lines()).version == 1
    b = Builder(with_header=False)
    b.user("a")
    log = parse_bytes(b.data())
    assert log.header is None and log.version is None
    assert [p.kind for p in log.problems] == ["no-header"]
    assert [e.id for e in log.entries] == ["e1"]


def test_v1_entries_chain_in_file_order_with_ids_from_line_numbers():
    data = v1_lines(
        {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "a"}},
        {"type": "message", "timestamp": "t", "message": {"role": "assistant", "content": "b"}},
        {"type": "thinking_level_change", "timestamp": "t", "thinkingLevel": "high"},
    )
    log = parse_bytes(data)
    assert [(e.id, e.parent_id, e.line) for e in log.entries] == [
        ("L2", None, 2),
        ("L3", "L2", 3),
        ("L4", "L3", 4),
    ]
    assert all(e.generated_id for e in log.entries)
    # Stable for the same file: a second read gives the same ids.
    assert [e.id for e in parse_bytes(data).entries] == ["L2", "L3", "L4"]
    assert log.active_leaf == "L4"


def test_v1_first_kept_entry_index_counts_the_header_as_zero():
    compaction = {"type": "compaction", "timestamp": "t", "summary": "s", "firstKeptEntryIndex": 2}
    data = v1_lines(
        {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "a"}},
        {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "b"}},
        compaction,
    )
    log = parse_bytes(data)
    c = log.entries[-1]
    assert first_kept_id(c) == "L3"  # index 2 = the third line = the second entry
    assert log.ids["L3"].message["content"] == "b"
    # An explicit id wins over an index; a bool is not an index.
    assert first_kept_id(Entry({"firstKeptEntryId": "x", "firstKeptEntryIndex": 2}, 1, "c", None)) == "x"
    assert first_kept_id(Entry({"firstKeptEntryIndex": True}, 1, "c", None)) is None


def test_hook_message_role_reads_as_custom():
    b = Builder(version=2)
    b.add("message", message={"role": "hookMessage", "content": "x"})
    assert parse_bytes(b.data()).entries[0].role == "custom"


def test_bad_lines_keep_line_number_reason_and_raw_text_and_the_rest_loads():
    b = Builder()
    b.user("a")
    b.raw("{not json")
    b.raw("[1, 2]")
    b.raw("")
    b.user("b", parent="e1")
    log = parse_bytes(b.data())
    assert [e.id for e in log.entries] == ["e1", "e2"]
    assert [(x.line, x.raw) for x in log.bad_lines] == [(3, "{not json"), (4, "[1, 2]")]
    assert log.bad_lines[0].reason.startswith("invalid JSON")
    assert log.bad_lines[1].reason == "not a JSON object (a list)"
    assert log.blank_lines == 1
    assert log.lines == 6


def test_unknown_types_and_fields_are_kept_verbatim():
    b = Builder()
    b.add("telemetry", extra={"deep": [1, 2]})
    e = parse_bytes(b.data()).entries[0]
    assert e.type == "telemetry"
    assert e.raw["extra"] == {"deep": [1, 2]}


def test_duplicate_id_first_line_keeps_it_later_one_is_suffixed_and_flagged():
    b = Builder()
    b.user("a", id="x")
    b.user("b", id="x", parent=None)
    log = parse_bytes(b.data())
    assert [e.id for e in log.entries] == ["x", "x@L3"]
    assert log.ids["x"].line == 2
    assert [(p.kind, p.line, p.entry_id) for p in log.problems] == [("duplicate-id", 3, "x@L3")]


def test_unterminated_last_line_is_read_as_a_tail_and_replaced_when_completed():
    b = Builder()
    b.user("a")
    b.user("b")
    data = b.data()
    log = SessionLog()
    log.feed(data[:-1])  # the last line lacks its newline
    assert log.tail_entry is not None and log.tail_entry.id == "e2"
    assert [e.id for e in log.all_entries()] == ["e1", "e2"]
    assert log.active_leaf == "e2"
    assert log.offset == len(data) - len(b.lines[-1]) - 1
    log.feed(data[log.offset:])
    assert log.tail_entry is None
    assert [e.id for e in log.entries] == ["e1", "e2"]
    assert log.offset == len(data)


def test_torn_garbage_tail_is_a_torn_bad_line():
    b = Builder()
    b.user("a")
    log = parse_bytes(b.data() + b'{"type":"mess')
    assert [e.id for e in log.all_entries()] == ["e1"]
    (bad,) = log.all_bad_lines()
    assert bad.torn and bad.line == 3 and bad.raw == '{"type":"mess'
    assert "torn last line" in bad.reason
    assert log.active_leaf == "e1"


def test_a_duplicate_id_in_the_tail_is_reported_once_after_the_tail_completes():
    b = Builder()
    b.user("a", id="x")
    b.user("b", id="x")
    data = b.data()
    log = SessionLog()
    log.feed(data[:-1])
    log.feed(data[log.offset:-1])  # read again, still torn
    log.feed(data[log.offset:])
    assert [p.kind for p in log.problems] == ["duplicate-id"]


def test_feeding_a_growing_file_piece_by_piece_equals_reading_it_at_once():
    b = Builder()
    b.user("a")
    b.raw("garbage")
    b.assistant("b")
    b.add("leaf", targetId="e1", parent="e1")
    b.raw("")
    b.user("c", parent="e1")
    data = b.data()
    whole = parse_bytes(data)
    for step in (1, 7, 50):
        log = SessionLog()
        for end in range(step, len(data) + step, step):
            log.feed(data[log.offset:min(end, len(data))])
        assert [(e.id, e.parent_id, e.line) for e in log.all_entries()] == [
            (e.id, e.parent_id, e.line) for e in whole.entries
        ]
        assert log.all_bad_lines() == whole.bad_lines
        assert log.blank_lines == whole.blank_lines == 1
        assert log.active_leaf == whole.active_leaf == "e4"
        assert log.problems == whole.problems


def test_generated_id_is_derived_from_the_line_number():
    assert generated_id(7) == "L7"
