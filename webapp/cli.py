"""The `session-tree` command: every core operation from a shell, plus `serve` for the web app.

Its command names and JSON keys are a contract that scripts rely on. Errors are one line on
stderr and a non-zero exit (2), never a traceback; `validate` exits 1 when it finds problems.
Human output escapes control characters (a label holding ESC or OSC sequences cannot drive the
terminal) and file names that are not UTF-8; JSON output shows such names with `\\xNN` escapes.
"""

from __future__ import annotations

import argparse
import functools
import io
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from .cli_input import MAX_STDIN_BYTES, read_capped, read_summary_file
from .cli_output import path_text, print_json, print_json_pieces, print_listing
from .core.errors import SessionError
from .model.errors import ModelError

if TYPE_CHECKING:
    from .core.session import Session

# Each command imports the modules it uses, and the parsers of `show` and of the corpus commands
# are built without the other commands' modules (`build_parser`): `show --json` is timed as a
# whole process against a bare parse of the file (bench/show_json.py), and the session, context,
# compaction and model modules would double what it spends before reading; `index` after one
# session grew is timed as a whole process too.


# C0 controls but newline and tab, DEL, C1 controls, and lone surrogates (the bytes of a name
# that is not UTF-8): none of them reaches a terminal as it is.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _escape_char(m: re.Match) -> str:
    o = ord(m.group())
    if 0xDC80 <= o <= 0xDCFF:  # a byte that was not UTF-8, as Python keeps it
        return f"\\x{o - 0xDC00:02x}"
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def escape_controls(text: str) -> str:
    return _UNSAFE.sub(_escape_char, text)


class _SafeText(io.TextIOBase):
    """A text stream that escapes what `escape_controls` does before it reaches the terminal."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(escape_controls(text))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


def _open(args) -> Session:
    from .core.session import Session

    return Session.open(args.file)


def _leaf(session: Session, leaf: str | None) -> str | None:
    """The entry an ID argument names (a unique short id is enough), or the active leaf."""
    tree = session.tree
    return tree.active_leaf if leaf is None else tree.find(leaf).id


# -- reading commands ------------------------------------------------------------------------------


def _agent_folders(args) -> tuple[Path, list[str]]:
    """The folder to list and the sessions folders under it: ROOT as it is, or (no ROOT, or
    --pi/--claude/--codex) the agents' usual folders under the home folder that exist."""
    from .core.catalog import USUAL_PLACES, agent_places, usual_places

    chosen = [s for s in USUAL_PLACES if getattr(args, s.replace("-", "_"), False)]
    if args.root is not None and not chosen:
        return args.root, agent_places(args.root)  # a folder holding the agents' folders: as the home is
    home = Path.home()
    places = usual_places(home, chosen or tuple(USUAL_PLACES))
    if not places:
        wanted = ", ".join("~/" + "/".join(USUAL_PLACES[s]) for s in chosen or USUAL_PLACES)
        raise SessionError(f"no sessions folder found (looked for {wanted}); name a ROOT")
    return home, places


def cmd_ls(args) -> int:
    from .core.catalog import summarize_session
    from .core.storage import discover

    rows = []
    root, within = _agent_folders(args)
    for path in discover(root, within):
        try:
            rows.append({**summarize_session(path).as_dict(), "path": path_text(path)})
        except (OSError, SessionError) as exc:
            rows.append({"path": path_text(path), "error": escape_controls(str(exc))})
    print_listing(rows, args.json)
    return 0


