"""The `session-tree` command: its subcommands, JSON keys and exit codes are a contract.

Most tests call `webapp.cli.main` in-process (fast); the error tests run the installed console
script, to see exactly what a shell sees: one line on stderr, a non-zero exit, no traceback.
"""

import io
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.conftest import FIXTURES, Builder, lines_of
from webapp.cli import main

CLI = Path(sys.executable).with_name("session-tree")


def run(capsys, *argv, stdin: bytes | None = None, monkeypatch=None) -> tuple[int, str, str]:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    return orjson.loads(out)


def shell(*argv, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *map(str, argv)], input=stdin, capture_output=True)


@pytest.fixture
def branched(tmp_path) -> Path:
    """u1 → a2 → u3, and a4 as a second reply to u1; a label on a2; active leaf u3."""
    b = Builder()
    b.add("model_change", id="m0", provider="anthropic", modelId="claude")
    b.user("first question", id="u1")
    b.assistant("first answer", id="a2", usage=50)
    b.user("second question", id="u3")
    b.assistant("another answer", id="a4", parent="u1")
    b.add("label", id="l5", targetId="a2", label="good one", parent="a4")
    b.add("leaf", id="f6", targetId="u3", parent="u3")
    return b.write(tmp_path / "branched.jsonl")


# -- ls --------------------------------------------------------------------------------------------


LS_KEYS = {"path", "id", "name", "cwd", "entries", "leaves", "compactions", "badLines", "modified"}


def test_ls_lists_a_per_cwd_sessions_root(capsys, tmp_path, monkeypatch):
    root = tmp_path / "sessions"
    code, out, _ = run(capsys, "new", root, "--cwd", "/home/ana/proj")
    assert code == 0
    first = Path(out.strip())
    run(capsys, "new", root, "--cwd", "/srv/other")
    run(capsys, "append", first, stdin=b'{"type":"message","message":{"role":"user","content":"hello there"}}',
        monkeypatch=monkeypatch)
    run(capsys, "append", first, stdin=b'{"type":"session_info","name":"my session"}', monkeypatch=monkeypatch)
    rows = run_json(capsys, "ls", root, "--json")
    assert len(rows) == 2
    assert all(LS_KEYS <= set(r) for r in rows)
    row = next(r for r in rows if r["path"] == str(first))
    assert row["cwd"] == "/home/ana/proj" and row["name"] == "my session"
    assert row["entries"] == 2 and row["leaves"] == 1 and row["compactions"] == 0 and row["badLines"] == 0
    assert row["id"] == lines_of(first.read_bytes())[0]["id"]
    assert re.match(r"\d{4}-\d\d-\d\dT", row["modified"])
    code, out, _ = run(capsys, "ls", root)
    assert code == 0 and str(first) in out and "my session" in out


def test_ls_cuts_a_long_first_message_with_an_ellipsis_and_shows_a_name_whole(capsys, tmp_path):
    """A session listed by its first message shows at most 60 characters of it, and says when it
    cut (a cut mid-sentence read as the whole message); a name given to a session is shown whole."""
    b = Builder()
    b.user("Add a `__repr__` to `Invoice` that shows the number and the customer, then test it.")
    b.write(tmp_path / "long.jsonl")
    named = Builder()
    named.user("short")
    named.raw('{"type":"session_info","id":"n1","parentId":null,"name":"' + "a name of seventy characters, " * 2 + 'whole it stays"}')
    named.write(tmp_path / "named.jsonl")
    code, out, _ = run(capsys, "ls", tmp_path)
    assert code == 0
    assert "    Add a `__repr__` to `Invoice` that shows the number and the…\n" in out
    assert "    " + "a name of seventy characters, " * 2 + "whole it stays\n" in out


def test_ls_lists_a_plain_folder_and_counts(capsys, tmp_path, branched):
    (tmp_path / "broken.jsonl").write_bytes(Builder().data() + b"garbage\n")
    rows = {Path(r["path"]).name: r for r in run_json(capsys, "ls", tmp_path, "--json")}
    assert set(rows) == {"branched.jsonl", "broken.jsonl"}
    assert rows["branched.jsonl"]["entries"] == 7
    assert rows["branched.jsonl"]["leaves"] == 2
    assert rows["broken.jsonl"]["badLines"] == 1 and rows["broken.jsonl"]["entries"] == 0


# -- reading ---------------------------------------------------------------------------------------


