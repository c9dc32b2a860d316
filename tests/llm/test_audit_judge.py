"""`session-tree audit --model`: the model's opinion on each missing fact, against the local server."""

from __future__ import annotations

import orjson

from tests.core.test_audit import work_data
from tests.llm.conftest import MODEL, run


def test_the_model_is_asked_per_missing_fact_and_its_opinion_kept_apart(tmp_path, capsys, llm_server, model_env):
    path = tmp_path / "s.jsonl"
    path.write_bytes(work_data())
    llm_server.behave("reply", text="yes\nThe summary says the tests failed.")
    code, out, err = run(capsys, "audit", path, "--json", *model_env)
    assert code == 0, err
    [audit] = orjson.loads(out)
    missing = [f for facts in audit["facts"].values() for f in facts if not f["covered"]]
    assert len(llm_server.requests) == len(missing) == 5
    prompts = [r["messages"][0]["content"] for r in llm_server.requests]
    assert sum("Fact (urls): https://example.com/spec" in p for p in prompts) == 1
    assert all(f["modelOpinion"] == {"verdict": "implied", "reason": "The summary says the tests failed."}
               for f in missing)
    assert audit["judgedBy"] == MODEL and audit["score"] == 50  # the opinion never changes the score (routine commands weigh a quarter)


def test_text_output_labels_the_opinion_as_the_models(tmp_path, capsys, llm_server, model_env):
    path = tmp_path / "s.jsonl"
    path.write_bytes(work_data())
    llm_server.behave("reply", text="No. It is not there.")
    code, out, _ = run(capsys, "audit", path, *model_env)
    assert code == 0
    assert f"      model's opinion ({MODEL}): not implied — No. It is not there." in out
