"""`compact`, `fork --summarize` and `continue` from a shell, against the local model server."""

import os
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.conftest import lines_of
from tests.llm.conftest import MODEL, rich_session, run
from tests.llm.test_summarize import work_session
from webapp.cli import main
from webapp.model.keys import missing_key

CLI = Path(sys.executable).with_name("session-tree")


def one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("session-tree: error:"), err
    return lines[0]


# -- compact ---------------------------------------------------------------------------------------


def test_compact_with_a_model_writes_its_summary(capsys, tmp_path, llm_server, model_env):
    path = work_session().write(tmp_path / "s.jsonl")
    llm_server.behave("reply", text="## Goal\nRetries for the HTTP client.")
    code, out, err = run(capsys, "compact", path, "--keep-recent-tokens", "100", *model_env,
                         "--instructions", "Keep the POST rule.")
    assert code == 0, err
    entry = lines_of(path.read_bytes())[-1]
    assert out.strip() == entry["id"] and entry["type"] == "compaction" and entry["firstKeptEntryId"] == "e9"
    assert entry["summary"].startswith("## Goal\nRetries for the HTTP client.")
    assert entry["details"]["summarizer"] == "model" and entry["details"]["model"] == MODEL
    assert "Keep the POST rule." in llm_server.requests[-1]["messages"][1]["content"]


def test_compact_takes_the_model_from_the_environment(capsys, tmp_path, llm_server, model_env, monkeypatch):
    monkeypatch.setenv("SESSION_TREE_MODEL", MODEL)
    monkeypatch.setenv("SESSION_TREE_API_BASE", llm_server.api_base)
    path = work_session().write(tmp_path / "s.jsonl")
    code, _, err = run(capsys, "compact", path, "--keep-recent-tokens", "100")
    assert code == 0, err
    assert lines_of(path.read_bytes())[-1]["details"]["summarizer"] == "model"


def test_compact_without_a_model_is_extractive(capsys, tmp_path):
    path = work_session().write(tmp_path / "s.jsonl")
    code, out, err = run(capsys, "compact", path, "--keep-recent-tokens", "100")
    assert code == 0, err
    entry = lines_of(path.read_bytes())[-1]
    assert entry["details"]["summarizer"] == "extractive" and entry["details"]["model"] is None
    assert entry["summary"].startswith("## Goal\nAdd retries to the HTTP client.")


def test_compact_with_a_summary_file_calls_no_model(capsys, tmp_path, llm_server, model_env, monkeypatch):
    monkeypatch.setenv("SESSION_TREE_MODEL", MODEL)
    path = work_session().write(tmp_path / "s.jsonl")
    summary = tmp_path / "summary.md"
    summary.write_text("## Goal\nBy hand.\n")
    code, _, err = run(capsys, "compact", path, "--keep-recent-tokens", "100", "--summary-file", summary)
    assert code == 0, err
    entry = lines_of(path.read_bytes())[-1]
    assert entry["summary"].startswith("## Goal\nBy hand.") and entry["details"]["summarizer"] == "edited"
    assert entry["details"]["draftedBy"] is None and entry["details"]["source"] == "file"  # a person wrote it
    assert llm_server.requests == []
    with pytest.raises(SystemExit) as e:  # a file and a model are two sources: argparse refuses both
        main(["compact", str(path), "--summary-file", str(summary), "--model", MODEL])
    assert e.value.code == 2


def test_compact_context_window_defaults_to_the_session_models(capsys, tmp_path):
    b = work_session()
    b.add("model_change", provider="openai", modelId="gpt-4o-mini")
    path = b.write(tmp_path / "s.jsonl")
    code, out, _ = run(capsys, "compact", path, "--plan", "--json")
    assert code == 0 and orjson.loads(out)["contextWindow"] == 128000
    code, out, _ = run(capsys, "compact", path, "--plan", "--json", "--context-window", "5000")
    assert orjson.loads(out)["contextWindow"] == 5000


def test_compact_refusals_are_one_line_and_write_nothing(capsys, tmp_path, llm_server, model_env):
    path = work_session().write(tmp_path / "s.jsonl")
    before = path.read_bytes()
    code, _, err = run(capsys, "compact", path, "--leaf", "nope", *model_env)
    assert code == 2 and "'nope'" in one_line(err)
    code, _, err = run(capsys, "compact", path, *model_env)  # everything fits in keepRecentTokens
    assert code == 2 and "nothing to compact" in one_line(err)
    assert llm_server.requests == [] and path.read_bytes() == before


