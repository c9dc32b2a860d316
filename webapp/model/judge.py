"""A model as judge of branches' outcomes: pairwise, blind, both orders.

Each pair of branches is shown to the judge as "Outcome A" and "Outcome B" against the task (the
first user prompt after their divergence, or a rubric), with how each ended and what it did but
never a branch's id, label or model: the judge sees work, not names. Every pair is asked twice,
the outcomes swapped; when the two answers disagree (a judge that prefers a position) the pair is
a tie. The result is recorded like a person's verdict but as the judge's (`by: judge:<model>`,
with its reasons, usage and cost), so it stands beside a person's and never replaces it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import combinations

import orjson

from ..core.compare import Branch, Comparison, compare
from ..core.errors import InvalidWrite
from ..core.session import Session
from ..core.verdicts import Verdict, give_verdict
from .errors import ModelError
from .limits import JUDGE_MAX_TOKENS
from .llm import ModelConfig, complete

MAX_ANSWER = 6000  # characters of each final answer shown to the judge
SYSTEM = (
    "You judge the work of an AI coding assistant. You are shown a task and two outcomes of it "
    "(what each attempt finally said, how it ended, and what it did). Decide which outcome serves "
    "the task better: correct, complete, and honest about what is left. Ignore length and style. "
    'Answer with one JSON object and nothing else: {"better": "A" or "B" or "tie", "reasons": '
    '"one or two sentences"}.'
)
RESTATED = ('That was not in the format asked. Answer again with exactly one JSON object and nothing '
            'else: {"better": "A" or "B" or "tie", "reasons": "one or two sentences"}.')
_JSON = re.compile(r"\{.*\}", re.S)


def tasks_of(cmp: Comparison, rubric: str | None) -> list[str]:
    """Each branch's task: the rubric for all, else each branch's own first prompt after the
    divergence (branches asked different things are each judged against theirs), else the last
    prompt they share."""
    if rubric and rubric.strip():
        return [rubric.strip()] * len(cmp.branches)
    shared = _shared_prompt(cmp)
    return [_own_prompt(b) or shared for b in cmp.branches]


def _own_prompt(b: Branch) -> str | None:
    return next((t.user_text.strip() for t in b.turns if t.user is not None and t.user_text.strip()), None)


def _shared_prompt(cmp: Comparison) -> str:
    shared = [t for t in cmp.shared_turns if t.user is not None]
    return shared[-1].user_text.strip() if shared else "(no task was stated)"


def outcome_text(b: Branch) -> str:
    """A branch's outcome as the judge sees it: no id, no label, no model."""
    answer = (b.outcome.answer_text or "(no answer)").strip()
    if len(answer) > MAX_ANSWER:
        answer = answer[:MAX_ANSWER] + " […]"
    did = [f"status: {b.outcome.status_text}" + (f" ({b.outcome.detail})" if b.outcome.detail else ""),
           f"turns: {b.mine.turns}", f"tool calls: {b.mine.tool_call_count}", f"tool errors: {b.mine.tool_errors}"]
    if b.mine.files_modified:
        did.append("files modified: " + ", ".join(b.mine.files_modified[:20]))
    return "\n".join(did) + "\nfinal answer:\n" + answer


def judge_prompt(task_a: str, task_b: str, first: Branch, second: Branch) -> str:
    """The judge's question: one task for both outcomes, or each outcome with its own task."""
    if task_a == task_b:
        return (f"Task:\n{task_a}\n\n--- Outcome A ---\n{outcome_text(first)}\n\n"
                f"--- Outcome B ---\n{outcome_text(second)}")
    return ("The two attempts were given different tasks: judge each against its own task.\n\n"
            f"--- Task A ---\n{task_a}\n\n--- Outcome A ---\n{outcome_text(first)}\n\n"
            f"--- Task B ---\n{task_b}\n\n--- Outcome B ---\n{outcome_text(second)}")


def _verdict_in(text: str) -> tuple[str, str] | None:
    """("A" | "B" | "tie", reasons) when `text` holds the JSON asked for, else None."""
    found = _JSON.search(text or "")
    try:
        data = orjson.loads(found.group(0)) if found else None
    except orjson.JSONDecodeError:
        data = None
    better = str(data.get("better", "")).strip().upper() if isinstance(data, dict) else ""
    if better not in ("A", "B", "TIE"):
        return None
    return ("tie" if better == "TIE" else better), str(data.get("reasons") or "").strip()


