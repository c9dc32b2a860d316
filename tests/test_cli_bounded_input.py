"""What the CLI reads and prints is bounded and honest: an endless stdin or summary file is
refused in one line, a name cannot forge a line of `ls`, and `audit --fail-under` is a real
percentage (`nan` would turn the CI gate off)."""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import Builder
from tests.core.test_write_failures import path  # noqa: F401 (a fixture: a user message and its reply)
from tests.test_cli import run, shell
from webapp.cli import inputs


def test_append_refuses_stdin_over_the_cap_in_one_line(path, capsys, monkeypatch):
    monkeypatch.setattr("webapp.cli.writing.MAX_STDIN_BYTES", 100)
    before = path.read_bytes()
    entry = orjson.dumps({"type": "custom", "customType": "x", "data": "y" * 100})
    code, out, err = run(capsys, "append", path, stdin=entry, monkeypatch=monkeypatch)
    assert code == 2 and err.count("\n") == 1 and "stdin holds more than 100 bytes" in err
    assert path.read_bytes() == before


def test_append_of_an_endless_stdin_ends(path):
    with open("/dev/zero", "rb") as zero:
        import subprocess

        from tests.test_cli import CLI
        done = subprocess.run([CLI, "append", str(path)], stdin=zero, capture_output=True, timeout=120)
    assert done.returncode == 2 and b"stdin holds more than" in done.stderr and b"Traceback" not in done.stderr


def test_compact_with_an_endless_summary_file_ends(path):
    done = shell("compact", path, "--summary-file", "/dev/zero")
    assert done.returncode == 2 and b"/dev/zero holds more than" in done.stderr, done.stderr
    assert done.stderr.count(b"\n") == 1


def test_a_summary_file_under_the_cap_is_read_whole(tmp_path):
    (tmp_path / "s.md").write_text("Goal: parse\n", encoding="utf-8")
    assert inputs.read_summary_file(str(tmp_path / "s.md"), limit=12) == "Goal: parse\n"
    with pytest.raises(Exception, match="more than 11 bytes"):
        inputs.read_summary_file(str(tmp_path / "s.md"), limit=11)


def test_ls_prints_a_newline_in_a_name_escaped(tmp_path, capsys):
    b = Builder()
    b.user("hi", id="u1")
    b.add("session_info", id="n1", name="real\n/tmp/forged.jsonl\n    fake title")
    b.write(tmp_path / "s.jsonl")
    code, out, err = run(capsys, "ls", tmp_path)
    assert code == 0, err
    assert "real\\n/tmp/forged.jsonl\\n    fake title" in out
    assert not any(line.startswith("/tmp/forged") for line in out.splitlines())


@pytest.mark.parametrize("value", ["nan", "-5", "1000", "inf", "x"])
def test_audit_fail_under_must_be_a_percentage(path, capsys, value):
    with pytest.raises(SystemExit) as exc:
        run(capsys, "audit", path, "--fail-under", value)
    assert exc.value.code == 2 and "--fail-under" in capsys.readouterr().err


def test_audit_fail_under_accepts_a_percentage(path, capsys):
    code, out, err = run(capsys, "audit", path, "--fail-under", "50")
    assert code in (0, 1) and "Traceback" not in err
