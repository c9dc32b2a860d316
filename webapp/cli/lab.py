"""`session-tree lab`: the compaction lab from a shell, at one compaction or node of a session
(FILE --at ID), or over the compactions a query of the corpus selects (--query SQL), within a
budget, resumable by name (--run NAME: a run that exists goes on where it stopped, with the
settings it was started with). Progress goes to stderr, one line per result; the ranked table
(or, with --json, the report) to stdout. The results are corpus tables (`lab_candidates`,
`lab_tests`) from the next build of the index, which the command starts itself when no server
holds the index.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import orjson

from ..core.entries import short_id
from ..core.errors import SessionError
from ..core.lab import DEFAULT_TURNS, EXTRACTIVE, MAX_TURNS
from ..core.lab_keep import report
from ..core.lab_store import RunFile, new_run_name, run_path
from ..core.session import Session
from ..corpus.db import Index, IndexUnavailable
from ..corpus.sql import QueryError, default_db_path, run_query
from ..model.cancel import Cancel
from ..model.lab import DEFAULT_CONCURRENCY, MAX_CONCURRENCY, Lab, LabSettings
from ..model.lab_prompts import BUILT_IN, save_prompt
from ..model.llm import ModelConfig
from .args import add_api_base, positive, seconds, whole_number
from .corpus import from_holder, written
from .output import path_text

DEFAULT_QUERY_LIMIT = 20
QUERY_HELP = ("a SELECT on the corpus tables whose rows name the compactions to work on, by their `file` and "
              "`entry_id` columns, e.g. \"SELECT file, entry_id FROM summaries WHERE kind = 'compaction' "
              "ORDER BY score LIMIT 20\"")


def _settings(args, default_model: str | None) -> LabSettings:
    models = args.model or ([default_model] if default_model else [EXTRACTIVE])
    return LabSettings(models=models, prompts=args.prompt or list(BUILT_IN), keeps=args.keep or [],
                       moved=args.cut, turns=args.turns, leaf=args.leaf, test_model=args.test_model,
                       judge_model=args.judge_model, max_usd=args.max_usd, max_tokens=args.max_tokens,
                       concurrency=args.concurrency)


def _targets_of_query(args) -> list[tuple[str, str]]:
    """(file, entry id) of each row the query gives, from the index brought up to date (or from
    the server that holds it)."""

    try:
        index = Index(args.db)
    except IndexUnavailable as held:
        output = from_holder(held, lambda client, holder: client.ask(holder, args.query, "json", args.limit,
                                                                     args.timeout))[0]
        rows = orjson.loads(output)
    else:
        with written(index):
            index.build([args.root] if args.root else [])
            try:
                result = run_query(index.cursor(), args.query, limit=args.limit, seconds=args.timeout)
            except QueryError as exc:
                raise SessionError(str(exc)) from None
            rows = [dict(zip(result.columns, r)) for r in result.rows]
    targets = []
    for row in rows:
        file, at = row.get("file"), row.get("entry_id", row.get("at"))
        if not isinstance(file, str) or not isinstance(at, str):
            raise SessionError("the query's rows must have `file` and `entry_id` columns (the compaction's file "
                               f"and id), not {', '.join(row) or 'none'}")
        targets.append((file, at))
    return list(dict.fromkeys(targets))


def _sessions(targets: list[tuple[str, str]], say):
    """(session, file, at) of each target, each file opened when its turn comes; one that cannot
    be read is said and skipped."""
    opened: dict[str, Session] = {}
    for file, at in targets:
        if file not in opened:
            opened.clear()  # (one session held at a time here: the lab holds those it works on)
            try:
                opened[file] = Session.open(Path(file))
            except (SessionError, OSError) as exc:
                say(f"skipped {file}: {exc}")
                continue
        yield opened[file], file, at


def _refresh_tables(db) -> str:
    """The lab tables of the index brought up to date, when there is an index (none is made)."""

    if not Path(db or default_db_path()).is_file():
        return "no corpus index here: `session-tree index` puts its results in the tables lab_candidates and lab_tests"
    try:
        index = Index(db)
    except IndexUnavailable:
        return "the server that holds the index reads them at its next refresh"
    try:
        index.refresh_lab()
    finally:
        index.close()
    return f"in the corpus tables lab_candidates and lab_tests of {index.path}"


def cmd_lab(args) -> int:
    if args.save_prompt:
        name, _, file = args.save_prompt.partition("=")
        if not file:
            raise SessionError("--save-prompt NAME=FILE: the prompt's name and the file that holds its text")
        saved = save_prompt(name, Path(file).read_text(encoding="utf-8"))
        print(f"session-tree: saved the prompt {saved!r}", file=sys.stderr)
        if args.file is None and args.query is None and args.run is None:
            return 0
    if args.file is not None and args.query is not None:
        raise SessionError("give either FILE --at ID, or --query SQL, not both")
    if args.run and run_path(args.run).is_file() and args.file is None and args.query is None and not args.resume:
        return _print_report(args, RunFile.open(args.run))
    base = ModelConfig.from_env(None, args.api_base)
    name = args.run or new_run_name()
    resumed = run_path(name).is_file()
    if resumed:
        run = RunFile.open(name)
        state = run.state()
        settings = LabSettings.from_dict(state.settings)
        targets = [tuple(t) for t in state.head.get("targets") or []]
        say = _sayer(args)
        say(f"resuming run {name}: {len(state.candidates)} candidates, {len(state.tests)} tests done; "
            f"{state.spent_tokens:,} tokens, ${state.spent_cost:.4f} spent")
    else:
        settings = _settings(args, base.model)
        if args.query is not None:
            targets = _targets_of_query(args)
            if not targets:
                raise SessionError("the query selected no compaction: nothing to run")
        elif args.file is not None:
            if not args.at:
                raise SessionError("name the compaction or node the lab works at: --at ID")
            session = Session.open(args.file)
            targets = [(str(args.file.resolve()), session.tree.find(args.at).id)]
        else:
            raise SessionError("give FILE --at ID, or --query SQL (or --run NAME of a run to show or resume)")
        head = {"settings": settings.as_dict(), "targets": [list(t) for t in targets], "query": args.query, "by": "cli"}
        run = RunFile.create(name, head)
        say = _sayer(args)
        say(f"run {name}: {len(targets)} target{'s' if len(targets) != 1 else ''}, kept in {path_text(run.path)}")
    cancel = Cancel()
    lab = Lab(run, settings, base, _teller(args, say), cancel)
    try:
        reason = lab.run(_sessions(targets, say))
    except KeyboardInterrupt:
        cancel.set()
        say(f"interrupted: what is done is kept; go on with: session-tree lab --run {name} --resume")
        return 130
    say(f"{reason}: {lab.ledger.calls} model calls, {lab.ledger.spent_tokens:,} tokens, ${lab.ledger.spent_cost:.4f}")
    say(_refresh_tables(args.db))
    code = _print_report(args, run)
    return code if reason == "finished" else 1


def _sayer(args):
    lock = threading.Lock()

    def say(line: str) -> None:
        with lock:
            print(f"session-tree: {line}", file=sys.stderr, flush=True)

    return say


def _teller(args, say):
    def told(event: str, data: dict) -> None:
        where = f"{Path(data.get('file', '')).name}@{short_id(str(data.get('at', '')))}"
        if event == "target":
            say(f"{where}: {data.get('error') or data.get('describe')}")
        elif event == "candidate":
            if data.get("error"):
                say(f"{where} {data.get('name')}: failed: {data['error']}")
            else:
                kept = data.get("kept") or {}
                say(f"{where} {data.get('name')}: {data.get('tokens_after'):,} tokens after, audit "
                    f"{kept.get('score')}%")
        elif event == "test":
            what = data.get("error") or f"{len(data.get('turns') or [])} turns, {data.get('errors')} tool errors" + (
                f", stopped: {data['stopped']}" if data.get("stopped") else "")
            say(f"{where} test of {data.get('candidate')}: {what}")
        elif event == "judgment":
            say(f"{where} judge on {data.get('candidate')}: {data.get('error') or data.get('verdict')} "
                f"(against the {data.get('reference')} continuation)")
        elif event == "failed":
            say(f"a job failed: {data.get('error')}")

    return told


def _print_report(args, run: RunFile) -> int:
    state = run.state()
    got = report(state)
    if args.report:
        # The web app renders the report: 0.16 s of CPU to import (`time.process_time` around
        # the import, modules compiled), paid only with --report.
        from ..web.app import create_app
        from ..web.lab_report import write_report

        written_to = write_report(got, args.report, create_app(args.report.resolve().parent), redact=args.redact)
        print(f"session-tree: wrote {path_text(written_to)} ({written_to.stat().st_size:,} bytes)", file=sys.stderr)
    if args.json:
        print(orjson.dumps(got, option=orjson.OPT_INDENT_2).decode())
        return 0
    for target in got["targets"]:
        print(f"{target['file']} @ {target['at']}: {target.get('error') or target.get('describe')}")
        if not target["table"]:
            continue
        print(f"  {'#':>2}  {'candidate':<44} {'after':>8} {'audit':>5} {'lost':>4} {'judge':<10} {'errors':>6}")
        for row in target["table"]:
            judge = row.get("judge") or ("-" if not row.get("judge_error") else "failed")
            score = "-" if row.get("score") is None else f"{row['score']}%"
            after = "-" if row.get("tokens_after") is None else f"{row['tokens_after']:,}"
            errors = "-" if row.get("test_errors") is None else str(row["test_errors"])
            name = (row.get("name") or row["id"])[:44]
            print(f"  {row['rank']:>2}  {name:<44} {after:>8} {score:>5} {row.get('missing') or 0:>4} {judge:<10} "
                  f"{errors:>6}" + (f"  failed: {row['error'][:80]}" if row.get("error") else ""))
    return 0


def register(command) -> None:
    sp = command("lab", cmd_lab, file=False)
    sp.add_argument("file", metavar="FILE", type=Path, nargs="?", help="a session .jsonl file (with --at)")
    sp.add_argument("--at", metavar="ID", help="the compaction, or the node of a branch, the lab works at")
    sp.add_argument("--leaf", metavar="ID", help="the branch whose next turns test (default: the active one through --at)")
    sp.add_argument("--query", metavar="SQL", help=QUERY_HELP)
    sp.add_argument("--db", metavar="PATH", type=Path, help="the index --query asks (default: the cache folder's)")
    sp.add_argument("--root", metavar="DIR", type=Path, help="bring the index up to date with this folder first")
    sp.add_argument("--limit", type=whole_number(1, 1000), default=DEFAULT_QUERY_LIMIT,
                    help=f"at most this many targets from --query (default {DEFAULT_QUERY_LIMIT})")
    sp.add_argument("--timeout", type=seconds, default=30.0, help="seconds before --query is stopped (default 30)")
    sp.add_argument("--model", metavar="M", action="append",
                    help=f"a summarizer (repeatable): a litellm model string, or {EXTRACTIVE} (no model); "
                         "default $SESSION_TREE_MODEL")
    sp.add_argument("--prompt", metavar="NAME", action="append",
                    help="a summary prompt (repeatable): pi, ours, or one saved by name (default: pi and ours)")
    sp.add_argument("--save-prompt", metavar="NAME=FILE", help="save the text of FILE as the prompt NAME first")
    sp.add_argument("--keep", metavar="TOKENS", type=positive(int), action="append",
                    help="a keep-recent budget (repeatable): SPEC §6's cut for it is one more cut to try")
    sp.add_argument("--cut", metavar="ID", help="move the cut: keep from this entry (a cut point of the context)")
    sp.add_argument("--turns", type=whole_number(0, MAX_TURNS), default=DEFAULT_TURNS,
                    help=f"the user turns after the cut that test each candidate (default {DEFAULT_TURNS}; 0: no test)")
    sp.add_argument("--test-model", metavar="M", help="the model that continues (default: the first --model)")
    sp.add_argument("--judge-model", metavar="M", help="the blind judge (default: the test model)")
    sp.add_argument("--max-usd", metavar="USD", type=positive(float), help="never spend more than this")
    sp.add_argument("--max-tokens", metavar="N", type=positive(int), help="never spend more tokens than this")
    sp.add_argument("--concurrency", type=whole_number(1, MAX_CONCURRENCY), default=DEFAULT_CONCURRENCY,
                    help=f"model calls under way at once (default {DEFAULT_CONCURRENCY})")
    sp.add_argument("--run", metavar="NAME", help="the run's name: an existing one is shown, or resumed with --resume")
    sp.add_argument("--resume", action="store_true", help="go on with the run --run names where it stopped")
    sp.add_argument("--report", metavar="FILE.html", type=Path, help="also write the report as one HTML file")
    sp.add_argument("--redact", action="store_true", help="with --report: secrets replaced by tags (as export --redact)")
    add_api_base(sp)
    sp.add_argument("--json", action="store_true", help="print the report as JSON")
