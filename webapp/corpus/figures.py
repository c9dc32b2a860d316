"""The figures of the corpus page, asked of the tables: cost and tokens by model, project, agent
and week; the sessions with most branches; compactions and their audit scores; tool error rates;
branch outcomes by model. Each row says which sessions are behind it (`behind`)."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

TOP = 12  # rows of one figure

# What a figure's row stands for -> the sessions behind it (a WHERE on `sessions`).
BEHIND = {
    "model": "file IN (SELECT file FROM entries WHERE model = ?)",
    "project": "project = ?",
    "agent": "agent = ?",
    "week": "file IN (SELECT file FROM entries WHERE strftime(date_trunc('week', time), '%Y-%m-%d') = ?)",
    "tool": "file IN (SELECT file FROM tool_calls WHERE name = ? AND is_error)",
    "outcome": "file IN (SELECT file FROM branches WHERE coalesce(model, '(none)') || ' · ' || status = ?)",
    "compacted": "file IN (SELECT file FROM summaries WHERE kind = ?)",
}


@dataclass
class Figures:
    by_model: list[tuple]  # (model, cost, input tokens, output tokens, assistant messages)
    by_project: list[tuple]  # (project, cost, input, output, sessions)
    by_agent: list[tuple]  # (agent, cost, input, output, sessions)
    by_week: list[tuple]  # (week starting, cost, input, output)
    most_branches: list[tuple]  # (file, title, leaves)
    summaries: list[tuple]  # (file, entry id, kind, score, missing, facts, tokens before, tokens after)
    summary_totals: dict[str, tuple]  # kind -> (count, average score)
    tool_errors: list[tuple]  # (tool name, calls, errors, rate)
    outcomes: list[tuple]  # (model, {status: branches})
    totals: tuple  # (sessions, entries, cost, input, output)
    audits_to_come: int = 0  # summaries whose audit a build is still making (`later.py`)


def _under(prefix: str, alias: str = "") -> str:
    return f"starts_with({alias}file, ?)" if prefix else "TRUE"


def corpus_figures(cur: duckdb.DuckDBPyConnection, prefix: str = "") -> Figures:
    """Every figure of the corpus page, over the sessions whose file starts with `prefix`."""
    p = [prefix] if prefix else []
    w = _under(prefix)

    def rows(sql: str, params=None) -> list[tuple]:
        return cur.execute(sql, p if params is None else params).fetchall()

    by_model = rows(f"SELECT model, sum(cost), sum(coalesce(input_tokens, 0)), sum(coalesce(output_tokens, 0)), count(*) "
                    f"FROM entries WHERE {w} AND role = 'assistant' AND model IS NOT NULL "
                    f"GROUP BY model ORDER BY 2 DESC, 3 DESC, 1 LIMIT {TOP}")
    grouped = "sum(cost), sum(input_tokens), sum(output_tokens), count(*)"
    by_project = rows(f"SELECT project, {grouped} FROM sessions WHERE {w} GROUP BY project ORDER BY 2 DESC, 3 DESC, 1 LIMIT {TOP}")
    by_agent = rows(f"SELECT agent, {grouped} FROM sessions WHERE {w} GROUP BY agent ORDER BY 2 DESC, 3 DESC, 1")
    by_week = rows(f"SELECT strftime(date_trunc('week', time), '%Y-%m-%d') AS week, sum(cost), "
                   f"sum(coalesce(input_tokens, 0)), sum(coalesce(output_tokens, 0)) FROM entries "
                   f"WHERE {w} AND time IS NOT NULL AND role = 'assistant' GROUP BY week ORDER BY week DESC LIMIT {TOP}")
    most = rows(f"SELECT file, coalesce(name, first_message, ''), leaves FROM sessions WHERE {w} AND leaves > 1 "
                f"ORDER BY leaves DESC, file LIMIT {TOP}")
    # (a summary whose audit is still coming has no facts yet: not among the lowest scores)
    summaries = rows(f"SELECT file, entry_id, kind, score, missing, facts, tokens_before, tokens_after FROM summaries "
                     f"WHERE {w} AND facts IS NOT NULL ORDER BY score NULLS LAST, missing DESC, file, entry_id LIMIT {TOP}")
    totals = {k: (n, avg) for k, n, avg in rows(f"SELECT kind, count(*), avg(score) FROM summaries WHERE {w} GROUP BY kind")}
    tools = rows(f"SELECT name, count(*), count(*) FILTER (WHERE is_error), "
                 f"count(*) FILTER (WHERE is_error) / count(*) FROM tool_calls WHERE {w} "
                 f"GROUP BY name ORDER BY 3 DESC, 2 DESC, 1 LIMIT {TOP}")
    outcome_rows = rows(f"SELECT coalesce(model, '(none)'), status, count(*) FROM branches WHERE {w} GROUP BY ALL")
    outcomes: dict[str, dict[str, int]] = {}
    for model, status, n in outcome_rows:
        outcomes.setdefault(model, {})[status] = n
    ordered = sorted(outcomes.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))[:TOP]
    total = rows(f"SELECT count(*), coalesce(sum(entries), 0), coalesce(sum(cost), 0), coalesce(sum(input_tokens), 0), "
                 f"coalesce(sum(output_tokens), 0) FROM sessions WHERE {w}")[0]
    to_come = rows(f"SELECT count(*) FROM summaries WHERE {w} AND facts IS NULL")[0][0]
    return Figures(by_model, by_project, by_agent, by_week, most, summaries, totals, tools, ordered, total, to_come)


def texts_to_come(cur: duckdb.DuckDBPyConnection, prefix: str = "") -> int:
    """Sessions whose text (what search reads) a build is still making (`later.py`)."""
    try:
        return cur.execute(f"SELECT count(*) FROM later WHERE {_under(prefix)}", [prefix] if prefix else []).fetchone()[0]
    except duckdb.CatalogException:  # (a Parquet dataset: made whole)
        return 0


def sessions_behind(cur: duckdb.DuckDBPyConnection, by: str, value: str, prefix: str = "",
                    limit: int = 200) -> list[tuple]:
    """(file, title, cost, entries) of the sessions behind one row of a figure."""
    if by not in BEHIND:
        raise ValueError(f"no figure row of kind {by!r}: one of {', '.join(BEHIND)}")
    w = _under(prefix)
    return cur.execute(f"SELECT file, coalesce(name, first_message, ''), cost, entries FROM sessions "
                       f"WHERE {w} AND {BEHIND[by]} ORDER BY cost DESC, file LIMIT ?",
                       [*([prefix] if prefix else []), value, limit]).fetchall()
