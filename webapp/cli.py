"""The `session-tree` command: every core operation from a shell, plus `serve` for the web app.

Its command names and JSON keys are a contract that scripts rely on. Errors are one line on
stderr and a non-zero exit (2), never a traceback; `validate` exits 1 when it finds problems.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from .core.catalog import summarize_session
from .core.compaction import (
    DEFAULT_KEEP_RECENT_TOKENS,
    DEFAULT_RESERVE_TOKENS,
    plan_compaction,
    write_compaction,
)
from .core.context import build_context, settings_on
from .core.continuation import continue_in_new_session
from .core.errors import SessionError
from .core.session import Session, create_session
from .core.storage import discover
from .core.texttree import render_text_tree
from .core.tokens import context_tokens
from .llm import ModelConfig, ModelError, continue_branch
from .models import context_window
from .summarize import fork_with_summary, summarize_compaction


def _print_json(obj) -> None:
    sys.stdout.write(orjson.dumps(obj, option=orjson.OPT_INDENT_2).decode() + "\n")


def _open(args) -> Session:
    return Session.open(args.file)


def _leaf(session: Session, leaf: str | None) -> str | None:
    """The entry an ID argument names (a unique short id is enough), or the active leaf."""
    tree = session.tree
    return tree.active_leaf if leaf is None else tree.find(leaf).id


# -- reading commands ------------------------------------------------------------------------------


def cmd_ls(args) -> int:
    rows = []
    for path in discover(args.root):
        try:
            rows.append(summarize_session(path).as_dict())
        except (OSError, SessionError) as exc:
            rows.append({"path": str(path), "error": str(exc)})
    if args.json:
        _print_json(rows)
        return 0
    for r in rows:
        if "error" in r:
            print(f"{r['path']}\n    error: {r['error']}")
            continue
        title = r["name"] or (r["firstMessage"] or "")[:60] or "(no messages)"
        print(f"{r['path']}\n    {title}")
        print(
            f"    id {r['id']}  cwd {r['cwd']}  entries {r['entries']}  leaves {r['leaves']}  "
            f"compactions {r['compactions']}  bad lines {r['badLines']}  modified {r['modified']}"
        )
    return 0


def cmd_show(args) -> int:
    session = _open(args)
    tree = session.tree
    info = {
        "path": str(args.file),
        "header": tree.header,
        "version": session.log.version,
        "name": tree.name,
        "counts": tree.counts_by_type(),
        "roots": tree.roots,
        "orphans": tree.orphans,
        "leaves": tree.leaves(),
        "activeLeaf": tree.active_leaf,
        "labels": tree.labels,
        "problems": [p.as_dict() for p in tree.all_problems()],
    }
    if args.json:
        info["entries"] = [
            {"id": e.id, "type": e.type, "parentId": tree.parent[e.id], "line": e.line} for e in tree.entries
        ]
        info["badLines"] = [{"line": b.line, "reason": b.reason} for b in tree.bad_lines]
        _print_json(info)
        return 0
    header = tree.header or {}
    version = f"format v{info['version']}" if info["version"] else "no session header"
    print(f"session   {header.get('id', '-')}  ({version})")
    print(f"name      {tree.name or '-'}")
    print(f"cwd       {header.get('cwd', '-')}")
    print(f"created   {header.get('timestamp', '-')}")
    print("entries   " + (", ".join(f"{k} {v}" for k, v in sorted(info["counts"].items())) or "none"))
    print(f"roots     {', '.join(tree.roots) or '-'}")
    print(f"orphans   {', '.join(tree.orphans) or '-'}")
    print(f"leaves    {', '.join(info['leaves']) or '-'}")
    print(f"active    {tree.active_leaf or '(empty conversation)'}")
    for target, label in tree.labels.items():
        print(f"label     {target}: {label}")
    problems = tree.all_problems()
    print(f"problems  {len(problems)}")
    for p in problems:
        print(f"  line {p.line or '-'}: {p.kind}: {p.message}")
    return 0


def cmd_tree(args) -> int:
    print(render_text_tree(_open(args).tree))
    return 0


def cmd_context(args) -> int:
    session = _open(args)
    leaf = _leaf(session, args.leaf)
    ctx = build_context(session.tree, leaf)
    tokens = context_tokens(ctx)
    if args.json:
        _print_json(
            {
                "sessionId": session.log.session_id,
                "leafId": leaf,
                "model": ctx.settings.model,
                "thinkingLevel": ctx.settings.thinking_level,
                "activeTools": ctx.settings.active_tools,
                "tokens": {"context": tokens.context, "estimated": tokens.estimated},
                "compactionId": ctx.compaction.id if ctx.compaction else None,
                "problems": ctx.problems,
                "messages": ctx.messages,
            }
        )
        return 0
    print(f"leaf {leaf}  model {ctx.settings.model_name or '-'}  "
          f"thinking {ctx.settings.thinking_level or '-'}  tokens {tokens.context} "
          f"({tokens.estimated} estimated)")
    for p in ctx.problems:
        print(f"! {p}")
    for m in ctx.messages:
        content = m.get("content")
        text = content if isinstance(content, str) else orjson.dumps(content).decode() if content else ""
        calls = ", ".join(c["function"]["name"] for c in m.get("tool_calls", ()))
        print(f"--- {m['role']} [{m['entryId']}]" + (f" → {calls}" if calls else ""))
        if text:
            print(text)
    return 0


def cmd_validate(args) -> int:
    problems = _open(args).tree.all_problems()
    for p in problems:
        print(f"{args.file}:{p.line or '-'}: {p.kind}: {p.message}")
    if not problems:
        print(f"{args.file}: no problems")
    return 1 if problems else 0


# -- writing commands ------------------------------------------------------------------------------


def cmd_new(args) -> int:
    print(create_session(args.root, args.cwd))
    return 0


def cmd_fork(args) -> int:
    session = _open(args)
    target = _leaf(session, args.from_id)
    if args.new_file:
        return _fork_new_file(args, session, target)
    session.check_writable()  # before a summary is paid for
    if args.summarize:
        config = ModelConfig.from_env(args.model, args.api_base)
        result = fork_with_summary(session, target, args.position, config, args.instructions)
    else:
        result = session.fork(target, args.position)
    if args.json:
        _print_json({"leafId": result.leaf_id, "entryId": result.entry["id"], "editText": result.edit_text})
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
        _print_json({"path": str(path), "leafId": leaf})
    else:
        print(path)
    return 0


def cmd_label(args) -> int:
    if args.clear == (args.text is not None):
        raise SessionError("give either a label TEXT or --clear")
    session = _open(args)
    entry = session.set_label(_leaf(session, args.id), None if args.clear else args.text)
    print(entry["id"])
    return 0


def cmd_append(args) -> int:
    """One JSON object on stdin, or several as JSON Lines: each is appended in turn."""
    data = sys.stdin.buffer.read()
    try:
        objs = [orjson.loads(data)] if data.strip() else []
    except orjson.JSONDecodeError:
        try:
            objs = [orjson.loads(line) for line in data.splitlines() if line.strip()]
        except orjson.JSONDecodeError as exc:
            raise SessionError(f"stdin is not a JSON object or JSON Lines: {exc}") from None
    if not objs:
        raise SessionError("nothing on stdin: give one entry as a JSON object")
    session = _open(args)
    for obj in objs:
        entry = session.append_entry(obj)
        sys.stdout.write(entry["id"] + "\n")
        sys.stdout.flush()
    return 0


def cmd_compact(args) -> int:
    session = _open(args)
    leaf = _leaf(session, args.leaf)
    settings = settings_on(session.tree, session.tree.path(leaf))
    window = context_window(settings.provider, settings.model_id, args.context_window)
    plan = plan_compaction(session.tree, leaf, args.keep_recent_tokens, args.reserve_tokens, window)
    if not args.plan:
        session.check_writable()  # before a summary is paid for
    if args.plan:
        if args.json:
            _print_json(plan.as_dict())
        else:
            _print_plan(plan.as_dict())
        return 0
    if args.summary_file:
        try:
            summary = Path(args.summary_file).read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:  # a ValueError: main() would let it out as a traceback
            raise SessionError(f"{args.summary_file}: not UTF-8 text (byte {exc.start})") from None
        details = {"summarizer": "provided"}
    else:
        config = ModelConfig.from_env(args.model, args.api_base)
        summary, details = summarize_compaction(config, plan, args.instructions)
    entry = write_compaction(session, plan, summary, details)
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


def cmd_continue(args) -> int:
    """Stream the reply's text to stdout as it arrives; tool calls are listed, not run."""
    config = ModelConfig.from_env(args.model, args.api_base)
    streamed = False

    def show(kind: str, text: str) -> None:
        nonlocal streamed
        if kind == "text":
            sys.stdout.write(text)
            sys.stdout.flush()
            streamed = True

    try:
        session = _open(args)
        result = continue_branch(session, config, args.message, _leaf(session, args.leaf) if args.leaf else None, on_delta=show)
    except ModelError:
        if streamed:  # end the partial reply's line; the error goes to stderr
            print()
        raise
    print()
    for block in result["assistantEntry"]["message"]["content"]:
        if block["type"] == "toolCall":
            print(f"→ {block['name']} {orjson.dumps(block['arguments']).decode()} (not run)")
    return 0


