"""`session-tree compare FILE ID ID… [--json | --html OUT]`: the figures of the web comparison,
on the command line."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import orjson
import pytest

from tests.test_cli import run
from webapp.core.compare import FIGURE_ROWS, compare
from webapp.core.session import Session

RICH = next((Path(__file__).resolve().parents[1] / "sample_sessions").rglob("*019cadd3-8025-7970-85d9-5954058b4714.jsonl"))


@pytest.fixture
def rich(tmp_path):
    copy = tmp_path / RICH.name
    shutil.copyfile(RICH, copy)
    tree = Session.open(copy).tree
    return copy, tree.leaves()[:3]


def test_json_holds_outcomes_figures_and_aligned_rows(capsys, rich):
    file, tips = rich
    code, out, err = run(capsys, "compare", file, *(t[-8:] for t in tips), "--json")  # short ids are enough
    assert code == 0 and err == ""
    data = orjson.loads(out)
    cmp = compare(Session.open(file).tree, tips)
    assert [b["tip"] for b in data["branches"]] == tips
    assert [b["status"] for b in data["branches"]] == [b.outcome.status for b in cmp.branches]
    assert data["branches"][1]["final_answer"]["text"] == cmp.branches[1].outcome.answer_text
    for got, branch in zip(data["branches"], cmp.branches):
        assert set(got["figures"]) == {r.key for r in FIGURE_ROWS}
        assert got["figures"]["cost"]["after_divergence"] == pytest.approx(branch.mine.cost)
        assert got["figures"]["turns"] == {"after_divergence": branch.mine.turns, "whole_path": branch.whole.turns}
    assert len(data["rows"]) == len(cmp.rows) and data["divergence"] == {"row": 0, "kind": "prompt"}
    by_number = orjson.loads(run(capsys, "compare", file, *tips, "--json", "--align", "number")[1])
    assert by_number["alignment"] == "number"


def test_text_shows_status_figures_and_final_answers(capsys, rich):
    file, tips = rich
    code, out, _ = run(capsys, "compare", file, *tips)
    assert code == 0
    assert out.startswith("3 branches from ")
    assert re.search(r"^status\s+asks a question\s+answered\s+answered$", out, re.M)  # the regression branch
    assert re.search(r"^cost\s+\$0\.03 / \$0\.03\s+", out, re.M)
    assert "[2] " + tips[1][-8:] + " final answer (answered):" in out


def test_html_writes_the_self_contained_export(capsys, rich, tmp_path):
    file, tips = rich
    out_file = tmp_path / "cmp.html"
    code, out, _ = run(capsys, "compare", file, *tips, "--html", out_file, "--baseline", tips[2])
    assert code == 0 and out.startswith(f"session-tree: wrote {out_file}")
    html = out_file.read_text()
    assert "<script" not in html.lower() and "<style>" in html and "<link" not in html
    assert html.count('class="cmp-branch-head') == 3 and 'class="cmp-outcome"' in html
    assert "word diff against branch 3" in html  # the baseline picked
    assert 'href="/' not in html


@pytest.mark.parametrize("argv, message", [
    (["{a}"], "name at least two different entries"),
    (["{a}", "{a}"], "name at least two different entries"),
    (["{a}", "zzzzzzzz"], "zzzzzzzz"),
])
def test_bad_picks_are_one_line_errors(capsys, rich, argv, message):
    file, tips = rich
    code, out, err = run(capsys, "compare", file, *(x.format(a=tips[0]) for x in argv))
    assert code == 2 and out == ""
    assert err.startswith("session-tree: error:") and message in err and err.count("\n") == 1