def cmd_show(args) -> int:
    if args.json:
        from .core.outline import outline_json

        print_json_pieces(outline_json(args.file, {"path": path_text(args.file)}))
        return 0
    from .core.session import Session

    session = Session.open_outline(args.file)  # (it reads no token estimates)
    tree = session.tree
    header = tree.header or {}
    version = f"format {tree.format}" if tree.format != "unknown" else "no session header"
    print(f"session   {header.get('id', '-')}  ({version})")
    print(f"name      {tree.name or '-'}")
    print(f"cwd       {header.get('cwd', '-')}")
    print(f"created   {header.get('timestamp', '-')}")
    print("entries   " + (", ".join(f"{k} {v}" for k, v in sorted(tree.counts_by_type().items())) or "none"))
    print(f"roots     {', '.join(tree.roots) or '-'}")
    print(f"orphans   {', '.join(tree.orphans) or '-'}")
    print(f"leaves    {', '.join(tree.leaves()) or '-'}")
    print(f"active    {tree.active_leaf or '(empty conversation)'}")
    for target, label in tree.labels.items():
        print(f"label     {target}: {label}")
    problems = tree.all_problems()
    print(f"problems  {len(problems)}")
    for p in problems:
        print(f"  {p.where}: {p.kind}: {p.message}")
    return 0


def cmd_tree(args) -> int:
    from .core.texttree import render_text_tree
    print(render_text_tree(_open(args).tree))
    return 0


def cmd_context(args) -> int:
    from .core.context import build_context
    from .core.tokens import context_tokens, token_text

    session = _open(args)
    leaf = _leaf(session, args.leaf)
    ctx = build_context(session.tree, leaf)
    tokens = context_tokens(ctx)
    if args.request:
        return _print_request(args, leaf, ctx)
    if args.json:
        print_json(
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
          f"thinking {ctx.settings.thinking_level or '-'}  {token_text(tokens)}")
    for p in ctx.problems:
        print(f"! {p}")
    for m in ctx.messages:
        text = _message_text(m)
        calls = ", ".join(c["function"]["name"] for c in m.get("tool_calls", ()))
        print(f"--- {m['role']} [{m['entryId']}]" + (f" → {calls}" if calls else ""))
        if text:
            print(text)
    return 0


def _message_text(m: dict) -> str:
    """A chat message's content as printed: its text, or its parts as JSON."""
    content = m.get("content")
    return content if isinstance(content, str) else orjson.dumps(content).decode() if content else ""


def _print_request(args, leaf: str | None, ctx) -> int:
    """The request a model would be sent at `leaf` (SPEC §5b), with what was added or skipped."""
    from .core.request import build_request
    request = build_request(ctx)
    if args.json:
        print_json({"leafId": leaf, "model": ctx.settings.model, "messages": request.messages,
                     "changes": [c.as_dict() for c in request.changes]})
        return 0
    print(f"leaf {leaf}  model {ctx.settings.model_name or '-'}  {len(request.messages)} messages "
          f"({len(request.added)} added, {len(request.skipped)} skipped)")
    for c in request.skipped:
        print(f"- skipped [{c.entry_id}]: {c.reason}")
    for m in request.messages:
        text = _message_text(m)
        calls = ", ".join(f"{c['function']['name']} ({c['id']})" for c in m.get("tool_calls", ()))
        mark = "+ added " if m.get("added") else "--- "
        extra = f" for {m['tool_call_id']}" if m.get("role") == "tool" else ""
        print(f"{mark}{m['role']} [{m['entryId']}]{extra}" + (f" → {calls}" if calls else ""))
        if text:
            print(text)
    return 0


def cmd_validate(args) -> int:
    """Every problem with its line; warnings (WARNING_KINDS) are listed but do not fail it."""
    from .core.tree import WARNING_KINDS

    problems = _open(args).tree.all_problems()
    for p in problems:
        level = "warning: " if p.kind in WARNING_KINDS else ""
        where = f"{args.file}: {p.where}" if p.file else f"{args.file}:{p.line or '-'}"  # a sub-agent's file
        print(f"{where}: {level}{p.kind}: {p.message}")
    if not problems:
        print(f"{args.file}: no problems")
    return 1 if any(p.kind not in WARNING_KINDS for p in problems) else 0


# -- writing commands ------------------------------------------------------------------------------


def cmd_new(args) -> int:
    from .core.session import create_session

    print(create_session(args.root, args.cwd))
    return 0


def cmd_fork(args) -> int:
    from .model.llm import ModelConfig
    from .model.summarize import fork_with_summary
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
        print_json({"leafId": result.leaf_id, "entryId": result.entry["id"], "editText": result.edit_text})
    else:
        print(result.leaf_id if result.leaf_id is not None else "(empty conversation)")
    return 0


