"""The figures of the corpus page, asked of the tables: cost and tokens by model, project, agent
and week; the sessions with most branches; compactions and their audit scores; tool error rates;
branch outcomes by model. Each row says which sessions are behind it (`behind`).

A cost is the one a session recorded, else the one computed from its tokens and a named price
table (`core/prices.py`) when the query is asked: both builds of the index (and a Parquet
dataset) hold the tokens by kind, and a newer price table prices them without a rebuild."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from ..core.prices import PriceTable, litellm_prices

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
    by_model: list[tuple]  # (model, cost, input tokens, output tokens, assistant messages, computed cost, priced as)
    by_project: list[tuple]  # (project, cost, input, output, sessions, computed cost)
    by_agent: list[tuple]  # (agent, cost, input, output, sessions, computed cost)
    by_week: list[tuple]  # (week starting, cost, input, output, computed cost)
    most_branches: list[tuple]  # (file, title, leaves)
    summaries: list[tuple]  # (file, entry id, kind, score, missing, facts, tokens before, tokens after)
    summary_totals: dict[str, tuple]  # kind -> (count, average score)
    tool_errors: list[tuple]  # (tool name, calls, errors, rate)
    outcomes: list[tuple]  # (model, {status: branches})
    totals: tuple  # (sessions, entries, cost, input, output): cost recorded and computed
    costs: "Costs | None" = None  # what of the cost was recorded, what computed, from which table
    audits_to_come: int = 0  # summaries whose audit a build is still making (`later.py`)


@dataclass
class Costs:
    """Where the corpus's cost comes from: recorded by the sessions (pi writes it), computed from a
    named price table (Claude Code and Codex write only their tokens), and the tokens of models
    the table has no price for (counted in no cost)."""

    recorded: float
    computed: float
    unpriced_tokens: int
    table: str  # the price table's name
    unpriced_models: list[str]  # models with tokens and neither a recorded cost nor a price


def _under(prefix: str, alias: str = "") -> str:
    return f"starts_with({alias}file, ?)" if prefix else "TRUE"


def priced_entries(cur: duckdb.DuckDBPyConnection, prices: PriceTable, prefix: str = "") -> tuple[str, list]:
    """A WITH clause that adds to each entry under `prefix` (the CTE `priced`) its cost as
    recorded (`recorded_cost`: a cost above zero), as computed (`computed_cost`: its tokens at the
    rates of `prices`' row for its model, ccusage-style, where nothing was recorded) and the
    tokens no price covers (`unpriced_tokens`); `per_file` sums them by session. With its
    parameters, which come first. Prices are looked up for the models the entries name (a few),
    not for the table's thousands of rows."""
    p = [prefix] if prefix else []
    models = [m for (m,) in cur.execute(f"SELECT DISTINCT model FROM entries WHERE {_under(prefix)} AND role = 'assistant' "
                                        "AND model IS NOT NULL", p).fetchall()]
    rows = [(m, r.input, r.output, r.cache_read, r.cache_write, r.key) for m in models if (r := prices.rates(m))]
    values = ", ".join(["(?, ?::DOUBLE, ?::DOUBLE, ?::DOUBLE, ?::DOUBLE, ?)"] * len(rows)) or \
        "(NULL::VARCHAR, NULL::DOUBLE, NULL::DOUBLE, NULL::DOUBLE, NULL::DOUBLE, NULL::VARCHAR)"
    plain_input = "greatest(e.input_tokens - coalesce(e.cache_read_tokens, 0) - coalesce(e.cache_write_tokens, 0), 0)"
    unrecorded = "coalesce(e.cost, 0) <= 0"
    sql = (f"WITH prices(model, pin, pout, pread, pwrite, priced_as) AS (VALUES {values}), "
           f"priced AS (SELECT e.*, p.priced_as, CASE WHEN e.cost > 0 THEN e.cost ELSE 0 END AS recorded_cost, "
           f"CASE WHEN {unrecorded} AND p.model IS NOT NULL THEN coalesce({plain_input} * p.pin, 0) "
           f"+ coalesce(e.output_tokens * p.pout, 0) + coalesce(e.cache_read_tokens * p.pread, 0) "
           f"+ coalesce(e.cache_write_tokens * p.pwrite, 0) ELSE 0 END AS computed_cost, "
           f"CASE WHEN {unrecorded} AND p.model IS NULL AND e.role = 'assistant' "
           f"THEN coalesce(e.input_tokens, 0) + coalesce(e.output_tokens, 0) ELSE 0 END AS unpriced_tokens "
           f"FROM entries e LEFT JOIN prices p ON p.model = e.model WHERE {_under(prefix, 'e.')}), "
           f"per_file AS (SELECT file, sum(recorded_cost) AS recorded_cost, sum(computed_cost) AS computed_cost "
           f"FROM priced GROUP BY file) ")
    return sql, [x for r in rows for x in r] + p


def corpus_figures(cur: duckdb.DuckDBPyConnection, prefix: str = "", prices: PriceTable | None = None) -> Figures:
    """Every figure of the corpus page, over the sessions whose file starts with `prefix`; costs
    as recorded, else computed from `prices` (litellm's table unless told)."""
    prices = prices if prices is not None else litellm_prices()
    with_priced, wp = priced_entries(cur, prices, prefix)
    # The entries are read once, into their sums by file, model, role and week, and each cost
    # figure is made from those: read for each figure, they were most of the page (six reads,
    # 0.66 s of the figures' 0.76 s at 10,000 sessions; 0.32 s so). A table of this connection
    # alone, gone after; a second server, which asks the first one's index a SELECT at a time
    # (`remote.py`), makes the sums in each query instead.
    local = isinstance(cur, duckdb.DuckDBPyConnection)
    if local:
        cur.execute(f"CREATE OR REPLACE TEMP TABLE {_SUMS} AS {with_priced}{_SUMS_SQL}", wp)

    def summed(sql: str, params: list) -> list[tuple]:
        if local:
            return cur.execute(sql.replace("{sums}", _SUMS), params).fetchall()
        return cur.execute(f"{with_priced}, {_SUMS} AS ({_SUMS_SQL}) {sql.replace('{sums}', _SUMS)}", wp + params).fetchall()

    try:
        return _figures(cur, prefix, prices, summed)
    finally:
        if local:
            cur.execute(f"DROP TABLE IF EXISTS {_SUMS}")


_SUMS = "figure_sums"  # (`corpus_figures`' sums of the priced entries)
_SUMS_SQL = ("SELECT file, model, role = 'assistant' AS assistant, date_trunc('week', time) AS week, "
             "sum(recorded_cost) AS recorded_cost, sum(computed_cost) AS computed_cost, "
             "sum(coalesce(input_tokens, 0)) AS input_tokens, sum(coalesce(output_tokens, 0)) AS output_tokens, "
             "count(*) AS n, sum(unpriced_tokens) AS unpriced_tokens, any_value(priced_as) AS priced_as "
             "FROM priced GROUP BY ALL")


def _figures(cur: duckdb.DuckDBPyConnection, prefix: str, prices: PriceTable, summed) -> Figures:
    """`corpus_figures` with `summed(sql, params)`, which runs `sql` with `{sums}` naming the
    priced entries' sums (`_SUMS_SQL`)."""
    p = [prefix] if prefix else []
    w = _under(prefix)

    def rows(sql: str, params=None) -> list[tuple]:
        return cur.execute(sql, p if params is None else params).fetchall()

    by_model = summed(
        "SELECT model, sum(recorded_cost + computed_cost), sum(input_tokens), sum(output_tokens), "
        "sum(n), sum(computed_cost), any_value(priced_as) FROM {sums} WHERE assistant AND model IS NOT NULL "
        f"GROUP BY model ORDER BY 2 DESC, 3 DESC, 1 LIMIT {TOP}", [])
    grouped = ("sum(coalesce(f.recorded_cost, 0) + coalesce(f.computed_cost, 0)), sum(s.input_tokens), sum(s.output_tokens), "
               "count(*), sum(coalesce(f.computed_cost, 0))")
    per_file = ("(SELECT file, sum(recorded_cost) AS recorded_cost, sum(computed_cost) AS computed_cost "
                "FROM {sums} GROUP BY file)")
    by_project = summed(f"SELECT s.project, {grouped} FROM sessions s LEFT JOIN {per_file} f USING (file) "
                        f"WHERE {_under(prefix, 's.')} GROUP BY s.project ORDER BY 2 DESC, 3 DESC, 1 LIMIT {TOP}", p)
    by_agent = summed(f"SELECT s.agent, {grouped} FROM sessions s LEFT JOIN {per_file} f USING (file) "
                      f"WHERE {_under(prefix, 's.')} GROUP BY s.agent ORDER BY 2 DESC, 3 DESC, 1", p)
    by_week = summed(
        "SELECT strftime(week, '%Y-%m-%d'), sum(recorded_cost + computed_cost), sum(input_tokens), sum(output_tokens), "
        f"sum(computed_cost) FROM {{sums}} WHERE week IS NOT NULL AND assistant GROUP BY week ORDER BY week DESC LIMIT {TOP}",
        [])
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
    recorded, computed, unpriced = summed(
        "SELECT coalesce(sum(recorded_cost), 0), coalesce(sum(computed_cost), 0), coalesce(sum(unpriced_tokens), 0) "
        "FROM {sums}", [])[0]
    unpriced_models = [m for (m,) in summed(
        "SELECT model FROM {sums} WHERE unpriced_tokens > 0 GROUP BY model ORDER BY sum(unpriced_tokens) DESC, model LIMIT 8", [])]
    total = rows(f"SELECT count(*), coalesce(sum(entries), 0), coalesce(sum(input_tokens), 0), "
                 f"coalesce(sum(output_tokens), 0) FROM sessions WHERE {w}")[0]
    to_come = rows(f"SELECT count(*) FROM summaries WHERE {w} AND facts IS NULL")[0][0]
    return Figures(by_model, by_project, by_agent, by_week, most, summaries, totals, tools, ordered,
                   (total[0], total[1], recorded + computed, total[2], total[3]),
                   Costs(recorded, computed, int(unpriced), prices.name, [str(m) for m in unpriced_models]), to_come)


def texts_to_come(cur: duckdb.DuckDBPyConnection, prefix: str = "") -> int:
    """Sessions whose text (what search reads) a build is still making (`later.py`)."""
    try:
        return cur.execute(f"SELECT count(*) FROM later WHERE {_under(prefix)}", [prefix] if prefix else []).fetchone()[0]
    except duckdb.CatalogException:  # (a Parquet dataset: made whole)
        return 0


def sessions_behind(cur: duckdb.DuckDBPyConnection, by: str, value: str, prefix: str = "",
                    limit: int = 200, prices: PriceTable | None = None) -> list[tuple]:
    """(file, title, cost, entries) of the sessions behind one row of a figure; cost as recorded,
    else computed (see corpus_figures)."""
    if by not in BEHIND:
        raise ValueError(f"no figure row of kind {by!r}: one of {', '.join(BEHIND)}")
    with_priced, wp = priced_entries(cur, prices if prices is not None else litellm_prices(), prefix)
    return cur.execute(f"{with_priced}SELECT s.file, coalesce(s.name, s.first_message, ''), "
                       f"coalesce(f.recorded_cost, 0) + coalesce(f.computed_cost, 0) AS cost, s.entries "
                       f"FROM sessions s LEFT JOIN per_file f USING (file) "
                       f"WHERE {_under(prefix, 's.')} AND {BEHIND[by]} ORDER BY cost DESC, s.file LIMIT ?",
                       [*wp, *([prefix] if prefix else []), value, limit]).fetchall()
