"""Browser tests: the real app served on 127.0.0.1, driven by Playwright in Debian's Chromium."""

from __future__ import annotations

import shutil
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect, sync_playwright
from werkzeug.serving import make_server

from webapp.model.llm import ModelConfig, model_identity
from webapp.web.app import create_app
from webapp.web.auth import owner

# The tests import this module as `tests.browser.conftest`, pytest as `conftest`: one module under
# both names, so that LiveServer.page, set by the `page` fixture, is the one the tests' servers read.
sys.modules.setdefault("tests.browser.conftest", sys.modules[__name__])

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
# What a test waits for must appear, however long a loaded 2-core machine takes to draw the
# 3,000-entry sample: Playwright's 5 s default fails such a wait for the machine's sake. A wait
# for something that must not happen is a `wait_for_timeout` of its own, unchanged by this.
expect.set_options(timeout=30_000)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


PATIENCE = 60.0  # seconds a poll below waits at most for what must happen (no speed is measured)


def htmx_settled(page) -> None:
    """Wait until htmx has no request in flight and nothing swapping or settling: whatever an
    action set going has been done (a wait on that state, where a fixed pause would guess)."""
    expect(page.locator(".htmx-request, .htmx-swapping, .htmx-settling, .htmx-added")).to_have_count(0)


def until(page, condition, what: str) -> None:
    """Poll `condition` (between polls the page runs) until it holds, for at most PATIENCE."""
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert time.monotonic() < deadline, f"waited {PATIENCE:g} s for {what}"
        page.wait_for_timeout(50)


class LiveServer:
    """The app served on a free port. The test's page (the `page` fixture's, kept in `page`) is
    logged in at once, as a person is: by the address with the token, which sets the cookie."""

    page = None

    def __init__(self, root: Path, app_config: dict | None = None):
        self.root = root
        self.app = create_app(root, host="127.0.0.1", **(app_config or {}))
        self.token = owner(self.app).token
        self.server = make_server("127.0.0.1", 0, self.app, threaded=True)
        self.port = self.server.server_port
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        if LiveServer.page is not None:
            self.login(LiveServer.page)

    def login(self, page) -> None:
        """Log `page`'s browser context in: the token in the address of a small asset (the index
        page would start the corpus index's build), answered with the cookie and a redirect."""
        page.goto(f"{self.url}/static/favicon.svg?token={self.token}")
        assert page.url == f"{self.url}/static/favicon.svg"

    def rel(self, name_part: str) -> str:
        """The URL path of the session whose file name contains `name_part`."""
        for path in sorted(self.root.rglob("*.jsonl")):
            if name_part in path.name:
                return "/s/" + path.relative_to(self.root).as_posix()
        raise LookupError(name_part)

    def stop(self) -> None:
        self.server.shutdown()


@pytest.fixture
def sessions_root(tmp_path) -> Path:
    """A private copy of the bundled sample sessions: tests may write to it."""
    root = tmp_path / "sessions"
    shutil.copytree(SAMPLES, root)
    return root


@pytest.fixture
def live_server(sessions_root):
    server = LiveServer(sessions_root)
    yield server
    server.stop()


@pytest.fixture
def model_server(llm_server):
    """`serve(root, model, timeout, models, **settings)`: the app on `root` with `model` (and
    `models` besides, as `serve --model` offers them; its window and max_tokens when `settings`
    name `context_window` or `max_tokens`) behind the test's local OpenAI-compatible
    server (`llm_server`); every server it started stops after the test."""
    started: list[LiveServer] = []

    def serve(root: Path, model: str = "openai/test-model", timeout: float = 120, models: tuple[str, ...] = (),
              **settings) -> LiveServer:
        limits = {k: settings.pop(k) for k in ("context_window", "max_tokens") if k in settings}
        config = ModelConfig(model, api_base=llm_server.api_base, api_key="dummy", timeout=timeout, **limits)
        model_identity(config)  # imports litellm now: a cold import takes seconds on a busy machine
        started.append(LiveServer(root, {"MODEL_CONFIG": config, "MODELS": tuple(models), **settings}))
        return started[-1]

    yield serve
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def browser():
    # The app imports litellm on its first model call (seconds, more on a loaded machine): import it
    # once here, so that a test's wait for a reply measures the app, not the import.
    from webapp.model.llm import _litellm

    _litellm()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


VIEWPORT = {"width": 1400, "height": 900}


