"""How a branch ended, read from its last turn: answered, asks the user a question, checks
failed, error, aborted, replay stopped, waiting for a tool result, waiting for the model.

"Ended normally" told a researcher nothing: a branch whose last answer is a question waits for a
person, and a branch whose last test run failed did not do its job even if the model then wrote
a confident answer. The status is worked out from the entries after the branch's last user
message (its last turn), which are few, so every leaf of a big session can be judged by reading
only those bodies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .entries import CUSTOM, MESSAGE, Entry, content_text, tool_calls

# Status keys, in the order a sort by status puts them (what needs a look first).
STATUSES = {
    "error": "error",
    "aborted": "aborted",
    "replay_stopped": "replay stopped",
    "checks_failed": "checks failed",
    "question": "asks a question",
    "waiting_tool": "waiting for a tool result",
    "waiting": "waiting for the model",
    "answered": "answered",
}
STATUS_ORDER = {key: i for i, key in enumerate(STATUSES)}

# A command that runs tests, a build, a type check or a linter: its result says whether the
# branch's work holds up.
_CHECK = re.compile(
    r"\b(pytest|py\.test|unittest|tox|nox|nosetests|make|cmake|ninja|cargo\s+(test|build|check|clippy)"
    r"|go\s+(test|build|vet)|npm\s+(test|run\s+(test|build|lint|check))|yarn\s+(test|build|lint)"
    r"|pnpm\s+(test|build|lint)|jest|vitest|mocha|tsc|mypy|pyright|ruff|flake8|pylint|eslint"
    r"|mvn|gradle|gradlew|dotnet\s+(test|build)|rspec|phpunit|ctest|bazel\s+(test|build))\b"
)
# Lines a failing check prints: pytest's FAILED/ERROR lines, "Error:" and tracebacks' last lines.
_FAILED_LINE = re.compile(r"^\s*(FAILED|ERROR|FAIL)\b|^\s*(\S+:\d+:\s*)?\w*Error\b|\berror(\[\w+\])?:", re.M)
_EXIT = re.compile(r"(exit(ed)?( with)?( code| status)?|returned)\s*[:=]?\s*([1-9]\d*)", re.I)
_TRAILING = " \t\r\n*_`\"')]"  # markdown and quotes a question may end in
REPLAY_STOP = "session-tree.replay-stop"  # the custom entry a replay ends with when it was stopped (SPEC §5d)


@dataclass
class Outcome:
    """How a branch ended: its final answer, a status (a key of STATUSES) and why."""

    answer: Entry | None
    status: str
    detail: str = ""

    @property
    def status_text(self) -> str:
        return STATUSES[self.status]

    @property
    def answer_text(self) -> str | None:
        return assistant_text(self.answer) if self.answer else None


def assistant_text(entry: Entry) -> str:
    return content_text(entry.message.get("content")) if entry.role == "assistant" else ""


def final_answer(entries: list[Entry]) -> Entry | None:
    """The last assistant message that says something (not only tool calls)."""
    for e in reversed(entries):
        if assistant_text(e).strip():
            return e
    return None


def asks_question(text: str) -> bool:
    """Whether an answer ends by asking the user something: its last sentence ends in "?"."""
    return text.rstrip(_TRAILING).endswith("?")


def last_turn(path: list[Entry]) -> list[Entry]:
    """The messages after the last user message of `path` (all of them when it has none)."""
    out: list[Entry] = []
    for e in reversed(path):
        if e.type != MESSAGE:
            continue
        if e.role == "user":
            break
        out.append(e)
    out.reverse()
    return out


def check_failure(turn: list[Entry]) -> str | None:
    """Why the last check of a turn failed (its command and how), or None: the last test, build
    or lint command run (a bash tool call, or a command the user ran) either passed, or none ran."""
    commands: dict[str, str] = {}  # tool call id -> the command of a bash call
    last: tuple[str, str, bool] | None = None  # (command, output, error flag) of the last check
    for e in turn:
        if e.role == "assistant":
            for call in tool_calls(e):
                args = call.get("arguments")
                command = args.get("command") if isinstance(args, dict) else None
                if isinstance(command, str) and call.get("id") is not None:
                    commands[str(call.get("id"))] = command
        elif e.role == "toolResult":
            command = commands.get(str(e.message.get("toolCallId")))
            if command and _CHECK.search(command):
                last = (command, content_text(e.message.get("content")), bool(e.message.get("isError")))
        elif e.role == "bashExecution":
            command = e.message.get("command")
            if isinstance(command, str) and _CHECK.search(command):
                code = e.message.get("exitCode")
                failed = isinstance(code, int) and code != 0
                last = (command, str(e.message.get("output") or ""), failed)
    if last is None:
        return None
    command, output, failed = last
    how = None
    if failed:
        code = _EXIT.search(output)
        how = f"exit {code.group(5)}" if code else "exited non-zero"
    else:
        line = _FAILED_LINE.search(output)
        if line:
            how = output[line.start():].lstrip().split("\n", 1)[0][:80]
    return f"`{command[:80]}`: {how}" if how else None


def outcome(path: list[Entry]) -> Outcome:
    """How the branch ending `path` ended. Error and aborted: the model's last message says so.
    A replay that a budget, a limit or a failure ended says so (its stop entry is the leaf).
    Waiting: the model has not answered yet (tool calls without results, a tool result or a
    prompt). Otherwise the last answer asks the user a question, or the branch's last check in
    its last turn failed, or it answered; a failed check is named in the detail of a question."""
    turn = last_turn(path)
    answer = final_answer(turn) or final_answer(path)
    if path and path[-1].type == CUSTOM and path[-1].get("customType") == REPLAY_STOP:
        data = path[-1].get("data")
        reason = data.get("reason") if isinstance(data, dict) else None
        return Outcome(answer, "replay_stopped", str(reason or "no reason recorded"))
    last = next((e for e in reversed(path) if e.type == MESSAGE), None)
    if last is None:
        return Outcome(answer, "waiting", "no message yet")
    if last.role != "assistant":
        if last.role == "toolResult":
            return Outcome(answer, "waiting", "the model has not answered the tool results")
        return Outcome(answer, "waiting", f"the model has not answered the {last.role or 'last'} message")
    stop = last.message.get("stopReason")
    if stop in ("error", "aborted"):
        return Outcome(answer, stop, str(last.message.get("errorMessage") or ""))
    if tool_calls(last):
        names = ", ".join(str(c.get("name", "?")) for c in tool_calls(last))
        return Outcome(answer, "waiting_tool", f"{names} called, no result recorded")
    failure = check_failure(turn)
    text = assistant_text(last)
    if asks_question(text):
        return Outcome(answer, "question", f"and the last check failed: {failure}" if failure else "")
    if failure:
        return Outcome(answer, "checks_failed", failure)
    return Outcome(answer, "answered", "" if stop in (None, "stop", "end_turn") else f"stop reason: {stop}")
