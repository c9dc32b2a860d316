"""The corpus commands: `index` builds the embedded index of every session under some ROOTs,
`sql` asks it (read-only) a question, and `ls --index` lists from it (`list_indexed`); on the
index a running server holds, that server answers each of them."""

from __future__ import annotations

import functools
import os
import sys
from contextlib import contextmanager
from pathlib import Path

import duckdb

from ..core.agents import agents
from ..core.errors import SessionError
from ..core.private import private_umask
from ..core.storage import fs_name
from ..corpus.db import Index, IndexUnavailable, Progress, built
from ..corpus.listing import list_sessions
from ..corpus.sql import BYTE_CAP, QueryError, format_result, json_safe, read_only_connection, run_query
from ..corpus.text import Error as TextError, text_path
from .args import seconds, whole_number
from .output import fold_conversations, path_text, print_listing
from .places import chosen_agents, say_no_sessions


@contextmanager
def written(index):
    """`index` closed at the end; a failure of the database (a full disk, say) said in one line."""
    try:
        yield index
    except (duckdb.Error, TextError) as exc:
        raise SessionError(f"{index.path}: the index could not be written ({str(exc).splitlines()[0]})") from None
    finally:
        index.close()


def private(command):
    """A command that may write an index: what it creates (DuckDB's log too, made as it writes) is
    the user's alone (`core.private`)."""
    @functools.wraps(command)
    def run(args) -> int:
        with private_umask():
            return command(args)

    return run


@private
def cmd_index(args) -> int:
    roots = args.roots or [Path.home()]
    for root in roots:
        if not root.is_dir():
            raise SessionError(f"{root}: not a folder")
    if args.parquet:
        return _index_parquet(args, roots)
    if args.engine != "embedded":
        raise SessionError("--engine ray writes Parquet: name the folder with --parquet DIR")
    try:
        index = Index(args.db)
    except IndexUnavailable as held:  # a server writes it: that server brings it up to date

        def refresh(client, holder) -> dict:
            print(f"session-tree: the server at {holder.url} (PID {holder.pid}) holds this index; it brings it "
                  "up to date", file=sys.stderr, flush=True)
            return client.indexed(holder, [root.resolve() for root in roots])

        return _say_built(**from_holder(held, refresh))
    tty = sys.stderr.isatty()

    def show(p: Progress) -> None:
        if tty and p.running:
            name = Path(p.current).name[-40:]
            if p.later:  # the tables are written: the text, then the audits
                what = f"text {p.later_done:,}/{p.later_total:,}, audits {p.audits_done:,}/{p.audits_total:,}"
            else:
                what = f"indexing {p.done:,}/{p.total:,} ({p.percent}%)"
            print(f"\r{what} {name:<40}", end="", file=sys.stderr, flush=True)

    with written(index):
        p = index.build(roots, on_progress=show)
        got = built(index, p)
    if tty:
        print("\r" + " " * 80 + "\r", end="", file=sys.stderr)
    code = _say_built(**got)
    if not p.checked:
        say_no_sessions(args)
    return code


def _say_built(path: str, sessions: int, read: int, grown: int, removed: int, failed: int, seconds: float,
               failures: list) -> int:
    """What `index` prints of a build (`corpus.db.built`); its exit code."""
    print(f"session-tree: {sessions:,} sessions in {path}; read {read:,} ({grown:,} grown), removed {removed:,}, "
          f"failed {failed:,}, in {seconds:.1f} s")
    for file, error in failures:
        print(f"{file}\n    error: {error}")
    return 1 if failures else 0


def from_holder(held, asked):
    """`asked(client, holder)` of the server that holds the index (`client`: corpus.holder), if a
    session-tree server holds it."""
    # The client of a server (urllib's HTTP modules) only when a server holds the index: 8.5 ms of
    # CPU (`time.process_time` around the import) that `index` alone, timed as a whole process
    # (bench/reindex.py: 0.38 s after one session grew, at 1,000 sessions), does not pay.
    from ..corpus import holder as client

    try:
        holder = client.holder_of(held.path, held.pid) if held.pid is not None else None
        if holder is None:
            raise held
        return asked(client, holder)
    except QueryError as exc:
        raise SessionError(str(exc)) from None


def _index_parquet(args, roots) -> int:
    # Parquet's modules (pyarrow) only for --parquet: 0.09 s of CPU to import (`time.process_time`
    # around the import, modules compiled), which `index` and `sql` on the index do not pay.
    from ..corpus.parquet import session_files, table_rows, write_embedded, write_ray

    files = session_files(roots)
    if args.engine == "ray":
        try:
            write_ray(files, str(args.parquet))
        except ImportError:
            raise SessionError("--engine ray needs Ray: pip install 'session-tree[ray]'") from None
    else:
        write_embedded(files, args.parquet)
    counts = table_rows(args.parquet) if "://" not in str(args.parquet) else {}
    figures = ", ".join(f"{t} {n:,}" for t, n in counts.items())
    print(f"session-tree: {len(files):,} session files as Parquet in {args.parquet} ({args.engine}){': ' + figures if figures else ''}")
    return 0


