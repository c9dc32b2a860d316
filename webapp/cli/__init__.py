"""The `session-tree` command: every core operation from a shell, plus `serve` for the web app.

Its command names, flags, output and JSON keys are a contract that scripts rely on. Errors are
one line on stderr and a non-zero exit (2), never a traceback; `validate` exits 1 when it finds
problems. Human output is escaped (`output.SafeText`).

Each group of commands is a module of this package that registers its sub-commands
(`register(command)`) and imports what it uses at its top. `COMMANDS` names each command's
module and one-line help, and a run imports only the module of the command it runs: `show --json`
and `index` are timed as whole processes (bench/show_json.py, bench/reindex.py), and the other
groups' imports (Flask, duckdb, the model layer) would more than double what `show` spends before
reading; `--help` lists the commands from the table alone (importing every group made it 4.2x
the CPU).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
from pathlib import Path

from ..core.errors import SessionError
from ..model.errors import ModelError
from .args import CliParser
from .output import SafeText, escape_controls

# Each command: the module of its group, and its help; in the order `--help` lists them.
COMMANDS = {
    "ls": ("listing", "list the sessions under a sessions root (else the agents' usual folders)"),
    "show": ("show", "header, counts, roots, leaves, labels and problems"),
    "tree": ("reading", "the tree as text"),
    "search": ("search", "the entries that mention a text, in one session or in every session under a folder"),
    "context": ("context", "what the model sees at the active leaf or at --leaf"),
    "edit-context": ("context", "take an entry out of what the model sees, or send other text in its place "
                                "(pi 1.6's context edit)"),
    "fork": ("writing", "move the active leaf to an entry (at) or its parent (before)"),
    "label": ("writing", "set or clear the label of an entry"),
    "append": ("writing", "append entries read as JSON from stdin at the active leaf"),
    "new": ("writing", "create an empty session for a working directory"),
    "compact": ("writing", "plan a compaction, or write one: summary by a model, extractive, or from a file"),
    "continue": ("model", "send a user message and append the model's streamed reply"),
    "regenerate": ("model", "a new reply beside a message, or a new summary beside a compaction or branch summary"),
    "validate": ("reading", "list every problem; exit 1 if there is any"),
    "compare": ("compare", "compare branches: outcomes, figures after the divergence, aligned turns"),
    "verdict": ("verdict", "mark a branch better, worse or the winner, with an optional note"),
    "ask": ("model", "ask several models at a node at once; each reply is a sibling branch "
                     "(exit 1 when a model failed: its column wrote nothing)"),
    "judge": ("model", "a model judges branches' outcomes pairwise (blind, both orders; "
                       "a disagreement is a tie) and its verdicts are recorded beside a person's"),
    "replay": ("model", "send a branch's user messages after a node again, to another model; "
                        "its work is a new branch (exit 1 when a budget or a failure stopped it)"),
    "lab": ("lab", "the compaction lab: several candidate summaries of one cut (models x prompts x keep "
                   "budgets), each audited and tested by the branch's next turns, ranked; at --at ID of FILE, "
                   "or over the compactions --query SQL selects; within --max-usd/--max-tokens, resumable by --run"),
    "audit": ("audit", "what each compaction of the active path (or --compaction ID) lost: "
                       "the facts of what it summarized that its summary does not carry"),
    "password": ("auth", "set the password the web app accepts besides its token"),
    "export": ("export", "write the session as one self-contained HTML file (every branch, or --leaf's), "
                         "or a folder of sessions as an offline site (index.html and a page per session)"),
    "serve": ("serve", "start the web app"),
    "demo": ("serve", "start the web app on a fresh copy of the sample sessions (removed when it stops)"),
    "index": ("corpus", "index every session under the ROOTs (default: the home folder's agents)"),
    "sql": ("corpus", "a read-only SQL query on the corpus index"),
    "mcp": ("mcp", "answer coding agents over MCP on stdio (list, search, read sessions and contexts)"),
}
GROUPS = tuple(dict.fromkeys(group for group, _ in COMMANDS.values()))
EVERY = "*"  # build_parser's group: every group's commands


def build_parser(group: str | None = EVERY) -> argparse.ArgumentParser:
    """The parser of every command; with `group` (one of GROUPS), of that group's commands, the
    others only named with their help (no module of theirs imported); with None, only the names
    and the helps (what `--help` and a mistyped command print)."""
    p = CliParser(prog="session-tree", description="Explore LLM agent sessions stored as trees.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=CliParser)
    named = {name: sub.add_parser(name, help=help, description=help) for name, (_, help) in COMMANDS.items()}

    def command(name: str, func, file: bool = True, description: str | None = None) -> argparse.ArgumentParser:
        """The sub-command `name`, run by `func(args)`; with `file`, its first argument is FILE."""
        sp = named[name]
        if description:
            sp.description = description
        if file:
            sp.add_argument("file", metavar="FILE", type=Path, help="a session .jsonl file")
        sp.set_defaults(func=func)
        return sp

    for module in GROUPS if group == EVERY else (group,) if group else ():
        importlib.import_module(f"{__name__}.{module}").register(command)
    return p


# Built once per process and group: the whole parser takes argparse a tenth of a second to set
# up, paid again by every in-process call (the test suite makes thousands). Parsing leaves it
# unchanged.
_parser = functools.lru_cache(maxsize=None)(build_parser)


def parser_for(argv: list[str]) -> argparse.ArgumentParser:
    """The parser that parses `argv`: its command's group alone, or the names alone."""
    group = COMMANDS[argv[0]][0] if argv and argv[0] in COMMANDS else None
    return _parser(group)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parser_for(argv).parse_args(argv)
    # human output: escaped (JSON escapes on its own, and a protocol's stdout is no person's)
    if not getattr(args, "json", False) and not getattr(args, "protocol_on_stdout", False):
        sys.stdout = SafeText(sys.stdout)
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
        if isinstance(sys.stdout, SafeText):
            sys.stdout = sys.stdout.stream
