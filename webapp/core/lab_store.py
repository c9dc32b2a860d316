"""A lab run kept on disk: one JSON line per thing it learned, appended as it learns it.

A run is a file of the application's data folder (`lab/runs/RUN.jsonl`, the user's alone, as
the sessions it quotes are). Its first line says what was asked (the settings and the targets);
every later line is one result, written the moment it is whole: a target's plan, a candidate
summary with its audit, a test of a candidate (its turns), a judgment, and every model call's
spending. So a run that is interrupted loses only the calls under way: run again under the same
name, it reads its file (`RunState`), skips what is there, and starts its budget from what was
spent. The corpus tables `lab_candidates` and `lab_tests` are read from these files
(`corpus/lab_tables.py`), and the lab's page and report are drawn from them.

A line that fails to parse (a crash mid-write) is skipped; the others stand.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from .entries import now_iso
from .errors import InvalidWrite
from .private import open_private, private_folder
from .verdicts import data_dir

RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")
UNCOMPACTED = "uncompacted"  # the test row of the context without any new compaction: the reference


def runs_dir() -> Path:
    return data_dir() / "lab" / "runs"


def check_run_name(name: str) -> str:
    if not RUN_NAME.fullmatch(name or ""):
        raise InvalidWrite(f"a run name is letters, digits, '.', '_' and '-' (at most 80), not {name!r}")
    return name


def new_run_name() -> str:
    """A name that sorts by time: lab-YYYYMMDD-HHMMSS-xxxx."""
    stamp = now_iso().replace("-", "").replace(":", "")
    return f"lab-{stamp[:8]}-{stamp[9:15]}-{os.urandom(2).hex()}"


def run_path(name: str, folder: Path | None = None) -> Path:
    return (folder or runs_dir()) / f"{check_run_name(name)}.jsonl"


class RunFile:
    """Appends a run's lines, one whole line per write, from any thread."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()

    @classmethod
    def create(cls, name: str, head: dict, folder: Path | None = None) -> "RunFile":
        path = run_path(name, folder)
        try:
            private_folder(path.parent, tighten=folder is None)
            fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        except FileExistsError:
            raise InvalidWrite(f"a lab run named {name!r} exists: resume it, or choose another name") from None
        except OSError as exc:
            raise InvalidWrite(f"cannot keep the lab run in {path}: {exc.strerror or exc}") from None
        with os.fdopen(fd, "wb") as f:
            f.write(orjson.dumps({"type": "run", "id": name, "created": now_iso(), **head}) + b"\n")
        return cls(path)

    @classmethod
    def open(cls, name: str, folder: Path | None = None) -> "RunFile":
        path = run_path(name, folder)
        if not path.is_file():
            raise InvalidWrite(f"no lab run named {name!r} (in {path.parent})")
        return cls(path)

    def add(self, kind: str, data: dict) -> dict:
        line = {"type": kind, "time": now_iso(), **data}
        raw = orjson.dumps(line, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n"
        with self._lock:
            fd = open_private(self.path, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, raw)
                os.fsync(fd)
            finally:
                os.close(fd)
        return line

    def state(self) -> "RunState":
        return read_run(self.path)


@dataclass
class RunState:
    """What a run file holds, sorted by kind; the latest line of one key wins."""

    name: str
    head: dict
    targets: dict[tuple[str, str], dict] = field(default_factory=dict)  # (file, at) ->
    candidates: dict[tuple[str, str, str], dict] = field(default_factory=dict)  # (file, at, id) ->
    tests: dict[tuple[str, str, str], dict] = field(default_factory=dict)
    judgments: dict[tuple[str, str, str], dict] = field(default_factory=dict)
    kept: list[dict] = field(default_factory=list)
    ends: list[dict] = field(default_factory=list)
    spent_tokens: int = 0
    spent_cost: float = 0.0
    calls: int = 0
    bad_lines: int = 0

    @property
    def settings(self) -> dict:
        return self.head.get("settings") or {}

    @property
    def finished(self) -> bool:
        """The last attempt ran to its end (not stopped by a budget, a cancel or a crash)."""
        return bool(self.ends) and self.ends[-1].get("reason") == "finished"

    def done_candidate(self, file: str, at: str, cid: str) -> dict | None:
        row = self.candidates.get((file, at, cid))
        return row if row is not None and not row.get("error") else None

    def done_test(self, file: str, at: str, cid: str) -> dict | None:
        row = self.tests.get((file, at, cid))
        return row if row is not None and not row.get("error") else None

    def done_judgment(self, file: str, at: str, cid: str) -> dict | None:
        row = self.judgments.get((file, at, cid))
        return row if row is not None and not row.get("error") else None

    def of_target(self, file: str, at: str) -> tuple[list[dict], dict[str, dict], dict[str, dict]]:
        """(candidates, tests by candidate id, judgments by candidate id) of one target."""
        cands = [c for (f, a, _), c in self.candidates.items() if (f, a) == (file, at)]
        tests = {cid: t for (f, a, cid), t in self.tests.items() if (f, a) == (file, at)}
        judged = {cid: j for (f, a, cid), j in self.judgments.items() if (f, a) == (file, at)}
        return cands, tests, judged


def read_run(path: Path) -> RunState:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidWrite(f"cannot read the lab run {path}: {exc.strerror or exc}") from None
    lines = raw.splitlines()
    state = RunState(path.stem, {})
    for n, line in enumerate(lines):
        try:
            d = orjson.loads(line)
        except orjson.JSONDecodeError:
            state.bad_lines += 1
            continue
        if not isinstance(d, dict):
            state.bad_lines += 1
            continue
        kind = d.get("type")
        if n == 0 and kind == "run":
            state.head = d
            continue
        key = (str(d.get("file", "")), str(d.get("at", "")))
        if kind == "target":
            state.targets[key] = d
        elif kind == "candidate":
            state.candidates[(*key, str(d.get("id")))] = d
        elif kind == "test":
            state.tests[(*key, str(d.get("candidate")))] = d
        elif kind == "judgment":
            state.judgments[(*key, str(d.get("candidate")))] = d
        elif kind == "spend":
            state.spent_tokens += int(d.get("tokens") or 0)
            state.spent_cost += float(d.get("cost") or 0.0)
            state.calls += 1
        elif kind == "kept":
            state.kept.append(d)
        elif kind == "end":
            state.ends.append(d)
    if not state.head:
        raise InvalidWrite(f"{path} is not a lab run (its first line does not say what was asked)")
    return state


def run_head(path: Path) -> dict | None:
    """A run's first line (what was asked: its settings and targets), read alone; None if it is
    not a run's."""
    try:
        with open(path, "rb") as f:
            head = orjson.loads(f.readline())
    except (OSError, orjson.JSONDecodeError):
        return None
    return head if isinstance(head, dict) and head.get("type") == "run" else None


def list_runs(folder: Path | None = None) -> list[Path]:
    """The run files, newest first."""
    folder = folder or runs_dir()
    try:
        files = [p for p in folder.iterdir() if p.suffix == ".jsonl" and RUN_NAME.fullmatch(p.stem)]
    except OSError:
        return []
    return sorted(files, key=lambda p: p.stat().st_mtime, reverse=True)