def test_show_json(capsys, tmp_path):
    b = Builder()
    b.user("a")
    b.raw("not json")
    b.user("b", parent="ghost")
    path = b.write(tmp_path / "s.jsonl")
    info = run_json(capsys, "show", path, "--json")
    assert {"path", "header", "version", "name", "counts", "roots", "orphans", "leaves", "activeLeaf",
            "labels", "problems", "entries", "badLines"} <= set(info)
    assert info["entries"] == [
        {"id": "e1", "type": "message", "parentId": None, "line": 2},
        {"id": "e2", "type": "message", "parentId": None, "line": 4},
    ]
    assert info["badLines"] == [{"line": 3, "reason": info["badLines"][0]["reason"]}]
    assert info["badLines"][0]["reason"].startswith("invalid JSON")
    assert info["orphans"] == ["e2"] and info["activeLeaf"] == "e2" and info["version"] == 3
    assert {p["kind"] for p in info["problems"]} == {"bad-line", "orphan"}
    code, out, _ = run(capsys, "show", path)
    assert code == 0 and "orphans   e2" in out and "problems  2" in out


def test_show_json_of_malformed_entries_is_still_json(capsys, tmp_path):
    b = Builder()
    b.user("a")
    b.add("label", label="no target")
    b.add("label", targetId=["a", "list"], label="odd target")
    path = b.write(tmp_path / "s.jsonl")
    info = run_json(capsys, "show", path, "--json")
    assert all(isinstance(k, str) for k in info["labels"])
    assert {"missing-field", "dangling-label"} <= {p["kind"] for p in info["problems"]}


def test_other_formats_show_their_format_and_a_normalised_header(capsys):
    path = FIXTURES / "codex" / "agent-sessions_codex_small.jsonl"
    info = run_json(capsys, "show", path, "--json")
    assert info["format"] == "codex" and info["version"] is None
    assert info["header"]["source"] == "codex" and info["header"]["id"] == "019fc8be-3658-7ca3-9e29-000000000000"
    assert info["entries"][0]["line"] == 2  # line 1 (session_meta) is the header
    assert "no-header" not in {p["kind"] for p in info["problems"]}
    code, out, _ = run(capsys, "show", path)
    assert code == 0 and "format codex" in out
    code, out, _ = run(capsys, "validate", path)
    assert code == 0


def test_tree_marks_the_active_path_and_shows_labels(capsys, branched):
    code, out, _ = run(capsys, "tree", branched)
    assert code == 0
    by_id = {}
    for line in out.splitlines():
        m = re.search(r"(m0|u1|a2|u3|a4)\b", line)
        if m:
            by_id[m.group(1)] = line
    assert set(by_id) == {"m0", "u1", "a2", "u3", "a4"}
    for on_path in ("m0", "u1", "a2", "u3"):
        assert by_id[on_path].startswith("*")
    assert not by_id["a4"].startswith("*")
    assert "[good one]" in by_id["a2"]
    assert "active leaf" in by_id["u3"]
    assert "second question" in by_id["u3"]


def test_context_json(capsys, branched):
    ctx = run_json(capsys, "context", branched, "--json")
    assert {"sessionId", "leafId", "model", "thinkingLevel", "activeTools", "tokens", "messages"} <= set(ctx)
    assert ctx["sessionId"] == lines_of(branched.read_bytes())[0]["id"]
    assert ctx["leafId"] == "u3"
    assert ctx["model"] == {"provider": "p1", "modelId": "m1"}  # the assistant reply's model
    assert ctx["thinkingLevel"] is None and ctx["activeTools"] is None
    assert set(ctx["tokens"]) == {"context", "estimated"}
    assert ctx["tokens"]["context"] == 50 + ctx["tokens"]["estimated"] and ctx["tokens"]["estimated"] > 0
    assert [(m["entryId"], m["role"]) for m in ctx["messages"]] == [("u1", "user"), ("a2", "assistant"), ("u3", "user")]
    assert ctx["messages"][0]["content"] == "first question"
    other = run_json(capsys, "context", branched, "--leaf", "a4", "--json")
    assert [m["entryId"] for m in other["messages"]] == ["u1", "a4"]
    code, out, _ = run(capsys, "context", branched)
    assert code == 0 and "--- user [u3]" in out and "second question" in out


def test_context_json_model_is_null_without_one(capsys, tmp_path):
    b = Builder()
    b.user("q")
    ctx = run_json(capsys, "context", b.write(tmp_path / "s.jsonl"), "--json")
    assert ctx["model"] is None and ctx["tokens"] == {"context": 1, "estimated": 1}


def test_validate_exit_codes(capsys, tmp_path, branched):
    code, out, _ = run(capsys, "validate", branched)
    assert code == 0 and "no problems" in out
    b = Builder()
    b.user("a")
    b.raw("{torn")
    bad = b.write(tmp_path / "bad.jsonl")
    code, out, _ = run(capsys, "validate", bad)
    assert code == 1 and f"{bad}:3: bad-line" in out


# -- writing ---------------------------------------------------------------------------------------