def _ask(config: ModelConfig, task_a: str, task_b: str, first: Branch, second: Branch) -> tuple[str, str, dict]:
    """("A" | "B" | "tie", reasons, usage) of one judgment, A being `first`. An answer not in
    the format (or cut at its small bound) is asked again once, the format restated; a second
    one is a JudgeFailed that holds the model's words, and nothing is written."""
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": judge_prompt(task_a, task_b, first, second)}]
    usage: dict = {}
    said = []
    for attempt in range(2):
        reply = complete(config, messages, stream=True, max_tokens=JUDGE_MAX_TOKENS)
        _merge(usage, reply.usage)
        said.append(reply.text)
        found = None if reply.cut else _verdict_in(reply.text)
        if found:
            return found[0], found[1], usage
        messages = messages + [{"role": "assistant", "content": reply.text or "(nothing)"},
                               {"role": "user", "content": RESTATED}]
    raise JudgeFailed(config.model or "", said[-1])


class JudgeFailed(ModelError):
    """The judge answered twice, never in the format asked: its words are kept to be shown."""

    def __init__(self, model: str, words: str):
        shown = " ".join((words or "").split())
        shown = shown if len(shown) <= 600 else shown[:600] + " […]"
        super().__init__("bad-response", f'The judge {model} did not answer with {{"better": "A" | "B" | "tie", '
                                         f'…}}, even when asked again, so no verdict was written. It said: '
                                         f'“{shown or "(nothing)"}”', words)
        self.words = words


@dataclass
class Pair:
    first: int  # indexes into the judged tips
    second: int
    winner: int | None  # None: a tie, or the two orders disagreed
    reasons: list[str]
    agreed: bool


@dataclass
class Judgment:
    model: str
    task: str
    pairs: list[Pair]
    verdicts: list[Verdict] = field(default_factory=list)
    cost: float = 0.0
    usage: dict = field(default_factory=dict)


def _merge(total: dict, usage: dict) -> None:
    for k, v in usage.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            total[k] = total.get(k, 0) + v
    cost = usage.get("cost") if isinstance(usage.get("cost"), dict) else {}
    total["costTotal"] = total.get("costTotal", 0.0) + float(cost.get("total") or 0.0)


def _verdict_of(score: int, best: int, unique_best: bool, n: int) -> str:
    if n == 2:
        return "better" if score > 0 else "worse" if score < 0 else "tie"
    if score == best and unique_best and score > 0:
        return "winner"
    return "better" if score > 0 else "worse" if score < 0 else "tie"


def judge(session: Session, config: ModelConfig, tips: list[str], rubric: str | None = None) -> Judgment:
    """Judge the branches ending at `tips` (two or more) pairwise and record the judge's verdict
    on each. Every call is made before anything is written: a failed call writes no verdict."""
    config.check_usable("No judge model: pass --model (a litellm model string).")
    tree = session.tree
    tips = list(dict.fromkeys(tree.find(t).id if t not in tree.by_id else t for t in tips))
    if len(tips) < 2:
        raise InvalidWrite("judge at least two different branches")
    cmp = compare(tree, tips)
    tasks = tasks_of(cmp, rubric)
    task = tasks[0] if len(set(tasks)) == 1 else "each branch's own prompt"
    out = Judgment(config.model or "", task, [])
    for i, j in combinations(range(len(tips)), 2):
        a, b = cmp.branches[i], cmp.branches[j]
        one, why_one, use_one = _ask(config, tasks[i], tasks[j], a, b)
        two, why_two, use_two = _ask(config, tasks[j], tasks[i], b, a)  # swapped: A is now the second branch
        _merge(out.usage, use_one)
        _merge(out.usage, use_two)
        first = {"A": i, "B": j}.get(one)
        second = {"A": j, "B": i}.get(two)
        agreed = first == second
        out.pairs.append(Pair(i, j, first if agreed else None, [why_one, why_two], agreed))
    out.cost = out.usage.pop("costTotal", 0.0)  # of every call; each verdict records its share
    scores = [0] * len(tips)
    for p in out.pairs:
        if p.winner is not None:
            scores[p.winner] += 1
            scores[p.first if p.winner == p.second else p.second] -= 1
    best = max(scores)
    unique_best = scores.count(best) == 1
    by = f"judge:{config.model}"
    share = out.cost / len(tips)
    for k, tip in enumerate(tips):
        mine = [p for p in out.pairs if k in (p.first, p.second)]
        won = sum(1 for p in mine if p.winner == k)
        lost = sum(1 for p in mine if p.winner is not None and p.winner != k)
        note = f"won {won}, lost {lost}, tied {len(mine) - won - lost} of {len(mine)} pairwise judgments (both orders)"
        reasons = [r for p in mine for r in p.reasons if r]
        out.verdicts.append(give_verdict(
            session, tip, _verdict_of(scores[k], best, unique_best, len(tips)), note, by,
            extra={"reasons": reasons, "usage": out.usage, "cost": share, "task": tasks[k][:500]},
        ))
    return out
