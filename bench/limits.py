"""The limits of issue 40's hostile cases, each measured with another page's latency beside it.

    PYTHONPATH=$PWD .venv/bin/python bench/limits.py [--quick]

One server (the app in a threaded werkzeug server, as `serve` runs it, in this process: a case
that holds the interpreter shows in the other page's latency) on a root of crafted sessions in
a temporary folder. For each case a few threads make the hostile request over and over while this
thread asks for a small page (the session list's smallest session) and times it; each case
prints the hostile request's own time and the small page's median and worst latency (goal: under
0.3 s), with the server's peak memory where it matters.

- regex: the export review of a session holding a line of 30,000 `=`, with `patterns=(=+)+!`
  (Python's `re` took seconds per 30 characters; RE2 reads the line once);
- sql: the SQL box posting 1,001 rows of 0.5 MB (the byte cap and the cut inside the query);
- sandbox: a replay whose model asks the sandbox's grep for `(a+)+$` on a line of 40 `a` and a
  `!` (it runs in bubblewrap, stopped at the tool's time limit), through the local fake model;
- line: four viewers of a 50 MB tool output (200 MB without --quick);
- children: the page of a node with 100,000 children (20,000 with --quick).
A measurement, not a test: figures on a loaded machine are worse; the load is printed.
"""

from __future__ import annotations

import argparse
import http.client
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import orjson  # noqa: E402
from werkzeug.serving import make_server  # noqa: E402

from tests.fake_llm import start_fake_llm  # noqa: E402
from webapp.model.llm import ModelConfig, model_identity  # noqa: E402
from webapp.web.app import create_app  # noqa: E402
from webapp.web.auth import owner  # noqa: E402

GOAL = 0.3  # seconds: a small page while the hostile work runs
SMALL_ASKS = 15


def header(sid: str, cwd: str = "/tmp") -> dict:
    return {"type": "session", "version": 3, "id": sid, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd}


def message(i: str, parent, role: str, content) -> dict:
    return {"type": "message", "id": i, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": role, "content": content}}


def write(path: Path, lines: list[dict]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(orjson.dumps(x) for x in lines) + b"\n")
    return path.name


def sessions(root: Path, line_mb: int, children: int) -> None:
    sessions_small(root)
    write(root / "equals.jsonl", [header("equals"), message("u0", None, "user", "=" * 30_000),
                                  message("a1", "u0", "assistant", [{"type": "text", "text": "ok"}])])
    call = [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "log.txt"}}]
    text = "log line with words 12345 " * (line_mb * 1_000_000 // 26)
    write(root / "line.jsonl", [header("line"), message("u0", None, "user", "read the log"),
                                message("a1", "u0", "assistant", call),
                                {**message("t1", "a1", "toolResult", [{"type": "text", "text": text}]),
                                 "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "read",
                                             "content": [{"type": "text", "text": text}]}},
                                message("a2", "t1", "assistant", [{"type": "text", "text": "done"}])])
    write(root / "wide.jsonl", [header("wide"), message("u0", None, "user", "hi"),
                                *(message(f"a{i}", "u0", "assistant", [{"type": "text", "text": f"answer {i}"}])
                                  for i in range(children))])
    project = root.parent / "project"
    project.mkdir(exist_ok=True)
    (project / "a.txt").write_text("a" * 40 + "!\n")
    write(root / "replay.jsonl", [header("replay", str(project)), message("u0", None, "user", "find the a's"),
                                  message("a1", "u0", "assistant", [{"type": "text", "text": "found"}])])


def sessions_small(root: Path) -> None:
    write(root / "small.jsonl", [header("small"), message("u0", None, "user", "hello"),
                                 message("a1", "u0", "assistant", [{"type": "text", "text": "hi"}])])