def test_compact_refuses_a_cut_point_that_vanished_while_the_model_summarized(capsys, tmp_path, llm_server,
                                                                              model_env):
    path = work_session().write(tmp_path / "s.jsonl")
    code, out, _ = run(capsys, "compact", path, "--plan", "--json", "--keep-recent-tokens", "220")
    assert orjson.loads(out)["firstKeptEntryId"] == "e7"
    rewritten = b"".join(line + b"\n" for line in path.read_bytes().splitlines() if b'"id":"e7"' not in line)
    llm_server.behave("reply", on_request=lambda body: path.write_bytes(rewritten))
    code, _, err = run(capsys, "compact", path, "--keep-recent-tokens", "220", *model_env)
    summary, error = err.splitlines()  # the summary streamed as it came (stderr), then why nothing was written
    assert summary == "Hello from the stream."
    assert code == 2 and "firstKeptEntryId 'e7' names no entry" in error
    assert path.read_bytes() == rewritten


# -- fork --summarize ------------------------------------------------------------------------------


def test_fork_summarize_writes_a_branch_summary_at_the_new_leaf(capsys, tmp_path):
    path = rich_session(tmp_path / "s.jsonl")
    code, out, err = run(capsys, "fork", path, "--from", "a7", "--position", "at", "--summarize")
    assert code == 0, err
    entry = lines_of(path.read_bytes())[-1]
    assert out.strip() == entry["id"]
    assert entry["type"] == "branch_summary" and entry["fromId"] == "u10" and entry["parentId"] == "a7"
    assert entry["details"]["summarizer"] == "extractive"
    assert "Now add error messages with line numbers." in entry["summary"]
    code, out, _ = run(capsys, "show", path, "--json")
    assert orjson.loads(out)["activeLeaf"] == entry["id"]


def test_fork_summarize_with_a_model(capsys, tmp_path, llm_server, model_env):
    path = rich_session(tmp_path / "s.jsonl")
    llm_server.behave("reply", text="## Goal\nError messages.")
    code, out, err = run(capsys, "fork", path, "--from", "u3", "--summarize", "--json", *model_env)
    assert code == 0, err
    result = orjson.loads(out)
    entry = lines_of(path.read_bytes())[-1]
    assert result == {"leafId": entry["id"], "entryId": entry["id"], "editText": None}
    assert entry["parentId"] == "u3" and entry["fromId"] == "u10"
    assert entry["summary"].startswith("## Goal\nError messages.") and entry["details"]["model"] == MODEL


def test_fork_summarize_failure_writes_nothing(capsys, tmp_path, llm_server, model_env):
    path = rich_session(tmp_path / "s.jsonl")
    before = path.read_bytes()
    llm_server.behave("500")
    code, _, err = run(capsys, "fork", path, "--from", "u3", "--summarize", *model_env)
    assert code == 2 and "(500)" in one_line(err) and path.read_bytes() == before


# -- continue --------------------------------------------------------------------------------------


class Recorder:
    """A stdout that remembers each write, to see the reply arrive in pieces."""

    def __init__(self):
        self.writes: list[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return len(text)

    def flush(self) -> None:
        pass


def test_continue_streams_the_reply_to_stdout(tmp_path, llm_server, model_env, monkeypatch):
    path = rich_session(tmp_path / "s.jsonl")
    llm_server.behave("stream", pieces=["Adding", " line", " numbers."])
    out = Recorder()
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["continue", str(path), "--message", "Go on.", *model_env]) == 0
    assert out.writes[:3] == ["Adding", " line", " numbers."] and "".join(out.writes) == "Adding line numbers.\n"
    user, assistant = lines_of(path.read_bytes())[-2:]
    assert user["parentId"] == "u10" and assistant["parentId"] == user["id"]
    assert assistant["message"]["content"] == [{"type": "text", "text": "Adding line numbers."}]


def test_continue_lists_tool_calls_without_running_them(capsys, tmp_path, llm_server, model_env):
    path = rich_session(tmp_path / "s.jsonl")
    llm_server.behave("tool", pieces=["Reading."])
    code, out, _ = run(capsys, "continue", path, "--message", "Look.", "--leaf", "a8", *model_env)
    assert code == 0 and out == 'Reading.\n→ read {"path":"src/app.py"} (not run)\n'
    assert lines_of(path.read_bytes())[-2]["parentId"] == "a8"


