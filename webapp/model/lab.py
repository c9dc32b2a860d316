"""Running a compaction lab: candidate summaries, the test of each by the conversation after it,
and a blind judge, over one compaction or many, within a budget, resumable.

For each target (a compaction, or a node of a branch: `core/lab.py`) the work is a few jobs on a
pool of `concurrency` threads (each job makes one model call at a time, so that is also how many
calls are under way at once):
- the reference: the branch's next user turns sent again from the uncompacted context, by the
  test model (the original the candidates are measured against, on the same model);
- per candidate: its summary (pi's prompt, ours, or a person's; the recorded summary and the
  extractive one need no model), its audit, then its test: the candidate's compaction written
  into a copy of the branch held in memory (never into the session), and the same turns sent
  again from there through the replay machinery (recorded tools: each call is answered with what
  the branch recorded), so every request is the context SPEC §5 and §5b make after that
  compaction; then the judge, asked in both orders, without names, whether the continuation did
  the task as well as the reference.
Every call is paid from one `Ledger` (model/lab_budget.py); each result is a line of the run's
file the moment it is whole (core/lab_store.py), which is what a resumed run skips.
"""

from __future__ import annotations

import functools
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from typing import Callable

import orjson

from ..core.compaction import plan_compaction, with_file_lists
from ..core.continuation import copied_path
from ..core.entries import MESSAGE, content_text, tool_calls
from ..core.errors import InvalidWrite, SessionError
from ..core.agents.tools import EDIT, WRITE, tool_action
from ..core.lab import (
    DEFAULT_TURNS, EXTRACTIVE, RECORDED, CandidateSpec, LabTarget, audit_candidate, candidate_specs, cuts_for,
    lab_target, plan_for, recorded_replies, recorded_spec,
)
from ..core.lab_store import UNCOMPACTED, RunFile, RunState
from ..core.replay_plan import ReplayPlan, recorded_around
from ..core.session import Session
from ..core.summary_writes import write_compaction
from . import judge as judging
from .cancel import Cancel
from .errors import Cancelled, ModelError
from .lab_budget import Ledger
from .lab_prompts import load_prompts, summary_request
from .limits import JUDGE_MAX_TOKENS, estimated_tokens, summary_max_tokens
from .llm import ModelConfig
from .replay import USUAL_TOOLS, Budget, Replay, run as run_replay
from .summarize import extractive_compaction_summary
from .table import priced
from .tool_runner import RecordedTools

DEFAULT_CONCURRENCY = 4
MAX_CONCURRENCY = 16
STEPS_PER_TURN = 4  # model calls a test turn may take (a tool call, its answer, ...)
MAX_REPLY_CHARS = 20_000  # of each reply a run keeps (the page and the tables show them)

Event = Callable[[str, dict], None]


@dataclass
class LabSettings:
    """What a person asked of a lab (kept in the run's first line, and read back to resume it)."""

    models: list[str]
    prompts: list[str]
    keeps: list[int] = field(default_factory=list)
    moved: str | None = None  # a cut a person moved to (the first kept entry)
    turns: int = DEFAULT_TURNS
    leaf: str | None = None  # the branch whose turns test (default: the active one through the target)
    test_model: str | None = None  # the model that continues (default: the first model, else the server's)
    judge_model: str | None = None  # default: the test model
    max_usd: float | None = None
    max_tokens: int | None = None
    concurrency: int = DEFAULT_CONCURRENCY

    def __post_init__(self):
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise InvalidWrite(f"concurrency: between 1 and {MAX_CONCURRENCY}, not {self.concurrency}")

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "LabSettings":
        known = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def calling(self, default: str | None) -> list[str]:
        """The models the lab calls: the summarizers, the test model and the judge."""
        out = [m for m in self.models if m not in (EXTRACTIVE, RECORDED)]
        if self.turns:
            out += [m for m in (self.test_model or default, self.judge_model or self.test_model or default) if m]
        return list(dict.fromkeys(out))


@dataclass
class _Target:
    session: Session
    file: str
    target: LabTarget
    specs: list[CandidateSpec]
    line: dict  # what the run file says of it: the turns' prompts and the recorded replies
    reference: Future | None = None


