"""The model tests: a config for the local fake server (tests/fake_llm.py, fixture `llm_server`
in tests/conftest.py), and a guard that nothing here touches the network."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from tests.conftest import Builder
from webapp.cli import main
from webapp.model.llm import ModelConfig

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

MODEL = "openai/test-model"
TEST_MODEL = {"provider": "openai", "model": "test-model"}  # what answered in rich_session: MODEL
TIMEOUT = 1.0  # seconds: the time limit of a test whose subject is a server that does not answer
PATIENT = 120.0  # seconds: the time limit of every other call (a loaded machine answers late, not never)
LOOPBACK = {"127.0.0.1", "::1", "localhost"}
ENV = ("SESSION_TREE_MODEL", "SESSION_TREE_API_BASE", "SESSION_TREE_API_KEY", "SESSION_TREE_TIMEOUT",
       "SESSION_TREE_CONTEXT_WINDOW", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE",
       "ANTHROPIC_API_KEY")


@pytest.fixture(autouse=True)
def isolated(monkeypatch):
    """No test here reaches past 127.0.0.1, nor depends on the keys and models of the machine."""
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    connect = socket.socket.connect

    def loopback_only(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOOPBACK:
            raise ConnectionRefusedError(f"tests/llm must not touch the network (tried {address})")
        return connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", loopback_only)


@pytest.fixture
def config(llm_server) -> ModelConfig:
    return ModelConfig(MODEL, api_base=llm_server.api_base, api_key="dummy", timeout=PATIENT)


def rich_session(path: Path) -> Path:
    """A session whose context has every kind of message: a compaction's summary and kept part,
    a tool call and its result, a branch summary, and a branch left aside.

    u1 a2 u3 c4(compaction keeping u3) a5(read call) t6 a7 | a8 (second answer to u3, left)
    b9 (branch summary from a8, after a7) u10; active leaf u10.
    """
    b = Builder()
    b.add("model_change", id="m0", provider="openai", modelId="test-model")
    b.user("Build a parser for the config files.", id="u1")
    b.assistant("I will start with the grammar.", id="a2", **TEST_MODEL)
    b.user("Keep it in pure Python, no dependencies.", id="u3")
    b.add("compaction", id="c4", summary="## Goal\nBuild a config parser.", firstKeptEntryId="u3",
          tokensBefore=5000, details={"readFiles": ["docs/format.md"], "modifiedFiles": []})
    b.assistant("", id="a5", calls=[{"id": "call_9", "name": "read", "arguments": {"path": "src/parse.py"}}],
                **TEST_MODEL)
    b.tool_result("call_9", "def parse(text): ...", id="t6")
    b.assistant("The parser exists; I will extend it.", id="a7", **TEST_MODEL)
    b.assistant("A different approach.", id="a8", parent="u3", **TEST_MODEL)
    b.add("branch_summary", id="b9", parent="a7", fromId="a8", summary="Tried a regex approach; too slow.")
    b.user("Now add error messages with line numbers.", id="u10")
    return b.write(path)


@pytest.fixture
def model_env(monkeypatch, llm_server):
    """The model settings a user would export, pointing at the local server."""
    monkeypatch.setenv("SESSION_TREE_API_KEY", "dummy")
    monkeypatch.setenv("SESSION_TREE_TIMEOUT", str(PATIENT))
    return ["--model", MODEL, "--api-base", llm_server.api_base]


def run(capsys, *argv) -> tuple[int, str, str]:
    """Run the CLI in this process: its exit code, stdout and stderr."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err
