"""Which Pygments lexer highlights a text, and how much of it, so that none can freeze the server.

A lexer is chosen by a name the session file controls (a tool call's file name), and some of
Pygments' lexers are regexes that backtrack polynomially: the systemd lexer takes seconds on a
line of a few hundred spaces, and a regex holds every thread of the server while it runs. So
each lexer class is measured once per process on small crafted texts at two sizes, four times
apart (in thread CPU time, which a busy machine does not skew): a linear lexer takes about four
times as long on the bigger one. A superlinear one highlights a text only in pieces small enough
that its measured growth keeps each under `PIECE_SECONDS`, cut at line ends (a piece too small
to be worth it: the text is plain). What highlighting costs in one response is bounded too:
past `RESPONSE_SECONDS` the rest of the response's code is plain.
"""

from __future__ import annotations

import functools
import math
import os
import threading
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pygments import highlight as _pygmentize
from pygments.formatter import Formatter
from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_by_name, get_lexer_for_filename
from pygments.util import ClassNotFound

from .held_html import HeldHtml

# Texts that make backtracking lexers slow, at a size: runs of blanks before a character that
# ends no token, lines of blanks, and runs of one punctuation mark.
PROBES = (
    lambda n: " " * n + "x",
    lambda n: (" " * (n // 4) + "x\n") * 4,
    lambda n: "\t" * n + "x",
    *((lambda n, c=c: c * n) for c in "=\"'<([/\\#*-:;@`"),
    lambda n: "a " * (n // 2),
)
PROBE_SIZE = 100  # the smaller of the two sizes; the bigger is four times this
LINEAR = 6.0  # the bigger probe taking at most this many times longer: linear (4 in theory)
QUICK = 0.0005  # seconds: a bigger probe quicker than this says nothing about growth
PIECE_SECONDS = 0.05  # the most a piece of a superlinear lexer's text may cost, as extrapolated
MIN_PIECE = 400  # characters: a lexer that allows smaller pieces shows its texts plain
RESPONSE_SECONDS = 1.0  # of highlighting in one response; the rest is plain

# Code highlighted whole, held by its text (`held_html`): 8 million characters at most.
_highlighted = HeldHtml(chars=8_000_000, shortest=200)
_pieces: dict[type, float] = {}  # lexer class -> the longest text it lexes at once (inf: any)
_pieces_lock = threading.Lock()
_spent: ContextVar[list[float] | None] = ContextVar("highlight_spent", default=None)


def start_response() -> None:
    """A new response starts with its whole highlighting time (called before each request)."""
    _spent.set([0.0])


@contextmanager
def plain_code():
    """Within it, code is shown plain, as a response whose highlighting time is spent: what an
    export's first screens use, so that they look like the entries its script renders after
    them (plain) and the command pays no lexer's measuring."""
    token = _spent.set([math.inf])
    try:
        yield
    finally:
        _spent.reset(token)


def time_left() -> bool:
    """Whether code highlighted now is highlighted (else it is shown plain: the response's
    highlighting time is spent, or it is an export's first screens)."""
    spent = _spent.get()
    return spent is None or spent[0] < RESPONSE_SECONDS


def piece_size(lexer: Lexer) -> float:
    """The longest text the lexer's class is given at once: inf for a linear one, 0 for one not
    used (measured once per class)."""
    if isinstance(lexer, TextLexer):
        return math.inf
    cls = type(lexer)
    size = _pieces.get(cls)
    if size is None:
        with _pieces_lock:
            size = _pieces.get(cls)
            if size is None:
                size = _pieces[cls] = _measure(cls)
    return size


def _measure(cls: type) -> float:
    try:
        lexer = cls(stripnl=False)
        _seconds(lexer, "x = 1\n")  # (its patterns are compiled on first use: not timed)
        size = math.inf
        for probe in PROBES:
            size = min(size, _probe_piece(lexer, probe))
            if size < MIN_PIECE:
                return 0
        return size
    except Exception:  # a lexer that needs options we do not give, or fails on plain text: not used
        return 0


def _probe_piece(lexer: Lexer, probe) -> float:
    """The longest text of this kind the lexer keeps under PIECE_SECONDS, from its growth between
    two sizes four times apart (the fastest of a few tries at each). A growth seen where the times
    are so short that one interruption of the thread could fake it is confirmed a size further up."""
    size = 4 * PROBE_SIZE
    small = _fastest(lexer, probe(PROBE_SIZE))
    big = _fastest(lexer, probe(size), max(QUICK, 4 * LINEAR * small, PIECE_SECONDS))
    if _linear(small, big):
        return math.inf
    if big < PIECE_SECONDS:
        size *= 4
        small, big = big, _fastest(lexer, probe(size), LINEAR * big)
        if _linear(small, big):
            return math.inf
    growth = math.log(big / max(small, 1e-9), 4)  # the exponent: 1 linear, 2 quadratic, 3 cubic
    return size * (PIECE_SECONDS / big) ** (1 / growth)


def _linear(small: float, big: float) -> bool:
    return big <= QUICK or big <= LINEAR * max(small, 1e-9)


def _fastest(lexer: Lexer, text: str, stop_after: float = math.inf) -> float:
    return min(_seconds(lexer, text, stop_after) for _ in range(3))


def _seconds(lexer: Lexer, text: str, stop_after: float = math.inf) -> float:
    """The thread CPU time lexing `text` takes (the count stops early once past `stop_after`)."""
    start = time.thread_time()
    for _ in lexer.get_tokens(text):
        if time.thread_time() - start > stop_after:
            break
    return time.thread_time() - start


def highlight_html(code: str, lexer: Lexer, formatter: Formatter) -> str:
    """The code highlighted within the budgets; what is over them is lexed as plain text. Code
    highlighted before is not highlighted again (`_highlighted`), and costs the budget nothing:
    the same text, lexer and formatter give the same HTML."""
    spent = _spent.get()
    whole = time_left()  # (else plain: not what this code highlighted is, so not held)
    kind = (type(lexer), id(formatter))
    if whole and (held := _highlighted.get(kind, code)) is not None:
        return held
    size = piece_size(lexer) if whole else 0
    if size < MIN_PIECE:
        lexer, size = TextLexer(stripnl=False), math.inf
    start = time.thread_time()
    try:
        if len(code) <= size:
            html = _pygmentize(code, lexer, formatter)
        else:
            plain = TextLexer(stripnl=False)
            html = "".join(_pygmentize(piece, lexer if len(piece) <= size else plain, formatter)
                           for piece in _pieces_of(code, int(size)))
    finally:
        if spent is not None:
            spent[0] += time.thread_time() - start
    return _highlighted.keep(kind, code, html) if whole else html


def _pieces_of(code: str, size: int):
    """The code cut at line ends into pieces of at most `size` characters where lines allow (a
    longer line is a piece of its own)."""
    start = 0
    while start < len(code):
        end = code.rfind("\n", start, start + size) + 1 if len(code) - start > size else len(code)
        if end <= start:  # one line longer than a piece
            end = code.find("\n", start) + 1 or len(code)
        yield code[start:end]
        start = end


def by_name(language: str | None) -> Lexer:
    """A lexer by name, else by the name as a file extension; plain text otherwise (guessing
    from the code costs too much for long outputs)."""
    if language:
        try:
            return get_lexer_by_name(language, stripnl=False)
        except ClassNotFound:
            return for_path("x." + language)
    return TextLexer(stripnl=False)


def for_path(path: Any) -> Lexer:
    """The lexer a file's name suggests, so written or read files look like their language."""
    cls = _class_for_name(os.path.basename(path)) if isinstance(path, str) and path else TextLexer
    return cls(stripnl=False)


@functools.lru_cache(maxsize=4096)
def _class_for_name(name: str) -> type:
    """Pygments' lexer class for a file's name: its patterns are matched against the name alone,
    each of some 600 lexers' in turn (a print of a big session asked 120 times, for 0.14 s)."""
    try:
        return type(get_lexer_for_filename(name))
    except ClassNotFound:
        return TextLexer
