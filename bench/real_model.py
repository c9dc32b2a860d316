"""Every model feature against a real small model behind llama.cpp's own server (started by
bench/real_model.sh): continue, ask, replay, compact, regenerate, judge and Cancel, each timed,
each printing what it wrote. The mocks of the test suite are strict, but a real model is what
finds what they do not know (a small model that does not stop, a server without usage).

    bench/real_model.sh            # installs, starts the server, runs this
    python bench/real_model.py --api-base http://127.0.0.1:8091/v1 --log server.log

It works in a new session of its own, in a temporary folder: nothing it writes is tracked.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import orjson

PROJECT = Path(__file__).resolve().parents[1]
MODEL = "openai/smollm2-135m"  # llama-server answers whatever model is named: the name is a label
PROMPTS = [
    "Write a Python function add(a, b) that returns the sum of two numbers.",
    "Now add a docstring to it and a one-line test.",
    "Rename it to plus and keep the test passing.",
]


def cli(*args: str, env: dict) -> tuple[float, subprocess.CompletedProcess]:
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "webapp.cli", *args], env=env, capture_output=True, text=True)
    return time.perf_counter() - began, done


def entries(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()[1:] if line.strip()]


def conversation(root: Path, env: dict, budget_chars: int = 12_000) -> Path:
    """A session of questions about this project answered with the README's paragraphs, about
    `budget_chars` / 4 tokens: something a compaction can summarize in an 8,192-token window."""
    from webapp.core.session import Session, user_message

    made = subprocess.run([sys.executable, "-m", "webapp.cli", "new", str(root), "--cwd", "/tmp/bench-docs"],
                          env=env, capture_output=True, text=True, check=True)
    path = Path(made.stdout.strip())
    session = Session.open(path)
    paragraphs = [p.strip() for p in (PROJECT / "README.md").read_text().split("\n\n")
                  if len(p.strip()) > 300 and not p.lstrip().startswith(("|", "    ", "```"))]
    used = 0
    for i, paragraph in enumerate(paragraphs):
        if used > budget_chars:
            break
        session.append_message(user_message(f"Tell me more about session-tree, part {i + 1}."))
        session.append_message({"role": "assistant", "content": [{"type": "text", "text": paragraph}],
                                "provider": "openai", "model": "smollm2-135m", "stopReason": "stop",
                                "timestamp": int(time.time() * 1000)})
        used += len(paragraph)
    return path


def said(entry: dict) -> str:
    """What an entry says, on one line and short."""
    if entry["type"] in ("compaction", "branch_summary"):
        text = entry.get("summary") or ""
    elif entry["type"] == "custom":
        text = orjson.dumps(entry.get("data")).decode()
    elif entry["type"] == "message":
        content = entry["message"].get("content")
        text = content if isinstance(content, str) else " ".join(
            b.get("text", "") for b in content or () if isinstance(b, dict) and b.get("type") == "text")
    else:
        text = f"{entry.get('provider') or ''}/{entry.get('modelId') or ''}" if entry["type"] == "model_change" else ""
    text = " ".join(text.split())
    return text[:110] + ("…" if len(text) > 110 else "")


def report(step: str, seconds: float, done: subprocess.CompletedProcess, path: Path, before: int) -> list[dict]:
    new = entries(path)[before:]
    print(f"\n== {step}: {seconds:.1f} s, exit {done.returncode}")
    if done.returncode:  # (a summary streams to stderr first: the error is its last line)
        print("   " + " ".join((done.stderr.strip().splitlines() or [""])[-1].split())[:600])
    for e in new:
        message = e.get("message") or {}
        usage = message.get("usage") or {}
        extra = ""
        if message.get("role") == "assistant":
            extra = (f" [stop {message.get('stopReason')}, {usage.get('output')} out"
                     f"{', estimated' if usage.get('estimated') else ''}]")
        role = message.get("role") or e.get("customType") or e["type"]
        print(f"   wrote {role}{extra}: {said(e)}")
    if not new:
        print("   wrote nothing")
    return new


def leaf_of(path: Path) -> str:
    return entries(path)[-1]["id"]


def cancel_through_the_app(root: Path, rel: str, config, server: str, log: Path | None) -> None:
    """The page's Cancel: a reply streamed through the app's own route, its stream closed after
    a few seconds as a browser's Cancel closes it; then how long the server took to stop."""
    from webapp.web.app import create_app
    from webapp.web.auth import owner_client

    app = create_app(root)
    app.config["MODEL_CONFIG"] = config
    client = owner_client(app)
    user = entries(root / rel)[-1]["id"]
    marker = log.stat().st_size if log and log.exists() else 0
    began = time.perf_counter()
    response = client.post(f"/s/{rel}/-/fork", headers={"Accept": "text/event-stream"}, buffered=False, data={
        "csrf_token": app.config["CSRF_TOKEN"], "node": user, "position": "at",
        "message": "Write a very long essay about every programming language you know, in detail."})
    if response.status_code != 200:
        raise SystemExit(f"the app answered {response.status_code}: {response.get_data(as_text=True)[:300]}")
    pieces = 0
    for frame in response.response:
        pieces += (frame.decode() if isinstance(frame, bytes) else frame).count("event: delta")
        if pieces and time.perf_counter() - began > 4:
            break
    cancelled = time.perf_counter()
    response.close()
    idle = _wait_idle(server, 60)
    print(f"\n== Cancel (the page's, through the app): {pieces} pieces streamed in "
          f"{cancelled - began:.1f} s, then the stream closed")
    print(f"   the server was idle {idle - cancelled:.2f} s after the cancel" if idle else
          "   the server was still generating 60 s after the cancel")
    if log and log.exists():
        tail = log.read_bytes()[marker:].decode("utf-8", "replace")
        lines = [ln for ln in tail.splitlines()
                 if any(w in ln.lower() for w in ("cancel", "closed", "stop processing", "n_decoded"))]
        print("   server log: " + (" | ".join(" ".join(ln.split()) for ln in lines[:3]) or "(no cancel line)"))
    last = entries(root / rel)[-1]
    print(f"   last entry now: {last['type']} {(last.get('message') or {}).get('role', '')} (no reply written)")


