"""pi's context reads exactly as pi renders it for the model (`bashExecutionToText` and the
branch summary wrapper of pi-mono's coding-agent `messages.ts`)."""

from tests.conftest import PI_FIXTURES, Builder
from webapp.core.context import build_context
from webapp.core.messages import BRANCH_PREFIX, message_messages
from webapp.core.reader import parse_bytes
from webapp.core.session import Session
from webapp.core.tree import SessionTree


def bash_text(**msg) -> str:
    return message_messages({"role": "bashExecution", "command": "make", "output": "", "exitCode": 0,
                             "cancelled": False, "truncated": False, **msg})[0]["content"]


def test_bash_execution_reads_as_pi_renders_it():
    assert bash_text(output="ok") == "Ran `make`\n```\nok\n```"
    assert bash_text() == "Ran `make`\n(no output)"
    assert bash_text(output="boom", exitCode=2) == "Ran `make`\n```\nboom\n```\n\nCommand exited with code 2"
    assert bash_text(exitCode=None, cancelled=True) == "Ran `make`\n(no output)\n\n(command cancelled)"
    assert bash_text(output="x", truncated=True, fullOutputPath="/tmp/o.log") == \
        "Ran `make`\n```\nx\n```\n\n[Output truncated. Full output: /tmp/o.log]"
    assert bash_text(output="x", truncated=True) == "Ran `make`\n```\nx\n```"  # no path: no line


def test_the_truncated_bash_execution_of_a_real_pi_session():
    path = next(p for p in PI_FIXTURES if p.name == "pi-mono_before-compaction.jsonl")
    tree = Session.open(path).tree
    ctx = build_context(tree, tree.active_leaf)
    entry = next(e for e in tree.entries if e.line == 1002)
    msg = entry.message
    text = next(m["content"] for m in ctx.messages if m["entryId"] == entry.id)
    assert text == (f"Ran `find .`\n```\n{msg['output']}\n```\n\n[Output truncated. Full output: "
                    "/var/folders/49/l4171l3n219_xwq30fmyzr8w0000gn/T/pi-bash-a4cd2460b5b4e0be.log]")


def test_branch_summary_ends_with_the_tag_right_after_the_text():
    b = Builder()
    root = b.user("q")
    b.add("branch_summary", fromId=root, summary="We tried X.")
    tree = SessionTree(parse_bytes(b.data()))
    ctx = build_context(tree, tree.active_leaf)
    assert ctx.messages[-1]["content"] == f"{BRANCH_PREFIX}\n\n<summary>\nWe tried X.</summary>"
