"""Shared helpers: a builder of session files with chosen ids and parents, and both storages.

`Builder` writes lines exactly as given (ids, parents, timestamps), so tests can make the broken
shapes SPEC §3 talks about; `open_session(kind, data, tmp_path)` opens the same bytes over a JSONL
file or in memory, so one test body covers both storages.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import orjson
import pytest
from flask import Flask

from tests import sweep
from tests.fake_llm import start_fake_llm
from webapp.core.session import Session
from webapp.core.storage import JsonlStorage, MemoryStorage
from webapp.web.auth import OwnerClient

# Every app a test builds answers its test client as its owner (the token, webapp/web/auth.py), so
# the tests of pages need not log in; the tests of logging in use a client of their own.
Flask.test_client_class = OwnerClient

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PI_FIXTURES = sorted((FIXTURES / "pi").glob("*.jsonl"))
OTHER_FIXTURES = sorted((FIXTURES / "claude-code").glob("*.jsonl")) + sorted(
    (FIXTURES / "codex").glob("*.jsonl")
)

SESSION_ID = "0193c0de-0000-7000-8000-000000000000"
START = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
AUTO = object()  # "the previously added entry" as parent


def pytest_configure(config):
    """The sampled sweeps' seed, drawn before xdist starts its workers, which inherit it."""
    sweep.ensure_seed()


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"sampled sweeps drew from seed {sweep.seed()} ({sweep.repeat_with()} repeats them)")


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def header(version: int | None = 3, **extra) -> dict:
    h = {"type": "session", "id": SESSION_ID, "timestamp": iso(START), "cwd": "/home/ana/proj"}
    if version is not None:
        h["version"] = version
    h.update(extra)
    return h


class Builder:
    """Lines of a session file; every `add` returns the new entry's id (`e1`, `e2`, ... by default)."""

    def __init__(self, version: int | None = 3, with_header: bool = True, **header_extra):
        self.lines: list[bytes] = [orjson.dumps(header(version, **header_extra))] if with_header else []
        self.last: str | None = None
        self.n = 0
        self.clock = START

    def add(self, type: str, id: str | None = None, parent=AUTO, ts: str | None = None, **fields) -> str:
        self.n += 1
        self.clock += timedelta(seconds=1)
        entry_id = id or f"e{self.n}"
        entry = {
            "type": type,
            "id": entry_id,
            "parentId": self.last if parent is AUTO else parent,
            "timestamp": ts or iso(self.clock),
        }
        entry.update(fields)
        self.lines.append(orjson.dumps(entry))
        self.last = entry_id
        return entry_id

    def raw(self, line: bytes | str | dict) -> None:
        """A line written as it is (a dict is dumped, without any field filled in)."""
        if isinstance(line, dict):
            line = orjson.dumps(line)
        self.lines.append(line.encode() if isinstance(line, str) else line)

    def user(self, text: str = "hi", **kw) -> str:
        return self.add("message", message={"role": "user", "content": text}, **kw)

    def assistant(self, text: str = "ok", calls: list[dict] | None = None, usage: int | None = None,
                  stop: str = "stop", model: str = "m1", provider: str = "p1", **kw) -> str:
        content: list[dict] = [{"type": "text", "text": text}] if text else []
        content += [{"type": "toolCall", **c} for c in calls or ()]
        msg = {"role": "assistant", "content": content, "provider": provider, "model": model, "stopReason": stop}
        if usage is not None:
            msg["usage"] = {"input": usage, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": usage}
        return self.add("message", message=msg, **kw)

    def tool_result(self, call_id: str, text: str = "result", name: str = "read", **kw) -> str:
        msg = {"role": "toolResult", "toolCallId": call_id, "toolName": name,
               "content": [{"type": "text", "text": text}]}
        return self.add("message", message=msg, **kw)

    def tool_turn(self, name: str, path: str, call_id: str, text: str = "ok") -> tuple[str, str]:
        """An assistant tool call and its result: (call entry id, result entry id)."""
        a = self.assistant("", calls=[{"id": call_id, "name": name, "arguments": {"path": path}}])
        return a, self.tool_result(call_id, text, name)

    def data(self) -> bytes:
        return b"".join(line + b"\n" for line in self.lines)

    def write(self, path: Path) -> Path:
        path.write_bytes(self.data())
        return path


def count_dot_runs(monkeypatch) -> list[str]:
    """The dot sources the app lays out from now on (dot still runs): a test tells a drawing
    changed in place from one laid out again."""
    from webapp.web.graph import dot as graph

    runs: list[str] = []
    real = graph.run_dot
    monkeypatch.setattr(graph, "run_dot", lambda source, timeout=None: runs.append(source) or real(source, timeout))
    return runs


def turn_under_way() -> tuple[Builder, str]:
    """A user message and four steps of the assistant's work on it (a read, its result, an edit
    turn, a reply): a builder to write it and the id of the last step, the active leaf."""
    b = Builder()
    b.user("please fix the importer")
    b.assistant("Reading the importer first.", calls=[{"id": "c1", "name": "read", "arguments": {"path": "a.py"}}])
    b.tool_result("c1", "def load(): ...")
    b.tool_turn("edit", "importer.py", "c2", "edited")
    return b, b.assistant("Now running the whole test suite for the importer.")


def open_session(kind: str, data: bytes, tmp_path: Path, name: str = "s.jsonl") -> Session:
    """The same bytes as a session over a JSONL file (`jsonl`) or in memory (`memory`)."""
    if kind == "memory":
        return Session(MemoryStorage(data))
    path = tmp_path / name
    path.write_bytes(data)
    return Session(JsonlStorage(path))


def storage_bytes(session: Session) -> bytes:
    return session.storage.read_from(0)


def lines_of(data: bytes) -> list[dict]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


@pytest.fixture(params=["jsonl", "memory"])
def kind(request) -> str:
    return request.param


@pytest.fixture
def make_session(kind, tmp_path):
    """`make_session(data)` → a Session over `data` in the storage of the current parameter."""
    return lambda data: open_session(kind, data, tmp_path)


@pytest.fixture
def llm_server():
    """A local OpenAI-compatible model server on 127.0.0.1 (tests/fake_llm.py)."""
    fake, stop = start_fake_llm()
    yield fake
    stop()


@pytest.fixture(autouse=True)
def patient_dot(monkeypatch):
    """dot may take a page's 8 s on the 3,000-entry sample when the machine is loaded (the suite
    runs beside other work), and the page then falls back without its drawing: a test that reads
    the drawing would fail for the machine's sake. The tests of the limit set their own."""
    from webapp.web.graph import dot as graph_dot

    monkeypatch.setattr(graph_dot, "DOT_TIMEOUT", 120.0)


@pytest.fixture(autouse=True)
def own_cache_folder(tmp_path_factory, monkeypatch):
    """Each test's servers keep their corpus index in a cache folder of their own, never the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


@pytest.fixture(autouse=True)
def own_data_folder(tmp_path_factory, monkeypatch):
    """Each test keeps what the app keeps of its own (lab runs, saved prompts, verdicts kept aside)
    in a data folder of its own, never the user's."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data")))


@pytest.fixture(autouse=True)
def pi_in_its_usual_folder(monkeypatch):
    """pi's sessions are where a test's home folder keeps them, whatever the machine running the
    tests says pi's are (its PI_CODING_AGENT_SESSION_DIR or agent folder)."""
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
