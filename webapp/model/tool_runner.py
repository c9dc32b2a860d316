"""Who answers the tool calls a model makes during a replay: the recording, or a sandbox.

`recorded` (the default) answers a call with the same tool and the same arguments as a call of
the original branch with the result that call got; any other call gets an error result saying
it is not available in a recorded replay. Nothing runs, so a replay of anyone's session is safe.

`sandbox` runs pi's built-in tools (read, ls, grep, find, edit, write; bash only when allowed)
against a throwaway copy of the session's working directory in a temporary folder. Each call runs
in a process of its own (sandbox_worker.py), isolated by bubblewrap where the machine has it
(isolation.py: no network, nothing of the user's in view but the copy), with limits on CPU time,
memory, file size and processes, killed with everything it started at the time limit, its output
capped. A path is taken relative to the copy (an absolute path under the session's cwd names the
copy too, since the model read those in the session); a path that resolves outside the copy is
refused. The user's own folder is only read, to copy it (devices, sockets and FIFOs left out).
Bash runs only where bubblewrap isolates it: without it a shell could reach anything the user can.
Every call gets a result, an argument of the wrong type included (an error result saying which).
"""

from __future__ import annotations

import functools
import math
import os
import selectors
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..core.errors import InvalidWrite
from ..core.replay_plan import DEFAULT_MAX_COPY_MB, HIT, MISS, RAN, REFUSED, Recorded, call_key
from .isolation import isolation, mount_point, process_user, wrapped

TIME_LIMIT = 10.0  # seconds per tool call
OUTPUT_CAP = 30_000  # characters of a tool result

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
    """A tool call the sandbox does not run (bash not allowed, an argument of the wrong type)."""


# What a sandbox's tool call may use, besides its time limit (each process; see isolation.py).
MEMORY_LIMIT = 1024 * 1024 * 1024  # bytes of address space
FILE_LIMIT = 64 * 1024 * 1024  # bytes of one file written
PROCESS_LIMIT = 64  # processes (bash and what it starts)
OPEN_FILES_LIMIT = 256
ANSWER_CAP = 4 * OUTPUT_CAP + 65_536  # bytes read of a worker's answer (JSON escapes included)
COPY_ENTRIES = 200_000  # files and folders a copy may hold
_KINDS = {"string": (str,), "boolean": (bool,)}


def checked_arguments(name: str, arguments) -> dict:
    """The arguments as the tool's schema types them; Refused, naming the argument, when one is
    of another type (`"limit": [1]`, `1e400`): that call gets an error result, the replay goes on."""
    if not isinstance(arguments, dict) or "_raw" in arguments:
        raise Refused(f"the arguments of {name} are not a JSON object")
    props = SCHEMAS[name][1] if name in SCHEMAS else {}
    out = dict(arguments)
    for key, value in arguments.items():
        kind = props.get(key, {}).get("type")
        if value is None or kind is None:
            continue
        if kind == "integer":
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int):
                raise Refused(f"{name}'s argument {key} must be a whole number, not {_shown_value(value)}")
            out[key] = value
        elif not isinstance(value, _KINDS[kind]):
            raise Refused(f"{name}'s argument {key} must be a {kind}, not {_shown_value(value)}")
    return out


def _shown_value(value) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:40]}{'…' if len(text) > 40 else ''}"


