"""The commands that write into a session without a conversation with a model: `new`, `fork`,
`label`, `append` and `compact` (a model writes the summary of `fork --summarize` and `compact`
only when one is named)."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from ..core.compaction import DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS, plan_compaction
from ..core.context import settings_on
from ..core.continuation import continue_in_new_session
from ..core.errors import SessionError
from ..core.session import Session, create_session
from ..core.summary_writes import write_compaction
from ..model.limits import window_of
from ..model.llm import ModelConfig
from ..model.summarize import fork_with_summary, summarize_compaction, written_details
from ..model.table import context_window
from .args import add_model_options, whole_number
from .inputs import MAX_STDIN_BYTES, leaf_named, read_capped, read_summary_file
from .output import end_line, print_json, streaming


def cmd_new(args) -> int:
    print(create_session(args.root, args.cwd))
    return 0


def cmd_fork(args) -> int:
    session = Session.open(args.file)
    target = leaf_named(session, args.from_id)
    if args.new_file:
        return _fork_new_file(args, session, target)
    session.check_writable()  # before a summary is paid for
    if args.summarize:
        config = ModelConfig.from_env(args.model, args.api_base)
        show, state = streaming(sys.stderr)
        result = fork_with_summary(session, target, args.position, config, args.instructions, show)
        end_line(state, sys.stderr)
    else:
        result = session.fork(target, args.position)
    if args.json:
        print_json({"leafId": result.leaf_id, "entryId": result.entry["id"], "editText": result.edit_text})
    else:
        print(result.leaf_id if result.leaf_id is not None else "(empty conversation)")
    return 0


def _fork_new_file(args, session: Session, target: str | None) -> int:
    """SPEC §5c: copy the path to the fork point into a new v3 file; the source is only read."""
    if args.summarize:
        raise SessionError("--new-file copies the path as it is: it writes no branch summary")
    leaf = target if args.position == "at" or target is None else session.tree.parent[target]
    path = continue_in_new_session(session, leaf)
    if args.json:
        print_json({"path": str(path), "leafId": leaf})
    else:
        print(path)
    return 0


def cmd_label(args) -> int:
    if args.clear == (args.text is not None):
        raise SessionError("give either a label TEXT or --clear")
    session = Session.open(args.file)
    entry = session.set_label(leaf_named(session, args.id), None if args.clear else args.text)
    print(entry["id"])
    return 0


def cmd_append(args) -> int:
    """One JSON object on stdin, or several as JSON Lines: all are validated, then written in one
    append (each continuing from the one before), or none is."""
    data = read_capped(sys.stdin.buffer, MAX_STDIN_BYTES, "stdin")
    try:
        objs = [orjson.loads(data)] if data.strip() else []
    except orjson.JSONDecodeError:
        try:
            objs = [orjson.loads(line) for line in data.splitlines() if line.strip()]
        except orjson.JSONDecodeError as exc:
            raise SessionError(f"stdin is not a JSON object or JSON Lines: {exc}") from None
    if not objs:
        raise SessionError("nothing on stdin: give one entry as a JSON object")
    session = Session.open_for_append(args.file)  # reads the end of the file, not all of it
    for entry in session.append_entries(objs):
        sys.stdout.write(entry["id"] + "\n")
    return 0


def cmd_compact(args) -> int:
    session = Session.open(args.file)
    leaf = leaf_named(session, args.leaf)
    settings = settings_on(session.tree, session.tree.path(leaf))
    config = None if args.summary_file else ModelConfig.from_env(args.model, args.api_base, args.context_window)
    window = context_window(settings.provider, settings.model_id, args.context_window)
    if window is None and config is not None and config.configured:  # a local model: what its server says
        window = window_of(config)
    plan = plan_compaction(session.tree, leaf, args.keep_recent_tokens, args.reserve_tokens, window)
    if args.plan:
        if args.json:
            print_json(plan.as_dict())
        else:
            _print_plan(plan.as_dict())
        return 0
    session.check_writable()  # before a summary is paid for
    if args.summary_file:
        summary = read_summary_file(args.summary_file)
        details = {**written_details(summary, None, None), "source": "file"}  # a person wrote it
    else:
        show, state = streaming(sys.stderr)
        summary, details = summarize_compaction(config, plan, args.instructions, on_delta=show)
        end_line(state, sys.stderr)
    entry = write_compaction(session, plan, summary, details, must_shrink=not args.summary_file)
    print(entry["id"])
    return 0


def _print_plan(d: dict) -> None:
    if not d["canCompact"]:
        print(d["reason"])
        return
    print(f"leaf               {d['leafId']}")
    print(f"firstKeptEntryId   {d['firstKeptEntryId']}")
    print(f"summarize          {len(d['summarizeEntryIds'])} entries"
          + (f" + {len(d['turnPrefixEntryIds'])} of a split turn" if d["splitTurn"] else ""))
    print(f"tokensBefore       {d['tokensBefore']}")
    print(f"tokens kept        {d['tokensKept']}  (after, estimated: {d['tokensAfterEstimate']})")
    if d["contextWindow"]:
        print(f"threshold reached  {'yes' if d['shouldCompact'] else 'no'} "
              f"(window {d['contextWindow']}, reserve {d['reserveTokens']})")
    print(f"previous summary   {d['previousCompactionId'] or '-'}")
    print(f"files read         {', '.join(d['readFiles']) or '-'}")
    print(f"files modified     {', '.join(d['modifiedFiles']) or '-'}")


def register(command) -> None:
    sp = command("fork", cmd_fork)
    sp.add_argument("--from", dest="from_id", metavar="ID", required=True)
    sp.add_argument("--position", choices=("at", "before"), default="at")
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--summarize", action="store_true",
                    help="write a summary of the branch being left (a branch_summary) instead of a leaf entry")
    sp.add_argument("--new-file", action="store_true",
                    help="leave FILE as it is: copy the path to the fork point into a new pi v3 session "
                         "beside it (its header names FILE as parentSession) and print its path")
    add_model_options(sp)

    sp = command("label", cmd_label)
    sp.add_argument("id", metavar="ID")
    sp.add_argument("text", metavar="TEXT", nargs="?")
    sp.add_argument("--clear", action="store_true")

    command("append", cmd_append)

    sp = command("new", cmd_new, file=False)
    sp.add_argument("root", metavar="ROOT", type=Path)
    sp.add_argument("--cwd", required=True)

    sp = command("compact", cmd_compact)
    sp.add_argument("--leaf", metavar="ID")
    sp.add_argument("--keep-recent-tokens", type=whole_number(0),
                    help=f"default {DEFAULT_KEEP_RECENT_TOKENS}, at most half of what the window leaves after the reserve")
    sp.add_argument("--reserve-tokens", type=whole_number(0),
                    help=f"default {DEFAULT_RESERVE_TOKENS}, at most a quarter of the window")
    sp.add_argument("--context-window", type=whole_number(1), help="default: the session model's window")
    sp.add_argument("--plan", action="store_true", help="print the plan, write nothing")
    sp.add_argument("--json", action="store_true")
    source = sp.add_mutually_exclusive_group()
    source.add_argument("--summary-file", metavar="F", help="write a compaction with this summary")
    add_model_options(sp, source)
