"""The commands that converse with a model: `continue` and `regenerate` (one reply, streamed to
stdout), `ask` (several models at one node, each reply a sibling branch: webapp/model/ask.py),
`judge` (a model judges branches' outcomes pairwise, blind and in both orders: webapp/model/judge.py)
and `replay` (a branch's user messages sent again to another model: webapp/model/replay.py).

litellm itself is imported by the model layer at the first call (`model.llm._litellm`), not here.
"""

from __future__ import annotations

import sys
import threading

import orjson

from ..core.entries import short_id
from ..core.errors import SessionError
from ..core.replay_plan import DEFAULT_MAX_COPY_MB, DEFAULT_MAX_STEPS
from ..core.session import Session
from ..model import ask as asking
from ..model import replay as replaying
from ..model.errors import ModelError
from ..model.isolation import isolation
from ..model.judge import judge
from ..model.llm import ModelConfig, continue_branch, regenerate_reply
from ..model.summarize import regenerate_summary
from ..model.table import cost_text, priced
from .args import add_api_base, add_limit_options, positive
from .inputs import leaf_named
from .output import end_line, print_json_line, streaming


def _show_reply(assistant: dict) -> None:
    print()
    for block in assistant["message"]["content"]:
        if block["type"] == "toolCall":
            print(f"→ {block['name']} {orjson.dumps(block['arguments']).decode()} (not run)")
    if assistant["message"].get("stopReason") == "length":
        out = (assistant["message"].get("usage") or {}).get("output")
        print(f"session-tree: the reply was cut at the length limit{f' ({out} tokens)' if out else ''}: "
              "the model did not finish it (written as such, stopReason length)", file=sys.stderr)


def cmd_continue(args) -> int:
    """Stream the reply's text to stdout as it arrives; tool calls are listed, not run."""
    if args.retry == (args.message is not None):
        raise SessionError("give either --message TEXT, or --retry to ask again for the message waiting")
    config = ModelConfig.from_env(args.model, args.api_base, args.context_window, args.max_tokens)
    show, state = streaming()
    session = Session.open(args.file)
    leaf = leaf_named(session, args.leaf) if args.leaf else None
    try:
        result = continue_branch(session, config, args.message, leaf, on_delta=show)
    except ModelError as exc:
        if state["streamed"]:  # end the partial reply's line; the error goes to stderr
            print()
        if exc.kept_user and args.message is not None:
            exc.args = (f"{exc} Your message was kept as entry {exc.kept_user} with no reply; to ask again "
                        f"without writing it twice: session-tree continue {args.file} --retry",)
        raise
    _show_reply(result["assistantEntry"])
    return 0


def cmd_regenerate(args) -> int:
    """A new reply beside a message, or a new summary beside a compaction or branch summary."""
    config = ModelConfig.from_env(args.model, args.api_base)
    session = Session.open(args.file)
    session.check_writable()  # before a model is paid for
    entry = session.tree.find(args.id)
    if entry.type in ("compaction", "branch_summary"):
        show, state = streaming(sys.stderr)
        written = regenerate_summary(session, config, entry.id, on_delta=show)
        end_line(state, sys.stderr)
        print(written["id"])
        return 0
    show, state = streaming()
    try:
        _show_reply(regenerate_reply(session, config, entry.id, on_delta=show))
    except ModelError:
        if state["streamed"]:
            print()
        raise
    return 0


def cmd_ask(args) -> int:
    session = Session.open(args.file)
    session.check_writable()
    at = session.tree.find(args.at).id
    models = asking.parse_models(args.models)
    config = ModelConfig.from_env(models[0], args.api_base)
    asking.check_models(config, models)
    planned = asking.estimates(session, at, models, args.message)
    if not args.json:
        print(f"asking {len(models)} model{'s' if len(models) != 1 else ''} at {short_id(at)}"
              f" ({'a new message' if args.message is not None else 'the reply there, again'}):")
        for e in planned:
            print(f"  {e.model}: ~{e.tokens} context tokens, estimated {cost_text(e.cost)} (input only)")
    if args.estimate:
        if args.json:
            print_json_line([e.__dict__ for e in planned])
        return 0
    ask = asking.start(session, at, models, args.message, config)
    lock = threading.Lock()

    def told(i: int, event: str, data: dict) -> None:
        if event != "delta" and not args.json:
            with lock:
                col = ask.columns[i]
                what = f"wrote {short_id(data['entry'])}" if data["entry"] else data["error"]
                print(f"  [{i + 1}] {col.model} {event} in {data['seconds']:.1f}s: {what}")
                sys.stdout.flush()

    asking.run(session, config, ask, told)
    if args.json:
        print_json_line({"user": ask.user, "columns": [
            {"model": c.model, "status": c.status, "entry": c.entry, "error": c.error,
             "seconds": round(c.seconds, 2), "estimated_cost": e.cost, "context_tokens": e.tokens}
            for c, e in zip(ask.columns, planned)]})
    elif len(ask.answers) >= 2:
        print(f"compare them: session-tree compare {args.file} {' '.join(short_id(a) for a in ask.answers)}")
    return 0 if all(c.status == "done" for c in ask.columns) else 1


