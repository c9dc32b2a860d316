"""Errors the core raises: each message is meant to be shown to a person as it is."""


class SessionError(Exception):
    """A session operation that cannot be done; nothing was written."""


class SessionNotFound(SessionError):
    pass


class UnknownEntry(SessionError):
    """An id that names no entry of the session."""

    def __init__(self, entry_id: str):
        super().__init__(f"no entry with id {entry_id!r}")
        self.entry_id = entry_id


class AmbiguousEntry(UnknownEntry):
    """A short id that more than one entry starts or ends with."""

    def __init__(self, ref: str, matches: list[str]):
        SessionError.__init__(self, f"{ref!r} could be {len(matches)} entries ({', '.join(matches[:3])}…): give more of the id")
        self.entry_id = ref


class InvalidWrite(SessionError):
    """A write refused by validation (a compaction's cut point, a fork target, ...)."""


class ReadOnlySession(SessionError):
    """A write to a session we must not change (SPEC §5c: not pi v3) or cannot (permissions)."""
