"""session-tree as an MCP server (the official `mcp` SDK's MCPServer): the tools an agent calls to
list and search sessions, read a branch, get the context at an entry, compare two branches and
read the corpus figures; and, only when the user allows writes, to label an entry or give a
verdict on a branch (the core's own appends, SPEC §5d).

The same server answers on stdio (`session-tree mcp`) and over streamable HTTP inside the web app
(`web/mcp_http.py`). A tool's failure that the user can act on (no such session, an ambiguous id,
a read-only file) is an MCP tool error of one line, never a traceback."""

from __future__ import annotations

import functools
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field
from werkzeug.exceptions import HTTPException

from ..core.errors import SessionError
from ..core.verdicts import PERSON_VERDICTS, give_verdict
from .corpus import figures_text, search_text, sessions_text
from .reading import branch_text, comparison_text, context_text, opened, session_text
from .sources import Sources

NAME = "session-tree"
INSTRUCTIONS = (
    "session-tree reads coding agents' sessions (pi, Claude Code, Codex) as trees of entries: a "
    "session may hold several branches, each ending at a tip (leaf). Find sessions with "
    "list_sessions or search, look one over with show_session (its branches and their tips), then "
    "read_branch, get_context (what the model was sent at an entry) or compare_branches. Name a "
    "session by its path as list_sessions gives it; an entry by its id or a unique start of it."
)

Session = Annotated[str, Field(description="the session's path under the root, as list_sessions gives it")]
Entry = Annotated[str, Field(description="an entry id, or a unique start of it")]
Start = Annotated[int, Field(ge=0, description="the first block to show (a cut answer says where to go on)")]

_READS = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
_WRITES = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False)


def _one_line(tool):
    """The tool, with what the user can act on (a missing session, an unknown id, a file that may
    not be written, a database that cannot be read) turned into a tool error of one line."""
    @functools.wraps(tool)
    def run(*args, **kwargs):
        try:
            return tool(*args, **kwargs)
        except HTTPException as exc:  # the store's: a file that cannot be read
            raise ToolError(exc.description or str(exc)) from None
        except (SessionError, OSError, ValueError) as exc:
            raise ToolError(" ".join(str(exc).split())[:500]) from None
        except RecursionError:
            raise ToolError("the session nests data too deeply to be read") from None
    return run


def build_server(sources: Sources) -> MCPServer:
    """The MCP server over `sources`, with the write tools only when `sources.allow_writes`."""
    server = MCPServer(NAME, instructions=INSTRUCTIONS)

    def tool(annotations=_READS):
        return lambda fn: server.tool(annotations=annotations)(_one_line(fn))

    @tool()
    def list_sessions(query: Annotated[str, Field(description="words to match in a session's name, first "
                                                  "message, folder, id, file name or text")] = "",
                      page: Annotated[int, Field(ge=1)] = 1) -> str:
        """The sessions under the root, 100 a page: path, agent, entries, branches, when last
        modified, and a title (its name or first message)."""
        return sessions_text(sources, query, page)

    @tool()
    def search(query: Annotated[str, Field(description="every word must occur in the entry")],
               offset: Annotated[int, Field(ge=0)] = 0) -> str:
        """Entries of every session that hold all the words, 20 at a time, best first: the session,
        the entry id, its branch's tip and a snippet."""
        return search_text(sources, query, offset)

    @tool()
    def show_session(session: Session) -> str:
        """A session at a glance: header, entry counts, its branches (tip id and name), the active
        leaf, labels, verdicts and problems."""
        return session_text(sources, session)

    @tool()
    def read_branch(session: Session,
                    leaf: Annotated[str | None, Field(description="the branch's tip (default: the active leaf)")] = None,
                    start: Start = 0) -> str:
        """The branch from its root to `leaf`, entry by entry: id, role or type, and its whole text
        (tool calls with their arguments). A long branch is cut with a note saying how to read on."""
        return branch_text(sources, session, leaf, start)

    @tool()
    def get_context(session: Session,
                    leaf: Annotated[str | None, Field(description="the entry (default: the active leaf)")] = None,
                    request: Annotated[bool, Field(description="the request as it would be sent (tool results "
                                                   "supplied, failed replies left out) instead")] = False,
                    start: Start = 0) -> str:
        """What the model sees at an entry: the messages of the context built from the path (the
        latest compaction's summary and what it kept, context edits applied), the model, thinking
        level and tokens; as `session-tree context` prints it."""
        return context_text(sources, session, leaf, request, start)

    @tool()
    def compare_branches(session: Session, a: Entry, b: Entry) -> str:
        """Two branches of one session (given by their tips): where they part, how each ended, its
        figures (turns, tokens, cost, tool calls and errors, files) after the parting and on its
        whole path, verdicts given, and how the contexts at the two tips differ."""
        return comparison_text(sources, session, a, b)

    @tool()
    def corpus_figures() -> str:
        """Figures across every session under the root, from the corpus index: cost and tokens by
        model, project, agent and week; sessions with most branches; compaction audit scores; tool
        error rates; branch outcomes by model."""
        return figures_text(sources)

    if sources.allow_writes:
        @tool(_WRITES)
        def label_entry(session: Session, entry: Entry,
                        label: Annotated[str, Field(description="the label; empty clears it")]) -> str:
            """Set (or, with an empty label, clear) the label of an entry: one `label` entry appended
            to the session (a pi v3 file; other files are never written)."""
            s = opened(sources, session)
            target = s.tree.find(entry).id
            text = label.strip()
            written = s.set_label(target, text or None)
            what = f"label {text!r} set on {target}" if text else f"label of {target} cleared"
            return f"{what} (entry {written['id']} appended)"

        @tool(_WRITES)
        def give_branch_verdict(session: Session, leaf: Entry,
                                verdict: Annotated[str, Field(description=" or ".join(PERSON_VERDICTS))],
                                note: Annotated[str, Field(description="why, in a few words")] = "") -> str:
            """Record the user's verdict on the branch ending at `leaf` (better, worse or winner):
            appended to a pi v3 session, kept in session-tree's data folder for a file it never writes."""
            v = give_verdict(opened(sources, session), leaf, verdict, note)
            where = "appended to the session" if v.where == "file" else "kept in the data folder (the file is read-only)"
            return f"{v.verdict} on {v.target}: {where}"

    return server
