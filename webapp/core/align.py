"""Sequence alignment of prompts: which turns of several branches answer the same request.

Needleman–Wunsch over a word-overlap score, extended to many branches progressively: the second
branch is aligned to the first, each next one to the rows made so far (a row scores as its best
matching prompt). Similar prompts end up on one row; a turn inserted or skipped on one branch
leaves a gap in the others; prompts with almost no word in common are not paired.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")
_FILLER = frozenset("a an and are as at be by for from i in is it of on or so that the this to we with you".split())
GAP = -0.4  # the cost of leaving a cell empty: two gaps beat pairing prompts under 10 % alike
FORK_BONUS = 0.6  # the first prompts after the fork are alternatives to each other: pair them readily


def prompt_words(text: str) -> frozenset[str]:
    """The words that carry a prompt's meaning (filler words would make any two prompts alike)."""
    return frozenset(w for w in (m.lower() for m in _WORD.findall(text)) if w not in _FILLER)


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Share of words in common (Jaccard); two empty prompts are alike."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _pair_score(a: frozenset[str], b: frozenset[str]) -> float:
    return 2 * similarity(a, b) - 1


def align_sequences(seqs: list[list[str]]) -> list[list[int | None]]:
    """Rows of indexes into `seqs` (one column per sequence, None for a gap), in order: every
    index of every sequence appears exactly once, and each column's indexes increase."""
    words = [[prompt_words(t) for t in s] for s in seqs]
    rows: list[list[int | None]] = []
    for k, seq in enumerate(words):
        if k == 0:
            rows = [[i] for i in range(len(seq))]
            continue
        rows = _merge(rows, words[:k], seq, k)
    return rows


def _merge(rows: list[list[int | None]], done: list[list[frozenset]], seq: list[frozenset], k: int):
    """Align sequence `k` against the rows of sequences 0..k-1 (dynamic programming, O(n·m))."""
    n, m = len(rows), len(seq)

    def score(i: int, j: int) -> float:
        best = max(_pair_score(done[c][x], seq[j]) for c, x in enumerate(rows[i]) if x is not None)
        return best + (FORK_BONUS if i == 0 and j == 0 else 0.0)

    table = [[0.0] * (m + 1) for _ in range(n + 1)]
    move = [[""] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        table[i][0], move[i][0] = table[i - 1][0] + GAP, "up"
    for j in range(1, m + 1):
        table[0][j], move[0][j] = table[0][j - 1] + GAP, "left"
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            diag = table[i - 1][j - 1] + score(i - 1, j - 1)
            up = table[i - 1][j] + GAP
            left = table[i][j - 1] + GAP
            best = max(diag, up, left)
            table[i][j] = best
            # ties prefer pairing; between two gaps, the earlier branches' turn comes first
            move[i][j] = "diag" if best == diag else "left" if best == left else "up"
    out: list[list[int | None]] = []
    i, j = n, m
    while i or j:
        step = move[i][j]
        if step == "diag":
            out.append(rows[i - 1] + [j - 1])
            i, j = i - 1, j - 1
        elif step == "up":
            out.append(rows[i - 1] + [None])
            i -= 1
        else:
            out.append([None] * k + [j - 1])
            j -= 1
    out.reverse()
    return out
