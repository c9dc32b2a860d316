"""`session-tree judge FILE LEAF LEAF… --model M [--rubric TEXT]`: a model judges the branches'
outcomes pairwise, blind and in both orders; its verdicts are recorded beside a person's."""

from __future__ import annotations

import orjson

from .core.entries import short_id
from .core.session import Session


def cmd_judge(args) -> int:
    from .model.judge import judge
    from .model.llm import ModelConfig  # (the model layer only when asked: every command starts quicker)
    session = Session.open(args.file)
    config = ModelConfig.from_env(args.model, args.api_base)
    got = judge(session, config, args.leaves, args.rubric)
    if args.json:
        print(orjson.dumps({
            "model": got.model, "task": got.task, "cost": got.cost,
            "pairs": [{"a": got.verdicts[p.first].target, "b": got.verdicts[p.second].target,
                       "winner": None if p.winner is None else got.verdicts[p.winner].target,
                       "agreed": p.agreed, "reasons": p.reasons} for p in got.pairs],
            "verdicts": [{"target": v.target, "verdict": v.verdict, "note": v.note, "by": v.by, "kept_in": v.where}
                         for v in got.verdicts],
        }).decode())
        return 0
    print(f"judged by {got.model} against: {' '.join(got.task.split())[:120]}")
    for p in got.pairs:
        a, b = got.verdicts[p.first].target, got.verdicts[p.second].target
        result = "tie" if p.winner is None else f"{short_id(got.verdicts[p.winner].target)} better"
        print(f"  {short_id(a)} vs {short_id(b)}: {result}{'' if p.agreed else ' (the two orders disagreed)'}")
    for v in got.verdicts:
        print(f"{v.verdict:7} {short_id(v.target)}  {v.note}")
    print(f"cost ${got.cost:.4f}")
    return 0


def add_judge_commands(command) -> None:
    """Adds `judge` to the parser (`command` is cli.build_parser's helper)."""
    sp = command("judge", cmd_judge, "a model judges branches' outcomes pairwise (blind, both orders; "
                                     "a disagreement is a tie) and its verdicts are recorded beside a person's")
    sp.add_argument("leaves", metavar="LEAF", nargs="+", help="two or more branch leaves")
    sp.add_argument("--model", metavar="M", help="the judge: a litellm model string (default: $SESSION_TREE_MODEL)")
    sp.add_argument("--rubric", metavar="TEXT", help="what to judge against (default: the first prompt after the divergence)")
    sp.add_argument("--api-base", metavar="URL", help="an OpenAI-compatible server (default: $SESSION_TREE_API_BASE)")
    sp.add_argument("--json", action="store_true")