@dataclass
class SandboxTools:
    """pi's built-in tools on a copy of `cwd`, each call in a process of its own (isolation.py);
    `close()` deletes the copy."""

    cwd: Path  # the session's working directory (only read, to copy it), resolved
    named: Path  # the same as the session's header names it (the paths the model saw start so)
    allow_bash: bool = False
    time_limit: float = TIME_LIMIT
    output_cap: int = OUTPUT_CAP
    root: Path = field(init=False)  # the copy
    ran: int = 0
    refused: int = 0
    skipped: int = 0  # devices, sockets and FIFOs the copy left out
    mode = "sandbox"

    def __post_init__(self):
        self._tmp = Path(tempfile.mkdtemp(prefix="session-tree-replay-"))
        self.root = self._tmp / "work"

    @classmethod
    def copy_of(cls, cwd: str | None, max_copy_mb: float = DEFAULT_MAX_COPY_MB, allow_bash: bool = False,
                time_limit: float = TIME_LIMIT) -> "SandboxTools":
        """A sandbox over a copy of `cwd`; InvalidWrite when it names no absolute folder here,
        holds more than `max_copy_mb`, or bash is asked for where nothing can isolate it."""
        if not cwd or not isinstance(cwd, str):
            raise InvalidWrite("the session names no working directory (cwd), so there is nothing to copy "
                               "for a sandbox; use the recorded tools")
        if not os.path.isabs(cwd) or "\0" in cwd:
            raise InvalidWrite(f"the session's working directory {cwd!r} is not an absolute path, so it names no "
                               "folder a sandbox may copy (it would be the folder the server runs in); "
                               "use the recorded tools")
        if not (isinstance(max_copy_mb, (int, float)) and math.isfinite(max_copy_mb) and max_copy_mb > 0):
            raise InvalidWrite(f"the copy limit must be a number of MB above 0, not {max_copy_mb!r}")
        if allow_bash and not isolation().available:
            raise InvalidWrite(f"bash is refused: {isolation().describe()}")
        src = Path(cwd)
        if not src.is_dir():
            raise InvalidWrite(f"the session's working directory {cwd} does not exist here, so a sandbox "
                               "cannot copy it; use the recorded tools")
        box = cls(src.resolve(), src, allow_bash, time_limit)
        try:
            box.skipped = copy_folder(src, box.root, int(max_copy_mb * 1024 * 1024))
            if isolation().user is not None:  # (the tool calls run as that user: the copy is theirs)
                _give(box._tmp, isolation().user)
        except _TooBig as exc:
            box.close()
            raise InvalidWrite(f"the session's working directory {cwd} holds more than {exc}; "
                               f"pass --max-copy-mb with a larger limit to copy it for a sandbox anyway") from None
        except OSError as exc:
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
        """The call's result, always: a refusal, an error, a stop at the time limit, or its output."""
        try:
            if name == "bash" and not self.allow_bash:
                raise Refused("bash is not allowed in this sandbox replay (start it with --allow-bash to allow it)")
            if name not in (*SANDBOX_TOOLS, "bash"):
                raise Refused(f"no tool {name!r} in the sandbox (it has {', '.join(self.names)})")
            args = checked_arguments(name, arguments)
        except Refused as exc:
            self.refused += 1
            return ToolResult(f"Refused: {exc}", True, REFUSED)
        text, failed, refused = self._in_process(name, args)
        if refused:
            self.refused += 1
            return ToolResult(text, True, REFUSED)
        self.ran += 1
        return ToolResult(self._cap(text), failed, RAN)

    def _cap(self, text: str) -> str:
        if len(text) <= self.output_cap + 200:  # (the worker cut it already, with its note)
            return text
        return text[: self.output_cap] + f"\n[output cut at {self.output_cap} characters of {len(text)}]"

    def _in_process(self, name: str, args: dict) -> tuple[str, bool, bool]:
        """(text, is_error, refused) of the call, run by sandbox_worker.py in a process of its own,
        isolated where the machine allows; killed with all it started at the time limit."""
        iso = isolation()
        mount = mount_point(str(self.named)) if iso.available else str(self.root)
        request = {"tool": name, "args": args, "root": mount, "aliases": [str(self.named), str(self.cwd)],
                   "cap": self.output_cap, "seconds": max(self.time_limit - 0.25, 0.1),
                   "limits": {"cpu": math.ceil(self.time_limit) + 1, "memory": MEMORY_LIMIT, "file": FILE_LIMIT,
                              "processes": PROCESS_LIMIT, "files": OPEN_FILES_LIMIT}}
        argv = [iso.python, "-I", "-S", "-c", _worker_source()]
        extra = {}
        if iso.available:
            argv, extra = wrapped(iso, self.root, mount, argv), process_user()
        deadline = time.monotonic() + self.time_limit
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    cwd=self.root, start_new_session=True, **extra)
        except OSError as exc:
            return f"Error: the sandbox could not start: {exc}", True, False
        out, err, stopped = _answer(proc, orjson.dumps(request), deadline)
        if stopped:
            return f"Stopped: the call took longer than {self.time_limit:g} s.", True, False
        try:
            answer = orjson.loads(out)
            return str(answer["text"]), bool(answer["error"]), bool(answer.get("refused"))
        except (orjson.JSONDecodeError, KeyError, TypeError):
            pass
        if proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
            return f"Stopped: the call used more than {math.ceil(self.time_limit)} s of CPU time.", True, False
        said = err.decode("utf-8", "replace").strip().splitlines()
        return (f"Error: the sandbox process ended without an answer (exit code {proc.returncode}"
                f"{': ' + said[-1][:300] if said else ''})"), True, False


