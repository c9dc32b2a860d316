"""The compaction lab's plan, worked out from the tree alone: where the candidates' compactions
go, which cuts they may keep from, which turns test them, and how a finished lab ranks them.

A lab is opened at a compaction (its parent is where every candidate goes; its own summary is
the recorded one that each candidate is diffed and ranked against) or at any node of a branch
(the node is the parent). The cut is SPEC §6's for each keep-recent budget asked for, or the
one a person moved it to (an entry of the context that is a cut point); a compaction's own cut
is always one of them. A candidate is a model x a summary prompt x a cut; its test is the
branch's next user turns after the lab's node, sent again from the compacted context.

Nothing here calls a model or writes: `model/lab.py` runs a lab, `core/lab_store.py` keeps its
results, and the ranking below reads them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from .audit import CATEGORIES, Audit, audit_plan
from .compaction import CompactionPlan, is_cut_point, plan_compaction, strip_file_lists
from .compare import word_diff
from .context import build_context
from .entries import COMPACTION, MESSAGE, Entry, content_text, short_id
from .errors import InvalidWrite
from .reader import first_kept_id
from .tokens import format_tokens
from .tree import SessionTree

DEFAULT_TURNS = 3  # the user turns after the cut that test a summary, unless told
MAX_TURNS = 10
MAX_CANDIDATES = 24  # models x prompts x cuts: more is a corpus run's work, not one page's
RECORDED = "recorded"  # the model and prompt name of the summary the session holds
EXTRACTIVE = "extractive"  # the summarizer without a model: one candidate per cut, whatever the prompts
AUDITED = ("files", "commands", "errors", "instructions")  # the categories the lab's cards show


@dataclass(frozen=True)
class Cut:
    """Where a candidate's kept part begins: SPEC §6's cut for `keep` tokens, or a cut a person
    chose (`keep` None), or the recorded compaction's own."""

    first_kept: str
    keep: int | None
    name: str  # "keep 20k", "recorded cut", "moved cut"


@dataclass
class LabTarget:
    """What a lab works on. `parent` is where each candidate's compaction is written (in memory
    for its test, in the session when a person keeps it); `leaf` is the branch whose next user
    turns (`prompts`, at most `turns`) test each candidate."""

    tree: SessionTree
    at: str
    parent: str
    leaf: str
    recorded: Entry | None  # the compaction the lab was opened at
    prompts: list[Entry]
    answers_start: bool  # the parent waits for the model (a user message or a tool result)
    context_window: int | None = None
    turns: int = DEFAULT_TURNS  # the turns asked for (0: no test)

    @property
    def recorded_summary(self) -> str | None:
        summary = self.recorded.get("summary") if self.recorded is not None else None
        return summary if isinstance(summary, str) else None

    @property
    def recorded_cut(self) -> str | None:
        return first_kept_id(self.recorded) if self.recorded is not None else None

    @property
    def testable(self) -> bool:
        return bool(self.prompts) or self.answers_start

    def describe(self) -> str:
        where = f"compaction {short_id(self.at)}" if self.recorded is not None else f"node {short_id(self.at)}"
        turns = len(self.prompts) + (1 if self.answers_start else 0)
        if turns:
            test = f"{turns} turn{'s' if turns != 1 else ''} of branch {short_id(self.leaf)} test each candidate"
        elif not self.turns:
            test = "no test asked for: candidates are audited, not tested"
        else:
            test = f"no user turn follows on branch {short_id(self.leaf)}: candidates are audited, not tested"
        return f"lab at {where}; {test}"


def _branch_below(tree: SessionTree, node: str, leaf: str | None) -> str:
    """The branch through `node` whose turns test the candidates: `leaf` when it passes through
    `node`, else the active branch when it does, else the first that does."""
    if leaf is not None:
        leaf = tree.find(leaf).id
        if not tree.is_ancestor(node, leaf) and node != leaf:
            raise InvalidWrite(f"{short_id(leaf)} is not on a branch through {short_id(node)}")
        return leaf
    active = tree.conversation_leaf(tree.active_leaf)
    if active is not None and (active == node or tree.is_ancestor(node, active)):
        return active
    below = [x for x in tree.leaves() if x == node or tree.is_ancestor(node, x)]
    return below[0] if below else node


def lab_target(tree: SessionTree, at: str, leaf: str | None = None, turns: int = DEFAULT_TURNS,
               context_window: int | None = None) -> LabTarget:
    """The lab at entry `at` (an id or a unique prefix): InvalidWrite saying why for an entry no
    compaction can be written after (nothing before it to summarize is found later, by the plan)."""
    if not 0 <= turns <= MAX_TURNS:
        raise InvalidWrite(f"turns: between 0 and {MAX_TURNS}, not {turns}")
    entry = tree.find(at)
    at = entry.id
    if entry.type == COMPACTION:
        parent = tree.parent.get(at)
        if parent is None:
            raise InvalidWrite(f"compaction {short_id(at)} has no parent: there was nothing to compact")
        recorded = entry
    else:
        parent, recorded = tree.conversation_leaf(at) or at, None
    branch = _branch_below(tree, at, leaf)
    path = tree.path(branch)
    ids = [e.id for e in path]
    after = path[ids.index(at) + 1:] if at in ids else []
    prompts = [e for e in after if e.type == MESSAGE and e.role == "user"]
    waiting = tree.by_id[parent]
    answers_start = waiting.type == MESSAGE and waiting.role in ("user", "toolResult") and turns > 0
    limit = max(turns - (1 if answers_start else 0), 0)
    return LabTarget(tree, at, parent, branch, recorded, prompts[:limit], answers_start, context_window, turns)