class Lab:
    """One run: its file, its budget, its pool. `run(targets)` works through (session, file, at)
    triples and returns why it ended ("finished", "cancelled", or the budget's words)."""

    def __init__(self, run_file: RunFile, settings: LabSettings, base: ModelConfig, on_event: Event | None = None,
                 cancel: Cancel | None = None):
        self.file = run_file
        self.state: RunState = run_file.state()
        self.settings = settings
        self.base = base
        self.cancel = cancel or Cancel()
        self._tell = on_event or (lambda event, data: None)
        self._tell_lock = threading.Lock()
        self.ledger = Ledger(settings.max_tokens, settings.max_usd, self.state.spent_tokens, self.state.spent_cost,
                             on_spend=self._spent)
        self.test_model = settings.test_model or next(
            (m for m in settings.models if m not in (EXTRACTIVE, RECORDED)), None) or base.model
        self.judge_model = settings.judge_model or self.test_model
        self.saved = load_prompts()
        self.ledger.check_priced(settings.calling(base.model))

    # -- events --------------------------------------------------------------------------------

    def tell(self, event: str, data: dict) -> None:
        with self._tell_lock:
            self._tell(event, data)

    def tell_to(self, on_event: Event) -> None:
        """Send the run's events to `on_event` from now on (a stream that opens after the run was made)."""
        with self._tell_lock:
            self._tell = on_event

    def _spent(self, line: dict) -> None:
        self.file.add("spend", line)
        self.tell("spent", {"tokens": self.ledger.spent_tokens, "cost": round(self.ledger.spent_cost, 6),
                            "calls": self.ledger.calls})

    def config(self, model: str) -> ModelConfig:
        return replace(self.base, model=model)

    # -- the run -------------------------------------------------------------------------------

    def run(self, targets) -> str:
        """Work through `targets` (an iterable of (session, file, at)), at most `concurrency`
        of them held at once; the end is written to the run file and told."""
        began = time.monotonic()
        pool = ThreadPoolExecutor(self.settings.concurrency, thread_name_prefix="lab")
        held: list[list[Future]] = []
        try:
            for session, file, at in targets:
                if self.cancel.is_set():
                    break
                while len(held) >= self.settings.concurrency:  # (trees of targets waiting stay few)
                    _wait(held.pop(0))
                job = self._plan(session, file, at)
                if job is not None:
                    held.append(self._submit(pool, job))
            for futures in held:
                _wait(futures)
        finally:
            pool.shutdown(wait=True)
        reason = "cancelled" if self.cancel.is_set() else self.ledger.reached or "finished"
        end = {"reason": reason, "tokens": self.ledger.spent_tokens, "cost": round(self.ledger.spent_cost, 6),
               "calls": self.ledger.calls, "seconds": round(time.monotonic() - began, 3)}
        self.file.add("end", end)
        self.tell("end", end)
        return reason

    def _plan(self, session: Session, file: str, at: str) -> _Target | None:
        s = self.settings
        try:
            target = lab_target(session.tree, at, s.leaf, s.turns)
            cuts = cuts_for(target, s.keeps, s.moved)
            specs = candidate_specs(s.models, s.prompts, cuts)
        except SessionError as exc:
            line = {"file": file, "at": at, "error": str(exc)}
            self.file.add("target", line)
            self.tell("target", line)
            return None
        recorded = recorded_spec(target)
        specs = ([recorded] if recorded else []) + specs
        line = {"file": file, "at": target.at, "parent": target.parent, "leaf": target.leaf,
                "recorded": target.recorded is not None, "summary": target.recorded_summary,
                "describe": target.describe(), "answers_start": target.answers_start,
                "prompts": [content_text(e.message.get("content")) for e in target.prompts],
                "recorded_replies": recorded_replies(target),
                "cuts": [{"first_kept": c.first_kept, "keep": c.keep, "name": c.name} for c in cuts],
                "candidates": [{"id": sp.id, "name": sp.name} for sp in specs]}
        known = self.state.targets.get((file, target.at))
        if known is None or known.get("error"):  # (a resumed run's target planned before is not written twice)
            self.file.add("target", line)
        self.tell("target", line)
        return _Target(session, file, target, specs, line)

    def _submit(self, pool: ThreadPoolExecutor, job: _Target) -> list[Future]:
        futures = []
        if job.target.testable and self.test_model:
            job.reference = pool.submit(self._guarded, self._test, job, UNCOMPACTED, None, None)
            futures.append(job.reference)
        futures += [pool.submit(self._guarded, self._candidate, job, spec) for spec in job.specs]
        return futures

    def _guarded(self, work, *args) -> dict | None:
        """A job whose failure of any kind is its row's error, never the pool's."""
        if self.cancel.is_set():
            return None
        try:
            return work(*args)
        except Exception as exc:  # (a bug in one job must not take the others' results with it)
            self.tell("failed", {"error": f"{type(exc).__name__}: {exc}"})
            return None

    # -- a candidate ---------------------------------------------------------------------------

    def _candidate(self, job: _Target, spec: CandidateSpec) -> dict | None:
        row = self._summary(job, spec)
        if row is None or row.get("error") or not job.target.testable or not self.test_model:
            return row
        test = self._test(job, spec.id, row, spec)
        if test is None or test.get("error") or self.cancel.is_set():
            return row
        reference = job.reference.result() if job.reference is not None else None
        self._judge(job, spec, test, reference)
        return row

    def _summary(self, job: _Target, spec: CandidateSpec) -> dict | None:
        done = self.state.done_candidate(job.file, job.target.at, spec.id)
        if done is not None:
            self.tell("candidate", done)
            return done
        self.tell("candidate-start", {"file": job.file, "at": job.target.at, "id": spec.id, "name": spec.name})
        began = time.monotonic()
        row = {"file": job.file, "at": job.target.at, "id": spec.id, "name": spec.name, "model": spec.model,
               "prompt": spec.prompt, "cut": {"first_kept": spec.cut.first_kept, "keep": spec.cut.keep,
                                               "name": spec.cut.name}}
        try:
            plan = plan_for(job.target, spec.cut)
            text, usage = self._summary_text(job, spec, plan)
        except Cancelled:
            return None
        except (ModelError, SessionError) as exc:
            row["error"] = str(exc)
            self.file.add("candidate", row)
            self.tell("candidate", row)
            return row
        written = with_file_lists(text, plan.read_files, plan.modified_files)
        row.update(summary=written, usage=usage, cost=_cost(usage, spec.model), tokens_before=plan.tokens_before,
                   tokens_after=plan.tokens_after(written), kept=audit_candidate(plan, text).as_dict(),
                   seconds=round(time.monotonic() - began, 3))
        self.file.add("candidate", row)
        self.tell("candidate", row)
        return row

    def _summary_text(self, job: _Target, spec: CandidateSpec, plan) -> tuple[str, dict | None]:
        if spec.model == RECORDED:
            return job.target.recorded_summary or "", None
        if spec.model == EXTRACTIVE:
            return extractive_compaction_summary(plan), None
        request = summary_request(spec.prompt, plan, self.saved)
        replaced = plan.messages_to_summarize()
        bound = summary_max_tokens(estimated_tokens(replaced) + estimated_tokens(
            [{"role": "user", "content": plan.previous_summary or ""}]))
        texts, usage = [], {}

        def delta(kind: str, text: str) -> None:
            if kind == "text":
                self.tell("delta", {"file": job.file, "at": job.target.at, "id": spec.id, "text": text})

        for messages in request.calls:
            reply = self.ledger.complete(self.config(spec.model), messages, what=f"summary {spec.id}", stream=True,
                                         on_delta=delta, max_tokens=bound, cancel=self.cancel)
            _add_usage(usage, reply.usage)
            if reply.cut:
                raise ModelError("cut", f"the summary was cut at {reply.max_tokens} tokens before the model "
                                        "finished it", reply.text)
            texts.append(reply.text.strip())
        return request.merge(texts).strip(), usage

    # -- a test --------------------------------------------------------------------------------

    def _test(self, job: _Target, cid: str, row: dict | None, spec: CandidateSpec | None) -> dict | None:
        """The branch's next turns sent again after candidate `cid`'s compaction (the recorded
        one, or none at all for the reference), in a copy of the branch held in memory."""
        target = job.target
        done = self.state.done_test(job.file, target.at, cid)
        if done is not None:
            self.tell("test", done)
            return done
        began = time.monotonic()
        out = {"file": job.file, "at": target.at, "candidate": cid, "model": self.test_model}
        copy = memory_copy(target)
        if cid == UNCOMPACTED:
            start = target.parent
        elif spec is not None and spec.model == RECORDED:
            start = target.at
        else:
            plan = plan_compaction(copy.tree, target.parent, first_kept=spec.cut.first_kept)
            details = {"lab": {"run": self.state.name, "candidate": cid}}
            start = write_compaction(copy, plan, row["summary"], details)["id"]
        path = target.tree.path(target.leaf)
        ids = [e.id for e in path]
        cut = ids.index(target.at) + 1 if target.at in ids else len(path)
        plan = ReplayPlan(target.leaf, start, list(target.prompts), target.answers_start, recorded_around(path, cut))
        replay = Replay(copy, plan, self.config(self.test_model), RecordedTools.for_plan(plan.recorded, USUAL_TOOLS),
                        Budget(max_steps=STEPS_PER_TURN * plan.steps_needed), cancel=self.cancel,
                        call=functools.partial(self.ledger.complete, what=f"test {cid}"))

        def told(event: str, data: dict) -> None:
            if event == "reply":
                self.tell("test-reply", {"file": job.file, "at": target.at, "candidate": cid, "text": data.get("text")})

        try:
            run_replay(replay, told)
        except Cancelled:
            return None
        except ModelError as exc:
            out["error"] = replay.error or str(exc)
        if self.cancel.is_set():
            return None
        turns = turns_of(copy, replay.written, target.answers_start)
        stopped = replay.stopped
        if stopped and self.ledger.reached and "budget" not in stopped:
            stopped = self.ledger.reached
        out.update(turns=turns, steps=replay.steps, tokens=replay.tokens,
                   cost=None if replay.known_cost is None else round(replay.known_cost, 6),
                   errors=sum(t["errors"] for t in turns), files=sorted({f for t in turns for f in t["files"]}),
                   stopped=stopped, **replay.counts(), seconds=round(time.monotonic() - began, 3))
        self.file.add("test", out)
        self.tell("test", out)
        return out

    # -- the judge -----------------------------------------------------------------------------

    def _judge(self, job: _Target, spec: CandidateSpec, test: dict, reference: dict | None) -> dict | None:
        done = self.state.done_judgment(job.file, job.target.at, spec.id)
        if done is not None:
            self.tell("judgment", done)
            return done
        line = job.line
        prompts = line.get("prompts") or []
        if reference is not None and not reference.get("error"):
            ref_text, against = outcome_text(reference), UNCOMPACTED
        else:
            ref_text, against = recorded_outcome(line.get("recorded_replies") or []), "recorded"
        task = task_text(prompts, job.target.answers_start)
        out = {"file": job.file, "at": job.target.at, "candidate": spec.id, "model": self.judge_model,
               "reference": against}
        try:
            one, why_one, use_one = self._ask(task, ref_text, outcome_text(test))  # A: the reference
            two, why_two, use_two = self._ask(task, outcome_text(test), ref_text)  # A: the candidate
        except Cancelled:
            return None
        except ModelError as exc:
            out["error"] = str(exc)
            self.file.add("judgment", out)
            self.tell("judgment", out)
            return out
        first = {"A": "reference", "B": "candidate"}.get(one, "tie")
        second = {"A": "candidate", "B": "reference"}.get(two, "tie")
        if first != second:
            verdict = "disagreed"
        else:
            verdict = {"candidate": "better", "reference": "worse", "tie": "as well"}[first]
        usage: dict = {}
        _add_usage(usage, use_one)
        _add_usage(usage, use_two)
        out.update(verdict=verdict, orders=[first, second], reasons=[why_one, why_two], usage=usage,
                   cost=_cost(usage, self.judge_model))
        self.file.add("judgment", out)
        self.tell("judgment", out)
        return out

    def _ask(self, task: str, a: str, b: str) -> tuple[str, str, dict]:
        """One blind judgment: ("A" | "B" | "tie", reasons, usage); asked again once, the format
        restated, when the answer is not in it."""
        messages = [{"role": "system", "content": judging.SYSTEM},
                    {"role": "user", "content": f"Task:\n{task}\n\n--- Outcome A ---\n{a}\n\n--- Outcome B ---\n{b}"}]
        usage: dict = {}
        config = self.config(self.judge_model)
        said = ""
        for _ in range(2):
            reply = self.ledger.complete(config, messages, what="judge", stream=True, max_tokens=JUDGE_MAX_TOKENS,
                                         cancel=self.cancel)
            _add_usage(usage, reply.usage)
            said = reply.text
            found = None if reply.cut else judging._verdict_in(reply.text)
            if found:
                return found[0], found[1], usage
            messages = messages + [{"role": "assistant", "content": reply.text or "(nothing)"},
                                   {"role": "user", "content": judging.RESTATED}]
        raise judging.JudgeFailed(config.model or "", said)


