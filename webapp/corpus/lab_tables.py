"""The compaction lab's results as corpus tables: `lab_runs`, `lab_candidates` (one row per
candidate) and `lab_tests` (one row per test turn), read from the runs' files in the data folder
(core/lab_store.py) whenever the index is built, so that the SQL box and the charts read them
beside the sessions (`file` is the session file's absolute path, as in `sessions`).

They are not made from the session files, so a rebuild of those leaves them alone: they are
made again, whole, when the run files changed since the last time (their names, sizes and
times, kept in `meta`). A run is a few hundred rows; reading all of them again costs less than
knowing which changed.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import orjson

from ..core.lab import AUDITED, table_rows
from ..core.lab_store import RunState, list_runs, read_run, runs_dir
from ..core.errors import SessionError

_V, _I, _B, _D, _T, _F = "VARCHAR", "INTEGER", "BIGINT", "DOUBLE", "TIMESTAMP", "BOOLEAN"
LAB_TYPES: dict[str, dict[str, str]] = {
    "lab_runs": dict(run=_V, created=_T, query=_V, models=_V, prompts=_V, targets=_I, candidates=_I, tests=_I,
                     tokens=_B, cost=_D, max_tokens=_B, max_usd=_D, status=_V),
    "lab_candidates": dict(
        run=_V, file=_V, entry_id=_V, candidate=_V, name=_V, model=_V, prompt=_V, cut=_V, first_kept=_V,
        keep_recent=_B, recorded=_F, tokens_before=_B, tokens_after=_B, cost=_D, score=_I, facts=_I,
        missing=_I, **{f"{c}_{k}": _I for c in AUDITED for k in ("kept", "lost")},
        judge=_V, reference=_V, test_errors=_I, test_tokens=_B, test_cost=_D, rank=_I, error=_V, summary=_V,
        time=_T),
    "lab_tests": dict(run=_V, file=_V, entry_id=_V, candidate=_V, turn=_I, prompt=_V, reply=_V, recorded_reply=_V,
                      steps=_I, calls=_I, errors=_I, files=_V, tokens=_B, cost=_D, model=_V, stopped=_V,
                      error=_V, time=_T),
}
LAB_TABLES = tuple(LAB_TYPES)
MAX_TEXT = 100_000  # characters of a summary, prompt or reply kept in a row
# What a lab over the corpus works on unless asked otherwise: the compactions that lost the most.
DEFAULT_QUERY = "SELECT file, entry_id FROM summaries WHERE kind = 'compaction' ORDER BY score LIMIT 20"


def lab_ddl() -> list[str]:
    return [f"CREATE TABLE IF NOT EXISTS {t} ({', '.join(f'{c} {ty}' for c, ty in cols.items())})"
            for t, cols in LAB_TYPES.items()]


def _time(text) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")
    except ValueError:
        return None


def _text(value) -> str | None:
    return value[:MAX_TEXT] if isinstance(value, str) else None


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def rows_of(state: RunState) -> dict[str, list[tuple]]:
    """The rows one run gives each table."""
    out: dict[str, list[tuple]] = {t: [] for t in LAB_TABLES}
    head, settings = state.head, state.settings
    candidates = tests = 0
    for (file, at), target in state.targets.items():
        cands, tested, judged = state.of_target(file, at)
        by_id = {c.get("id"): c for c in cands}
        for row in table_rows(cands, tested, judged):
            c = by_id.get(row["id"], {})
            candidates += 1
            out["lab_candidates"].append((
                state.name, file, at, row["id"], row["name"], row["model"], row["prompt"], row["cut"],
                row["first_kept"], _int(row["keep"]), row["model"] == "recorded", _int(row["tokens_before"]),
                _int(row["tokens_after"]), _float(row["cost"]), _int(row["score"]), _int(row["facts"]),
                _int(row["missing"]), *(row[f"{cat}_{k}"] for cat in AUDITED for k in ("kept", "lost")),
                row["judge"], row["reference"], _int(row["test_errors"]), _int(row["test_tokens"]),
                _float(row["test_cost"]), row["rank"], row["error"], _text(c.get("summary")), _time(c.get("time"))))
        replies = target.get("recorded_replies") or []
        for cid, test in tested.items():
            for n, turn in enumerate(test.get("turns") or [], 1):
                tests += 1
                out["lab_tests"].append((
                    state.name, file, at, cid, n, _text(turn.get("prompt")), _text(turn.get("reply")),
                    _text(replies[n - 1]) if n <= len(replies) else None, _int(turn.get("steps")),
                    _int(turn.get("calls")), _int(turn.get("errors")), ", ".join(turn.get("files") or []) or None,
                    _int(turn.get("tokens")), _float(turn.get("cost")), test.get("model"), test.get("stopped"),
                    test.get("error"), _time(test.get("time"))))
            if not test.get("turns") and test.get("error"):
                out["lab_tests"].append((state.name, file, at, cid, None, None, None, None, None, None, None, None,
                                         None, None, test.get("model"), test.get("stopped"), test.get("error"),
                                         _time(test.get("time"))))
    end = state.ends[-1] if state.ends else {}
    out["lab_runs"].append((
        state.name, _time(head.get("created")), _text(head.get("query")), ", ".join(settings.get("models") or []),
        ", ".join(settings.get("prompts") or []), len(state.targets), candidates, tests, state.spent_tokens,
        round(state.spent_cost, 8), _int(settings.get("max_tokens")), _float(settings.get("max_usd")),
        end.get("reason") or "running or interrupted"))
    return out


def _signature(files: list[Path]) -> str:
    stamps = []
    for p in files:
        try:
            st = p.stat()
        except OSError:
            continue
        stamps.append([p.name, st.st_size, st.st_mtime_ns])
    return orjson.dumps(sorted(stamps)).decode()


def refresh_lab_tables(con: duckdb.DuckDBPyConnection, folder: Path | None = None) -> bool:
    """Make the lab tables again from the run files when these changed; True when it did."""
    for sql in lab_ddl():
        con.execute(sql)
    files = list_runs(folder or runs_dir())
    signature = _signature(files)
    row = con.execute("SELECT value FROM meta WHERE key = 'lab_runs'").fetchone()
    if row is not None and row[0] == signature:
        return False
    rows: dict[str, list[tuple]] = {t: [] for t in LAB_TABLES}
    for path in files:
        try:
            state = read_run(path)
        except SessionError:  # (not a run: left out, the others stand)
            continue
        for table, got in rows_of(state).items():
            rows[table] += got
    con.execute("BEGIN TRANSACTION")
    try:
        for table in LAB_TABLES:
            con.execute(f"DELETE FROM {table}")
            if rows[table]:
                marks = ", ".join("?" * len(LAB_TYPES[table]))
                con.executemany(f"INSERT INTO {table} VALUES ({marks})", rows[table])
        con.execute("INSERT OR REPLACE INTO meta VALUES ('lab_runs', ?)", [signature])
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    return True



def lab_figures(cur) -> list[tuple]:
    """Per model and prompt, over every run: (model, prompt, candidates, average audit score, judged,
    judged as well or better, average tokens after) — the corpus page's lab chart. Empty when the
    tables are not there (a Parquet dataset)."""
    try:
        return cur.execute(
            "SELECT model, prompt, count(*), avg(score), count(judge), "
            "count(*) FILTER (WHERE judge IN ('better', 'as well')), avg(tokens_after) "
            "FROM lab_candidates WHERE error IS NULL GROUP BY model, prompt ORDER BY model, prompt").fetchall()
    except duckdb.Error:
        return []


def recent_runs(cur, limit: int = 10) -> list[tuple]:
    """(run, created, targets, candidates, tokens, cost, status) of the latest runs."""
    try:
        return cur.execute("SELECT run, created, targets, candidates, tokens, cost, status FROM lab_runs "
                           "ORDER BY created DESC NULLS LAST LIMIT ?", [limit]).fetchall()
    except duckdb.Error:
        return []
