"""The server's SVG bar charts: a row's text fits the chart and the whole of it is the row's title."""

from __future__ import annotations

import re

import pytest

from webapp.corpus.charts import VALUE_CHARS, Bar, bar_chart


def test_a_long_value_is_cut_to_the_chart_and_kept_whole_in_its_title():
    text = "1 checks failed · 1 asks a question · 12 answered"
    svg = str(bar_chart([Bar("claude-sonnet-4-5", 14, text, "/corpus/x"), Bar("gpt-5", 1, "1 answered")], "Outcomes"))
    shown = re.findall(r'<text class="chart-value"[^>]*>([^<]*)</text>', svg)
    assert shown == [text[: VALUE_CHARS - 1] + "…", "1 answered"]
    assert f"<title>claude-sonnet-4-5: {text}</title>" in svg


def test_an_outcome_bar_says_its_most_common_outcome_first_so_the_cut_keeps_it():
    from webapp.core.outcome import STATUSES
    from webapp.corpus.figures import Figures
    from webapp.corpus.page import charts

    first, second = list(STATUSES)[:2]  # the stack's order: the rarer one of the two comes first there
    fig = Figures([], [], [], [], [], [], {}, [], [("m", {first: 1, second: 12})], (0, 0, 0, 0, 0))
    svg = str(charts(fig, lambda kind, value: "/corpus", lambda *a, **k: "/s")["outcomes"])
    assert f"<title>m: 12 {STATUSES[second]} · 1 {STATUSES[first]}</title>" in svg
    assert svg.index(f"outcome-{first}") < svg.index(f"outcome-{second}")  # the stack keeps its order


def test_a_percentage_is_drawn_against_a_whole_bar_not_against_the_largest_value():
    """A summary that carries 2% of its facts draws a sliver: scores and rates scale to 100%."""
    from webapp.corpus.charts import BAR_W

    widths = lambda svg: [float(w) for w in re.findall(r'<rect class="chart-bar"[^>]* width="([\d.]+)"', str(svg))]  # noqa: E731
    low = bar_chart([Bar("a", 2, "2%"), Bar("b", 1, "1%")], "scores", full=100)
    assert widths(low) == [pytest.approx(BAR_W * 0.02), pytest.approx(BAR_W * 0.01)]
    assert widths(bar_chart([Bar("a", 2, "2%"), Bar("b", 1, "1%")], "costs")) == [BAR_W, BAR_W / 2]