def _fork_new_file(args, session: Session, target: str | None) -> int:
    """SPEC §5c: copy the path to the fork point into a new v3 file; the source is only read."""
    from .core.continuation import continue_in_new_session
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
    session = _open(args)
    entry = session.set_label(_leaf(session, args.id), None if args.clear else args.text)
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
    from .core.session import Session

    session = Session.open_for_append(args.file)  # reads the end of the file, not all of it
    for entry in session.append_entries(objs):
        sys.stdout.write(entry["id"] + "\n")
    return 0


def cmd_compact(args) -> int:
    from .core.compaction import plan_compaction
    from .core.context import settings_on
    from .core.summary_writes import write_compaction
    from .model.llm import ModelConfig
    from .model.table import context_window
    from .model.summarize import summarize_compaction, written_details
    session = _open(args)
    leaf = _leaf(session, args.leaf)
    settings = settings_on(session.tree, session.tree.path(leaf))
    window = context_window(settings.provider, settings.model_id, args.context_window)
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


def _show_reply(assistant: dict) -> None:
    print()
    for block in assistant["message"]["content"]:
        if block["type"] == "toolCall":
            print(f"→ {block['name']} {orjson.dumps(block['arguments']).decode()} (not run)")


def _streaming():
    """An on_delta that writes the reply's text to stdout, and whether anything was written."""
    state = {"streamed": False}

    def show(kind: str, text: str) -> None:
        if kind == "text":
            sys.stdout.write(text)
            sys.stdout.flush()
            state["streamed"] = True

    return show, state


def cmd_continue(args) -> int:
    """Stream the reply's text to stdout as it arrives; tool calls are listed, not run."""
    from .model.llm import ModelConfig, continue_branch
    if args.retry == (args.message is not None):
        raise SessionError("give either --message TEXT, or --retry to ask again for the message waiting")
    config = ModelConfig.from_env(args.model, args.api_base)
    show, state = _streaming()
    session = _open(args)
    leaf = _leaf(session, args.leaf) if args.leaf else None
    try:
        result = continue_branch(session, config, args.message, leaf, on_delta=show)
    except ModelError as exc:
        if state["streamed"]:  # end the partial reply's line; the error goes to stderr
            print()
        if exc.kept_user and args.message is not None:
            exc.args = (f"{exc} Your message was kept as entry {exc.kept_user} with no reply; to ask again "
                        f"without writing it twice: session-tree continue {args.file} --retry",)
        raise
    _show_reply(result["assistantEntry"])
    return 0


def cmd_regenerate(args) -> int:
    """A new reply beside a message, or a new summary beside a compaction or branch summary."""
    from .model.llm import ModelConfig, regenerate_reply
    from .model.summarize import regenerate_summary
    config = ModelConfig.from_env(args.model, args.api_base)
    session = _open(args)
    session.check_writable()  # before a model is paid for
    entry = session.tree.find(args.id)
    if entry.type in ("compaction", "branch_summary"):
        print(regenerate_summary(session, config, entry.id)["id"])
        return 0
    show, state = _streaming()
    try:
        _show_reply(regenerate_reply(session, config, entry.id, on_delta=show))
    except ModelError:
        if state["streamed"]:
            print()
        raise
    return 0


def cmd_serve(args) -> int:
    from .core.catalog import usual_places
    from .web.app import serve  # Flask only when serving

    root, within = args.root, ()
    if root is None and not os.environ.get("SESSION_TREE_ROOT") and usual_places(Path.home()):
        root, within = _agent_folders(args)  # the agents' folders, else the bundled samples
    return serve(root, host=args.host, port=args.port, open_browser=args.open,
                 model=args.model, api_base=args.api_base, allow_hosts=tuple(args.allow_host),
                 within=tuple(within), read_only=args.read_only, corpus_db=args.db, no_auth=args.no_auth)




# -- parser ----------------------------------------------------------------------------------------


