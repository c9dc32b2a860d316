"""Writing the DOT source of a layout and running `dot` on it: the source is written directly,
`dot` runs with a time limit, dies with the request or the server, and its SVG is trimmed to
about half its bytes for inlining."""

from __future__ import annotations

import atexit
import ctypes
import html
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

from ...core.entries import entry_text
from ...core.tree import SessionTree
from .. import client
from ..client import ClientGone
from .direction import RANKDIRS
from .layout import GraphLayout
from .style import linker, node_specs
from .text import dom_id, dot_text


def _quoted(value) -> str:
    """A dot string: every text in it went through dot_text (backslashes doubled), so only the
    quotes are left to escape."""
    return '"' + str(value).replace('"', '\\"') + '"'


class DotGraph:
    """The few calls of `graphviz.Digraph` a drawing makes, writing the source directly (the
    library's quoting of each attribute took longer than laying out a 1,000-node drawing)."""

    def __init__(self, name: str):
        self.name = name
        self._lines: list[str] = []

    @staticmethod
    def _attrs(attrs: dict) -> str:
        return " ".join(f"{k}={_quoted(v)}" for k, v in attrs.items())

    def attr(self, kind: str = "graph", **attrs) -> None:
        self._lines.append(f"\t{kind} [{self._attrs(attrs)}]")

    def node(self, name: str, **attrs) -> None:
        ident = attrs.pop("id", None)  # first, so that the line starts with what names the node
        head = {"id": ident} if ident is not None else {}
        self._lines.append(f"\t{_quoted(name)} [{self._attrs({**head, **attrs})}]")

    def edge(self, a: str, b: str, **attrs) -> None:
        self._lines.append(f"\t{_quoted(a)} -> {_quoted(b)}" + (f" [{self._attrs(attrs)}]" if attrs else ""))

    def subgraph(self, graph: "DotGraph") -> None:
        self._lines.append(graph.source.replace("digraph ", "subgraph ", 1))

    @property
    def source(self) -> str:
        return f"digraph {_quoted(self.name)} {{\n" + "\n".join(self._lines) + "\n}\n"

def to_dot(tree: SessionTree, layout: GraphLayout, node_url, long_urls: dict[str, str] | None = None,
           rankdir: str = "TB", specs: dict[str, dict] | None = None) -> DotGraph:
    """The dot graph, laid out in `rankdir` (RANKDIRS); `node_url(entry_id)` gives the link each node carries (its deep link; a
    "more branches" node adds the `open` parameter); `specs` are the node_specs when made already."""
    if long_urls is None:
        long_urls = {}
    if specs is None:
        specs = node_specs(tree, layout, linker(node_url, long_urls))
    g = DotGraph("session")
    rankdir = rankdir if rankdir in RANKDIRS else "TB"
    if layout.level == "skeleton":  # the shape at a glance: one size of text, nodes close together
        g.attr(rankdir=rankdir, nodesep="0.12", ranksep="0.15", bgcolor="transparent")
        g.attr("node", fontname="DejaVu Sans", fontsize="9", margin="0.06,0.02", height="0.2")
    else:
        g.attr(rankdir=rankdir, nodesep="0.25", ranksep="0.3", bgcolor="transparent")
        g.attr("node", fontname="DejaVu Sans", fontsize="10", margin="0.12,0.04", height="0.3")
    g.attr("edge", color="#9ca3af", arrowhead="none")  # a tree drawn down or rightwards needs no arrows
    if layout.one_branch:  # the path straight down, each fork point's group to its right
        g.attr("graph", ordering="out")
    more = {m.id for m in layout.more}
    clusters = _subagent_clusters(tree, layout)
    sub = {root: DotGraph(f"cluster_{i}") for i, root in enumerate(dict.fromkeys(clusters.values()))}
    for root, c in sub.items():
        c.attr(label=f"sub-agent · {dot_text(_first_line(tree, root), 40)}", style="rounded,dashed", color="#8b5cf6",
               fontcolor="#6d28d9", fontsize="9", labeljust="l")
    files = file_parts(tree, layout)  # a conversation across files: each file's own part boxed, named
    boxes = {i: DotGraph(f"cluster_file_{i}") for i in sorted(set(files.values()))}
    for i, c in boxes.items():
        part = tree.joined.parts[i]
        c.attr(label=dot_text(part.said, 70), labeljust="l",
               style="rounded,bold" if part.shown else "rounded", color="#0f766e" if part.shown else "#64748b",
               fontcolor="#115e59" if part.shown else "#334155", fontsize="9", id=f"part-{i}")
    for name, attrs in specs.items():
        root = clusters.get(name)  # a sub-agent's nodes go in its cluster
        part = files.get(name)
        (sub[root] if root is not None else boxes[part] if part is not None else g).node(name, **attrs)
    for c in sub.values():
        g.subgraph(c)
    for c in boxes.values():
        g.subgraph(c)
    for a, b in layout.edges:
        if layout.one_branch and b not in more:
            g.edge(a, b, weight="20")
        else:
            g.edge(a, b)
    return g