def _wait(futures: list[Future]) -> None:
    for f in futures:
        f.result()


def _add_usage(total: dict, usage: dict | None) -> None:
    for k, v in (usage or {}).items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            total[k] = total.get(k, 0) + v
    cost = (usage or {}).get("cost")
    if isinstance(cost, dict):
        total.setdefault("cost", {"total": 0.0})
        total["cost"]["total"] += float(cost.get("total") or 0.0)


def _cost(usage: dict | None, model: str | None) -> float | None:
    """What a call cost; None when nothing was called, or the model has no price (unknown, not $0)."""
    if not usage or not priced(model):
        return None
    return round(float((usage.get("cost") or {}).get("total") or 0.0), 8)


# -- the copy a test runs in ---------------------------------------------------------------------------


def memory_copy(target: LabTarget) -> Session:
    """The branch the test's turns come from, copied into a session held in memory: the test
    writes its candidate's compaction and its continuation there, never into the session."""
    tree = target.tree
    header = tree.header or {}
    head = {"type": "session", "version": 3, "id": str(header.get("id") or "lab-copy"),
            "timestamp": str(header.get("timestamp") or "1970-01-01T00:00:00.000Z"),
            "cwd": header.get("cwd") if isinstance(header.get("cwd"), str) else ""}
    lines = [head, *copied_path(tree, target.leaf)]
    return Session.in_memory(b"".join(orjson.dumps(line) + b"\n" for line in lines))


