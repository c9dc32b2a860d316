"""A Codex compaction shows the token counts known around it, or says plainly that the rollout
records none: never "Compacted from – tokens" or "compaction ? tokens"."""

from __future__ import annotations

import re
import shutil

import orjson

from tests.conftest import FIXTURES
from webapp.core.session import Session
from webapp.web.app import create_app
from webapp.web.graph.style import _node_style

OLDER = FIXTURES / "codex" / "reduced_older_rollout_compacted_without_history.jsonl"
NAME = "rollout-2025-09-20T08-15-00-0199a3c2-7d10-7b31-9e55-2f0c1d4e8a01.jsonl"


def transcript_at_compaction(root, path) -> str:
    tree = Session.open(path).tree
    c = tree.compactions()[0]
    client = create_app(root).test_client()
    rel = path.relative_to(root).as_posix()
    html = client.get(f"/s/{rel}/-/panel/transcript?node={c.id}", headers={"HX-Request": "true"}).get_data(as_text=True)
    return re.sub(r"\s+", " ", html)


def test_the_counts_around_a_codex_compaction_are_shown(tmp_path):
    shutil.copyfile(OLDER, tmp_path / NAME)
    html = transcript_at_compaction(tmp_path, tmp_path / NAME)
    assert "Compacted from 12.0k tokens to 3.1k <time" in html


def test_a_compaction_with_no_counts_says_so(tmp_path):
    lines = [orjson.loads(x) for x in OLDER.read_bytes().splitlines()]
    lines = [x for x in lines if not (x["type"] == "event_msg" and x["payload"]["type"] == "token_count")]
    (tmp_path / NAME).write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    html = transcript_at_compaction(tmp_path, tmp_path / NAME)
    assert "Compacted (the file records no token counts for it)" in html


def test_the_graph_node_of_a_codex_compaction_reads_its_counts(tmp_path):
    tree = Session.open(OLDER).tree
    assert _node_style(tree, tree.compactions()[0])[0] == "compaction\n12.0k → 3.1k tokens"