class Server:
    def __init__(self, root: Path, config: ModelConfig):
        self.app = create_app(root, MODEL_CONFIG=config, ALLOW_SANDBOX=True, CORPUS_DB=root.parent / "c.duckdb")
        self.token = self.app.config["CSRF_TOKEN"]
        self.auth = {"Authorization": f"token {owner(self.app).token}"}  # (the pages asked as their owner)
        self.server = make_server("127.0.0.1", 0, self.app, threaded=True)
        self.port = self.server.server_port
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def ask(self, method: str, path: str, form: dict | None = None, timeout: float = 600) -> tuple[int, float, int]:
        """(status, seconds, bytes) of one request."""
        con = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        body = urllib.parse.urlencode({**form, "csrf_token": self.token}) if form is not None else None
        headers = {**self.auth, **({"Content-Type": "application/x-www-form-urlencoded"} if body else {})}
        began = time.perf_counter()
        con.request(method, path, body=body, headers=headers)
        response = con.getresponse()
        size = len(response.read())
        con.close()
        return response.status, time.perf_counter() - began, size


def case(server: Server, name: str, hostile, workers: int = 1) -> None:
    """Run `hostile()` in `workers` threads until the small page was asked SMALL_ASKS times."""
    server.ask("GET", "/s/small.jsonl")  # (read once before: its own first reading is not the case's)
    took: list[float] = []
    stop = threading.Event()

    statuses: set[int] = set()

    def work() -> None:
        while not stop.is_set():
            status, seconds, _ = hostile()
            statuses.add(status)
            took.append(seconds)

    threads = [threading.Thread(target=work) for _ in range(workers)]
    for t in threads:
        t.start()
    small = [server.ask("GET", "/s/small.jsonl")[1] for _ in range(SMALL_ASKS)]
    stop.set()
    for t in threads:
        t.join()
    met = "met" if max(small) <= GOAL else "NOT met"
    hostile_s = statistics.median(took) if took else float("nan")
    print(f"{name:10} {hostile_s:>9.2f}s {len(took):>5} {statistics.median(small):>9.3f}s {max(small):>8.3f}s "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:>8.0f}MB  {met} (status {sorted(statuses)})",
          flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="a 50 MB line and 20,000 children")
    args = ap.parse_args()
    fake, stop_fake = start_fake_llm()
    left = {"n": 0}

    def model(body):  # each replay: one grep with the pattern that backtracks, then an answer
        left["n"] += 1
        return {"calls": [("grep", {"pattern": "(a+)+$"})]} if left["n"] % 2 else {"text": "done"}

    fake.behave("script", script=model)
    with tempfile.TemporaryDirectory(prefix="bench-limits-") as tmp:
        root = Path(tmp) / "sessions"
        sessions(root, 50 if args.quick else 200, 20_000 if args.quick else 100_000)
        config = ModelConfig("openai/bench", api_base=fake.api_base, api_key="none", timeout=60)
        model_identity(config)  # (litellm imported now: its import is not the sandbox case's)
        server = Server(root, config)
        print(f"load: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; small page goal ≤ {GOAL} s")
        print(f"{'case':10} {'hostile':>10} {'asked':>5} {'small med':>10} {'worst':>9} {'peak RSS':>10}")
        case(server, "regex", lambda: server.ask(
            "GET", "/s/equals.jsonl/export/review?redact=1&patterns=" + urllib.parse.quote("(=+)+!")))
        # (the SQL box on a server of its own, whose index holds the small session only: the
        # index of the crafted ones would be built meanwhile, and that is not the case's work)
        small_root = Path(tmp) / "small"
        sessions_small(small_root)
        corpus = Server(small_root, server.app.config["MODEL_CONFIG"])
        corpus.ask("GET", "/corpus")
        big = "SELECT repeat('x', 500000) AS v, range AS i FROM range(1001)"
        case(corpus, "sql", lambda: corpus.ask("POST", "/corpus", {"sql": big}))
        corpus.server.shutdown()
        case(server, "sandbox", lambda: server.ask("POST", "/s/replay.jsonl/-/replay", {
            "leaf": "a1", "from": "u0", "tools": "sandbox", "max_steps": "2"}))
        views = iter(["/s/line.jsonl?node=t1", "/s/line.jsonl?tab=context", "/s/line.jsonl?node=a2"] * 10_000)
        case(server, "line", lambda: server.ask("GET", next(views)), workers=4)  # (its first reading included)
        case(server, "line warm", lambda: server.ask("GET", next(views)), workers=4)
        case(server, "children", lambda: server.ask("GET", "/s/wide.jsonl"))
        server.server.shutdown()
    stop_fake()
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
