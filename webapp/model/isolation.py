"""What keeps a sandbox's tool call apart from the machine: bubblewrap when it works here.

Each sandbox tool call runs in a process of its own (`sandbox_worker.py`). With bubblewrap
(`bwrap`, the Debian package `bubblewrap`) that process gets new namespaces of every kind: no
network (a loopback of its own, reaching nothing), its own process tree (everything it started
dies with it), and a filesystem view that holds the system's programs read-only (/usr and the
links into it), a private /tmp, a minimal /dev, and the copy, at the path the session's cwd had.
Not the user's home, not /etc's secrets, not the sessions. When the server runs as root the
process also runs as `nobody` (uid 65534), so that the kernel counts its processes.
Without bubblewrap (or where the kernel refuses it user namespaces) nothing isolates the process:
the tools that only read and write the copy still run (in a separate process, with limits, their
paths checked), bash is refused, and the page and the CLI say so.

bubblewrap over the alternatives: it is what Flatpak uses, packaged everywhere, needs no root, and
a probe run tells whether it works on this machine; landlock has no Python binding in Debian.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

NOBODY = 65534
# Where the copy is not mounted at the session's own path (the system's folders are not hidden).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/proc", "/dev", "/sys", "/run")
FALLBACK_MOUNT = "/work"
PROBE_SECONDS = 10.0


@dataclass(frozen=True)
class Isolation:
    available: bool
    python: str  # the interpreter the tool calls run in
    binds: tuple[str, ...] = ()  # folders bound read-only for that interpreter (besides /usr)
    user: int | None = None  # the uid (and gid) the process runs as; None: the server's own
    reason: str = ""  # why there is none, in one line

    def describe(self) -> str:
        """One line for the page and the CLI: what holds a sandbox's tool call."""
        if self.available:
            return ("each tool call runs in bubblewrap: no network, no view of your files beyond the copy, "
                    "limits on CPU time, memory, file size and processes")
        return (f"no OS isolation on this machine ({self.reason}): the file tools run in a separate process "
                "with limits, but nothing hides your other files from it, so bash is refused")


def _system_view() -> list[str]:
    """bwrap arguments for the system's programs, read-only: /usr, and /bin, /lib... as they are
    here (links into /usr on a merged-/usr system, folders otherwise)."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    for name in ("/etc/alternatives", "/etc/ld.so.cache"):  # (programs in /usr/bin link through these)
        args += ["--ro-bind-try", name, name]
    return args


def mount_point(named: str) -> str:
    """Where the copy appears in the sandbox: at the session's own cwd, so that the absolute
    paths the model saw name the copy; elsewhere when that path is a system folder."""
    if named == "/" or any(named == d or named.startswith(d + "/") for d in SYSTEM_DIRS):
        return FALLBACK_MOUNT
    return named


def wrapped(iso: Isolation, copy: Path, mount: str, argv: list[str]) -> list[str]:
    """`argv` run in bubblewrap, seeing `copy` at `mount` and nothing of the user's besides."""
    binds = [a for b in iso.binds for a in ("--ro-bind", b, b)]
    return ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", *_system_view(), *binds,
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", str(copy), mount, "--chdir", mount,
            "--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/tmp",
            "--setenv", "LANG", "C.UTF-8", "--", *argv]


def process_user() -> dict:
    """Popen arguments for the uid the sandbox runs as: `nobody` when the server is root (root's
    processes are not counted against a process limit), else the server's own."""
    if os.geteuid() == 0:
        return {"user": NOBODY, "group": NOBODY, "extra_groups": []}
    return {}


def _interpreters() -> list[tuple[str, tuple[str, ...]]]:
    """Pythons the tool calls may run in, with what must be bound for each: the server's own
    (its installation bound read-only when outside /usr), else the system's."""
    found = []
    base = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    prefix = os.path.realpath(sys.base_prefix)
    found.append((base, () if prefix.startswith("/usr/") or prefix == "/usr" else (prefix,)))
    for name in ("/usr/bin/python3",):
        if os.path.exists(name) and os.path.realpath(name) != base:
            found.append((os.path.realpath(name), ()))
    return found


def _probe(python: str, binds: tuple[str, ...]) -> str | None:
    """None when `python` runs in bubblewrap here, else why not (its first line)."""
    probe_dir = Path(os.path.realpath("/tmp"))  # bound as the copy would be
    argv = wrapped(Isolation(True, python, binds), probe_dir, FALLBACK_MOUNT,
                   [python, "-I", "-S", "-c", "import json, resource, re; print('ok')"])
    try:
        done = subprocess.run(argv, capture_output=True, timeout=PROBE_SECONDS, stdin=subprocess.DEVNULL,
                              **process_user())
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if done.returncode == 0 and done.stdout.strip() == b"ok":
        return None
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return said[-1] if said else f"exit code {done.returncode}"


@functools.lru_cache(maxsize=1)
def isolation() -> Isolation:
    """What this machine offers, found once per process by running bubblewrap."""
    fallback = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    if os.environ.get("SESSION_TREE_NO_BWRAP"):  # (to see and test the page of a machine without it)
        return Isolation(False, fallback, reason="SESSION_TREE_NO_BWRAP is set")
    if shutil.which("bwrap") is None:
        return Isolation(False, fallback, reason="bubblewrap (bwrap) is not installed: apt install bubblewrap")
    why = "no Python to run the tools in"
    for python, binds in _interpreters():
        why = _probe(python, binds)
        if why is None:
            return Isolation(True, python, binds, NOBODY if os.geteuid() == 0 else None)
    return Isolation(False, fallback, reason=f"bubblewrap does not run here: {why}")