def _first_line(tree: SessionTree, entry_id: str) -> str:
    return entry_text(tree.by_id[entry_id]) or str(tree.by_id[entry_id].type)


def _subagent_clusters(tree: SessionTree, layout: GraphLayout) -> dict[str, str]:
    """Drawn node -> the first entry of the sub-agent run it belongs to (Claude Code sidechain
    entries, `Entry.sidechain`): each run is drawn boxed, off the main path."""
    roots: dict[str, str] = {}

    def root_of(entry_id: str) -> str:
        seen = []
        node = entry_id
        while node not in roots:
            parent = tree.parent.get(node)
            if parent is None or not getattr(tree.by_id[parent], "sidechain", False):
                roots[node] = node
                break
            seen.append(node)
            node = parent
        for x in seen:
            roots[x] = roots[node]
        return roots[node]

    out: dict[str, str] = {}
    for e in layout.nodes:
        if getattr(e, "sidechain", False):
            out[dom_id(e.id)] = root_of(e.id)
    for seg in layout.segments:
        if all(getattr(tree.by_id[x], "sidechain", False) for x in seg.ids):
            out[seg.id] = root_of(seg.first_id)
    return out


def file_parts(tree: SessionTree, layout: GraphLayout) -> dict[str, int]:
    """Drawn node -> the conversation part (a file, `tree.joined.parts`) it is of, for a tree
    joined from several files; empty for one file's. A fold is of the file its first entry is:
    a file's first entry is never folded into the file before (`build_layout` keeps it drawn)."""
    joined = tree.joined
    if joined is None or len(joined.parts) < 2:
        return {}
    home = joined.home
    out = {dom_id(e.id): home[e.id] for e in layout.nodes if e.id in home}
    for seg in layout.segments:
        if seg.first_id in home:
            out[seg.id] = home[seg.first_id]
    for r in layout.retries:
        if r.start in home:
            out[r.id] = home[r.start]
    return out


class DotTimeout(RuntimeError):
    """`dot` took longer than its limit (and was killed)."""


DOT_TIMEOUT = 8.0  # seconds one `dot` run may take before the page falls back
DOT_POLL = 0.1  # seconds between two looks at whether the client is still there
_running: set[subprocess.Popen] = set()
_running_lock = threading.Lock()


_SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None


