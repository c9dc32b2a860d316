"""A search hit's snippet, made from the entry's text in the tables: the text index keeps no copy of
the text (`text.DDL`: a quarter less to insert, 40% less on disk at 1,000 sessions), so
FTS5's own `snippet()` has nothing to cut. This is that function's choice, redone in Python over
the few hits of one page: the window of `TOKENS` words holding the most distinct phrases of the
query (a sentence's start preferred), each phrase found marked, an ellipsis where the text was
cut. `tests/corpus/test_snippets.py` compares it with SQLite's on texts and queries of every kind.

Words are those of the text index itself (`text.words_of`: SQLite's own tokenizer, asked through
apsw), so that a word FTS5 matched is the word marked: a regular expression and `unicodedata`
missed a word written with combining accents, as macOS writes names, or holding a private-use
character. The tokenizer gives each word's place in the text's UTF-8 bytes: the snippet is cut
from those bytes, at word boundaries, and decoded."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from .text import utf8, words_of

TOKENS = 16  # words in a snippet (FTS5 `snippet()`'s last argument)
_SPACE = b" \t\n\r"
_ENDS = b".:"


def phrases_of(terms: list[str]) -> list[tuple[str, ...]]:
    """Each FTS5 phrase of `terms` (`text.query_terms`: '"a b"') as its folded words."""
    out = []
    for term in terms:
        words = tuple(w for _, _, w in words_of(utf8(term.strip('"')), query=True))
        if words:
            out.append(words)
    return out


def snippet(text: str, phrases: list[tuple[str, ...]], mark: tuple[str, str], ellipsis: str,
            tokens: int = TOKENS) -> str:
    """What FTS5's `snippet(body, 0, mark[0], mark[1], ellipsis, tokens)` gives for `text` and the
    query of `phrases`; the text's start when no phrase is in it."""
    data = utf8(text)
    found_words = words_of(data)
    spans = [(a, b) for a, b, _ in found_words]
    words = [w for _, _, w in found_words]
    size = len(spans)
    found = _instances(words, phrases)  # (position, phrase), in the order of the text
    at_words = [at for at, _ in found]
    best_score, best_start = 0, 0
    firsts = _sentence_starts(data, spans)
    for at, _ in found:
        score, first, last = _score(found, at_words, phrases, at, tokens)
        start = first - int((tokens - (last - first)) / 2)  # (C's division: toward zero)
        if start + tokens > size:
            start = size - tokens
        start = max(start, 0)
        if score > best_score:
            best_score, best_start = score, start
        if firsts and size > tokens:
            j = bisect_right(firsts, at) - 1  # (the sentence the phrase is in: the first starts at 0)
            if firsts[j] < at:
                score = _score(found, at_words, phrases, firsts[j], tokens)[0] + (120 if firsts[j] == 0 else 100)
                if score > best_score:
                    best_score, best_start = score, firsts[j]
    return _cut(data, spans, _coalesced(found, phrases), best_start, best_start + tokens - 1, mark, ellipsis)


def _instances(words: list[str], phrases: list[tuple[str, ...]]) -> list[tuple[int, int]]:
    out = []
    for p, phrase in enumerate(phrases):
        n, head = len(phrase), phrase[0]
        out.extend((i, p) for i, w in enumerate(words) if w == head and tuple(words[i:i + n]) == phrase)
    out.sort()
    return out


def _sentence_starts(data: bytes, spans: list[tuple[int, int]]) -> list[int]:
    """The words that begin a sentence: the first, and each after a '.' or ':' and white space."""
    out = [0] if spans else []
    for i, (a, _) in enumerate(spans[1:], 1):
        j = a - 1
        while j >= 0 and data[j] in _SPACE:
            j -= 1
        if j != a - 1 and j >= 0 and data[j] in _ENDS:
            out.append(i)
    return out


def _score(found: list[tuple[int, int]], at_words: list[int], phrases: list[tuple[str, ...]], start: int,
           tokens: int) -> tuple[int, int, int]:
    """A window's score (1,000 for each distinct phrase in it, 1 for each repeat), its first
    phrase's position and the position after its last. Only the phrases in the window are read
    (`at_words`: their positions, in order): a common word in a long text is found thousands of
    times, and reading them all for each (and each sentence's start) took 0.8 s for one hit of a
    100,000-character text, 0.02 s so."""
    seen: set[int] = set()
    score, first, last = 0, -1, 0
    for at, p in found[bisect_left(at_words, start):bisect_left(at_words, start + tokens)]:
        score += 1 if p in seen else 1000
        seen.add(p)
        if first < 0:
            first = at
        last = at + len(phrases[p])
    return score, first, last


def _coalesced(found: list[tuple[int, int]], phrases: list[tuple[str, ...]]) -> list[tuple[int, int]]:
    """(first, last word) of each run of overlapping phrases: each is marked once."""
    out: list[tuple[int, int]] = []
    for at, p in found:
        end = at + len(phrases[p]) - 1
        if out and at <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((at, end))
    return out


def _cut(data: bytes, spans: list[tuple[int, int]], marks: list[tuple[int, int]], first: int, last: int,
         mark: tuple[str, str], ellipsis: str) -> str:
    """The words `first` to `last` of `data` (a text's UTF-8 bytes, `spans` its words' places) as
    they are written, the marked runs marked, with an ellipsis where text was left out (the text
    before the first word is kept when it is the first)."""

    def text(a: int, b: int | None = None) -> str:
        return data[a:b].decode("utf-8", "surrogatepass")

    out = [ellipsis] if first > 0 else []
    runs = iter([m for m in marks if m[0] >= first])
    run = next(runs, (-1, -1))
    at = 0  # where the text not yet written starts
    for i, (a, b) in enumerate(spans):
        if i < first or i > last:
            continue
        if first and i == first:
            at = a
        if i == run[0]:
            out += [text(at, a), mark[0]]
            at = a
        if i == run[1]:
            out += [text(at, b), mark[1]]
            at = b
            run = next(runs, (-1, -1))
        if i == last:
            out.append(text(at, b))
            at = b
            if run[0] <= i < run[1]:
                out.append(mark[1])
    out.append(text(at) if last >= len(spans) - 1 else ellipsis)
    return "".join(out)
