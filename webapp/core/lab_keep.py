"""Keeping what a lab found: a candidate written as a compaction of the session, or the lab's
table saved as a report.

A kept candidate becomes a new compaction beside what is there (its parent is the lab's node,
so it starts a sibling branch; the recorded compaction stays as it was), with the lab's
provenance in its `details` (the run, the candidate, its model, prompt and cut, its audit score
and the judge's word). A file the app may not write (SPEC §5c) is continued in a new file first,
and the compaction is written there. The report is the run's results as one JSON object, each
target with its ranked table, summaries, tests and judgments: `web/lab.py` draws it as HTML.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .compaction import plan_compaction
from .continuation import continue_in_new_session
from .errors import InvalidWrite
from .lab import RECORDED, table_rows
from .lab_store import RunFile, RunState
from .session import Session
from .summary_writes import write_compaction


@dataclass
class KeptCandidate:
    entry: dict  # the compaction written
    path: Path | None  # the file written (a new one when the session may not be written)
    continued: bool  # written in a continuation file


def candidate_of(state: RunState, file: str, at: str, cid: str) -> dict:
    found = state.done_candidate(file, at, cid)
    if found is None:
        raise InvalidWrite(f"run {state.name} has no finished candidate {cid!r} at {at}")
    if found.get("model") == RECORDED:
        raise InvalidWrite("the recorded summary is in the session already: keep another candidate")
    return found


def provenance(state: RunState, file: str, at: str, candidate: dict) -> dict:
    """What `details.lab` of a kept compaction says of where it came from."""
    cands, tests, judged = state.of_target(file, at)
    row = next((r for r in table_rows(cands, tests, judged) if r["id"] == candidate["id"]), {})
    cut = candidate.get("cut") or {}
    return {"run": state.name, "candidate": candidate["id"], "at": at, "model": candidate.get("model"),
            "prompt": candidate.get("prompt"), "cut": cut.get("name"), "keepRecentTokens": cut.get("keep"),
            "auditScore": row.get("score"), "judge": row.get("judge"), "rank": row.get("rank"),
            "of": len(cands)}


def keep_candidate(session: Session, run: RunFile, file: str, at: str, cid: str) -> KeptCandidate:
    """Write candidate `cid` of the lab at `at` as a compaction (see the module's doc)."""
    state = run.state()
    candidate = candidate_of(state, file, at, cid)
    target = state.targets.get((file, at)) or {}
    parent = target.get("parent")
    first_kept = (candidate.get("cut") or {}).get("first_kept")
    if not parent or not first_kept:
        raise InvalidWrite(f"run {state.name} does not say where candidate {cid} goes")
    usage = candidate.get("usage")
    details = {"summarizer": "model" if usage else candidate.get("model"), "model": candidate.get("model"),
               "lab": provenance(state, file, at, candidate)}
    if usage:
        details["usage"] = usage
    tree = session.tree
    tree.entry(parent)  # (UnknownEntry: the session is not the one the lab ran on)
    continued, path = session.read_only_reason is not None, getattr(session.storage, "path", None)
    if continued:
        mapping: dict[str, str] = {}
        path = continue_in_new_session(session, parent, mapping)
        session = Session.open(path)
        parent, first_kept = mapping[parent], mapping.get(first_kept, first_kept)
        tree = session.tree
    plan = plan_compaction(tree, parent, first_kept=first_kept)
    if not plan.can_compact:
        raise InvalidWrite(f"the session changed since the lab ran: {plan.reason}")
    entry = write_compaction(session, plan, candidate["summary"], details)
    run.add("kept", {"file": file, "at": at, "candidate": cid, "entry": entry["id"], "written": str(path) if path else None,
                     "continued": continued})
    return KeptCandidate(entry, path, continued)


def report(state: RunState) -> dict:
    """The run's results as one JSON object (what `report.json` holds and the HTML report draws)."""
    targets = []
    for (file, at), target in state.targets.items():
        cands, tests, judged = state.of_target(file, at)
        targets.append({
            "file": file, "at": at, "describe": target.get("describe"), "error": target.get("error"),
            "recordedSummary": target.get("summary"), "prompts": target.get("prompts") or [],
            "recordedReplies": target.get("recorded_replies") or [],
            "table": table_rows(cands, tests, judged),
            "candidates": {c["id"]: {k: c.get(k) for k in ("name", "model", "prompt", "cut", "summary", "kept",
                                                              "tokens_before", "tokens_after", "cost", "error")}
                           for c in cands},
            "tests": {cid: {k: t.get(k) for k in ("turns", "errors", "files", "tokens", "cost", "stopped", "error",
                                                   "model", "hits", "misses")}
                      for cid, t in tests.items()},
            "judgments": {cid: {k: j.get(k) for k in ("verdict", "orders", "reasons", "reference", "model", "error")}
                          for cid, j in judged.items()},
        })
    end = state.ends[-1] if state.ends else {}
    return {"run": state.name, "created": state.head.get("created"), "settings": state.settings,
            "query": state.head.get("query"), "status": end.get("reason") or "running or interrupted",
            "spent": {"tokens": state.spent_tokens, "cost": round(state.spent_cost, 8), "calls": state.calls},
            "kept": state.kept, "targets": targets}
