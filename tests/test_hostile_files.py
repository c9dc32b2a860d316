"""Hostile session files: one file per kind of hostile content, plus a fuzzer
over field types; EVERY view of the app (its GET routes, enumerated from the URL map, with and
without htmx; each at an entry drawn from the run's seed, tests/sweep.py) answers each with a
status below 500, and EVERY command of the CLI (enumerated from its parser) exits 0, 1 or 2
without a traceback."""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from urllib.parse import quote

import orjson
import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from tests import sweep
from tests.conftest import Builder
from webapp import cli
from webapp.core.session import Session
from webapp.web import sessions
from webapp.web.app import create_app

# Values the routes' path arguments take; a route with an argument not named here fails the
# suite, so that a new route is not left out unnoticed.
ROUTE_ARGS = {"tab": sessions.TABS, "kind": sessions.MORE_KINDS, "cid": ("c1", "a1"),  # cid: a compaction, or not one
              "run": ("lab-none",), "name": ("corpus-tables", "nope")}  # a lab run (none of that name), a doc
SKIPPED_ENDPOINTS = {"static", "pygments_css",  # files of the app itself, not session views
                     "follow.events"}  # a stream that does not end by itself: tests/web/test_follow_routes.py reads it


def base(b: Builder) -> str:
    b.user("hello", id="u0")
    return b.assistant("hi", id="a1")


def hostile(*lines) -> bytes:
    """A normal session plus the lines given (dicts are dumped, bytes written as they are), after
    an entry `a1`, as the issue's reproductions are."""
    b = Builder()
    base(b)
    for line in lines:
        b.raw(line)
    return b.data()


def msg(i: str, message: dict, parent: str = "a1", **extra) -> dict:
    return {"type": "message", "id": i, "parentId": parent, "timestamp": "2026-01-02T03:04:09.000Z",
            "message": message, **extra}


def nested(depth: int) -> bytes:
    """JSON nested `depth` deep (orjson writes at most 255; its reader takes up to 1024)."""
    return b'{"a":' * depth + b'"deep"' + b"}" * depth


BIG = "x" * 20_000
EVIL = "\x1b]0;t\x07\x1b[31m\r\x9b"

FILES: dict[str, bytes] = {
    # 1: a NUL in text that reaches a graph label
    "1-nul": hostile(msg("r1", {"role": "user", "content": "a\u0000b"})),
    # 2: strings given to dot uncut
    "2-backslash-type": hostile({"type": "x\\", "id": "r1", "parentId": "a1"}),
    "2-long-type": hostile({"type": BIG, "id": "r1", "parentId": "a1"}),
    "2-long-role": hostile(msg("r1", {"role": BIG, "content": "c"})),
    "2-long-id": hostile(msg(BIG, {"role": "user", "content": "c"})),
    # 3: a role that is not a string
    "3-role-int": hostile(msg("r1", {"role": 5, "content": "c"})),
    "3-role-list": hostile(msg("r1", {"role": ["user"], "content": "c"})),
    "3-role-object": hostile(msg("r1", {"role": {"a": 1}, "content": "c"})),
    # 4: a toolCallId that is not a string
    **{f"4-toolcallid-{n}": hostile(msg("r1", {"role": "toolResult", "toolCallId": v, "toolName": "read",
                                               "content": [{"type": "text", "text": "r"}]}))
       for n, v in (("true", True), ("minus1", -1), ("object", {}))},
    # 5: a content block whose type is a list or an object
    "5-block-type-list": hostile(msg("r1", {"role": "user", "content": [{"type": ["text"], "text": "t"}]})),
    "5-block-type-object": hostile(msg("r1", {"role": "assistant", "content": [{"type": {"a": 1}, "text": "t"}]})),
    # 6: tool-call arguments nested deeper than 255
    "6-deep-arguments": hostile(b'{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-02T03:04:09.000Z",'
                                b'"message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash",'
                                b'"arguments":' + nested(400) + b"}]}}"),
    # 7 (budgets) and the CLI's control characters
    "big-message": hostile(msg("r1", {"role": "user", "content": "y\n" * 1_000_000})),
    "garbage": hostile(*[b"garbage " + bytes([65 + i % 26]) * 80 for i in range(20_000)]),
    "control-characters": hostile(msg("r1" + EVIL, {"role": "user", "content": EVIL}),
                                  {"type": "label", "id": "l1", "parentId": "r1" + EVIL, "timestamp": EVIL,
                                   "targetId": "a1", "label": EVIL}),
    "not-utf8-and-torn": hostile(b'{"type":"message","id":"b\xff","parentId":"a1"}', b'{"type":"mess'),
    # round three: text that made a pattern or a lexer slow, headers whose type is no string
    "at-sign-run": hostile(msg("r1", {"role": "user", "content": "@" * 20_000 + " " + "+" * 20_000})),
    "open-file-lists": hostile({"type": "compaction", "id": "c1", "parentId": "a1", "timestamp": "2026-01-02T03:04:09.000Z",
                                "summary": "Goal\n" + "<read-files>\n" * 2_000, "firstKeptEntryId": "a1",
                                "tokensBefore": 10}),
    "systemd-spaces": hostile(msg("r1", {"role": "assistant", "content": [
        {"type": "toolCall", "id": "w1", "name": "write", "arguments": {"path": "unit.service", "content": " " * 1_500 + "x"}}]}),
        msg("r2", {"role": "toolResult", "toolCallId": "w1", "toolName": "write",
                   "content": [{"type": "text", "text": " " * 1_500 + "x"}]}, parent="r1")),
    "claude-open-command-names": orjson.dumps({
        "type": "user", "sessionId": "s1", "uuid": "u1", "parentUuid": None, "timestamp": "2026-01-02T03:04:05Z",
        "message": {"role": "user", "content": "<command-name>" * 2_000}}) + b"\n",
    **{f"header-type-{n}": orjson.dumps({"type": v, "version": 3, "id": "h1", "cwd": "/"}) + b"\n" +
       hostile().split(b"\n", 1)[1] for n, v in (("list", ["session"]), ("object", {"a": 1}))},
    "newline-name": hostile({"type": "session_info", "id": "n1", "parentId": "a1", "name": "x\n/forged.jsonl\n  y"}),
    "no-header-cycle-orphan": b"\n".join([
        orjson.dumps({"type": "message", "id": "c1", "parentId": "c2", "message": {"role": "user", "content": "a"}}),
        orjson.dumps({"type": "message", "id": "c2", "parentId": "c1", "message": {"role": "user", "content": "b"}}),
        orjson.dumps({"type": "message", "id": "o1", "parentId": "ghost", "message": {"role": "user", "content": "c"}}),
    ]) + b"\n",
}


