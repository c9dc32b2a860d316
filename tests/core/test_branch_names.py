"""One name per branch, by what tells it apart from the branches it is shown with: its prompt
where the prompts differ, its model where only the models do, else its label, verdict or id."""

from __future__ import annotations

from tests.conftest import Builder
from webapp.core.branch_names import branch_name, branch_names
from webapp.core.session import Session
from webapp.core.storage import MemoryStorage


def tree_of(b: Builder):
    return Session(MemoryStorage(b.data())).tree


def asked_of_several_models() -> tuple[Builder, list[str]]:
    """"Ask several models": one user message, and under it each model's model_change and reply;
    then a branch with a prompt of its own."""
    b = Builder()
    root = b.user("Fix the rounding in invoice totals")
    b.assistant("Looking.", model="m0")
    asked = b.user("Add a --since option to the CLI")
    tips = []
    for model in ("gpt-4o-mini", "claude-sonnet-4-5", "qwen2.5"):
        b.add("model_change", parent=asked, provider="p", modelId=model)
        tips.append(b.assistant(f"Done by {model}.", model=model))
    tips.append(b.user("Write the README section instead", parent=root))
    return b, tips


def test_branches_asked_of_several_models_are_named_by_their_model():
    b, tips = asked_of_several_models()
    names = branch_names(tree_of(b), tips)
    assert names[tips[0]] == "Add a --since option to the CLI · gpt-4o-mini"
    assert names[tips[1]] == "Add a --since option to the CLI · claude-sonnet-4-5"
    assert names[tips[2]] == "Add a --since option to the CLI · qwen2.5"
    assert names[tips[3]] == "Write the README section instead"  # its own prompt tells it apart: no more
    assert len(set(names.values())) == 4


def test_a_branch_named_alone_is_named_as_the_lists_name_it():
    b, tips = asked_of_several_models()
    tree = tree_of(b)
    every = branch_names(tree, tree.leaves())
    assert all(branch_name(tree, tip) == every[tip] for tip in tips)
    assert branch_name(tree, tips[1], width=30).endswith("· claude-sonnet-4-5")  # the model is never cut off


def test_same_prompt_and_model_are_told_apart_by_label_then_verdict_then_id():
    b = Builder()
    asked = b.user("Retry the flaky test")
    one = b.assistant("First try.", model="m1")
    two = b.assistant("Second try.", model="m1", parent=asked)
    b.add("label", parent=two, targetId=two, label="the keeper")
    tree = tree_of(b)
    names = branch_names(tree, [one, two])
    assert names[two] == "Retry the flaky test · “the keeper”"
    assert names[one].startswith("Retry the flaky test · ") and names[one] != names[two]
    b2 = Builder()
    asked = b2.user("Retry the flaky test")
    one = b2.assistant("First try.", model="m1")
    two = b2.assistant("Second try.", model="m1", parent=asked)
    tree = tree_of(b2)
    assert branch_names(tree, [one, two], {two: "winner"})[two] == "Retry the flaky test · winner"
    plain = branch_names(tree, [one, two])
    assert plain[one] == "Retry the flaky test · e2" and plain[two] == "Retry the flaky test · e3"


def test_a_long_prompt_is_cut_and_a_branch_without_one_says_so():
    b = Builder()
    b.add("model_change", provider="p", modelId="m")
    bare = b.assistant("hello", model="m")
    long = b.user("word " * 40, parent=None)
    tree = tree_of(b)
    names = branch_names(tree, [bare, long], width=30)
    assert names[bare] == "(no user message)"
    assert len(names[long]) == 30 and names[long].endswith("…")