def cut_choices(target: LabTarget) -> list[Entry]:
    """The entries a person may move the cut to: the cut points of the context at the parent
    that leave a message before them to summarize (a system message is no such message)."""
    ctx = build_context(target.tree, target.parent)
    out: list[Entry] = []
    seen: set[str] = set()
    said = False
    for src in ctx.sources:
        if src is ctx.compaction or src.id in seen:
            continue
        seen.add(src.id)
        if said and is_cut_point(src):
            out.append(src)
        said = said or not (src.type == MESSAGE and src.role == "system")
    return out


def cuts_for(target: LabTarget, keeps: list[int], moved: str | None = None) -> list[Cut]:
    """The cuts the candidates keep from: the recorded one (at a compaction), the one a person
    moved it to, and SPEC §6's for each keep budget; two that fall on the same entry are one."""
    out: dict[str, Cut] = {}
    if target.recorded_cut and target.recorded_cut != target.recorded.id:
        out[target.recorded_cut] = Cut(target.recorded_cut, None, "recorded cut")
    if moved:
        if moved not in {e.id for e in cut_choices(target)}:
            raise InvalidWrite(f"{short_id(moved)} is not a cut point of the context at {short_id(target.parent)}")
        out.setdefault(moved, Cut(moved, None, "moved cut"))
    for keep in keeps:
        if keep < 1:
            raise InvalidWrite(f"a keep-recent budget is a number of tokens above 0, not {keep}")
        plan = plan_compaction(target.tree, target.parent, keep_recent_tokens=keep,
                               context_window=target.context_window)
        if plan.can_compact:
            out.setdefault(plan.first_kept_entry_id, Cut(plan.first_kept_entry_id, keep, f"keep {format_tokens(keep)}"))
    if not out:
        raise InvalidWrite(f"nothing to compact at {short_id(target.parent)} with "
                           + (", ".join(f"{k:,}" for k in keeps) or "no budget")
                           + " tokens kept: keep fewer, or move the cut")
    return list(out.values())


def plan_for(target: LabTarget, cut: Cut) -> CompactionPlan:
    plan = plan_compaction(target.tree, target.parent, context_window=target.context_window,
                           first_kept=cut.first_kept, keep_recent_tokens=cut.keep or 20000)
    if not plan.can_compact:
        raise InvalidWrite(plan.reason)
    return plan


@dataclass(frozen=True)
class CandidateSpec:
    """One candidate to make: which model, which summary prompt, which cut."""

    model: str
    prompt: str
    cut: Cut

    @property
    def key(self) -> str:
        """Stable across runs of the same lab: what a resumed run knows a candidate by."""
        return f"{self.model}|{self.prompt}|{self.cut.first_kept}"

    @property
    def id(self) -> str:
        return "c" + hashlib.sha1(self.key.encode()).hexdigest()[:7]

    @property
    def name(self) -> str:
        return f"{self.model} · {self.prompt} · {self.cut.name}"


def candidate_specs(models: list[str], prompts: list[str], cuts: list[Cut]) -> list[CandidateSpec]:
    """Every model x prompt x cut, in that order; refused past MAX_CANDIDATES."""
    if not models:
        raise InvalidWrite("choose at least one model (or the extractive summarizer)")
    if not prompts:
        raise InvalidWrite("choose at least one summary prompt")
    specs = list(dict.fromkeys(
        CandidateSpec(m, EXTRACTIVE if m == EXTRACTIVE else p, c)
        for m in dict.fromkeys(models) for p in dict.fromkeys(prompts) for c in cuts))
    if len(specs) > MAX_CANDIDATES:
        raise InvalidWrite(f"{len(specs)} candidates ({len(set(models))} models x {len(set(prompts))} prompts x "
                           f"{len(cuts)} cuts): at most {MAX_CANDIDATES} at once")
    return specs


def recorded_spec(target: LabTarget) -> CandidateSpec | None:
    """The recorded summary as a row of its own (audited, tested and ranked like the others)."""
    cut = target.recorded_cut
    if target.recorded is None or not cut or cut == target.recorded.id:  # (one that keeps nothing: no cut to share)
        return None
    return CandidateSpec(RECORDED, RECORDED, Cut(cut, None, "recorded cut"))


# -- what a candidate kept ---------------------------------------------------------------------------


