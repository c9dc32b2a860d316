"""The CLI under hostile input: control characters never reach the terminal, bytes
that are not UTF-8 never give a traceback, numbers are checked, and EVERY command (enumerated
from the parser, so a new one is covered on its own) exits 0, 1 or 2 with at most one line on stderr."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.cli_process import CLI_PROCESS
from tests.conftest import Builder
from webapp.cli import build_parser

CLI = Path(sys.executable).with_name("session-tree")
REPO = Path(__file__).resolve().parents[1]
EVIL = "\x1b]0;pwned\x07\x1b[31mred\r\x9b2J"  # OSC title, BEL, CSI colour, CR, C1 CSI
RAW_CONTROLS = (b"\x1b", b"\x07", b"\r", b"\xc2\x9b")
NOT_UTF8 = os.fsdecode(b"/x/\xff\xfe")


def shell(*argv, stdin: bytes = b"", cwd=None, forked: bool = False) -> subprocess.CompletedProcess:
    """The installed command run on `argv`; `forked`: the same, as a child of a process that has
    imported it already (tests/cli_process.py), for the hundreds of runs below."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SESSION_TREE_")}
    env["PYTHONPATH"] = str(REPO)
    argv = [os.fsencode(a) if isinstance(a, str) else a for a in map(lambda a: a if isinstance(a, bytes) else str(a), argv)]
    if forked:
        return CLI_PROCESS.run(argv, stdin=stdin, env=env, cwd=cwd, timeout=300)
    return subprocess.run([CLI, *argv], input=stdin, capture_output=True, env=env, timeout=300, cwd=cwd)


def hostile_session(path: Path) -> Path:
    """A session whose labels, name, cwd and ids carry terminal escapes."""
    b = Builder(cwd="/home/" + EVIL)
    b.add("session_info", name="name " + EVIL)
    u = b.user("hello " + EVIL, id="u1" + EVIL)
    b.assistant("answer " + EVIL, id="a1")
    b.add("label", targetId=u, label="label " + EVIL)
    return b.write(path)


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "root"
    (root / "--evil--").mkdir(parents=True)
    hostile_session(root / "--evil--" / "evil.jsonl")
    with open(os.path.join(os.fsencode(root / "--evil--"), b"\xff\xfe" + EVIL.encode() + b".jsonl"), "wb") as f:
        f.write(Builder().data())
    return root


@pytest.mark.parametrize("argv", [
    ["show", "{file}"], ["tree", "{file}"], ["ls", "{root}"], ["context", "{file}"],
])
def test_human_output_escapes_control_characters(root, argv):
    file = root / "--evil--" / "evil.jsonl"
    r = shell(*[a.format(file=file, root=root) for a in argv])
    assert r.returncode in (0, 1), r.stderr
    for raw in RAW_CONTROLS:
        assert raw not in r.stdout, (argv, raw)
    assert b"\\x1b]0;pwned\\x07" in r.stdout  # shown, as escapes


def test_json_output_holds_names_that_are_not_utf8(root):
    r = shell("ls", root, "--json")
    assert r.returncode == 0, r.stderr
    paths = [row["path"] for row in orjson.loads(r.stdout)]
    assert any(p.endswith("--evil--/\\xff\\xfe" + EVIL + ".jsonl") for p in paths)  # (JSON escapes the controls)
    bad = os.path.join(os.fsencode(root), b"\xff.jsonl")
    shutil.copy(root / "--evil--" / "evil.jsonl", bad)
    r = shell("show", bad, "--json")
    assert r.returncode == 0, r.stderr
    assert orjson.loads(r.stdout)["path"].endswith("\\xff.jsonl")


@pytest.mark.parametrize("argv", [
    ["ls", "{root}", "--json"], ["show", "{file}", "--json"], ["context", "{file}", "--json"],
    ["verdict", "{file}", "a1", "better", "--note", "note " + EVIL + "\x7f\x85", "--json"],
])
def test_json_output_escapes_del_and_the_c1_controls_as_sql_json_does(root, argv):
    """orjson escapes C0 but wrote DEL and C1 (U+009B is CSI to a terminal) as they are."""
    file = root / "--evil--" / "evil.jsonl"
    r = shell(*[a.format(file=file, root=root) for a in argv])
    assert r.returncode == 0, r.stderr
    for raw in (*RAW_CONTROLS, b"\x7f", b"\xc2\x85"):
        assert raw not in r.stdout, (argv, raw)
    assert b"\\u009b2J" in r.stdout and orjson.loads(r.stdout)  # shown as an escape, read back as the value