def turns_of(session: Session, written: list[str], answers_start: bool) -> list[dict]:
    """What a test wrote, turn by turn: the prompt, the replies (the last is the turn's answer),
    the calls made, the tool errors, the files it edited or wrote, its tokens and cost."""
    tree = session.tree
    turns: list[dict] = []

    def new(prompt: str | None) -> dict:
        return {"prompt": prompt, "reply": "", "steps": 0, "calls": 0, "errors": 0, "files": [], "tokens": 0,
                "cost": 0.0}

    if answers_start:
        turns.append(new(None))
    for entry_id in written:
        e = tree.by_id.get(entry_id)
        if e is None or e.type != MESSAGE:
            continue
        msg = e.message
        if e.role == "user":
            turns.append(new(content_text(msg.get("content"))))
            continue
        if not turns:
            turns.append(new(None))
        turn = turns[-1]
        if e.role == "assistant":
            turn["steps"] += 1
            text = content_text(msg.get("content")).strip()
            if text:
                turn["reply"] = text[:MAX_REPLY_CHARS]
            calls = tool_calls(e)
            turn["calls"] += len(calls)
            for call in calls:
                action = tool_action(call)
                if action.kind in (EDIT, WRITE):
                    turn["files"] = sorted(set(turn["files"]) | set(action.paths))
            usage = msg.get("usage") or {}
            turn["tokens"] += int(usage.get("totalTokens") or 0)
            turn["cost"] = round(turn["cost"] + float((usage.get("cost") or {}).get("total") or 0.0), 8)
        elif e.role == "toolResult" and msg.get("isError"):
            turn["errors"] += 1
    return turns


