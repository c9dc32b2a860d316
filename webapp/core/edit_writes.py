"""Writing a context edit where a person asked for it (the web's Context tab and transcript, and
`session-tree edit-context`): at the node whose context was shown, in the session when it may be
written, else in a new file that continues it (SPEC §5c), whose copy of the target is edited.
"""

from __future__ import annotations

from pathlib import Path

from .continuation import continue_in_new_session
from .session import Session


def write_context_edit(session: Session, leaf_id: str | None, target_id: str, replacement) -> tuple[dict, Path | None]:
    """The edit as written (pi's `appendContextEdit`: checked, refused in pi's words, normalised)
    and the continuation file it was written in (None: the session itself)."""
    if not session.read_only_reason:
        return session.append_context_edit(target_id, replacement, parent=leaf_id), None
    session.check_edit(leaf_id, target_id, replacement)  # (refused before a file is made)
    ids: dict[str, str] = {}
    path = continue_in_new_session(session, leaf_id, ids)
    copy = Session.open(path)
    return copy.append_context_edit(ids[target_id], replacement, parent=copy.tree.active_leaf), path
