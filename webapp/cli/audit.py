"""`session-tree audit FILE [--compaction ID] [--model M]`: what each compaction of the active path
lost, the facts of what it summarized that its summary does not carry, with a model's opinion on
each missing one when asked."""

from __future__ import annotations

from ..core.audit import CATEGORIES, audit_entry, judge, summaries_on_path
from ..core.entries import short_id
from ..core.errors import SessionError
from ..core.session import Session
from ..model.llm import ModelConfig, complete
from .args import add_api_base, percent
from .output import print_json


def cmd_audit(args) -> int:
    """The facts each compaction's span held and whether its summary carries them."""
    tree = Session.open(args.file).tree
    if args.compaction:
        entries = [tree.find(args.compaction)]
        if entries[0].type not in ("compaction", "branch_summary"):
            raise SessionError(f"{entries[0].id} is a {entries[0].type}, not a compaction or a branch summary")
    else:
        entries = [e for e in summaries_on_path(tree, tree.active_leaf) if e.type == "compaction"]
    audits = [audit_entry(tree, e.id) for e in entries]
    if args.model:
        config = ModelConfig.from_env(args.model, args.api_base)
        for audit in audits:
            judge(audit, lambda prompt: complete(config, [{"role": "user", "content": prompt}]).text, config.model)
    if args.json:
        print_json([a.as_dict() for a in audits])
    else:
        if not audits:
            print(_none_on_the_path(tree))
        for audit in audits:
            print_audit(tree, audit, CATEGORIES)
    scores = [s for a in audits for s in (a.score(), *a.scores().values()) if s is not None]
    return 1 if args.fail_under is not None and any(s < args.fail_under for s in scores) else 0


def _none_on_the_path(tree) -> str:
    """What `audit FILE` says when the active path holds no compaction: which entries
    `--compaction ID` could audit instead."""
    others = [e.id for e in tree.by_id.values() if e.type in ("compaction", "branch_summary")]
    if not others:
        return "no compaction on the active path, nor a compaction or branch summary elsewhere to audit"
    if len(others) == 1:
        return f"no compaction on the active path; audit the one elsewhere with --compaction {short_id(others[0])}"
    named = ", ".join(short_id(i) for i in others[:5]) + (" …" if len(others) > 5 else "")
    return (f"no compaction on the active path; audit one of the {len(others)} elsewhere with "
            f"--compaction ID ({named})")


def print_audit(tree, audit, categories) -> None:
    entry = tree.by_id[audit.summary_id]
    kind = audit.kind.replace("_", " ")
    carried = f"{pct(audit.score())} of {len(audit.facts)} facts carried" if audit.facts else "no facts to carry"
    print(f"{kind} {audit.summary_id} (line {entry.line}): {carried}")
    if audit.problem:
        print(f"  {audit.problem}")
    for c in categories:
        facts = audit.of(c)
        if facts:
            print(f"  {c:<13} {pct(audit.score(c)):>4}  ({len(audit.covered(c))}/{len(facts)})")
    for c in categories:
        for f in audit.missing(c):
            extra = f" [{', '.join(f.details)}]" if f.details else ""
            print(f"  missing {c}: {f.text}{extra}  <- {', '.join(f.sources[:5])}{' …' if len(f.sources) > 5 else ''}")
            if f.judge is not None:
                print(f"      model's opinion ({audit.judged_by}): {f.judge} — {f.judge_reason}")
    print()


def pct(score: int | None) -> str:
    return "–" if score is None else f"{score}%"


def register(command) -> None:
    sp = command("audit", cmd_audit)
    sp.add_argument("--compaction", metavar="ID", help="this compaction or branch summary only")
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--fail-under", type=percent, metavar="PERCENT",
                    help="exit 1 when any score (a category's or the overall one) is lower")
    sp.add_argument("--model", metavar="M", help="ask this litellm model, per missing fact, whether the summary implies it")
    add_api_base(sp)