def _die_with_parent() -> None:  # runs in the child, between fork and exec
    """`dot` gets SIGKILL when the thread that started it ends (request over, server stopped)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def run_dot(source: str, timeout: float | None = None) -> str:
    """`dot -Tsvg` on `source`, killed past `timeout` seconds (DotTimeout), when no client wants
    the drawing any more (ClientGone), or with the server."""
    limit = DOT_TIMEOUT if timeout is None else timeout
    if not client.still_wanted():
        raise ClientGone("the client left before the drawing was made")
    # setpriv asks for the same signal as _die_with_parent, and lets Python start `dot` without
    # copying the server's memory map first (a preexec_fn forces a fork: 0.2 s for a big session).
    linux = sys.platform.startswith("linux")
    # The source reaches `dot` from a file, not a pipe: `communicate(input, timeout)` writes its
    # input only in its first call, so a source bigger than a pipe's 64 KiB, not all written when
    # that call's short poll ran out, would leave `dot` waiting for the rest until the time limit.
    with tempfile.TemporaryFile() as stdin:
        stdin.write(source.encode("utf-8"))
        stdin.seek(0)
        proc = subprocess.Popen(
            [_SETPRIV, "--pdeathsig", "KILL", "dot", "-Tsvg"] if _SETPRIV else ["dot", "-Tsvg"],
            stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            preexec_fn=_die_with_parent if linux and not _SETPRIV else None,
        )
    with _running_lock:
        _running.add(proc)
    deadline = time.monotonic() + limit
    try:
        while True:
            try:
                out, err = proc.communicate(timeout=max(0.0, min(DOT_POLL, deadline - time.monotonic())))
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    raise DotTimeout(f"dot took longer than {limit:g} s") from None
                if not client.still_wanted():
                    raise ClientGone("the client left while the drawing was being made") from None
    finally:
        if proc.poll() is None:  # timed out, abandoned, or the request was interrupted
            proc.kill()
            proc.communicate()
        with _running_lock:
            _running.discard(proc)
    if proc.returncode != 0:
        raise RuntimeError("dot failed: " + err.decode("utf-8", "replace").strip()[:300])
    return out.decode("utf-8")


@atexit.register
def kill_running_dots() -> None:
    """No `dot` outlives the server."""
    with _running_lock:
        procs = list(_running)
    for proc in procs:
        if proc.poll() is None:
            proc.kill()


_DOT_COMMENT = re.compile(r"<!--.*?-->\n", re.S)
_DOT_NOISE = re.compile(r'<title>[^<]*</title>\n?| id="(?:a_[^"]*|edge\d+)"| font-family="[^"]*"| text-anchor="middle"')
_GEOMETRY = re.compile(r'( (?:points|d|x|y)=")([^"]*)')
_PRECISION = re.compile(r"(\d\.\d)\d+")


def render_svg(tree: SessionTree, layout: GraphLayout, node_url, timeout: float | None = None,
               rankdir: str = "TB") -> str:
    """The drawing as inline SVG; DotTimeout when `dot` runs out of time."""
    return render_drawing(tree, layout, node_url, timeout, rankdir).svg


@dataclass
class Drawing:
    """A laid-out drawing: its SVG, the node_specs it was made from, and its shape (what must stay
    the same for patch_drawing to reuse it)."""

    svg: str
    specs: dict[str, dict]
    shape: tuple


def drawing_shape(tree: SessionTree, layout: GraphLayout) -> tuple:
    return ([dom_id(e.id) for e in layout.nodes], [s.id for s in layout.segments] + [r.id for r in layout.retries], layout.more,
            frozenset(layout.edges), layout.collapsed, layout.level, bool(_subagent_clusters(tree, layout)),
            tuple(sorted(file_parts(tree, layout).items())))


def drawing_specs(tree: SessionTree, layout: GraphLayout, node_url) -> tuple[dict[str, dict], dict[str, str]]:
    """The node specs of a drawing and the long URLs their placeholders stand for (`linker`):
    made once per drawing, for `patch_drawing` and, when it cannot patch, `render_drawing`."""
    long_urls: dict[str, str] = {}
    return node_specs(tree, layout, linker(node_url, long_urls)), long_urls


def render_drawing(tree: SessionTree, layout: GraphLayout, node_url, timeout: float | None = None,
                   rankdir: str = "TB", prepared: tuple[dict, dict] | None = None) -> Drawing:
    """The drawing laid out by `dot` (with its `drawing_specs`, when made already); DotTimeout
    when it runs out of time."""
    specs, long_urls = prepared or drawing_specs(tree, layout, node_url)
    svg = run_dot(to_dot(tree, layout, node_url, long_urls, rankdir, specs).source, timeout)
    svg = svg[svg.index("<svg"):]  # drop the XML prolog and doctype: the SVG is inlined in HTML
    for token, url in long_urls.items():
        svg = svg.replace(f'"{token}"', f'"{html.escape(url)}"')
    # The same drawing in about half the bytes, for 100k-entry sessions: dot's comments, <title>s
    # and anchor and edge ids only repeat node names; the font and centring are set once in app.css;
    # coordinates keep one decimal (a twentieth of a pixel); and `&#45;` (dot's escape for "-",
    # so that names never put "--" in a comment) is a plain "-" outside comments.
    svg = _DOT_NOISE.sub("", _DOT_COMMENT.sub("", svg))
    svg = _GEOMETRY.sub(lambda m: m.group(1) + _PRECISION.sub(r"\1", m.group(2)), svg)
    return Drawing(svg.replace("&#45;", "-"), specs, drawing_shape(tree, layout))