@private
def list_indexed(args) -> int:
    """`ls --index`: the rows of `ls` read from the index (brought up to date first), or from the
    server that holds it."""
    if chosen_agents(args):
        flags = [f"--{a.flag}" for a in agents()]
        raise SessionError(f"ls --index lists a ROOT (or the home folder): {', '.join(flags[:-1])} and {flags[-1]} "
                           "list the files")
    asked = args.root or Path.home()
    root = asked.resolve()
    if not root.is_dir():
        raise SessionError(f"{root}: not a folder")
    try:
        index = Index(args.db)
    except IndexUnavailable as held:  # a server writes it: that server lists
        rows = from_holder(held, lambda client, holder: client.listed(holder, root))
    else:
        with written(index):
            index.build([root])
            got = list_sessions(index.cursor(), text_path(index.path), root, per_page=10**9)
        rows = got.dicts()
    under = len(str(root).rstrip(os.sep)) + 1
    for r in rows:  # (under ROOT as it was typed, as `ls` shows it)
        r["path"] = path_text(asked / fs_name(r["path"])[under:])
    print_listing(fold_conversations(rows, getattr(args, "files", False)), args.json)
    if not rows:
        say_no_sessions(args)
    return 0


def parquet_folder(folder: Path) -> Path:
    """`folder`, if it is one (a mistyped one would answer every query with empty tables)."""
    if not folder.is_dir():
        raise SessionError(f"{folder}: not a folder of Parquet tables")
    return folder


def cmd_sql(args) -> int:
    how = "json" if args.json else "csv" if args.csv else "text"
    try:
        try:
            con = _parquet_connection(parquet_folder(args.parquet)) if args.parquet else read_only_connection(args.db)
        except IndexUnavailable as held:  # a server writes it: that server answers
            output, truncated, over_bytes = from_holder(held, lambda client, holder: client.ask(
                holder, args.query, how, args.limit, args.timeout))
        else:
            try:
                result = run_query(con, args.query, limit=args.limit, seconds=args.timeout)
            finally:
                con.close()
            output, truncated, over_bytes = format_result(result, how), result.truncated, result.over_bytes
    except QueryError as exc:
        raise SessionError(str(exc)) from None
    sys.stdout.write(json_safe(output) if args.json else output)  # (text and CSV: main()'s escaping)
    if over_bytes:
        print(f"session-tree: only the rows that fit in {BYTE_CAP // 1024 // 1024} MB of values", file=sys.stderr)
    elif truncated:
        print(f"session-tree: only the first {args.limit:,} rows (--limit)", file=sys.stderr)
    return 0


def _parquet_connection(folder: Path):
    from ..corpus.parquet import parquet_connection  # (pyarrow: see _index_parquet)

    return parquet_connection(folder)


def register(command) -> None:
    sp = command("index", cmd_index, file=False,
                 description="Build or bring up to date the corpus index (DuckDB, in the cache folder); "
                             "on the index a running server holds, that server does.")
    sp.add_argument("roots", metavar="ROOT", type=Path, nargs="*")
    sp.add_argument("--db", metavar="PATH", type=Path,
                    help="the database file (default: $XDG_CACHE_HOME/session-tree/corpus.duckdb)")
    sp.add_argument("--parquet", metavar="DIR", type=Path,
                    help="write the same tables as Parquet in DIR (one folder per table) instead")
    sp.add_argument("--engine", choices=("embedded", "ray"), default="embedded",
                    help="with --parquet: extract here, or on the Ray cluster of $RAY_ADDRESS (else a local one)")

    sp = command("sql", cmd_sql, file=False,
                 description="Run one SELECT on the corpus tables (docs/corpus-tables.md); on the index a "
                             "running server holds, that server answers it.")
    sp.add_argument("query", metavar="SELECT")
    sp.add_argument("--db", metavar="PATH", type=Path, help="the database file (default: the cache folder's)")
    sp.add_argument("--parquet", metavar="DIR", type=Path, help="ask the Parquet tables of DIR instead")
    out = sp.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true")
    out.add_argument("--csv", action="store_true")
    sp.add_argument("--limit", type=whole_number(1), default=10_000, help="at most this many rows (default 10,000)")
    sp.add_argument("--timeout", type=seconds, default=30.0, help="seconds before the query is stopped (default 30)")
