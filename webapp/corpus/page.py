"""The corpus page's charts, made of its figures: what each bar shows and where it leads."""

from __future__ import annotations

from collections.abc import Callable

from markupsafe import Markup

from ..core.outcome import STATUSES
from ..core.tokens import format_tokens
from .charts import Bar, bar_chart
from .figures import Figures


def money(v) -> str:
    v = v or 0.0
    return f"${v:,.2f}" if v >= 0.01 or not v else f"${v:.4f}"


def _spend(rows, link, by: str, title: str, computed_at: int, priced_at: int | None = None) -> Markup:
    """A figure of (label, cost, input, output, …) rows: bars of cost, else of tokens when nothing
    cost; `computed_at` is the index of the row's computed part of its cost, said with its value
    ("$1.20 (computed)", "$3.40 (all computed)") so that no figure passes for recorded; with
    `priced_at` (the price row a model was priced as), a model with neither says "no price"
    rather than a cost of nothing."""
    by_cost = any(r[1] for r in rows)
    bars = []
    for r in rows:
        cost, computed, tokens = r[1] or 0, r[computed_at] or 0, (r[2] or 0) + (r[3] or 0)
        said = " (all computed)" if computed and computed >= cost - 1e-12 else f" ({money(computed)} computed)" if computed else ""
        unknown = priced_at is not None and not cost and tokens and r[priced_at] is None
        bars.append(Bar(str(r[0]), cost if by_cost else tokens,
                        f"{'no price' if unknown else money(cost) + said} · {format_tokens(tokens)} tok", link(by, str(r[0]))))
    return bar_chart(bars, title)


def charts(fig: Figures, link: Callable[[str, str], str], session_link: Callable[..., str]) -> dict[str, Markup]:
    """The SVG of every figure; `link(by, value)` leads to the sessions behind a bar,
    `session_link(file, **args)` to one session."""
    out = {
        "model": _spend(fig.by_model, link, "model", "cost and tokens by model", 5, 6),
        "project": _spend(fig.by_project, link, "project", "cost and tokens by project", 5),
        "agent": _spend(fig.by_agent, link, "agent", "cost and tokens by agent", 5),
        "week": _spend(fig.by_week, link, "week", "cost and tokens by week", 4),
        "branches": bar_chart([Bar(title or file.rsplit("/", 1)[-1], leaves, f"{leaves} branches",
                                   session_link(file, tab="branches")) for file, title, leaves in fig.most_branches],
                              "sessions with most branches"),
        "summaries": bar_chart([Bar(f"{kind.replace('_', ' ')} {entry[-8:]} · {file.rsplit('/', 1)[-1]}",
                                    score or 0, f"{'–' if score is None else score}% · lost {missing} of {facts}",
                                    session_link(file, tab="audit", node=entry))
                                for file, entry, kind, score, missing, facts, _, _ in fig.summaries],
                               "compactions and branch summaries with the lowest audit scores", full=100),
        "tools": bar_chart([Bar(name, rate * 100, f"{rate:.0%} of {calls:,} ({errors:,} failed)", link("tool", name))
                            for name, calls, errors, rate in fig.tool_errors], "tool error rates", full=100),
        "outcomes": bar_chart([Bar(model, sum(counts.values()),
                                   " · ".join(f"{counts[s]} {STATUSES[s]}"  # (most first: the text is cut to fit)
                                              for s in sorted((s for s in STATUSES if counts.get(s)), key=lambda s: -counts[s])),
                                   link("outcome", f"{model} · {max(counts, key=counts.get)}"),
                                   tuple((counts.get(s, 0), f"chart-bar outcome-{s}") for s in STATUSES))
                               for model, counts in fig.outcomes], "branch outcomes by model"),
    }
    return out


def lab_chart(rows: list[tuple], link: Callable[[str], str]) -> Markup:
    """The lab's candidates by model and prompt: the share the judge found as good as the
    uncompacted original (or better), with the average audit score; each bar opens the SQL box
    on its rows."""
    bars = []
    for model, prompt, n, score, judged, good, after in rows:
        share = good / judged if judged else 0.0
        said = f"{good}/{judged} as well" if judged else "untested"
        bars.append(Bar(f"{model} · {prompt}", share * 100,
                        f"{said} · audit {'–' if score is None else f'{score:.0f}%'}",
                        link(f"SELECT * FROM lab_candidates WHERE model = '{model.replace(chr(39), chr(39) * 2)}' "
                             f"AND prompt = '{prompt.replace(chr(39), chr(39) * 2)}' ORDER BY run, rank")))
    return bar_chart(bars, "lab candidates judged as good as the original, by model and prompt")