@pytest.fixture(scope="session")
def browser_context(browser):
    """One browser context per test process, each test on a page of its own in it, beside a blank
    page kept open: a test's page then starts no renderer process of its own (tests/browser by
    bench/suite_cpu.py: 325 s of CPU with a context a test, 239 s with this). What a test leaves in the
    context is cleared after it (`leave_clean`), so that each test starts as in a new context."""
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    context.keeper = context.new_page()
    yield context
    context.close()


def origin_of(url: str) -> str | None:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") else None


def leave_clean(context, origins: set[str]) -> None:
    """What one test's pages left in the shared context, gone: its pages, its cookies, whatever
    the origins it visited keep (local and session storage, IndexedDB, caches), offline mode."""
    for pg in context.pages:
        if pg is not context.keeper:
            pg.close()
    if origins:  # (through the keeper's session, which reaches the context's storage)
        cdp = context.new_cdp_session(context.keeper)
        for origin in sorted(origins):
            cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
        cdp.detach()
    context.clear_cookies()
    context.set_offline(False)


@pytest.fixture
def page(browser_context):
    origins: set[str] = set()

    def visited(request) -> None:
        if origin := origin_of(request.url):
            origins.add(origin)

    browser_context.on("request", visited)
    pg = browser_context.new_page()
    pg.set_default_navigation_timeout(90_000)  # (a page load, like a wait above: the machine's load is not the subject)
    pg.errors = []
    pg.on("pageerror", lambda exc: pg.errors.append(str(exc)))
    pg.on("dialog", lambda d: (pg.errors.append(f"dialog: {d.message}"), d.dismiss()))
    LiveServer.page = pg
    yield pg
    LiveServer.page = None
    browser_context.remove_listener("request", visited)
    leave_clean(browser_context, origins)


@pytest.fixture(autouse=True)
def console(page):
    """Console errors of the page; with its uncaught exceptions (page.errors), every browser test
    ends with none (a test that provokes one on purpose checks it and clears it)."""
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    yield errors
    assert page.errors == [] and errors == []


# Where a drawn node is in the minimap, on screen: the node's centre in the drawing's own
# coordinates, mapped through the minimap's scale.
_MINIMAP_SPOT = """(g) => {
  const svg = document.querySelector('#graph svg'), small = document.querySelector('#minimap svg');
  const b = g.getBBox(), m = svg.getScreenCTM().inverse().multiply(g.getScreenCTM());
  const pt = svg.createSVGPoint();
  pt.x = b.x + b.width / 2; pt.y = b.y + b.height / 2;
  const c = pt.matrixTransform(m).matrixTransform(small.getScreenCTM());
  return [c.x, c.y];
}"""


@pytest.fixture
def bring_into_view(page):
    """Show a node of a drawing too big for the pane as a person does: click the minimap where
    the node is (Fit shows the part around the selection at a legible size, not everything)."""

    def show(node_locator) -> None:
        expect(page.locator("#minimap")).to_be_visible()
        x, y = node_locator.evaluate(_MINIMAP_SPOT)
        page.mouse.click(x, y)

    return show


# What the graph draws beside its nodes (compaction badges, the bands' brackets, labels and cut
# marks, app.js and bands.js) must cover no node and no other mark. The parts of one band piece
# (its tint, bracket and label) are drawn on each other on purpose: they count as one mark.
_OVERLAPS = """() => {
  const r = (el) => el.getBoundingClientRect();
  const hit = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const name = (el) => el.textContent || el.getAttribute('class');
  const marks = [...document.querySelectorAll(
    '#graph text.replaced-by, #graph g.bands .band-bg, #graph g.bands .band-bracket, #graph g.bands text, #graph g.bands line')];
  const group = (el) => el.closest('g.band-sum, g.band-kept, g.band-cut') || el;
  const shapes = [...document.querySelectorAll('#graph g.node')].map((g) => [g, g.querySelector('polygon, path, ellipse')]);
  const labels = [...document.querySelectorAll('#graph g.node text:not(.replaced-by)')];
  const out = [];
  marks.forEach((m, i) => {
    const box = r(m);
    for (const [g, s] of shapes) if (s && hit(box, r(s))) out.push([name(m), g.id]);
    for (const t of labels) if (t !== m && hit(box, r(t))) out.push([name(m), t.textContent]);
    marks.forEach((o, j) => { if (j > i && group(o) !== group(m) && hit(box, r(o))) out.push([name(m), name(o)]); });
  });
  return out;
}"""


def overlapping_marks(page) -> list:
    """Pairs (mark, what it covers) whose boxes on screen intersect: none when the graph reads."""
    return page.evaluate(_OVERLAPS)