# -- what the judge reads ------------------------------------------------------------------------------


def task_text(prompts: list[str], answers_start: bool) -> str:
    lines = ["(first: go on from where the conversation stopped)"] if answers_start else []
    lines += [f"Turn {i}: {p}" for i, p in enumerate(prompts, 1 + len(lines))]
    return "The user's next turns, sent to an assistant that had only the conversation before them:\n" + \
        "\n\n".join(lines or ["(no user turn)"])


def outcome_text(test: dict) -> str:
    """A test's outcome as the judge sees it: what it did and what it said, never which
    candidate or model it was."""
    turns = test.get("turns") or []
    head = [f"turns: {len(turns)}", f"tool calls: {sum(t.get('calls', 0) for t in turns)}",
            f"tool errors: {test.get('errors', 0)}"]
    if test.get("files"):
        head.append("files modified: " + ", ".join(test["files"][:20]))
    if test.get("stopped"):
        head.append(f"stopped early: {test['stopped']}")
    body = [f"answer to turn {i}:\n{(t.get('reply') or '(no answer)')[:judging.MAX_ANSWER]}"
            for i, t in enumerate(turns, 1)]
    return "\n".join(head) + "\n\n" + "\n\n".join(body)


def recorded_outcome(replies: list[str]) -> str:
    body = [f"answer to turn {i}:\n{(r or '(no answer)')[:judging.MAX_ANSWER]}" for i, r in enumerate(replies, 1)]
    return f"turns: {len(replies)}\n\n" + "\n\n".join(body)


def describe_end(reason: str, ledger: Ledger) -> str:
    money = f"${ledger.spent_cost:.4f}" if ledger.max_cost is not None or ledger.spent_cost else "cost unknown"
    return f"{reason}: {ledger.calls} model calls, {ledger.spent_tokens:,} tokens, {money}"

