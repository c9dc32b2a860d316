"""Who answers the tool calls a model makes during a replay: the recording, or a sandbox.

`recorded` (the default) answers a call with the same tool and the same arguments as a call of
the original branch with the result that call got; any other call gets an error result saying
it is not available in a recorded replay. Nothing runs, so a replay of anyone's session is safe.

`sandbox` runs pi's built-in tools (read, ls, grep, find, edit, write; bash only when allowed)
against a throwaway copy of the session's working directory in a temporary folder, each call
with a time limit and an output cap. A path is taken relative to the copy (an absolute path
under the session's cwd is moved into the copy, since the model read those in the session);
a path that resolves outside the copy is refused. The user's own folder is only read, to copy it.
Bash runs in the copy too, but a shell can reach anything the user can: that is why it is opt-in.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import InvalidWrite
from ..core.replay_plan import DEFAULT_MAX_COPY_MB, HIT, MISS, RAN, REFUSED, Recorded, call_key

TIME_LIMIT = 10.0  # seconds per tool call
OUTPUT_CAP = 30_000  # characters of a tool result
LIST_CAP = 500  # names an ls or a find lists
GREP_CAP = 100  # matching lines a grep lists

SANDBOX_TOOLS = ("read", "ls", "grep", "find", "edit", "write")

_STR = {"type": "string"}
_INT = {"type": "integer"}
_BOOL = {"type": "boolean"}
# pi's built-in tools, as the model is offered them (their names and arguments as pi has them).
SCHEMAS = {
    "read": ("Read a file's text. Lines start at 1; use offset and limit for a part of a long file.",
             {"path": _STR, "offset": _INT, "limit": _INT}, ["path"]),
    "ls": ("List a directory's entries (directories end in /).", {"path": _STR, "limit": _INT}, []),
    "grep": ("Search file contents for a regular expression (or literal text); prints path:line: text.",
             {"pattern": _STR, "path": _STR, "glob": _STR, "ignoreCase": _BOOL, "literal": _BOOL,
              "limit": _INT}, ["pattern"]),
    "find": ("Find files by a glob pattern such as **/*.py.", {"pattern": _STR, "path": _STR, "limit": _INT},
             ["pattern"]),
    "edit": ("Replace oldText, which must occur exactly once in the file, with newText.",
             {"path": _STR, "oldText": _STR, "newText": _STR}, ["path", "oldText", "newText"]),
    "write": ("Write a file (created with its folders, or replaced).", {"path": _STR, "content": _STR},
              ["path", "content"]),
    "bash": ("Run a shell command in the working directory; prints its output.",
             {"command": _STR, "timeout": _INT}, ["command"]),
}


def schema(name: str) -> dict:
    """An OpenAI function schema for a tool: pi's own for a built-in, an open one otherwise (a
    tool the original session had that this app does not know: the recording answers it)."""
    if name in SCHEMAS:
        text, props, required = SCHEMAS[name]
        params = {"type": "object", "properties": props, "required": required}
    else:
        text, params = f"The session's {name} tool.", {"type": "object", "properties": {}}
    return {"type": "function", "function": {"name": name, "description": text, "parameters": params}}


@dataclass
class ToolResult:
    text: str
    is_error: bool
    how: str  # HIT, MISS, RAN or REFUSED (replay_plan): recorded in the result's details


class RecordedTools:
    """Answers from the original branch: each (tool, arguments) gets the results it got, in turn
    (the last one again once they are used up); anything else is a miss."""

    mode = "recorded"

    def __init__(self, recorded: dict[tuple[str, str], list[Recorded]], names: list[str]):
        self._left = {k: list(v) for k, v in recorded.items()}
        self._last: dict[tuple[str, str], Recorded] = {}
        self.names = names
        self.hits = 0
        self.misses = 0

    @classmethod
    def for_plan(cls, recorded: dict[tuple[str, str], list[Recorded]], usual: tuple[str, ...]) -> "RecordedTools":
        """Offering the tools the branch used, and pi's usual ones besides."""
        names = list(dict.fromkeys([*usual, *(name for name, _ in recorded)]))
        return cls(recorded, names)

    def schemas(self) -> list[dict]:
        return [schema(n) for n in self.names]

    def run(self, name: str, arguments) -> ToolResult:
        key = call_key(name, arguments)
        left = self._left.get(key)
        if left:
            self._last[key] = found = left.pop(0)
        else:
            found = self._last.get(key)
        if found is None:
            self.misses += 1
            return ToolResult(f"Not available in a recorded replay: the original session never called {name} "
                              "with these arguments, so there is no result to give.", True, MISS)
        self.hits += 1
        return ToolResult(found.text, found.is_error, HIT)

    def close(self) -> None:
        pass


class Refused(Exception):
    """A tool call the sandbox does not run (outside the copy, bash not allowed, bad arguments)."""