def test_fork_at_and_before(capsys, branched):
    before = branched.read_bytes()
    code, out, _ = run(capsys, "fork", branched, "--from", "a4")
    assert (code, out) == (0, "a4\n")
    assert branched.read_bytes().startswith(before)
    assert run_json(capsys, "show", branched, "--json")["activeLeaf"] == "a4"
    r = run_json(capsys, "fork", branched, "--from", "u3", "--position", "before", "--json")
    assert r["leafId"] == "a2" and r["editText"] == "second question"
    assert run_json(capsys, "context", branched, "--json")["leafId"] == "a2"


def test_fork_before_a_root_gives_an_empty_context(capsys, tmp_path):
    b = Builder()
    b.user("root", id="r")
    b.assistant("a")
    path = b.write(tmp_path / "s.jsonl")
    code, out, _ = run(capsys, "fork", path, "--from", "r", "--position", "before")
    assert code == 0 and out == "(empty conversation)\n"
    ctx = run_json(capsys, "context", path, "--json")
    assert ctx["leafId"] is None and ctx["messages"] == []


def test_label_set_and_clear(capsys, branched):
    code, out, _ = run(capsys, "label", branched, "u1", "start here")
    assert code == 0
    written = lines_of(branched.read_bytes())[-1]
    assert written["id"] == out.strip() and written["targetId"] == "u1" and written["label"] == "start here"
    assert run_json(capsys, "show", branched, "--json")["labels"] == {"a2": "good one", "u1": "start here"}
    code, _, _ = run(capsys, "label", branched, "a2", "--clear")
    assert code == 0
    assert run_json(capsys, "show", branched, "--json")["labels"] == {"u1": "start here"}
    code, _, err = run(capsys, "label", branched, "a2")
    assert code == 2 and "--clear" in err


def test_append_one_object_or_json_lines(capsys, branched, monkeypatch):
    code, out, _ = run(capsys, "append", branched, stdin=b'{"type":"custom","customType":"x","data":{"k":1}}',
                       monkeypatch=monkeypatch)
    assert code == 0
    (first,) = out.split()
    code, out, _ = run(capsys, "append", branched, monkeypatch=monkeypatch, stdin=(
        b'{"type":"message","message":{"role":"user","content":"one"}}\n\n'
        b'{"type":"message","message":{"role":"user","content":"two"}}\n'))
    second, third = out.split()
    entries = lines_of(branched.read_bytes())[-3:]
    assert [e["id"] for e in entries] == [first, second, third]
    assert entries[0]["parentId"] == "u3" and entries[1]["parentId"] == first and entries[2]["parentId"] == second
    assert entries[0]["data"] == {"k": 1}
    size = branched.stat().st_size
    for bad in (b"", b"{nope", b'{"customType":"no type"}', b'{"type":"custom","id":"mine"}'):
        code, _, err = run(capsys, "append", branched, stdin=bad, monkeypatch=monkeypatch)
        assert code == 2 and err.startswith("session-tree: error:")
    assert branched.stat().st_size == size


def test_new_creates_a_v3_session_in_the_per_cwd_folder(capsys, tmp_path):
    code, out, _ = run(capsys, "new", tmp_path, "--cwd", "/home/ana/proj")
    assert code == 0
    path = Path(out.strip())
    assert path.parent == tmp_path / "--home-ana-proj--"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f-]{36}\.jsonl", path.name)
    (h,) = lines_of(path.read_bytes())
    assert h["version"] == 3 and h["cwd"] == "/home/ana/proj" and path.name.endswith(f"_{h['id']}.jsonl")


def long_session(tmp_path) -> Path:
    b = Builder()
    b.user("x" * 400)
    b.tool_turn("read", "src/a.py", "c1", text="y" * 400)
    b.assistant("z" * 400)
    b.user("w" * 400)
    b.assistant("v" * 400)
    return b.write(tmp_path / "long.jsonl")


PLAN_KEYS = {"leafId", "canCompact", "reason", "shouldCompact", "firstKeptEntryId", "summarizeEntryIds",
             "turnPrefixEntryIds", "splitTurn", "tokensBefore", "tokensKept", "tokensAfterEstimate",
             "contextWindow", "reserveTokens", "keepRecentTokens", "previousCompactionId", "readFiles",
             "modifiedFiles"}