def entry_ids(path: Path) -> list[str]:
    tree = Session.open(path).tree
    picked = [e.id for e in tree.entries[-3:]] + [tree.entries[0].id] if tree.entries else []
    return list(dict.fromkeys(picked))


HTMX_OR_NOT = ({}, {"HX-Request": "true"})
SHARES = {"export.export", "compare.export", "printing.print_branch"}  # the routes that share a session


def view_classes(app, rel: str, path: Path) -> dict[tuple[str, bool], list[str]]:
    """Every GET view of the app for this session, by class: a route (its path arguments filled
    in) asked as a page or as htmx's fragment; a class's members ask about different entries."""
    ids = entry_ids(path)
    tree = Session.open(path).tree
    leaves = tree.leaves()[:3]
    bad = tree.bad_lines[0].line if tree.bad_lines else 1
    classes: dict[tuple[str, bool], list[str]] = {}
    for rule in app.url_map.iter_rules():
        if "GET" not in rule.methods or rule.endpoint in SKIPPED_ENDPOINTS:
            continue
        args = [a for a in rule.arguments if a != "rel"]
        unknown = set(args) - set(ROUTE_ARGS)
        assert not unknown, f"{rule.rule}: tell ROUTE_ARGS what {unknown} can be"
        combos = [{}]
        for a in args:
            combos = [{**c, a: v} for c in combos for v in ROUTE_ARGS[a]]
        for combo in combos:
            path_part = rule.rule.replace("<path:rel>", quote(rel))
            for a, v in combo.items():
                path_part = path_part.replace(f"<{a}>", v)
            urls = []
            for node in ids or [""]:
                q = {"node": node, "id": node, "ids": ",".join(leaves), "tip": leaves[0] if leaves else "",
                     "start": node, "i": "0", "line": str(bad), "offset": "0", "reviewed": "1"}  # (a share route past its review)
                urls.append(path_part + "?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in q.items()))
                if not rule.arguments:
                    break
            for htmx in (False, True):
                classes[(path_part, htmx)] = urls
                if rule.endpoint in SHARES:  # once more from its redacted copy: its scan, its copy, its page
                    classes[(path_part + "#redacted", htmx)] = [u + "&redact=1" for u in urls]
    return classes


def check_views(root: Path, name: str, key: str | None = None, turn: int | None = None) -> None:
    """Every route once, each at an entry drawn from the run's seed (tests/sweep.py, by `key`,
    the file's name unless given): the views of one route differ only in the entry they show,
    and over runs every entry is shown. A route is asked as a page or as htmx's fragment: the
    file's `turn` (its place in its sweep) alternates the two along the sweep, from a start drawn
    per route, so that each run asks every route in both forms on one file or another, and over
    runs every file in both; without a turn (a fuzzed file) the form is drawn."""
    app = create_app(root)
    client = app.test_client()
    path = root / f"{name}.jsonl"
    assert client.get("/").status_code < 500
    for (route, htmx), urls in view_classes(app, f"{name}.jsonl", path).items():
        start = sweep.rng(route).randrange(2) if turn is not None else sweep.rng(key or name, route).randrange(2)
        if htmx != bool((start + (turn or 0)) % 2):
            continue
        url = sweep.pick(urls, key or name, route, htmx)
        headers = HTMX_OR_NOT[htmx]
        r = client.get(url, headers=headers)
        assert r.status_code < 500, (name, url, headers, sweep.repeat_with(), r.get_data(as_text=True)[-400:])


def commands() -> dict[str, argparse.ArgumentParser]:
    (sub,) = [a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def cli_argvs(path: Path, entry: str) -> list[list[str]]:
    """Every command on the file, its required options filled in, plus the --json forms."""
    runs = []
    for name, sp in commands().items():
        # demo reads no file but the bundled samples, and mcp answers on stdio until its client
        # goes (its tools read hostile files in tests/mcp_server): both would serve until stopped
        if name in ("demo", "mcp"):
            continue
        argv = [name]
        for action in sp._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if not action.option_strings:
                if action.dest == "file":
                    argv.append(str(path))
                elif action.dest == "root":  # for serve: a root that does not exist, or it would serve
                    argv.append(str(path.parent / "missing" if name == "serve" else path.parent))
                elif action.dest == "where":  # search: in the file
                    argv.append(str(path))
                elif action.nargs != "?":
                    argv.append(entry)
            elif action.required:
                argv += [action.option_strings[0], "/x" if action.dest == "cwd" else entry]
        runs.append(argv)
        if any(a.dest == "json" for a in sp._actions):
            runs.append(argv + ["--json"])
        if any(a.dest == "plan" for a in sp._actions):
            runs.append(argv + ["--plan"])
    return runs


def check_cli(path: Path, monkeypatch) -> None:
    entry = entry_ids(path)[0] if entry_ids(path) else "a1"
    monkeypatch.chdir(path.parent)  # what a command writes to the current folder lands in tmp_path
    for argv in cli_argvs(path, entry):
        out, err = io.StringIO(), io.StringIO()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"type":"message","message":{"role":"user","content":"x"}}')))
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = cli.main(argv)
            except SystemExit as exc:  # argparse
                code = exc.code
        assert code in (0, 1, 2), (argv, code, err.getvalue())
        assert "Traceback" not in err.getvalue() and err.getvalue().count("\n") <= 1, (argv, err.getvalue())


def write_file(tmp_path: Path, name: str) -> Path:
    (tmp_path / f"{name}.jsonl").write_bytes(FILES[name])
    return tmp_path


@pytest.mark.parametrize("name", sorted(FILES))
def test_every_view_of_a_hostile_file_answers_below_500(tmp_path, name):
    check_views(write_file(tmp_path, name), name, turn=sorted(FILES).index(name))


@pytest.mark.parametrize("name", sorted(FILES))
def test_every_command_on_a_hostile_file_exits_cleanly(tmp_path, monkeypatch, name):
    check_cli(write_file(tmp_path, name) / f"{name}.jsonl", monkeypatch)


# -- the fuzzer: any JSON value in any field an entry's reader, view or context uses ------------

SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False),
                   st.text(max_size=12), st.sampled_from(["user", "assistant", "toolResult", "text", "toolCall",
                                                          "message", "leaf", "label", "compaction", "a1", EVIL]))