def test_new_with_a_cwd_that_is_not_utf8_refuses_and_leaves_nothing(tmp_path):
    r = shell("new", tmp_path / "r", "--cwd", NOT_UTF8)
    assert r.returncode == 2 and b"Traceback" not in r.stderr
    assert r.stderr.count(b"\n") == 1 and b"UTF-8" in r.stderr
    assert not (tmp_path / "r").exists()  # no folder, no empty file


@pytest.mark.parametrize("argv,says", [
    (["serve", "--port", "99999"], b"out of range"),
    (["serve", "--port", "-5"], b"out of range"),
    (["serve", "--port", "0"], b"out of range"),
    (["compact", "{file}", "--keep-recent-tokens", "-5"], b"out of range"),
    (["compact", "{file}", "--context-window", "-1"], b"out of range"),
    (["compact", "{file}", "--context-window", "0"], b"out of range"),
    (["compact", "{file}", "--reserve-tokens", "x"], b"not a whole number"),
])
def test_numbers_are_checked(root, argv, says):
    file = root / "--evil--" / "evil.jsonl"
    r = shell(*[a.format(file=file) for a in argv])
    assert r.returncode == 2 and says in r.stderr
    assert r.stderr.count(b"\n") == 1 and b"Traceback" not in r.stderr


def commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


HOSTILE_VALUES = [EVIL, os.fsdecode(b"\xff\xfe\x1b[2J"), "-5", "99999999999999999999999", "", "../../etc/passwd"]


def variants(sp: argparse.ArgumentParser, file: Path, root: Path, value: str, all_options: bool,
             long_running: bool):
    """argv for one command: positionals from the hostile session (or `value`), required options
    (and, with `all_options`, every option that takes a value) given `value`."""
    argv: list[str] = []
    for action in sp._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if not action.option_strings:
            if long_running:  # a place that does not exist: it must refuse, not start
                argv.append(str(root / "missing" / value.replace("/", "_")))
            elif action.nargs != "?" or value == EVIL:
                argv.append(str(file) if action.dest == "file" else str(root) if value == EVIL else value)
        elif action.nargs != 0 and (action.required or all_options):
            if action.choices:
                argv += [action.option_strings[0], value if value != EVIL else next(iter(action.choices))]
            else:
                argv += [action.option_strings[0], value]
    if long_running and "--port" not in argv:  # (none of the values is a port: it must refuse, not start)
        argv += ["--port", value]
    return argv


LONG_RUNNING = {"serve", "demo"}  # would serve forever when its arguments are good: only bad ones here


@pytest.mark.parametrize("name", sorted(commands()))
def test_every_command_with_hostile_arguments_exits_cleanly(tmp_path, name):
    sp = commands()[name]
    root = tmp_path / "root"
    root.mkdir()
    # A ROOT named like an option, or climbing up with `../..`, is created under tmp_path.
    cwd = tmp_path / "cwd" / "a" / "b"
    cwd.mkdir(parents=True)
    runs = []
    for value in HOSTILE_VALUES:
        for all_options in (False, True):
            file = hostile_session(tmp_path / f"s{len(runs)}.jsonl")
            argv = [name, *variants(sp, file, root, value, all_options, name in LONG_RUNNING)]
            stdin = b'{"type":"message","message":{"role":"user","content":"\\u001b]0;x\\u0007"}}\n\xff\n'
            # One run of each command is a fresh process (what its imports print counts too).
            r = shell(*argv, stdin=stdin, cwd=cwd, forked=not (value == EVIL and all_options))
            runs.append(argv)
            where = f"{argv!r}: {r.stderr[-600:]!r}"
            assert r.returncode in (0, 1, 2), where
            assert b"Traceback" not in r.stderr, where
            assert r.stderr.count(b"\n") <= 1, where
            for raw in RAW_CONTROLS[:3]:
                assert raw not in r.stderr, where