@dataclass
class Kept:
    """A candidate's audit as the lab shows it: per category, the facts kept and lost."""

    score: int | None
    facts: int
    kept: dict[str, list[str]] = field(default_factory=dict)
    lost: dict[str, list[str]] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"score": self.score, "facts": self.facts, "kept": self.kept, "lost": self.lost}

    @classmethod
    def from_dict(cls, d: dict) -> "Kept":
        return cls(d.get("score"), int(d.get("facts") or 0), dict(d.get("kept") or {}), dict(d.get("lost") or {}))

    @property
    def missing(self) -> int:
        return sum(len(v) for v in self.lost.values())


def kept_of(audit: Audit) -> Kept:
    return Kept(audit.score(), len(audit.facts),
                {c: [f.text for f in audit.covered(c)] for c in CATEGORIES},
                {c: [f.text for f in audit.missing(c)] for c in CATEGORIES})


def audit_candidate(plan: CompactionPlan, summary: str) -> Kept:
    """What the summary, as it would be written (its file lists appended), keeps of its span."""
    return kept_of(audit_plan(plan, summary))


def summary_diff(a: str, b: str) -> list[tuple[str, str]]:
    """The word diff between two summaries' own text (their file lists, the same for one cut,
    left out)."""
    return word_diff(strip_file_lists(a).strip(), strip_file_lists(b).strip())


# -- the test's turns -----------------------------------------------------------------------------------


def recorded_replies(target: LabTarget) -> list[str]:
    """The reply the branch recorded to each turn of the test: the last assistant text before
    the next user message (a turn's last word), in the turns' order."""
    path = target.tree.path(target.leaf)
    ids = [e.id for e in path]
    start = ids.index(target.at) + 1 if target.at in ids else len(path)
    turns: list[list[Entry]] = [[]] if target.answers_start else []
    for e in path[start:]:
        if e.type == MESSAGE and e.role == "user":
            turns.append([])
        elif turns:
            turns[-1].append(e)
    wanted = len(target.prompts) + (1 if target.answers_start else 0)
    out = []
    for turn in turns[:wanted]:
        texts = [content_text(e.message.get("content")).strip() for e in turn
                 if e.type == MESSAGE and e.role == "assistant" and e.message.get("stopReason") not in ("error", "aborted")]
        texts = [t for t in texts if t]
        out.append(texts[-1] if texts else "")
    return out


# -- ranking ------------------------------------------------------------------------------------------

JUDGE_POINTS = {"better": 3, "as well": 2, "disagreed": 1, "worse": 0}  # untested: -1


def rank_key(row: dict) -> tuple:
    """How the lab's table orders candidates: the judge's word on the continuation first (better
    than the original, as well, the two orders disagreed, worse; untested last), then the fewer
    tool errors in the test, then what the audit kept, then the smaller context after, then the
    cheaper. A failed candidate comes after every other."""
    judged = row.get("judge")
    points = JUDGE_POINTS.get(judged) if judged else None
    errors = row.get("test_errors")
    return (
        row.get("error") is not None,
        -(points if points is not None else -1),
        errors if isinstance(errors, int) else 0,
        -(row.get("score") if isinstance(row.get("score"), int) else -1),
        row.get("tokens_after") if isinstance(row.get("tokens_after"), int) else 1 << 62,
        row.get("cost") or 0.0,
    )


def ranked(rows: list[dict]) -> list[dict]:
    """The candidates' rows in the table's order, each with its `rank` (1 = best)."""
    out = sorted(rows, key=rank_key)
    for i, row in enumerate(out, 1):
        row["rank"] = i
    return out


def table_rows(candidates: list[dict], tests: dict[str, dict], judged: dict[str, dict]) -> list[dict]:
    """One row per candidate, as the lab's table shows it and the corpus table keeps it, ranked:
    the summary's figures and audit, its test's outcome, the judge's word."""
    rows = []
    for c in candidates:
        cid = str(c.get("id"))
        kept = Kept.from_dict(c.get("kept") or {})
        test, judgment = tests.get(cid) or {}, judged.get(cid) or {}
        cut = c.get("cut") or {}
        row = {
            "id": cid, "name": c.get("name"), "model": c.get("model"), "prompt": c.get("prompt"),
            "cut": cut.get("name"), "first_kept": cut.get("first_kept"), "keep": cut.get("keep"),
            "tokens_before": c.get("tokens_before"), "tokens_after": c.get("tokens_after"),
            "cost": c.get("cost"), "score": kept.score, "facts": kept.facts, "missing": kept.missing,
            "error": c.get("error"),
            "test_error": test.get("error"), "test_errors": test.get("errors"), "test_tokens": test.get("tokens"),
            "test_cost": test.get("cost"), "test_stopped": test.get("stopped"), "files_touched": test.get("files"),
            "judge": judgment.get("verdict") if not judgment.get("error") else None,
            "judge_error": judgment.get("error"), "reference": judgment.get("reference"),
        }
        for category in AUDITED:
            row[f"{category}_kept"] = len(kept.kept.get(category, ()))
            row[f"{category}_lost"] = len(kept.lost.get(category, ()))
        rows.append(row)
    return ranked(rows)