def cmd_serve(args) -> int:
    from .web.app import serve  # Flask only when serving

    return serve(args.root, host=args.host, port=args.port, open_browser=args.open,
                 model=args.model, api_base=args.api_base, allow_hosts=tuple(args.allow_host),
                 read_only=args.read_only)


# -- parser ----------------------------------------------------------------------------------------


def _model_options(sp, model_group=None) -> None:
    """--model / --api-base / --instructions of the commands that summarize."""
    (model_group or sp).add_argument(
        "--model", metavar="M",
        help="summarize with this litellm model (default: $SESSION_TREE_MODEL; none: extractive summary)",
    )
    sp.add_argument("--api-base", metavar="URL", help="an OpenAI-compatible server (default: $SESSION_TREE_API_BASE)")
    sp.add_argument("--instructions", metavar="TEXT", help="what the model summary should focus on")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="session-tree", description="Explore LLM agent sessions stored as trees.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name, func, help, file=True):
        sp = sub.add_parser(name, help=help, description=help)
        if file:
            sp.add_argument("file", metavar="FILE", type=Path, help="a session .jsonl file")
        sp.set_defaults(func=func)
        return sp

    sp = command("ls", cmd_ls, "list the sessions under a sessions root", file=False)
    sp.add_argument("root", metavar="ROOT", type=Path)
    sp.add_argument("--json", action="store_true")

    command("show", cmd_show, "header, counts, roots, leaves, labels and problems").add_argument(
        "--json", action="store_true"
    )
    command("tree", cmd_tree, "the tree as text")

    sp = command("context", cmd_context, "what the model sees at the active leaf or at --leaf")
    sp.add_argument("--leaf", metavar="ID")
    sp.add_argument("--json", action="store_true")

    sp = command("fork", cmd_fork, "move the active leaf to an entry (at) or its parent (before)")
    sp.add_argument("--from", dest="from_id", metavar="ID", required=True)
    sp.add_argument("--position", choices=("at", "before"), default="at")
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--summarize", action="store_true",
                    help="write a summary of the branch being left (a branch_summary) instead of a leaf entry")
    sp.add_argument("--new-file", action="store_true",
                    help="leave FILE as it is: copy the path to the fork point into a new pi v3 session "
                         "beside it (its header names FILE as parentSession) and print its path")
    _model_options(sp)

    sp = command("label", cmd_label, "set or clear the label of an entry")
    sp.add_argument("id", metavar="ID")
    sp.add_argument("text", metavar="TEXT", nargs="?")
    sp.add_argument("--clear", action="store_true")

    command("append", cmd_append, "append entries read as JSON from stdin at the active leaf")

    sp = command("new", cmd_new, "create an empty session for a working directory", file=False)
    sp.add_argument("root", metavar="ROOT", type=Path)
    sp.add_argument("--cwd", required=True)

    sp = command("compact", cmd_compact,
                 "plan a compaction, or write one: summary by a model, extractive, or from a file")
    sp.add_argument("--leaf", metavar="ID")
    sp.add_argument("--keep-recent-tokens", type=int, default=DEFAULT_KEEP_RECENT_TOKENS)
    sp.add_argument("--reserve-tokens", type=int, default=DEFAULT_RESERVE_TOKENS)
    sp.add_argument("--context-window", type=int, help="default: the session model's window")
    sp.add_argument("--plan", action="store_true", help="print the plan, write nothing")
    sp.add_argument("--json", action="store_true")
    source = sp.add_mutually_exclusive_group()
    source.add_argument("--summary-file", metavar="F", help="write a compaction with this summary")
    _model_options(sp, source)

    sp = command("continue", cmd_continue, "send a user message and append the model's streamed reply")
    sp.add_argument("--message", metavar="TEXT", required=True)
    sp.add_argument("--leaf", metavar="ID", help="continue from this entry instead of the active leaf")
    sp.add_argument("--model", metavar="M", help="a litellm model string (default: $SESSION_TREE_MODEL)")
    sp.add_argument("--api-base", metavar="URL", help="an OpenAI-compatible server (default: $SESSION_TREE_API_BASE)")

    command("validate", cmd_validate, "list every problem; exit 1 if there is any")

    sp = command("serve", cmd_serve, "start the web app", file=False)
    sp.add_argument("root", metavar="ROOT", nargs="?", type=Path)
    sp.add_argument("--host", default="127.0.0.1")
    sp.add_argument("--port", type=int, default=8000)
    sp.add_argument("--open", action="store_true", help="open a browser on the app")
    sp.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                    help="another host name the app may be reached by (for --host 0.0.0.0); repeatable")
    sp.add_argument("--model", help="litellm model for replies and summaries (else $SESSION_TREE_MODEL)")
    sp.add_argument("--api-base", help="an OpenAI-compatible server for that model (else $SESSION_TREE_API_BASE)")
    sp.add_argument("--read-only", action="store_true",
                    help="write nothing: hide every write control and refuse every writing route (403)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:
        return 0
    except (SessionError, ModelError, OSError) as exc:
        print(f"session-tree: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
