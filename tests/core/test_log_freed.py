"""A dropped session is freed by reference counting alone.

The entries of a big file are frozen out of the cyclic collector's sight (`reader.gc_paused`,
and the web store after reading many bytes); an object in a reference cycle among them would
never be freed. So a session, its log, its tree and their entries must form no cycle: a server
that opens one big file after another must give back the memory of those it let go."""

import gc
import weakref

import pytest

from tests.conftest import OTHER_FIXTURES, PI_FIXTURES
from webapp.core.session import Session


@pytest.mark.parametrize("path", PI_FIXTURES + OTHER_FIXTURES, ids=lambda p: p.name)
def test_a_dropped_session_is_freed_without_the_cyclic_collector(path):
    session = Session.open(path)
    tree = session.tree
    entry = tree.entries[len(tree.entries) // 2]
    assert tree.path(entry.id)[-1] is entry and entry.raw  # its body read again: bodies in use
    refs = [weakref.ref(x) for x in (session, session.log, session.log.bodies, tree)]
    gc.collect()
    gc.disable()
    try:
        del session, tree, entry
        assert [r() is None for r in refs] == [True] * 4
    finally:
        gc.enable()