def _model_options(sp, model_group=None) -> None:
    """--model / --api-base / --instructions of the commands that summarize."""
    (model_group or sp).add_argument(
        "--model", metavar="M",
        help="summarize with this litellm model (default: $SESSION_TREE_MODEL; none: extractive summary)",
    )
    sp.add_argument("--api-base", metavar="URL", help="an OpenAI-compatible server (default: $SESSION_TREE_API_BASE)")
    sp.add_argument("--instructions", metavar="TEXT", help="what the model summary should focus on")


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error in one line on stderr (exit 2) like every other error."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {escape_controls(message)} (see --help)\n")


def _whole_number(low: int, high: int | None = None):
    """An argparse type: an integer within [low, high]."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if n < low or (high is not None and n > high):
            raise argparse.ArgumentTypeError(
                f"{n} is out of range (from {low}{f' to {high}' if high is not None else ''})"
            )
        return n

    return parse


def _show_command(command) -> None:
    command("show", cmd_show, "header, counts, roots, leaves, labels and problems").add_argument(
        "--json", action="store_true"
    )


def _ls_command(command) -> None:
    sp = command("ls", cmd_ls, "list the sessions under a sessions root (else the agents' usual folders)",
                 file=False)
    sp.add_argument("root", metavar="ROOT", type=Path, nargs="?")
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--pi", action="store_true", help="pi's sessions: ~/.pi/agent/sessions")
    sp.add_argument("--claude", dest="claude_code", action="store_true",
                    help="Claude Code's sessions: ~/.claude/projects")
    sp.add_argument("--codex", action="store_true", help="Codex's sessions: ~/.codex/sessions")


# The commands whose parser is built alone (`build_parser`'s `running`): `show`, and the corpus
# commands, which a script runs after every session it writes (`index`, `ls --index`, `sql`).
_ALONE = {"show": "show", "ls": "corpus", "index": "corpus", "sql": "corpus"}


def build_parser(running: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; with `running` = "show" or "corpus" (`_ALONE` of the command
    about to run), of those commands alone, without importing the other commands' modules (see
    the imports above)."""
    p = _Parser(prog="session-tree", description="Explore LLM agent sessions stored as trees.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    def command(name, func, help, file=True):
        sp = sub.add_parser(name, help=help, description=help)
        if file:
            sp.add_argument("file", metavar="FILE", type=Path, help="a session .jsonl file")
        sp.set_defaults(func=func)
        return sp

    if running == "show":
        _show_command(command)
        return p
    from .commands_corpus import add_corpus_commands

    if running == "corpus":
        _ls_command(command)
        add_corpus_commands(sub, _whole_number)
        return p
    from .commands_ask import add_ask_commands
    from .commands_auth import add_auth_commands
    from .commands_audit import add_audit_command
    from .commands_compare import add_compare_commands
    from .commands_context import add_diff_option
    from .commands_export import export_command
    from .commands_judge import add_judge_commands
    from .commands_replay import add_replay_commands
    from .commands_verdict import add_verdict_commands
    from .core.compaction import DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS

    _ls_command(command)
    _show_command(command)
    command("tree", cmd_tree, "the tree as text")

    sp = command("context", cmd_context, "what the model sees at the active leaf or at --leaf")
    sp.add_argument("--leaf", metavar="ID")
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--request", action="store_true",
                    help="the request as it would be sent (SPEC 5b), with what was added or skipped and why")
    add_diff_option(sp)

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
    sp.add_argument("--keep-recent-tokens", type=_whole_number(0), default=DEFAULT_KEEP_RECENT_TOKENS)
    sp.add_argument("--reserve-tokens", type=_whole_number(0), default=DEFAULT_RESERVE_TOKENS)
    sp.add_argument("--context-window", type=_whole_number(1), help="default: the session model's window")
    sp.add_argument("--plan", action="store_true", help="print the plan, write nothing")
    sp.add_argument("--json", action="store_true")
    source = sp.add_mutually_exclusive_group()
    source.add_argument("--summary-file", metavar="F", help="write a compaction with this summary")
    _model_options(sp, source)

    sp = command("continue", cmd_continue, "send a user message and append the model's streamed reply")
    sp.add_argument("--message", metavar="TEXT")
    sp.add_argument("--retry", action="store_true",
                    help="ask again for the user message waiting at the active leaf (or --leaf); writes no new one")
    sp.add_argument("--leaf", metavar="ID", help="continue from this entry instead of the active leaf")
    sp.add_argument("--model", metavar="M", help="a litellm model string (default: $SESSION_TREE_MODEL)")
    sp.add_argument("--api-base", metavar="URL", help="an OpenAI-compatible server (default: $SESSION_TREE_API_BASE)")
    sp.add_argument("--verbose", action="store_true", help="on a failure, print the request and the raw response")

    sp = command("regenerate", cmd_regenerate,
                 "a new reply beside a message, or a new summary beside a compaction or branch summary")
    sp.add_argument("id", metavar="ID")
    sp.add_argument("--model", metavar="M", help="a litellm model string (default: $SESSION_TREE_MODEL; "
                    "for a summary, none: extractive)")
    sp.add_argument("--api-base", metavar="URL", help="an OpenAI-compatible server (default: $SESSION_TREE_API_BASE)")
    sp.add_argument("--verbose", action="store_true", help="on a failure, print the request and the raw response")

    command("validate", cmd_validate, "list every problem; exit 1 if there is any")
    add_compare_commands(command)
    add_verdict_commands(command)
    add_ask_commands(command)
    add_judge_commands(command)
    add_replay_commands(command)
    add_audit_command(command)
    add_auth_commands(command)
    export_command(command)

    sp = command("serve", cmd_serve, "start the web app", file=False)
    sp.add_argument("root", metavar="ROOT", nargs="?", type=Path)
    sp.add_argument("--host", default="127.0.0.1")
    sp.add_argument("--port", type=_whole_number(1, 65535), default=8000)
    sp.add_argument("--open", action="store_true", help="open a browser on the app")
    sp.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                    help="another host name the app may be reached by (for --host 0.0.0.0); repeatable")
    sp.add_argument("--model", help="litellm model for replies and summaries (else $SESSION_TREE_MODEL)")
    sp.add_argument("--api-base", help="an OpenAI-compatible server for that model (else $SESSION_TREE_API_BASE)")
    sp.add_argument("--read-only", action="store_true",
                    help="write nothing: hide every write control and refuse every writing route (403)")
    sp.add_argument("--db", metavar="PATH", type=Path,
                    help="the corpus index it builds and reads (default: $XDG_CACHE_HOME/session-tree/corpus.duckdb; "
                         "one process at a time may write an index)")
    sp.add_argument("--no-auth", action="store_true",
                    help="ask nobody who they are: every account on this machine may then read and change what it "
                         "serves (by default the address printed carries a token; see session-tree password)")
    add_corpus_commands(sub, _whole_number)
    return p