def cmd_judge(args) -> int:
    session = Session.open(args.file)
    config = ModelConfig.from_env(args.model, args.api_base)
    got = judge(session, config, args.leaves, args.rubric)
    cost = got.cost if priced(got.model) else None  # (no price for the model: unknown, not $0)
    if args.json:
        print_json_line({
            "model": got.model, "task": got.task, "cost": cost,
            "pairs": [{"a": got.verdicts[p.first].target, "b": got.verdicts[p.second].target,
                       "winner": None if p.winner is None else got.verdicts[p.winner].target,
                       "agreed": p.agreed, "reasons": p.reasons} for p in got.pairs],
            "verdicts": [{"target": v.target, "verdict": v.verdict, "note": v.note, "by": v.by, "kept_in": v.where}
                         for v in got.verdicts],
        })
        return 0
    print(f"judged by {got.model} against: {' '.join(got.task.split())[:120]}")
    for p in got.pairs:
        a, b = got.verdicts[p.first].target, got.verdicts[p.second].target
        result = "tie" if p.winner is None else f"{short_id(got.verdicts[p.winner].target)} better"
        print(f"  {short_id(a)} vs {short_id(b)}: {result}{'' if p.agreed else ' (the two orders disagreed)'}")
    for v in got.verdicts:
        print(f"{v.verdict:7} {short_id(v.target)}  {v.note}")
    print(f"cost {cost_text(cost)}")
    return 0


def cmd_replay(args) -> int:
    session = Session.open(args.file)
    session.check_writable()
    config = ModelConfig.from_env(args.model, args.api_base)
    budget = replaying.Budget(args.max_steps, args.max_tokens, args.max_cost)
    replay = replaying.prepare(session, config, args.leaf, getattr(args, "from"), args.tools, args.allow_bash,
                               budget, args.max_copy_mb)
    plan = replay.plan
    if not args.json:
        print(f"replaying {short_id(plan.leaf)} from {short_id(plan.start)} on {config.model} "
              f"({len(plan.prompts)} user message{'s' if len(plan.prompts) != 1 else ''} to send, "
              f"{replay.mode} tools):")
        if replay.mode == "sandbox":
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

    replaying.run(replay, told)
    if args.json:
        print_json_line({"leaf": replay.leaf, "first": replay.first_reply, "written": replay.written,
                            "steps": replay.steps, "tokens": replay.tokens, "cost": replay.known_cost,
                            "stopped": replay.stopped, "tools": replay.mode, **replay.counts()})
    else:
        print(replay.describe())
        if replay.leaf:
            print(f"compare it: session-tree compare {args.file} {short_id(plan.leaf)} {short_id(replay.leaf)}")
    return 0 if replay.finished else 1


def _model_option(sp, help: str = "a litellm model string (default: $SESSION_TREE_MODEL)") -> None:
    sp.add_argument("--model", metavar="M", help=help)


def register(command) -> None:
    sp = command("continue", cmd_continue)
    sp.add_argument("--message", metavar="TEXT")
    sp.add_argument("--retry", action="store_true",
                    help="ask again for the user message waiting at the active leaf (or --leaf); writes no new one")
    sp.add_argument("--leaf", metavar="ID", help="continue from this entry instead of the active leaf")
    _model_option(sp)
    add_api_base(sp)
    add_limit_options(sp)
    sp.add_argument("--verbose", action="store_true", help="on a failure, print the request and the raw response")

    sp = command("regenerate", cmd_regenerate)
    sp.add_argument("id", metavar="ID")
    _model_option(sp, "a litellm model string (default: $SESSION_TREE_MODEL; for a summary, none: extractive)")
    add_api_base(sp)
    sp.add_argument("--verbose", action="store_true", help="on a failure, print the request and the raw response")

    sp = command("ask", cmd_ask)
    sp.add_argument("--at", metavar="ID", required=True,
                    help="with --message: where the new user message goes; without: the user message "
                         "(or a reply to it) the models answer again")
    sp.add_argument("--models", metavar="M1,M2", required=True, action="append",
                    help="litellm model strings, comma-separated (or the option repeated)")
    sp.add_argument("--message", metavar="TEXT", help="a new user message, written once, answered by every model")
    add_api_base(sp)
    sp.add_argument("--estimate", action="store_true", help="only print each call's estimated cost; send nothing")
    sp.add_argument("--json", action="store_true")

    sp = command("judge", cmd_judge)
    sp.add_argument("leaves", metavar="LEAF", nargs="+", help="two or more branch leaves")
    _model_option(sp, "the judge: a litellm model string (default: $SESSION_TREE_MODEL)")
    sp.add_argument("--rubric", metavar="TEXT", help="what to judge against (default: the first prompt after the divergence)")
    add_api_base(sp)
    sp.add_argument("--json", action="store_true")

    sp = command("replay", cmd_replay)
    sp.add_argument("--leaf", metavar="LEAF", required=True, help="the branch to replay (its last entry)")
    sp.add_argument("--from", metavar="ID", required=True,
                    help="the node on that branch the replay starts from (the user messages after it are sent)")
    _model_option(sp)
    add_api_base(sp)
    sp.add_argument("--tools", choices=("recorded", "sandbox"), default="recorded",
                    help="recorded (default): the original branch's results for the same calls; sandbox: pi's "
                         "tools on a throwaway copy of the session's working directory")
    sp.add_argument("--allow-bash", action="store_true",
                    help="with --tools sandbox: let the model run bash in the copy (only where bubblewrap isolates it)")
    sp.add_argument("--max-copy-mb", metavar="MB", type=positive(float), default=DEFAULT_MAX_COPY_MB,
                    help=f"the largest working directory a sandbox copies (default {DEFAULT_MAX_COPY_MB:g})")
    sp.add_argument("--max-steps", metavar="N", type=positive(int), default=DEFAULT_MAX_STEPS,
                    help=f"model calls at most (default {DEFAULT_MAX_STEPS})")
    sp.add_argument("--max-tokens", metavar="N", type=positive(int), help="stop once the replies used this many tokens")
    sp.add_argument("--max-cost", metavar="USD", type=positive(float), help="stop once the replies cost this much")
    sp.add_argument("--json", action="store_true")
