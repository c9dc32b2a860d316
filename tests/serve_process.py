"""A real `session-tree serve` process for the tests that need one: started on a free port, the
address it prints read (with its token), stopped with SIGTERM as a person's Ctrl-C would."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SERVING = re.compile(r"session-tree: serving .* on (http://\S+?/)(?:\?token=(\S+))?")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Served:
    proc: subprocess.Popen
    url: str  # ending in /
    token: str | None  # None: serve --no-auth printed none
    output: list[str] = field(default_factory=list)  # every line it printed (stdout and stderr), read as it goes

    @property
    def port(self) -> int:
        return int(self.url.rstrip("/").rpartition(":")[2])

    def headers(self) -> dict:
        return {"Authorization": f"token {self.token}"}

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(30)


def start_serve(argv: list[str], env: dict | None = None, **popen) -> Served:
    """`session-tree serve *argv --port P`, once it accepts connections."""
    port = free_port()
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.Popen([sys.executable, "-m", "webapp.cli", "serve", *map(str, argv), "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, **popen)
    output: list[str] = []
    found = None
    for line in proc.stdout:  # (ends when the process does: a server that fails says why)
        output.append(line)
        found = found or SERVING.match(line)
        if found:
            break
    if found is None:
        proc.wait(30)
        raise AssertionError("serve did not start: " + "".join(output))
    # What it prints from now on (a request log, a warning) is read as it comes: a pipe left full
    # would stop the server.
    threading.Thread(target=lambda: output.extend(proc.stdout), daemon=True).start()
    served = Served(proc, found[1], found[2], output)
    while True:
        assert proc.poll() is None, "".join(output)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
            return served
        except OSError:
            time.sleep(0.05)
