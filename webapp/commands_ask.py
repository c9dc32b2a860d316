"""`session-tree ask FILE --at ID --models M1,M2,M3 [--message TEXT]`: several models answer at
one node at once, each reply a sibling branch of its own (webapp/model/ask.py does the work)."""

from __future__ import annotations

import sys
import threading

import orjson

from .core.entries import short_id
from .core.session import Session


def _cost(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"


def cmd_ask(args) -> int:
    from .model.ask import estimates, parse_models, run, start
    from .model.llm import ModelConfig  # (the model layer only when asked: every command starts quicker)
    session = Session.open(args.file)
    session.check_writable()
    at = session.tree.find(args.at).id
    models = parse_models(args.models)
    config = ModelConfig.from_env(models[0], args.api_base)
    planned = estimates(session, at, models, args.message)
    if not args.json:
        print(f"asking {len(models)} model{'s' if len(models) != 1 else ''} at {short_id(at)}"
              f" ({'a new message' if args.message is not None else 'the reply there, again'}):")
        for e in planned:
            print(f"  {e.model}: ~{e.tokens} context tokens, estimated {_cost(e.cost)} (input only)")
    if args.estimate:
        if args.json:
            print(orjson.dumps([e.__dict__ for e in planned]).decode())
        return 0
    ask = start(session, at, models, args.message, config)
    lock = threading.Lock()

    def told(i: int, event: str, data: dict) -> None:
        if event != "delta" and not args.json:
            with lock:
                col = ask.columns[i]
                what = f"wrote {short_id(data['entry'])}" if data["entry"] else data["error"]
                print(f"  [{i + 1}] {col.model} {event} in {data['seconds']:.1f}s: {what}")
                sys.stdout.flush()

    run(session, config, ask, told)
    if args.json:
        print(orjson.dumps({"user": ask.user, "columns": [
            {"model": c.model, "status": c.status, "entry": c.entry, "error": c.error,
             "seconds": round(c.seconds, 2), "estimated_cost": e.cost, "context_tokens": e.tokens}
            for c, e in zip(ask.columns, planned)]}).decode())
    elif len(ask.answers) >= 2:
        print(f"compare them: session-tree compare {args.file} {' '.join(short_id(a) for a in ask.answers)}")
    return 0 if all(c.status == "done" for c in ask.columns) else 1


def add_ask_commands(command) -> None:
    """Adds `ask` to the parser (`command` is cli.build_parser's helper)."""
    sp = command("ask", cmd_ask, "ask several models at a node at once; each reply is a sibling branch "
                                 "(exit 1 when a model failed: its column wrote nothing)")
    sp.add_argument("--at", metavar="ID", required=True,
                    help="with --message: where the new user message goes; without: the user message "
                         "(or a reply to it) the models answer again")
    sp.add_argument("--models", metavar="M1,M2", required=True, action="append",
                    help="litellm model strings, comma-separated (or the option repeated)")
    sp.add_argument("--message", metavar="TEXT", help="a new user message, written once, answered by every model")
    sp.add_argument("--api-base", metavar="URL", help="an OpenAI-compatible server (default: $SESSION_TREE_API_BASE)")
    sp.add_argument("--estimate", action="store_true", help="only print each call's estimated cost; send nothing")
    sp.add_argument("--json", action="store_true")
