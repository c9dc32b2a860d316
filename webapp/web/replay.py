"""Replay a branch on another model in the web app: the form (branch, start node, model, tools,
budgets), the replay's progress streamed as it works, its cancel, and what a replayed branch
says of itself in the node panel and the Branches tab.

`webapp.model.replay` does the work; this module reads the form, runs the replay in a thread and
turns its events into server-sent events (static/replay.js draws them, through sse.js as ask's
columns are). Without JavaScript the form still works: the replay is waited for and its branch
opens.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict

from flask import Blueprint, abort, current_app, g, redirect, render_template, request, url_for

from ..core.branch_names import branch_names
from ..core.errors import InvalidWrite, SessionError, UnknownEntry
from ..core.replay_plan import (
    DEFAULT_MAX_COPY_MB, DEFAULT_MAX_STEPS, ReplayInfo, default_start, replay_info, start_choices,
)
from ..core.session import Session
from ..core.verdicts import persons, verdicts
from ..model.errors import ModelError
from ..model.isolation import isolation
from ..model.replay import Budget, Replay, prepare, run
from .current import store, wants_stream
from .guard import computes_only
from .owner import bash_allowed, check_tools, chosen_config, model_config, offered_models, sandbox_allowed
from .streaming import event_stream

bp = Blueprint("replay", __name__)

KEPT_RUNS = 16  # replays a cancel may still reach


def _runs() -> OrderedDict[str, Replay]:
    return current_app.extensions.setdefault("replay_runs", OrderedDict())


def _leaf_of(session: Session, node: str | None) -> str | None:
    """The branch a replay from `node` replays unless told: the active one when it passes
    through `node`, else the first branch that does."""
    tree = session.tree
    leaves = tree.leaves()
    if node is None:
        return tree.conversation_leaf(tree.active_leaf) or (leaves[0] if leaves else None)
    active = tree.conversation_leaf(tree.active_leaf)
    through = [x for x in leaves if tree.is_ancestor(node, x)]
    return active if active in through else (through[0] if through else node)


def _picked(session: Session, leaf: str | None, start: str | None) -> tuple[str, str | None]:
    """(leaf, start) of the form: as asked where they fit, else the defaults; 404 for an id the
    session lacks."""
    tree = session.tree
    try:
        leaf = tree.find(leaf).id if leaf else _leaf_of(session, tree.find(start).id if start else None)
        start = tree.find(start).id if start else None
    except SessionError as exc:
        abort(404, description=str(exc))
    if leaf is None:
        abort(404, description="this session has no branch to replay")
    if start is None or start not in {e.id for e in start_choices(tree, leaf)}:
        start = default_start(tree, leaf)
    return leaf, start


@bp.get("/s/<path:rel>/replay")
def replay_page(rel: str):
    session = store().session(rel)
    leaf, start = _picked(session, request.args.get("leaf"), request.args.get("from"))
    tree = session.tree
    words = {t: v.verdict for t, v in persons(verdicts(session)).items()}
    return render_template(
        "replay.html", rel=rel, tree=tree, leaf=leaf, start=start, leaves=tree.leaves(),
        names=branch_names(tree, [*tree.leaves(), leaf], words, 80),
        starts=start_choices(tree, leaf), configured=model_config().model, offered=offered_models(),
        info=replay_info(tree, leaf), max_steps=DEFAULT_MAX_STEPS, max_copy_mb=DEFAULT_MAX_COPY_MB,
        problem=session.read_only_reason, sandbox=sandbox_allowed(), bash=bash_allowed(),
        bash_flag=bool(current_app.config.get("ALLOW_BASH")),
        isolation=isolation() if sandbox_allowed() else None,
    )


def _number(name: str, kind, default=None):
    raw = request.form.get(name, "").strip()
    if not raw:
        return default
    try:
        return kind(raw)
    except ValueError:
        raise InvalidWrite(f"{name.replace('_', ' ')}: {raw!r} is not a number") from None


def _prepared(session: Session, rel: str) -> Replay:
    """The replay the form asks for, checked (400 with the reason, 403 for what the server was
    not started to allow, nothing written otherwise)."""
    tools, allow_bash = request.form.get("tools", "recorded"), bool(request.form.get("allow_bash"))
    check_tools(tools, allow_bash)
    config = chosen_config(request.form.get("model"))
    try:
        if not config.model:
            raise InvalidWrite("name the model to replay on: start the server with --model M")
        budget = Budget(_number("max_steps", int, DEFAULT_MAX_STEPS), _number("max_tokens", int),
                        _number("max_cost", float))
        return prepare(session, config, request.form.get("leaf", ""), request.form.get("from", ""),
                       tools, allow_bash, budget, _number("max_copy_mb", float, DEFAULT_MAX_COPY_MB))
    except UnknownEntry as exc:
        abort(404, description=str(exc))
    except (SessionError, ModelError) as exc:
        abort(400, description=str(exc))


@bp.post("/s/<path:rel>/-/replay")
def start_replay(rel: str):
    session = store().session(rel)
    job = _prepared(session, rel)
    run_id = uuid.uuid4().hex
    runs = _runs()
    runs[run_id] = job
    while len(runs) > KEPT_RUNS:
        runs.popitem(last=False)
    page = url_for("sessions.session_page", rel=rel)
    compare = url_for("compare.compare_page", rel=rel)
    if not wants_stream():
        try:
            run(job)
        except ModelError as exc:
            abort(502, description=f"{exc} Nothing was written.")
        return redirect(url_for("sessions.session_page", rel=rel, node=job.leaf, tab="branches"), code=303)
    head = {"run": run_id, "leaf": job.plan.leaf, "start": job.plan.start, "model": job.config.model,
            "tools": job.mode, "prompts": len(job.plan.prompts)}
    return _stream(job, head, page, compare)


def _stream(job: Replay, head: dict, page: str, compare: str):
    """The replay's events as its thread makes them; "end" names the new branch and its links.
    A browser that leaves stops the replay as its Cancel does."""
    def work(send) -> None:
        try:
            run(job, send)
        except ModelError as exc:  # the first call failed: nothing was written
            send("failed", {"error": job.error or f"{exc} Nothing was written."})

    def shape(event: str, data: dict):
        if event == "end":
            leaf = data.get("leaf")
            data = {**data, "open": f"{page}?node={leaf}&tab=branches" if leaf else None,
                    "compare": f"{compare}?ids={job.plan.leaf},{leaf}" if leaf else None}
        return event, data

    return event_stream(work, job.cancel, first=[("start", head)], shape=shape,
                        failed=lambda exc: ("failed", {"error": f"{type(exc).__name__}: {exc}"}))


@bp.post("/s/<path:rel>/-/replay/cancel")
@computes_only
def cancel(rel: str):
    """Stop a running replay: what it wrote stands, and a stop entry says it was cancelled."""
    job = _runs().get(request.form.get("run", ""))
    if job is None:
        abort(404, description="no such replay running")
    job.cancel.set()
    return ("", 204)


@bp.app_template_global()
def replay_of(rel: str, entry_id: str) -> ReplayInfo | None:
    """What the replay that wrote the branch through `entry_id` replayed (the Branches tab asks
    of every row: the session's tree is looked up once per request, not once per row)."""
    trees = g.setdefault("replay_trees", {})
    if rel not in trees:
        trees[rel] = store().session(rel).tree
    try:
        return replay_info(trees[rel], entry_id)
    except SessionError:
        return None
