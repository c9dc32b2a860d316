"""A session longer than an export's first screens, whose hostile entries all come after them,
so that only the export's script renders them (from the page's data): for the export tests."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Builder

FILLER_TURNS = 50  # 100 entries of ordinary talk first: more than the server renders
HOSTILE = {
    "user": '<script>alert("xss-user")</script> and <img src=x onerror=alert("xss-img")>',
    "link": 'see [the docs](javascript:alert("xss-link")) and [a page](https://example.com/a?b=1&c="2")',
    "code": 'inline `</script><script>alert("xss-code")</script>` done',
    "fence": '```\n</script><svg onload=alert("xss-fence")>\n```',
    "thinking": '<iframe src="javascript:alert(\'xss-think\')"></iframe>',
    "command": '<script>alert("xss-cmd")</script>',
    "result": '<svg/onload=alert("xss-result")>',
    "label": '<img src=x onerror=alert("xss-label")>',
    "tool": '<b onmouseover=alert("xss-tool")>bash</b>',
    "model": '<i onclick=alert("xss-model")>m</i>',
}
HOSTILE_ID = 'x"><script>alert("xss-id")</script>'


def write_long_hostile_session(path: Path) -> dict[str, str]:
    """The session, written to `path`; returns the ids of its hostile entries (and of its last)."""
    h = HOSTILE
    b = Builder()
    b.add("model_change", provider="anthropic", modelId="claude-sonnet-4-5")
    for n in range(1, FILLER_TURNS + 1):
        b.user(f"Filler question {n}")
        b.assistant(f"Filler answer {n}")
    ids = {"user": b.add("message", id=HOSTILE_ID, message={"role": "user", "content": h["user"]})}
    ids["link"] = b.assistant(h["link"] + "\n\n" + h["code"] + "\n\n" + h["fence"], model=h["model"])
    ids["thinking"] = b.add("message", message={"role": "assistant", "stopReason": "toolUse", "model": "m1", "content": [
        {"type": "thinking", "thinking": h["thinking"]},
        {"type": "toolCall", "id": "c1", "name": h["tool"], "arguments": {"command": h["command"]}},
        {"type": "image", "mimeType": 'image/png" onerror="alert(1)', "data": 'x" onerror="alert(2)'},
    ]})
    ids["result"] = b.tool_result("c1", h["result"], name="bash")
    b.add("label", targetId=ids["link"], label=h["label"])
    ids["last"] = b.user("The very last question of the session")
    b.write(path)
    return ids