VALUE = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                     st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                     max_leaves=8)
ROLE = st.one_of(st.sampled_from(["user", "assistant", "toolResult", "bashExecution", "custom"]), VALUE)
KNOWN = st.sampled_from(["message", "label", "leaf", "compaction", "branch_summary", "session_info",
                          "model_change", "thinking_level_change", "custom", "custom_message"])
BLOCK = st.fixed_dictionaries({"type": st.one_of(st.sampled_from(["text", "toolCall", "thinking", "image"]), VALUE)}, optional={ "text": VALUE, "id": VALUE, "name": VALUE,
                                            "arguments": VALUE, "thinking": VALUE, "data": VALUE, "mimeType": VALUE})
MESSAGE = st.fixed_dictionaries({
    "role": ROLE}, optional={
    "content": st.one_of(VALUE, st.lists(BLOCK, max_size=3)), "toolCallId": VALUE,
    "toolName": VALUE, "usage": VALUE, "stopReason": VALUE, "provider": VALUE, "model": VALUE,
    "command": VALUE, "output": VALUE, "exitCode": VALUE, "isError": VALUE, "errorMessage": VALUE})
ENTRY = st.fixed_dictionaries({"id": st.sampled_from(["f1", "f2", "f3"]), "type": st.one_of(KNOWN, VALUE)}, optional={
    "parentId": st.one_of(VALUE, st.sampled_from(["a1", "f1", "f2"])), "timestamp": VALUE,
    "message": st.one_of(MESSAGE, VALUE), "targetId": VALUE, "label": VALUE, "name": VALUE, "summary": VALUE,
    "firstKeptEntryId": VALUE, "tokensBefore": VALUE, "fromId": VALUE, "details": VALUE,
    "customType": VALUE, "content": VALUE, "provider": VALUE, "modelId": VALUE, "thinkingLevel": VALUE})