def _wait_idle(server: str, limit: float) -> float | None:
    """When llama-server's slots were all idle again (its /slots), or None."""
    deadline = time.perf_counter() + limit
    while time.perf_counter() < deadline:
        try:
            slots = httpx.get(f"{server}/slots", timeout=2).json()
            if isinstance(slots, list) and not any(s.get("is_processing") for s in slots):
                return time.perf_counter()
        except (httpx.HTTPError, ValueError):
            pass
        threading.Event().wait(0.1)
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api-base", required=True)
    parser.add_argument("--log", type=Path, help="the server's log, to show what it said of a cancel")
    args = parser.parse_args()
    server = args.api_base.rstrip("/").removesuffix("/v1")
    root = Path(tempfile.mkdtemp(prefix="session-tree-real-"))
    env = {**os.environ, "PYTHONPATH": str(PROJECT), "SESSION_TREE_MODEL": MODEL,
           "SESSION_TREE_API_BASE": args.api_base, "SESSION_TREE_API_KEY": "none",
           "SESSION_TREE_TIMEOUT": "120", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "SESSION_TREE_MAX_TOKENS": os.environ.get("SESSION_TREE_MAX_TOKENS", "1024")}  # a reply's bound
    os.environ.update({k: env[k] for k in ("SESSION_TREE_API_KEY", "LITELLM_LOCAL_MODEL_COST_MAP")})
    sys.path.insert(0, str(PROJECT))
    window = httpx.get(f"{server}/props", timeout=5).json()["default_generation_settings"]["n_ctx"]
    print(f"model server {args.api_base}: window {window} tokens (its /props); sessions in {root}")
    made = subprocess.run([sys.executable, "-m", "webapp.cli", "new", str(root), "--cwd", "/tmp/bench-project"],
                          env=env, capture_output=True, text=True, check=True)
    path = Path(made.stdout.strip())
    rel = path.relative_to(root).as_posix()
    total = time.perf_counter()

    for prompt in PROMPTS:
        before = len(entries(path))
        seconds, done = cli("continue", str(path), "--message", prompt, env=env)
        report(f"continue: {prompt[:50]}", seconds, done, path, before)
    first_user = next(e["id"] for e in entries(path) if (e.get("message") or {}).get("role") == "user")
    main_leaf = leaf_of(path)

    before = len(entries(path))
    seconds, done = cli("ask", str(path), "--at", main_leaf, "--models", f"{MODEL},openai/smollm2-second",
                        "--message", "Explain what the code does in one sentence.", env=env)
    asked = report("ask two models at once", seconds, done, path, before)
    answers = [e["id"] for e in asked if (e.get("message") or {}).get("role") == "assistant"]

    before = len(entries(path))
    seconds, done = cli("replay", str(path), "--leaf", main_leaf, "--from", first_user, "--model",
                        "openai/smollm2-replay", "--max-steps", "4", env=env)
    report("replay the first branch (recorded tools)", seconds, done, path, before)
    print("".join(f"   {line}\n" for line in done.stdout.strip().splitlines()[-2:]), end="")

    # A compaction wants something to summarize: a conversation of about 3k tokens, the README's
    # paragraphs as the assistant's answers.
    longer = conversation(root, env)
    keep = ("--keep-recent-tokens", "600", "--context-window", str(window))
    seconds, done = cli("compact", str(longer), "--plan", *keep, env=env)
    print(f"\n== compact --plan (a conversation of the README's paragraphs): {seconds:.1f} s\n   "
          + "\n   ".join(done.stdout.strip().splitlines()))
    before = len(entries(longer))
    seconds, done = cli("compact", str(longer), "--model", MODEL, *keep, env=env)
    compacted = report("compact with the model's summary", seconds, done, longer, before)
    target = compacted[-1]["id"] if compacted and compacted[-1]["type"] == "compaction" else None
    if target is None:  # the model's summary was refused: a person's stands in, for regenerate to redo
        note = root / "summary.md"
        note.write_text("## Goal\nFix the rounding of invoice totals.\n")
        cli("compact", str(longer), "--summary-file", str(note), *keep, env=env)
        target = entries(longer)[-1]["id"]
    before = len(entries(longer))
    seconds, done = cli("regenerate", str(longer), target, "--model", MODEL, env=env)
    report("regenerate that compaction's summary", seconds, done, longer, before)

    tips = answers[:2] if len(answers) == 2 else [main_leaf, leaf_of(path)]
    before = len(entries(path))
    seconds, done = cli("judge", str(path), *tips, "--model", MODEL, env=env)
    report("judge the two asked answers", seconds, done, path, before)
    print("   " + " | ".join((done.stdout or done.stderr).strip().splitlines()[:4]))

    from webapp.model.llm import ModelConfig

    before_cancel = len(entries(path))
    cancel_through_the_app(root, rel, ModelConfig(MODEL, args.api_base, "none", 120), server, args.log)
    assert len(entries(path)) == before_cancel + 1, "a cancelled reply wrote more than its user message"
    print(f"\nall steps: {time.perf_counter() - total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