def _answer(proc: subprocess.Popen, request: bytes, deadline: float) -> tuple[bytes, bytes, bool]:
    """(stdout, stderr, stopped): the worker's answer, read up to ANSWER_CAP bytes each (what a
    call prints past that is read and dropped); at `deadline` the worker and everything it
    started are killed (`stopped`)."""
    kept = {proc.stdout: bytearray(), proc.stderr: bytearray()}
    try:
        proc.stdin.write(request)
        proc.stdin.close()
    except OSError:  # (it ended before reading: what it said is read below)
        pass
    stopped = False
    with selectors.DefaultSelector() as sel:
        for stream in kept:
            sel.register(stream, selectors.EVENT_READ)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                stopped = True
                break
            for key, _ in sel.select(left):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                elif len(kept[key.fileobj]) < ANSWER_CAP:
                    kept[key.fileobj] += chunk
    if stopped:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    proc.stdout.close()
    proc.stderr.close()
    proc.wait()
    return bytes(kept[proc.stdout]), bytes(kept[proc.stderr]), stopped


@functools.lru_cache(maxsize=1)
def _worker_source() -> str:
    return Path(__file__).with_name("sandbox_worker.py").read_text("utf-8")


class _TooBig(Exception):
    """The folder holds more than the copy may (the message: how much)."""


def copy_folder(src: Path, dest: Path, max_bytes: int) -> int:
    """Copy `src` to `dest`: folders, regular files (their bytes counted as read, so a file that
    grows or lies about its size is still stopped at `max_bytes`) and links (as links); devices,
    sockets and FIFOs are left out (a device would be read for ever). Returns how many were left
    out; _TooBig past `max_bytes` or COPY_ENTRIES."""
    total = entries = skipped = 0
    os.mkdir(dest, 0o700)
    stack = [(str(src), str(dest))]
    while stack:
        here, there = stack.pop()
        with os.scandir(here) as listing:
            for item in listing:
                entries += 1
                if entries > COPY_ENTRIES:
                    raise _TooBig(f"{COPY_ENTRIES:,} files and folders")
                target = os.path.join(there, item.name)
                st = item.stat(follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    os.symlink(os.readlink(item.path), target)
                elif stat.S_ISDIR(st.st_mode):
                    os.mkdir(target, (st.st_mode & 0o777) | 0o700)
                    stack.append((item.path, target))
                elif stat.S_ISREG(st.st_mode):
                    total = _copy_file(item.path, target, total, max_bytes)
                else:
                    skipped += 1
    return skipped


def _copy_file(path: str, target: str, total: int, max_bytes: int) -> int:
    """Copy one regular file (opened without following a link or blocking on a FIFO put there
    since it was listed); the running total of bytes copied."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return total
        with open(target, "wb") as out:
            while chunk := f.read(1 << 20):
                total += len(chunk)
                if total > max_bytes:
                    raise _TooBig(f"{max_bytes / 1024 / 1024:g} MB")
                out.write(chunk)
    os.chmod(target, (st.st_mode & 0o777) | 0o600)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    return total


def _give(folder: Path, uid: int) -> None:
    """Make `folder` and all under it belong to `uid` (its group too), links included."""
    os.chown(folder, uid, uid)
    for base, dirs, files in os.walk(folder):
        for name in dirs + files:
            os.lchown(os.path.join(base, name), uid, uid)