def test_continue_errors_keep_the_user_message(capsys, tmp_path, llm_server, model_env):
    path = rich_session(tmp_path / "s.jsonl")
    size = len(lines_of(path.read_bytes()))
    llm_server.behave("401")
    code, out, err = run(capsys, "continue", path, "--message", "Hello?", *model_env)
    assert code == 2 and out == ""
    assert "refused the API key (401)" in one_line(err)
    lines = lines_of(path.read_bytes())
    assert len(lines) == size + 1 and lines[-1]["message"]["role"] == "user"
    llm_server.behave("break")
    code, out, err = run(capsys, "continue", path, "--message", "Again?", *model_env)
    assert code == 2 and out.endswith("\n") and "broke off" in one_line(err)
    assert len(lines_of(path.read_bytes())) == size + 2


def test_continue_without_a_model_writes_nothing(capsys, tmp_path):
    path = rich_session(tmp_path / "s.jsonl")
    before = path.read_bytes()
    code, _, err = run(capsys, "continue", path, "--message", "Hi")
    assert code == 2 and "SESSION_TREE_MODEL" in one_line(err) and path.read_bytes() == before


def test_continue_error_as_a_shell_sees_it(tmp_path, llm_server, model_env):
    """The installed command: one stderr line, no traceback, nothing else printed by litellm."""
    path = rich_session(tmp_path / "s.jsonl")
    llm_server.behave("429")
    p = subprocess.run([CLI, "continue", path, "--message", "Hi", *model_env], capture_output=True, timeout=300)
    assert p.returncode == 2 and p.stdout == b""
    assert "rate-limiting" in one_line(p.stderr.decode())


# -- a model that cannot be called -----------------------------------------------------------------


MISSING_KEY_PROBE = """
import sys
from webapp.cli import main
code = main(sys.argv[1:])
print(code, "litellm" in sys.modules)
"""


@pytest.mark.parametrize("argv", [
    ["continue", "{path}", "--message", "Hello?", "--model", "openai/gpt-4o-mini"],
    ["regenerate", "{path}", "a8", "--model", "anthropic/claude-sonnet-4-5"],
    ["compact", "{path}", "--keep-recent-tokens", "10", "--model", "openai/gpt-4o-mini"],
    ["ask", "{path}", "--at", "u10", "--models", "openai/test-model,anthropic/claude-sonnet-4-5", "--message", "Hi"],
    ["judge", "{path}", "a7", "a8", "--model", "openai/gpt-4o-mini"],
    ["replay", "{path}", "--leaf", "a7", "--from", "u3", "--model", "gemini/gemini-2.5-flash"],
])
def test_a_model_command_without_its_providers_key_says_so_before_litellm_and_writes_nothing(argv, tmp_path):
    path = rich_session(tmp_path / "s.jsonl")
    before = path.read_bytes()
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_AUTH_TOKEN"))
           and not k.startswith("SESSION_TREE_")}
    done = subprocess.run([sys.executable, "-c", MISSING_KEY_PROBE, *(a.format(path=path) for a in argv)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.stdout.splitlines()[-1] == "2 False"  # refused, and litellm never imported
    said = one_line(done.stderr)
    assert "No API key for" in said and re.search(r"Set (OPENAI|ANTHROPIC|GEMINI)_API_KEY", said)
    assert "SESSION_TREE_API_KEY" in said
    assert path.read_bytes() == before


def test_a_provider_whose_key_is_not_known_here_or_a_local_server_is_left_to_the_call(capsys, tmp_path, llm_server,
                                                                                      monkeypatch):
    path = rich_session(tmp_path / "s.jsonl")
    code, _, err = run(capsys, "continue", path, "--message", "Hi", "--model", MODEL, "--api-base",
                       llm_server.api_base)  # no key at all: a local server may need none
    assert code == 0, err
    assert missing_key("bedrock/anthropic.claude-3", None, None) is None  # an AWS profile may do
    assert missing_key("gpt-4o-mini", None, None) is None  # litellm resolves a bare name itself
    assert missing_key("openai/gpt-4o-mini", None, "sk-from-SESSION_TREE_API_KEY") is None
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "t")
    assert missing_key("anthropic/claude-sonnet-4-5", None, None) is None
    monkeypatch.setenv("OPENAI_API_KEY", " ")
    assert "OPENAI_API_KEY" in missing_key("openai/gpt-4o-mini", None, None)
