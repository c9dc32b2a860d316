"""pi (SPEC §1, §2, §5c): the format session-tree writes, and the reader of files in no known format.

- Files: `~/.pi/agent/sessions/--<cwd>--/<timestamp>_<id>.jsonl`, one folder per working
  directory; pi keeps them elsewhere when `PI_CODING_AGENT_SESSION_DIR` or the `sessionDir`
  setting of its settings file (`<agent folder>/settings.json`, the agent folder being
  `PI_CODING_AGENT_DIR` or `~/.pi/agent`) says so (pi's docs/configuration.md and settings.md),
  and the folder found by default follows them in that order.
- First line: a `session` header (versions 1 to 3); a file whose first line is no known format's
  is read here too, as entries without a header.
- Reading: `reader.PiReader` reads every view's entries; `columns.ColumnLog` reads the usual
  message line with a compiled decoder into columns for `show` (the rest through `PiReader`);
  `projection` reads its lines as entry rows in DuckDB for the corpus index's big builds.
- Links (`links.py`): a fork's header names its source file, `parentSession`.
- Writing: only version 3 files (and new ones); pi migrates an older file by rewriting it with
  new ids, which would lose what we append.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from ..agent import EDIT, READ, WRITE, Agent, FileTool, Tools, links_of, module_of, reader_of

SESSION_DIR_VARIABLE = "PI_CODING_AGENT_SESSION_DIR"
AGENT_DIR_VARIABLE = "PI_CODING_AGENT_DIR"
SETTINGS_BYTES = 1 << 20  # of a settings file read (pi's is a few hundred bytes)

_PI_REWRITES = "pi rewrites it with new ids when it opens it, which would lose what we append"


def version_of(fmt: str) -> int | None:
    """The version of a pi file's format (`pi-v3`: 3); None for another agent's."""
    return int(fmt[4:]) if fmt.startswith("pi-v") and fmt[4:].isdigit() else None


def why_read_only(fmt: str) -> str | None:
    if fmt in ("pi-v3", "empty"):
        return None
    if fmt in ("pi-v1", "pi-v2"):
        return f"is a pi {fmt[3:]} session: {_PI_REWRITES}"
    if fmt == "unknown":
        return "has no pi session header, so session-tree only reads it"
    return f"is a {fmt.replace('-', ' ')} session, newer than the v3 session-tree writes"


def recognises(first: dict) -> bool:
    """A `session` header (a type that is a list or an object is no format's: read here too)."""
    kind = first.get("type")
    return kind == "session" or not isinstance(kind, (str, type(None)))


def _expanded(value: str, home: Path) -> Path:
    """A folder as pi reads one from its environment or settings: `~` is the home folder."""
    if value == "~" or value.startswith(("~/", "~\\")):
        return home / value[2:]
    return Path(value)


def _setting(settings: Path) -> str | None:
    """The `sessionDir` of pi's settings file, if it names one; a file that is missing, too big or
    not a JSON object names none (pi would say what is wrong with it when it starts)."""
    try:
        with settings.open("rb") as f:
            value = orjson.loads(f.read(SETTINGS_BYTES)).get("sessionDir")
    except (OSError, orjson.JSONDecodeError, AttributeError):
        return None
    return value if isinstance(value, str) and value.strip() else None


def sessions_folder(home: Path) -> Path:
    """Where pi keeps its sessions for this home folder: `PI_CODING_AGENT_SESSION_DIR`, else the
    `sessionDir` setting (a relative one is the working directory's, which a listing of every
    project has not got: it is passed over), else `sessions` in pi's agent folder."""
    named = os.environ.get(SESSION_DIR_VARIABLE, "").strip()
    if named:
        return _expanded(named, home).absolute()
    agent_dir = os.environ.get(AGENT_DIR_VARIABLE, "").strip()
    agent = _expanded(agent_dir, home).absolute() if agent_dir else home / ".pi" / "agent"
    setting = _setting(agent / "settings.json")
    folder = _expanded(setting, home) if setting is not None else None
    return folder if folder is not None and folder.is_absolute() else agent / "sessions"


PI = Agent(
    name="pi", title="pi", flag="pi",
    home_folder=(".pi", "agent", "sessions"), depth=1,  # --<cwd>--/
    recognises=recognises, reader=reader_of(__name__, "PiReader"), links=links_of(__name__),
    why_read_only=why_read_only,
    tools=Tools(
        files={  # (early versions said file_path)
            "read": FileTool(READ, ("path", "file_path")),
            "edit": FileTool(EDIT, ("path", "file_path"), ("oldText", "newText")),
            "write": FileTool(WRITE, ("path", "file_path"), content="content"),
        },
        shells={"bash": "command"},
    ),
    find_folder=sessions_folder,
    projection=module_of(__name__, "projection"),
)
