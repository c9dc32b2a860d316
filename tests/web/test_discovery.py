"""The index page of a home folder's agent folders: grouped by agent, then project, each
session with its format, and nothing outside those folders."""

from webapp.web.app import create_app
from tests.core.test_formats_discovery import CLAUDE, home  # noqa: F401 (a fixture)


def test_the_index_page_groups_by_agent_and_shows_each_format(home):
    app = create_app(home, within=(".pi/agent/sessions", ".claude/projects", ".codex/sessions"))
    page = app.test_client().get("/").get_data(as_text=True)
    assert page.index("Claude Code") < page.index("Codex")
    assert 'class="badge format">claude-code<' in page and 'class="badge format">codex<' in page
    assert "notes.jsonl" not in page
    claude = app.test_client().get("/s/" + CLAUDE)
    assert claude.status_code == 200
