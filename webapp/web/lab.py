"""The compaction lab in the web app: its page at a compaction or a node, a run streamed as it
works (each candidate's summary as it comes, then its card with its audit, its test and the
judge's word, then the ranked table), the diff of two candidates, keeping one as a compaction,
and a saved prompt.

`webapp.model.lab` does the work and keeps every result in the run's file; this module reads the
form, streams the run's events through `streaming.event_stream` (a browser that leaves, or the
page's Cancel, stops the run: what it found is kept, and the run can be opened again), and draws
cards and tables from the run's file, so a finished run's page and a live one are one template.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, abort, redirect, render_template, request, url_for

from ..core.compaction import suggested_keep_recent_tokens
from ..core.errors import InvalidWrite, SessionError
from ..core.lab import (
    AUDITED, DEFAULT_TURNS, EXTRACTIVE, MAX_TURNS, RECORDED, Kept, LabTarget, audit_candidate, candidate_specs,
    cut_choices, cuts_for, lab_target, plan_for, recorded_replies, summary_diff, table_rows,
)
from ..core.lab_keep import keep_candidate
from ..core.lab_store import RunFile, RunState, list_runs, new_run_name, read_run, run_head
from ..core.session import Session
from ..model.cancel import Cancel
from ..model.errors import ModelError
from ..model.lab import DEFAULT_CONCURRENCY, MAX_CONCURRENCY, Lab, LabSettings
from ..model.lab_prompts import BUILT_IN, load_prompts, prompt_names, save_prompt
from .actions import wants_stream
from .compare import diff_html
from .guard import keeps_app_data, writes_or_continues
from .owner import model_config, offered_models, refusal_for_model
from .current import store
from .streaming import event_stream

bp = Blueprint("lab", __name__)

RUNS_SHOWN = 8  # earlier runs of the same lab listed on its page


def session_file(session: Session) -> str:
    """How a lab run names a session: its file's absolute path (what the corpus tables name)."""
    path = getattr(session.storage, "path", None)
    return str(Path(path).resolve()) if path is not None else session.storage.name


def _target(session: Session, at: str | None, leaf: str | None = None, turns: int = DEFAULT_TURNS) -> LabTarget:
    tree = session.tree
    at = at or tree.conversation_leaf(tree.active_leaf)
    if not at:
        abort(404, description="this session has no entry to open the lab at")
    try:
        return lab_target(tree, at, leaf or None, turns)
    except InvalidWrite as exc:
        abort(400, description=str(exc))


def default_keep(target: LabTarget) -> int | None:
    """The keep budget the form starts with: none at a compaction (its own cut is tried), else
    the one the compaction preview would suggest."""
    return None if target.recorded is not None else suggested_keep_recent_tokens(target.tree, target.parent)


def runs_of(file: str, at: str) -> list[RunState]:
    """The latest runs of the lab at `at` of `file`, newest first."""
    out = []
    for path in list_runs():
        head = run_head(path)  # (only the first line of each: most runs are of other labs)
        if head is None or [file, at] not in (head.get("targets") or []):
            continue
        try:
            out.append(read_run(path))
        except SessionError:
            continue
        if len(out) >= RUNS_SHOWN:
            break
    return out


@bp.get("/s/<path:rel>/lab")
def lab_page(rel: str):
    session = store().session(rel)
    target = _target(session, request.args.get("at"), request.args.get("leaf"))
    file = session_file(session)
    state = None
    if request.args.get("run"):
        try:
            state = RunFile.open(request.args["run"]).state()
        except InvalidWrite as exc:
            abort(404, description=str(exc))
    recorded = None
    if target.recorded is not None and target.recorded_cut:
        try:
            cut = cuts_for(target, [])[0]
            recorded = audit_candidate(plan_for(target, cut), target.recorded_summary or "")
        except InvalidWrite:
            recorded = None
    offered = offered_models()
    return render_template(
        "lab.html", rel=rel, tree=session.tree, target=target, file=file, choices=cut_choices(target),
        offered=offered, configured=model_config().model, prompts=prompt_names(), built_in=BUILT_IN,
        keep=default_keep(target), turns=DEFAULT_TURNS, max_turns=MAX_TURNS, concurrency=DEFAULT_CONCURRENCY,
        max_concurrency=MAX_CONCURRENCY, recorded=recorded, audited=AUDITED, extractive=EXTRACTIVE,
        replies=recorded_replies(target), state=state, results=results(state, file, target.at, rel) if state else None,
        runs=runs_of(file, target.at),
    )