def any_json(value) -> bytes:
    """orjson refuses integers beyond 64 bits; such a value is written as Python's JSON writes it."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value).encode()


def check_fuzzed(entries: list, tmp_path_factory, monkeypatch) -> None:
    root = tmp_path_factory.mktemp("fuzz")
    data = hostile(*(any_json(e) for e in entries))
    if isinstance(entries[0].get("type"), (list, dict)):  # the header's type too, as a crafted file has it
        header, rest = data.split(b"\n", 1)
        data = any_json({**orjson.loads(header), "type": entries[0]["type"]}) + b"\n" + rest
    (root / "fuzz.jsonl").write_bytes(data)
    check_views(root, "fuzz", key=hashlib.sha256(data).hexdigest())
    check_cli(root / "fuzz.jsonl", monkeypatch)


# No shrinking: every example runs every view, so shrinking a failure takes longer than the suite;
# the example as found is reported. The examples are drawn from the run's seed (tests/sweep.py):
# other examples each run, and a red run's examples come back with its SWEEP_SEED.
# 30 examples a run, as three tests of 10 that draw from seeds of their own: the suite's two
# processes share them, where one test of 30 was the longest of the suite (20 s of CPU).
FUZZ_EXAMPLES, FUZZ_PARTS = 30, 3


def fuzz_part(part: int):
    @settings(max_examples=FUZZ_EXAMPLES // FUZZ_PARTS, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @seed(sweep.seed() * FUZZ_PARTS + part)
    @given(entries=st.lists(ENTRY, min_size=1, max_size=3))
    def test(tmp_path_factory, monkeypatch, entries):
        check_fuzzed(entries, tmp_path_factory, monkeypatch)

    test.__name__ = test.__qualname__ = f"test_fuzzed_field_types_never_make_a_500_or_a_traceback_{part + 1}"
    return test


test_fuzzed_field_types_never_make_a_500_or_a_traceback_1 = fuzz_part(0)
test_fuzzed_field_types_never_make_a_500_or_a_traceback_2 = fuzz_part(1)
test_fuzzed_field_types_never_make_a_500_or_a_traceback_3 = fuzz_part(2)


# -- the real files: every fixture other tools wrote, in every view and in the reading commands --

FIXTURE_FILES = sorted(p for p in (Path(__file__).parent / "fixtures").glob("*/*.jsonl"))


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_view_and_reading_command_of_every_fixture_works(tmp_path, monkeypatch, capsys, fixture):
    import shutil

    name = fixture.stem
    shutil.copyfile(fixture, tmp_path / f"{name}.jsonl")
    check_views(tmp_path, name, turn=FIXTURE_FILES.index(fixture))
    path = tmp_path / f"{name}.jsonl"
    tree = Session.open(path).tree
    picks = [*tree.leaves()[:3], *(e.id for e in tree.compactions()[:2]),
             *[e.id for e in tree.entries if e.sidechain][:1]]
    capsys.readouterr()
    for argv in (["show", path], ["tree", path], ["validate", path],
                 *(["context", path, "--json", "--leaf", x] for x in dict.fromkeys(picks))):
        code = cli.main([str(a) for a in argv])
        out, err = capsys.readouterr()
        assert code in (0, 1), (argv, err)
        assert "Traceback" not in err, (argv, err)
        if argv[0] == "context":
            orjson.loads(out)