def test_compact_plan_json(capsys, tmp_path):
    path = long_session(tmp_path)
    before = path.read_bytes()
    plan = run_json(capsys, "compact", path, "--plan", "--json", "--keep-recent-tokens", "150",
                    "--context-window", "300", "--reserve-tokens", "50")
    assert set(plan) == PLAN_KEYS
    assert plan["canCompact"] and plan["firstKeptEntryId"] == "e5" and plan["leafId"] == "e6"
    assert plan["summarizeEntryIds"] == ["e1", "e2", "e3", "e4"] and not plan["splitTurn"]
    assert plan["readFiles"] == ["src/a.py"] and plan["shouldCompact"] is True
    assert path.read_bytes() == before  # a plan writes nothing
    fits = run_json(capsys, "compact", path, "--plan", "--json")
    assert fits["canCompact"] is False and "keepRecentTokens" in fits["reason"]
    code, out, _ = run(capsys, "compact", path, "--plan", "--keep-recent-tokens", "150")
    assert code == 0 and "firstKeptEntryId   e5" in out


def test_compact_with_a_summary_file_writes_a_valid_compaction(capsys, tmp_path):
    path = long_session(tmp_path)
    summary = tmp_path / "summary.md"
    summary.write_text("## Goal\nRead src/a.py.\n")
    code, out, err = run(capsys, "compact", path, "--keep-recent-tokens", "150", "--summary-file", summary)
    assert code == 0, err
    entry = lines_of(path.read_bytes())[-1]
    assert entry["id"] == out.strip() and entry["type"] == "compaction"
    assert entry["firstKeptEntryId"] == "e5" and entry["parentId"] == "e6"
    assert entry["summary"].startswith("## Goal\nRead src/a.py.") and "<read-files>\nsrc/a.py\n</read-files>" in entry["summary"]
    assert entry["details"]["readFiles"] == ["src/a.py"]
    # written by a person: `edited` from nothing (no summarizer drafted it), from a file
    assert {k: entry["details"][k] for k in ("summarizer", "draftedBy", "model", "source")} == {
        "summarizer": "edited", "draftedBy": None, "model": None, "source": "file"}
    code, _, _ = run(capsys, "validate", path)
    assert code == 0
    ctx = run_json(capsys, "context", path, "--json")
    assert [m["entryId"] for m in ctx["messages"]] == [entry["id"], "e5", "e6"]
    assert ctx["messages"][0]["role"] == "user" and "Read src/a.py." in ctx["messages"][0]["content"]


def test_compact_refuses_when_there_is_nothing_to_compact(capsys, tmp_path):
    path = long_session(tmp_path)
    summary = tmp_path / "summary.md"
    summary.write_text("S")
    before = path.read_bytes()
    code, _, err = run(capsys, "compact", path, "--summary-file", summary)
    assert code == 2 and "nothing to compact" in err
    assert path.read_bytes() == before


# -- errors: as a shell sees them ------------------------------------------------------------------


def one_error_line(p: subprocess.CompletedProcess) -> str:
    assert p.returncode != 0
    assert b"Traceback" not in p.stderr and b"Traceback" not in p.stdout
    lines = p.stderr.decode().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("session-tree: error:")
    return lines[0]


def test_errors_are_one_line_without_a_traceback(tmp_path, branched):
    missing = tmp_path / "missing.jsonl"
    assert "no such session file" in one_error_line(shell("show", missing))
    assert "not a file" in one_error_line(shell("context", tmp_path))
    assert "'ghost'" in one_error_line(shell("context", branched, "--leaf", "ghost"))
    before = branched.read_bytes()
    assert "'ghost'" in one_error_line(shell("fork", branched, "--from", "ghost"))
    assert "'ghost'" in one_error_line(shell("label", branched, "ghost", "x"))
    assert branched.read_bytes() == before
    assert "not a folder" in one_error_line(shell("ls", missing))
    not_utf8 = tmp_path / "summary.md"
    not_utf8.write_bytes(b"\xff\xfe summary")
    assert "not UTF-8" in one_error_line(shell("compact", branched, "--keep-recent-tokens", "1",
                                               "--summary-file", not_utf8))
    assert branched.read_bytes() == before
    p = shell("append", missing, stdin=b'{"type":"custom"}')
    one_error_line(p)
    assert not missing.exists()


def test_ids_can_be_given_as_the_short_ids_the_tree_shows(tmp_path, capsys):
    from webapp.cli import main
    from webapp.core.entries import short_id
    from webapp.core.session import Session, create_session

    path = create_session(tmp_path, "/p")
    s = Session.open(path)
    first = s.append({"type": "message", "message": {"role": "user", "content": "first"}})
    s.append({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}})
    assert main(["tree", str(path)]) == 0
    assert short_id(first["id"]) in capsys.readouterr().out
    assert main(["fork", str(path), "--from", short_id(first["id"])]) == 0
    assert capsys.readouterr().out.strip() == first["id"]
    assert main(["label", str(path), first["id"][:4], "x"]) == 2  # every UUID v7 here starts alike
    assert "give more of the id" in capsys.readouterr().err
