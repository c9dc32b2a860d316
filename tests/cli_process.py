"""`session-tree` as a real process, without paying Python's start and the imports every time.

A helper process imports the CLI (and litellm and the MCP SDK, which some commands import) once; each run
is a child forked from it: its own process, pid and exit code, its stdin, stdout and stderr the
files given (so what any code writes to fd 1 or 2 is read, as from `subprocess.run`), its own
working folder and environment, and Python's own shutdown at the end (atexit, threads, flushes).
Only the interpreter's start and the imports are shared: what a run does is not.

Run as a script, this file is that helper: it reads requests from the socket given and answers
each with the exit code of the child.
"""

from __future__ import annotations

import atexit
import os
import pickle
import socket
import subprocess
import sys
import tempfile
import threading
import traceback
from multiprocessing.connection import Connection
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _serve(fd: int) -> None:
    """The helper's loop: fork a child per request; answer its exit status and CPU seconds."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from webapp import cli
    from webapp.mcp import server  # noqa: F401  (the MCP SDK, which `mcp` imports: 0.4 s of CPU a run)
    from webapp.model.llm import _litellm

    _litellm()
    conn = Connection(fd)
    while True:
        try:
            argv, env, cwd, files = pickle.loads(conn.recv_bytes())
        except EOFError:
            return
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            conn.close()
            _child(cli, argv, env, cwd, files)  # does not return: the child exits as a process does
        _, status, usage = os.wait4(pid, 0)
        conn.send_bytes(pickle.dumps((os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime)))


def _child(cli, argv, env, cwd, files) -> None:
    for fd, (path, flags) in enumerate(zip(files, (os.O_RDONLY, os.O_WRONLY, os.O_WRONLY))):
        new = os.open(path, flags)
        os.dup2(new, fd)
        os.close(new)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    sys.argv = ["session-tree", *argv]
    try:
        code = cli.main(argv)
    except SystemExit as exc:
        code = exc.code
    except BaseException:  # as the installed command: the traceback on stderr, exit 1
        traceback.print_exc()
        code = 1
    # Python's shutdown as it shows: non-daemon threads joined, atexit handlers, streams flushed.
    # The modules are not torn down one by one (seconds with litellm loaded; nothing shows).
    threading._shutdown()
    atexit._run_exitfuncs()
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120  # Python's own exit code when the final flush fails
    os._exit(code or 0)


class CliProcess:
    """One helper per test process, started on first use."""

    def __init__(self):
        self.lock = threading.Lock()
        self.proc: subprocess.Popen | None = None
        self.conn: Connection | None = None
        self.child_cpu = 0.0  # CPU seconds of the last run's child

    def _start(self) -> None:
        ours, theirs = socket.socketpair()
        env = {k: v for k, v in os.environ.items() if not k.startswith("SESSION_TREE_")}
        env["PYTHONPATH"] = str(REPO)
        self.proc = subprocess.Popen([sys.executable, __file__, str(theirs.fileno())], pass_fds=[theirs.fileno()],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, env=env, cwd=REPO)
        theirs.close()
        self.conn = Connection(ours.detach())
        atexit.register(self.stop)

    def stop(self) -> None:
        if self.proc is not None:
            self.conn.close()
            self.proc.wait(timeout=30)
            self.proc = None

    def run(self, argv: list, stdin: bytes = b"", env: dict | None = None, cwd=None,
            timeout: float = 300) -> subprocess.CompletedProcess:
        """As `subprocess.run([session-tree, *argv], input=stdin, capture_output=True, ...)`."""
        argv = [os.fsdecode(a) if isinstance(a, bytes) else str(a) for a in argv]
        env = dict(os.environ if env is None else env)
        with tempfile.TemporaryDirectory() as tmp, self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self._start()
            files = [Path(tmp) / name for name in ("stdin", "stdout", "stderr")]
            files[0].write_bytes(stdin or b"")
            files[1].touch()
            files[2].touch()
            self.conn.send_bytes(pickle.dumps((argv, env, os.fsdecode(cwd or os.getcwd()), [str(f) for f in files])))
            if not self.conn.poll(timeout):
                self.proc.kill()
                self.proc = None
                raise subprocess.TimeoutExpired(["session-tree", *argv], timeout)
            code, self.child_cpu = pickle.loads(self.conn.recv_bytes())
            return subprocess.CompletedProcess(["session-tree", *argv], code, files[1].read_bytes(), files[2].read_bytes())


CLI_PROCESS = CliProcess()


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    _serve(int(sys.argv[1]))
