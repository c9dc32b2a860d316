"""`session-tree replay FILE --leaf LEAF --from ID --model M [--tools recorded|sandbox]
[--allow-bash] [--max-steps N] [--max-tokens N] [--max-cost USD]`: the user messages of a branch
after a start node, sent again to another model, its work written as a new branch
(webapp/model/replay.py does the work)."""

from __future__ import annotations

import argparse
import sys

import orjson

from .core.entries import short_id
from .core.replay_plan import DEFAULT_MAX_COPY_MB, DEFAULT_MAX_STEPS
from .core.session import Session


def _positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text} must be more than 0")
        return value
    return parse


def cmd_replay(args) -> int:
    from .model.llm import ModelConfig  # (the model layer only when asked: every command starts quicker)
    from .model.replay import Budget, prepare, run

    session = Session.open(args.file)
    session.check_writable()
    config = ModelConfig.from_env(args.model, args.api_base)
    budget = Budget(args.max_steps, args.max_tokens, args.max_cost)
    replay = prepare(session, config, args.leaf, getattr(args, "from"), args.tools, args.allow_bash, budget,
                     args.max_copy_mb)
    plan = replay.plan
    if not args.json:
        print(f"replaying {short_id(plan.leaf)} from {short_id(plan.start)} on {config.model} "
              f"({len(plan.prompts)} user message{'s' if len(plan.prompts) != 1 else ''} to send, "
              f"{replay.mode} tools):")
        if replay.mode == "sandbox":
            from .model.isolation import isolation

            print(f"  sandbox: {isolation().describe()}")

    def told(event: str, data: dict) -> None:
        if args.json:
            return
        if event == "reply":
            calls = f" → {', '.join(data['calls'])}" if data["calls"] else ""
            print(f"  [{data['step']}] wrote {short_id(data['entry'])}{calls}")
        elif event == "tool":
            print(f"      {data['name']}: {data['how']}{' (error)' if data['error'] else ''}")
        elif event == "stopped":
            print(f"  stopped: {data['reason']}")
        sys.stdout.flush()

    run(replay, told)
    if args.json:
        print(orjson.dumps({"leaf": replay.leaf, "first": replay.first_reply, "written": replay.written,
                            "steps": replay.steps, "tokens": replay.tokens, "cost": replay.cost,
                            "stopped": replay.stopped, "tools": replay.mode, **replay.counts()}).decode())
    else:
        print(replay.describe())
        if replay.leaf:
            print(f"compare it: session-tree compare {args.file} {short_id(plan.leaf)} {short_id(replay.leaf)}")
    return 0 if replay.finished else 1


def add_replay_commands(command) -> None:
    """Adds `replay` to the parser (`command` is cli.build_parser's helper)."""
    sp = command("replay", cmd_replay, "send a branch's user messages after a node again, to another model; "
                                       "its work is a new branch (exit 1 when a budget or a failure stopped it)")
    sp.add_argument("--leaf", metavar="LEAF", required=True, help="the branch to replay (its last entry)")
    sp.add_argument("--from", metavar="ID", required=True,
                    help="the node on that branch the replay starts from (the user messages after it are sent)")
    sp.add_argument("--model", metavar="M", help="a litellm model string (default: $SESSION_TREE_MODEL)")
    sp.add_argument("--api-base", metavar="URL", help="an OpenAI-compatible server (default: $SESSION_TREE_API_BASE)")
    sp.add_argument("--tools", choices=("recorded", "sandbox"), default="recorded",
                    help="recorded (default): the original branch's results for the same calls; sandbox: pi's "
                         "tools on a throwaway copy of the session's working directory")
    sp.add_argument("--allow-bash", action="store_true", help="with --tools sandbox: let the model run bash in the copy (only where bubblewrap isolates it)")
    sp.add_argument("--max-copy-mb", metavar="MB", type=_positive(float), default=DEFAULT_MAX_COPY_MB,
                    help=f"the largest working directory a sandbox copies (default {DEFAULT_MAX_COPY_MB:g})")
    sp.add_argument("--max-steps", metavar="N", type=_positive(int), default=DEFAULT_MAX_STEPS,
                    help=f"model calls at most (default {DEFAULT_MAX_STEPS})")
    sp.add_argument("--max-tokens", metavar="N", type=_positive(int), help="stop once the replies used this many tokens")
    sp.add_argument("--max-cost", metavar="USD", type=_positive(float), help="stop once the replies cost this much")
    sp.add_argument("--json", action="store_true")