@dataclass
class SandboxTools:
    """pi's built-in tools on a copy of `cwd`; `close()` deletes the copy."""

    cwd: Path  # the session's working directory (only read, to copy it), resolved
    named: Path  # the same as the session's header names it (the paths the model saw start so)
    allow_bash: bool = False
    time_limit: float = TIME_LIMIT
    output_cap: int = OUTPUT_CAP
    root: Path = field(init=False)  # the copy
    ran: int = 0
    refused: int = 0
    mode = "sandbox"

    def __post_init__(self):
        self._tmp = Path(tempfile.mkdtemp(prefix="session-tree-replay-"))
        self.root = self._tmp / "work"

    @classmethod
    def copy_of(cls, cwd: str | None, max_copy_mb: float = DEFAULT_MAX_COPY_MB, allow_bash: bool = False,
                time_limit: float = TIME_LIMIT) -> "SandboxTools":
        """A sandbox over a copy of `cwd`; InvalidWrite when it is not a folder here, or holds more
        than `max_copy_mb` (a replay must not fill the disk behind the user's back)."""
        if not cwd:
            raise InvalidWrite("the session names no working directory (cwd), so there is nothing to copy "
                               "for a sandbox; use the recorded tools")
        src = Path(cwd)
        if not src.is_dir():
            raise InvalidWrite(f"the session's working directory {cwd} does not exist here, so a sandbox "
                               "cannot copy it; use the recorded tools")
        size = folder_bytes(src, int(max_copy_mb * 1024 * 1024) + 1)
        if size > max_copy_mb * 1024 * 1024:
            raise InvalidWrite(f"the session's working directory {cwd} holds more than {max_copy_mb:g} MB; "
                               f"pass --max-copy-mb with a larger limit to copy it for a sandbox anyway")
        box = cls(src.resolve(), src, allow_bash, time_limit)
        try:
            shutil.copytree(src, box.root, symlinks=True)
        except (OSError, shutil.Error) as exc:
            box.close()
            raise InvalidWrite(f"cannot copy {cwd} for a sandbox: {exc}") from None
        return box

    @property
    def names(self) -> list[str]:
        return [*SANDBOX_TOOLS, *(["bash"] if self.allow_bash else [])]

    def schemas(self) -> list[dict]:
        return [schema(n) for n in self.names]

    def close(self) -> None:
        shutil.rmtree(self._tmp, ignore_errors=True)

    # -- running a call ----------------------------------------------------------------------

    def run(self, name: str, arguments) -> ToolResult:
        deadline = time.monotonic() + self.time_limit
        try:
            if not isinstance(arguments, dict) or "_raw" in arguments:
                raise Refused(f"the arguments of {name} are not a JSON object")
            if name == "bash" and not self.allow_bash:
                raise Refused("bash is not allowed in this sandbox replay (start it with --allow-bash to allow it)")
            tool = getattr(self, f"_tool_{name}", None) if name in (*SANDBOX_TOOLS, "bash") else None
            if tool is None:
                raise Refused(f"no tool {name!r} in the sandbox (it has {', '.join(self.names)})")
            text, failed = tool(arguments, deadline)
        except Refused as exc:
            self.refused += 1
            return ToolResult(f"Refused: {exc}", True, REFUSED)
        except TimeoutError:
            text, failed = f"Stopped: the call took longer than {self.time_limit:g} s.", True
        except (OSError, UnicodeError, re.error, ValueError) as exc:
            text, failed = f"Error: {exc}", True
        self.ran += 1
        return ToolResult(self._cap(text), failed, RAN)

    def _cap(self, text: str) -> str:
        if len(text) <= self.output_cap:
            return text
        return text[: self.output_cap] + f"\n[output cut at {self.output_cap} characters of {len(text)}]"

    def _path(self, value, default: str | None = None) -> Path:
        """The file in the copy a path argument names; Refused when it resolves outside the copy."""
        if value is None and default is not None:
            value = default
        if not isinstance(value, str) or not value:
            raise Refused("a path argument (a string) is needed")
        p = Path(value)
        if p.is_absolute():
            for base in (self.named, self.cwd):
                if p == base or base in p.parents:
                    p = p.relative_to(base)
                    break
            else:
                raise Refused(f"{value} is outside the session's working directory {self.named}")
        target = (self.root / p).resolve()
        root = self.root.resolve()
        if target != root and root not in target.parents:
            raise Refused(f"{value} resolves outside the sandbox's copy of {self.cwd}")
        return target

    def _shown(self, path: Path) -> str:
        rel = path.relative_to(self.root.resolve())
        return str(rel) if str(rel) != "." else "."

    def _files(self, base: Path, deadline: float):
        """Files under `base` (itself when a file), skipping links that leave the copy."""
        if base.is_file():
            yield base
            return
        root = self.root.resolve()
        for folder, dirs, files in os.walk(base):
            if time.monotonic() > deadline:
                raise TimeoutError
            dirs.sort()
            for name in sorted(files):
                f = Path(folder) / name
                if f.resolve() == root or root in f.resolve().parents:
                    yield f

    def _tool_read(self, args: dict, deadline: float) -> tuple[str, bool]:
        path = self._path(args.get("path"))
        if not path.is_file():
            return f"Error: {args.get('path')} is not a file", True
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            return f"{args.get('path')} is a binary file ({len(data)} bytes)", False
        lines = data.decode("utf-8", "replace").split("\n")
        offset = max(int(args.get("offset") or 1), 1)
        limit = args.get("limit")
        part = lines[offset - 1: offset - 1 + int(limit)] if limit else lines[offset - 1:]
        return "\n".join(part), False

    def _tool_ls(self, args: dict, deadline: float) -> tuple[str, bool]:
        path = self._path(args.get("path"), ".")
        if not path.is_dir():
            return f"Error: {args.get('path')} is not a directory", True
        names = sorted((p.name + "/" if p.is_dir() else p.name) for p in path.iterdir())
        cap = min(int(args.get("limit") or LIST_CAP), LIST_CAP)
        more = f"\n[{len(names) - cap} more]" if len(names) > cap else ""
        return ("\n".join(names[:cap]) or "(empty directory)") + more, False

    def _tool_find(self, args: dict, deadline: float) -> tuple[str, bool]:
        pattern = args.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise Refused("find needs a pattern")
        base = self._path(args.get("path"), ".")
        cap = min(int(args.get("limit") or LIST_CAP), LIST_CAP)
        found = []
        for f in self._files(base, deadline):
            rel = self._shown(f)
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(f.name, pattern) or (
                pattern.startswith("**/") and fnmatch.fnmatch(rel, pattern[3:])):
                found.append(rel)
                if len(found) >= cap:
                    break
        return "\n".join(found) or "No files found", False

    def _tool_grep(self, args: dict, deadline: float) -> tuple[str, bool]:
        pattern = args.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise Refused("grep needs a pattern")
        flags = re.IGNORECASE if args.get("ignoreCase") else 0
        rx = re.compile(re.escape(pattern) if args.get("literal") else pattern, flags)
        base = self._path(args.get("path"), ".")
        glob = args.get("glob")
        cap = min(int(args.get("limit") or GREP_CAP), GREP_CAP)
        out = []
        for f in self._files(base, deadline):
            if isinstance(glob, str) and glob and not fnmatch.fnmatch(f.name, glob.split("/")[-1]):
                continue
            data = f.read_bytes()
            if b"\0" in data[:8192]:
                continue
            for n, line in enumerate(data.decode("utf-8", "replace").split("\n"), 1):
                if rx.search(line):
                    out.append(f"{self._shown(f)}:{n}: {line}")
                    if len(out) >= cap:
                        return "\n".join(out) + f"\n[stopped at {cap} matches]", False
            if time.monotonic() > deadline:
                raise TimeoutError
        return "\n".join(out) or "No matches found", False

    def _tool_edit(self, args: dict, deadline: float) -> tuple[str, bool]:
        path = self._path(args.get("path"))
        old, new = args.get("oldText"), args.get("newText")
        if not isinstance(old, str) or not isinstance(new, str) or not old:
            raise Refused("edit needs oldText (not empty) and newText, as strings")
        if not path.is_file():
            return f"Error: {args.get('path')} is not a file", True
        text = path.read_text("utf-8")
        count = text.count(old)
        if count != 1:
            where = "is not in" if count == 0 else f"occurs {count} times in"
            return f"Error: oldText {where} {args.get('path')}; it must occur exactly once", True
        path.write_text(text.replace(old, new, 1), "utf-8")
        return f"Edited {args.get('path')}: replaced {len(old)} characters with {len(new)}.", False

    def _tool_write(self, args: dict, deadline: float) -> tuple[str, bool]:
        path = self._path(args.get("path"))
        content = args.get("content")
        if not isinstance(content, str):
            raise Refused("write needs content, a string")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, "utf-8")
        return f"Wrote {len(content.encode())} bytes to {args.get('path')}.", False

    def _tool_bash(self, args: dict, deadline: float) -> tuple[str, bool]:
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            raise Refused("bash needs a command")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self._tmp), "PWD": str(self.root),
               "LANG": "C.UTF-8"}
        # In a session of its own, so that the time limit stops what the command started in the
        # background too, not only the shell.
        proc = subprocess.Popen(["bash", "-c", command], cwd=self.root, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=max(deadline - time.monotonic(), 0.01))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.communicate()
            raise TimeoutError from None
        out = (stdout + stderr).decode("utf-8", "replace")
        if proc.returncode:
            return f"{out}\n\nCommand exited with code {proc.returncode}".lstrip("\n"), True
        return out or "(no output)", False


def folder_bytes(folder: Path, stop_at: int) -> int:
    """The bytes the files under `folder` hold (links not followed), counted until `stop_at`."""
    total = 0
    for base, dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(base, name)).st_size
            except OSError:
                continue
            if total >= stop_at:
                return total
    return total