# Built once per process: seventy commands take argparse a tenth of a second to set up, paid
# again by every in-process call (the test suite makes thousands). Parsing leaves it unchanged.
_parser = functools.lru_cache(maxsize=3)(build_parser)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = _parser(_ALONE.get(argv[0]) if argv else None).parse_args(argv)
    if not getattr(args, "json", False):  # human output: escaped (JSON escapes on its own)
        sys.stdout = _SafeText(sys.stdout)
    try:
        return args.func(args)
    except BrokenPipeError:
        return 0
    except (SessionError, ModelError, OSError) as exc:
        print(f"session-tree: error: {escape_controls(str(exc))}", file=sys.stderr)
        if isinstance(exc, ModelError) and getattr(args, "verbose", False):
            print(exc.debug_text(), file=sys.stderr)
        return 2
    except RecursionError:
        print("session-tree: error: the session nests data too deeply to be processed", file=sys.stderr)
        return 2
    except (ValueError, TypeError) as exc:  # input no check above caught: still one line, no traceback
        print(f"session-tree: error: {escape_controls(str(exc))[:500]}", file=sys.stderr)
        return 2
    finally:
        if isinstance(sys.stdout, _SafeText):
            sys.stdout = sys.stdout.stream


if __name__ == "__main__":
    sys.exit(main())
