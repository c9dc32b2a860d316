"""Benchmark of the compaction lab against the mock model server (tests/fake_llm.py), on a branch
of about 100k tokens with a compaction near its end and three user turns after it:

- the lab's page: the median time `GET /s/<rel>/lab?at=<compaction>` takes;
- the first candidate: from the moment the model server sends its first piece of a summary to
  the moment that piece reaches the page as an event of the run's stream;
- the memory the server holds the more while 4 candidates (2 models x pi's prompt and ours)
  and the recorded summary are each tested by 3 continuation turns, and the reference run:
  the process's resident size sampled every 5 ms during the run, less what it held before.

    .venv/bin/python bench/lab.py [--turns 200] [--runs 15]

Through the Flask test client, streaming (no network but the mock server's, on 127.0.0.1). A
measurement, not a test: the goals are 0.3 s, 0.3 s and 200 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.conftest import Builder  # noqa: E402
from tests.fake_llm import start_fake_llm  # noqa: E402
from webapp.core.context import build_context  # noqa: E402
from webapp.core.messages import estimate_message_tokens  # noqa: E402
from webapp.core.reader import parse_bytes  # noqa: E402
from webapp.core.tokens import context_tokens  # noqa: E402
from webapp.core.tree import SessionTree  # noqa: E402
from webapp.model import judge as judging  # noqa: E402
from webapp.model.lab_prompts import PI_SYSTEM  # noqa: E402
from webapp.model.llm import ModelConfig, model_identity  # noqa: E402
from webapp.model.summarize import SYSTEM as OUR_SYSTEM  # noqa: E402
from webapp.web.app import create_app  # noqa: E402

CODE = "\n".join(f"def step_{i}(rows):\n    return [r for r in rows if r.get('k{i}')]" for i in range(24))
NEXT = ("Run the whole test suite again.", "Document the new options in README.md.", "Commit the work.")


def long_branch(turns: int) -> Builder:
    """`turns` turns of reading and editing (a user request, a read, its result, an answer), a
    compaction keeping the last ten, then the three turns that test the candidates."""
    b = Builder()
    b.add("model_change", provider="openai", modelId="test-model")
    b.add("message", message={"role": "system", "content": "You are a careful coding agent."})
    keep_from = None
    for i in range(turns):
        u = b.user(f"Step {i}: extend src/step_{i}.py so that it filters the rows by k{i}; never break the API.")
        if i == turns - 10:
            keep_from = u
        b.assistant(f"Reading src/step_{i}.py.", calls=[{"id": f"r{i}", "name": "read", "arguments": {"path": f"src/step_{i}.py"}}])
        b.tool_result(f"r{i}", CODE, name="read")
        b.assistant(f"Step {i} done: src/step_{i}.py filters by k{i}, and `pytest -q` passes. " * 3, usage=1000 + 550 * i)
    b.add("compaction", id="k1", summary="## Goal\nFilter the rows, step by step.", firstKeptEntryId=keep_from,
          tokensBefore=500 * turns)
    for text in NEXT:
        b.user(text)
        b.assistant(f"Done: {text}")
    return b


def script(body: dict) -> dict:
    first = body["messages"][0]
    if first["role"] == "system" and first["content"] == judging.SYSTEM:
        return {"text": '{"better": "tie", "reasons": "the same"}'}
    if first["role"] == "system" and first["content"] in (PI_SYSTEM, OUR_SYSTEM):
        return {"text": "## Goal\nFilter the rows step by step in src/; never break the API."}
    return {"text": "Done: " + str(body["messages"][-1].get("content"))[:40]}


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def events(response):
    """(seconds since `start`, event, data) of a streamed response, as they arrive."""
    buf = b""
    for chunk in response.response:
        buf += chunk
        while b"\n\n" in buf:
            raw, buf = buf.split(b"\n\n", 1)
            if raw.startswith(b":"):
                continue
            lines = dict(line.split(": ", 1) for line in raw.decode().splitlines())
            yield time.perf_counter(), lines["event"], json.loads(lines["data"])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=215)
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    fake, stop = start_fake_llm()
    arrivals: list[float] = []
    delay = 0.5
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_DATA_HOME"] = str(Path(tmp) / "data")  # the runs are the bench's own
        root = Path(tmp) / "s"
        root.mkdir()
        data = long_branch(args.turns).data()
        (root / "long.jsonl").write_bytes(data)
        tree = SessionTree(parse_bytes(data))
        ctx = build_context(tree, tree.parent["k1"])
        estimated = sum(estimate_message_tokens(m) for m in ctx.messages)
        print(f"branch: {len(tree.entries):,} entries, {len(data) / 1e6:.1f} MB; the context before the compaction: "
              f"{estimated:,} tokens estimated from its text, {context_tokens(ctx).context:,} as its usage says")
        fake.behave("script", script=script, delay=delay, on_request=lambda body: arrivals.append(time.perf_counter()))
        config = ModelConfig("openai/test-model", api_base=fake.api_base, api_key="dummy", timeout=30)
        model_identity(config)  # (litellm imported before anything is timed)
        app = create_app(root)
        app.config.update(MODEL_CONFIG=config, MODELS=("openai/other-model",))
        client = app.test_client()
        page = "/s/long.jsonl/lab?at=k1"
        assert client.get(page).status_code == 200
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            assert client.get(page).status_code == 200
            times.append(time.perf_counter() - t)
        print(f"lab page: median {1000 * statistics.median(times):.0f} ms over {args.runs} runs (goal 300 ms)")

        before = rss_mb()
        peak = [before]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], rss_mb())
                time.sleep(0.005)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        token = app.config["CSRF_TOKEN"]
        form = {"csrf_token": token, "at": "k1", "model": ["openai/test-model", "openai/other-model"],
                "prompt": ["pi", "ours"], "turns": "3", "concurrency": "4"}
        started = time.perf_counter()
        response = client.post("/s/long.jsonl/-/lab", data=form, headers={"Accept": "text/event-stream"}, buffered=False)
        first_delta = None
        end = None
        for at, event, payload in events(response):
            if event == "delta" and first_delta is None:
                first_delta = at
            if event == "end":
                end = payload
        done.set()
        sampler.join()
        stop()
        first_piece = arrivals[0] + delay  # the mock sends its first piece after `delay`
        print(f"first candidate: its first piece on the page {1000 * (first_delta - first_piece):.0f} ms after the "
              f"model server sent it (goal 300 ms)")
        print(f"run: {end['reason']}, {end['calls']} model calls in {time.perf_counter() - started:.1f} s")
        print(f"memory: {peak[0] - before:.0f} MB more at the peak than before the run ({before:.0f} MB; goal 200 MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