# -- a run ----------------------------------------------------------------------------------------------


def _numbers(name: str, kind) -> list:
    out = []
    for part in request.form.get(name, "").replace(",", " ").split():
        try:
            out.append(kind(part.replace("_", "")))
        except ValueError:
            raise InvalidWrite(f"{name.replace('_', ' ')}: {part!r} is not a number") from None
    return out


def _one(name: str, kind):
    got = _numbers(name, kind)
    return got[0] if got else None


def settings_of_form() -> LabSettings:
    """The lab the form asks for; 403 for a model the server does not offer (owner.py)."""
    form = request.form
    models = form.getlist("model")
    for model in [*models, form.get("test_model", ""), form.get("judge_model", "")]:
        if model and model != EXTRACTIVE:
            refusal = refusal_for_model(model)
            if refusal:
                abort(403, description=refusal)
    try:
        turns = _one("turns", int)
        concurrency = _one("concurrency", int) or DEFAULT_CONCURRENCY
        return LabSettings(
            models=models, prompts=form.getlist("prompt"), keeps=_numbers("keep", int), moved=form.get("cut") or None,
            turns=DEFAULT_TURNS if turns is None else turns, leaf=form.get("leaf") or None,
            test_model=form.get("test_model") or None, judge_model=form.get("judge_model") or None,
            max_usd=_one("max_usd", float), max_tokens=_one("max_tokens", int), concurrency=concurrency)
    except InvalidWrite as exc:
        abort(400, description=str(exc))


@bp.post("/s/<path:rel>/-/lab")
@keeps_app_data
def run_lab(rel: str):
    """Run the lab the form asks for at `at`: streamed as server-sent events, or waited for and
    its page opened (without JavaScript)."""
    session = store().session(rel)
    settings = settings_of_form()
    target = _target(session, request.form.get("at"), settings.leaf, settings.turns)
    file = session_file(session)
    try:  # everything that can be refused is refused before a run exists
        candidate_specs(settings.models, settings.prompts, cuts_for(target, settings.keeps, settings.moved))
        unknown = [p for p in settings.prompts if p not in prompt_names()]
        if unknown:
            raise InvalidWrite(f"no summary prompt named {unknown[0]!r}")
        name = new_run_name()
        head = {"settings": settings.as_dict(), "targets": [[file, target.at]], "query": None, "by": "web"}
        run = RunFile.create(name, head)
        cancel = Cancel()
        lab = Lab(run, settings, model_config(), cancel=cancel)
    except (InvalidWrite, ModelError) as exc:
        abort(400, description=str(exc))
    page = url_for("lab.lab_page", rel=rel, at=target.at, run=name)
    if not wants_stream():
        lab.run([(session, file, target.at)])
        return redirect(page, code=303)

    def work(send) -> None:
        lab.tell_to(send)
        lab.run([(session, file, target.at)])

    def shape(event: str, data: dict) -> tuple[str, dict]:
        if event in ("candidate", "test", "judgment"):
            cid = data.get("id") if event == "candidate" else data.get("candidate")
            state = run.state()
            card = next((c for c in results(state, file, target.at, rel)["cards"] if c["id"] == cid), None)
            if card is not None:
                return "card", {"id": cid, "event": event,
                                "html": render_template("partials/_lab_card.html", card=card, rel=rel, run=name,
                                                        at=target.at, audited=AUDITED)}
        if event == "end":
            state = run.state()
            return "end", {**data, "page": page,
                           "html": render_template("partials/_lab_results.html", results=results(state, file, target.at, rel),
                                                   rel=rel, run=name, at=target.at, audited=AUDITED,
                                                   refusal=session.read_only_reason)}
        return event, data

    first = [("run", {"run": name, "page": page})]
    return event_stream(work, cancel, first=first, shape=shape)


