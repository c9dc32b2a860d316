"""The compactions the lab keeps, as pi reads them: on copies of trees pi 1.6.0 and pi 0.73.1
wrote, the lab's best candidate was kept (tests/oracle/lab_writes.py) and each file was read by
the pi that wrote it (`pi_oracle.py lab`, tests/fixtures/pi-oracle/lab/). pi's context at every
leaf, the kept compaction's own included, is ours. No node is needed here."""

import json
from pathlib import Path

import pytest

from tests.oracle.agreement import compare_file

LAB = Path(__file__).resolve().parents[1] / "fixtures" / "pi-oracle" / "lab"
FILES = sorted(LAB.glob("*.jsonl"))


def kept(path: Path) -> list[dict]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [e for e in lines if e.get("type") == "compaction" and "lab" in (e.get("details") or {})]


def test_each_pi_version_read_the_lab_files():
    assert {p.name.split("-")[1] for p in FILES} == {"1.6.0", "0.73.1"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_pi_reads_a_kept_compaction_as_we_do(path):
    record = json.loads(path.with_suffix(".pi.json").read_text())
    result = compare_file(path, record)
    assert result.differences == []
    assert result.agree == result.leaves
    [entry] = kept(path)
    assert entry["id"] in record["leaves"]  # pi took the kept compaction as a leaf, and agreed there too
    lab = entry["details"]["lab"]
    assert lab["candidate"].startswith("c") and lab["rank"] == 1 and lab["model"] == "extractive"
    assert entry["details"]["readFiles"] is not None and entry["summary"].strip()