def results(state: RunState, file: str, at: str, rel: str) -> dict:
    """A run's cards and ranked table for the lab at `at` (what its page and its end draw)."""
    cands, tests, judged = state.of_target(file, at)
    target = state.targets.get((file, at)) or {}
    recorded = target.get("summary")
    rows = table_rows(cands, tests, judged)
    rank = {r["id"]: r for r in rows}
    replies = target.get("recorded_replies") or []
    cards = []
    order = {c["id"]: i for i, c in enumerate(target.get("candidates") or [])}
    for c in sorted(cands, key=lambda c: order.get(c.get("id"), 1 << 30)):
        cid = c["id"]
        summary = c.get("summary") or ""
        diff = None
        if recorded and summary and c.get("model") != RECORDED and not c.get("error"):
            diff = diff_html(summary_diff(recorded, summary))
        test = tests.get(cid)
        cards.append({
            "id": cid, "row": rank.get(cid, {}), "candidate": c, "kept": Kept.from_dict(c.get("kept") or {}),
            "diff": diff, "test": test, "judgment": judged.get(cid), "replies": replies,
            "others": [o["id"] for o in cands if o["id"] != cid and not o.get("error")],
            "names": {o["id"]: o.get("name") for o in cands},
        })
    reference = tests.get("uncompacted")
    return {"state": state, "target": target, "rows": rows, "cards": cards, "reference": reference,
            "replies": replies, "end": state.ends[-1] if state.ends else None}


@bp.get("/s/<path:rel>/lab/diff")
def lab_diff(rel: str):
    """The word diff between two of a run's summaries (`recorded` is the session's own)."""
    session = store().session(rel)
    file = session_file(session)
    try:
        state = RunFile.open(request.args.get("run", "")).state()
    except InvalidWrite as exc:
        abort(404, description=str(exc))
    at = request.args.get("at", "")
    texts = {c["id"]: c.get("summary") or "" for c in state.of_target(file, at)[0] if not c.get("error")}
    texts[RECORDED] = (state.targets.get((file, at)) or {}).get("summary") or ""
    a, b = request.args.get("a", RECORDED), request.args.get("b", "")
    if a not in texts or b not in texts:
        abort(404, description="no such summary in this run")
    names = {c["id"]: c.get("name") for c in state.of_target(file, at)[0]} | {RECORDED: "the recorded summary"}
    return render_template("partials/_lab_diff.html", diff=diff_html(summary_diff(texts[a], texts[b])),
                           a=names.get(a, a), b=names.get(b, b))


@bp.post("/s/<path:rel>/-/lab/keep")
@writes_or_continues
def keep(rel: str):
    """Write a candidate as a compaction beside the recorded one (a new file continues one the
    app may not write), then open it."""
    session = store().session(rel)
    try:
        run = RunFile.open(request.form.get("run", ""))
        kept = keep_candidate(session, run, session_file(session), request.form.get("at", ""),
                              request.form.get("candidate", ""))
    except InvalidWrite as exc:
        abort(409, description=str(exc))
    target_rel = store().rel(kept.path) if kept.continued and kept.path else rel
    return redirect(url_for("sessions.session_page", rel=target_rel, node=kept.entry["id"]), code=303)


@bp.post("/s/<path:rel>/-/lab/prompt")
@keeps_app_data
def save(rel: str):
    """Save a summary prompt by name; answers with the prompts' choices (htmx) or the page."""
    try:
        name = save_prompt(request.form.get("name", ""), request.form.get("text", ""))
    except InvalidWrite as exc:
        abort(400, description=str(exc))
    if request.headers.get("HX-Request"):
        return render_template("partials/_lab_prompts.html", prompts=prompt_names(), built_in=BUILT_IN, checked={name},
                               saved=load_prompts())
    return redirect(url_for("lab.lab_page", rel=rel, at=request.form.get("at") or None), code=303)

