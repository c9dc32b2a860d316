"""A hit's snippet, made in Python from the entry's text (the text index keeps no copy of it), is
the one SQLite's FTS5 `snippet()` makes of the same text for the same query: compared with it on
an index that keeps its text, over texts and queries drawn at random from words and separators
that move the window (sentence ends, a word at the start or the end, repeats, phrases of two
words, case and diacritics, underscores and digits)."""

from __future__ import annotations

import os
import random

import apsw
import pytest

from webapp.corpus.snippets import phrases_of, snippet
from webapp.corpus.text import MAX_TERMS, TOKENIZER, match_query, query_terms

WORDS = ["alpha", "beta", "Gamma", "délta", "ÉPSILON", "zeta_eta", "x1", "42", "über", "Alpha", "omega",
         "nai\u0308ve", "naive", "re\u0301sume\u0301", "x\ue000y", "Άλφα", "αλφα"]
GAPS = [" ", " ", " ", "  ", ". ", ": ", "\n", ", ", "-", "_", "…", "!? ", ".\n", ":", " (", ") "]
MARK = ("\x02", "\x03")


@pytest.fixture(scope="module")
def fts():
    con = apsw.Connection(":memory:")
    con.execute(f"CREATE VIRTUAL TABLE body USING fts5(text, tokenize='{TOKENIZER}')")
    return con


def sqlite_snippet(con, text: str, query: str) -> str | None:
    """FTS5's snippet of `text` for `query` as the search asks it, None when it does not match."""
    con.execute("DELETE FROM body")
    con.execute("INSERT INTO body (rowid, text) VALUES (1, ?)", (text,))
    row = con.execute("SELECT snippet(body, 0, ?, ?, '…', 16) FROM body WHERE body MATCH ?",
                      (*MARK, match_query(query))).fetchone()
    return row[0] if row else None


def ours(text: str, query: str) -> str:
    return snippet(text, phrases_of(query_terms(query)[:MAX_TERMS]), MARK, "…")


def random_text(rng: random.Random) -> str:
    n = rng.choice([1, 3, 8, 15, 16, 17, 30, 60, 200])
    lead = rng.choice(["", "", "  ", "> ", "\n"])
    return lead + "".join(rng.choice(WORDS) + rng.choice(GAPS) for _ in range(n)).rstrip(rng.choice(["", " "]))


def random_query(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        words = [rng.choice(WORDS) for _ in range(rng.choice([1, 1, 1, 2]))]
        parts.append(" ".join(words) if len(words) == 1 else '"' + " ".join(words) + '"')
    return " ".join(parts)


def test_the_snippet_is_sqlites_on_texts_and_queries_drawn_at_random(fts):
    seed = int(os.environ.get("SWEEP_SEED", "0")) or random.randrange(1 << 30)
    rng = random.Random(seed)
    compared = 0
    for _ in range(3000):
        text, query = random_text(rng), random_query(rng)
        want = sqlite_snippet(fts, text, query)
        if want is None:
            continue
        assert ours(text, query) == want, (seed, text, query)
        compared += 1
    assert compared > 500  # (enough of the draws matched to say something)


@pytest.mark.parametrize("text, query", [
    ("wombat", "wombat"),
    ("The wombat sleeps. " * 20, "wombat sleeps"),
    ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
     "seventeen eighteen nineteen wombat", "wombat"),
    ("First sentence here: a list. Second one has the Wombat in it, and more words after it to pass sixteen.",
     "wombat"),
    ("Café au lait, CAFE noir, café crème", "cafe"),
    ("snake_case_name and snake case", '"snake case"'),
    ("a b c d e f g h i j k l m n o p q r s t u v w x y z wombat a b c d e f g h i j k l wombat", "wombat z"),
    ("<b>x</b> output & more", "output"),
    # accents as combining marks (NFD, as macOS writes a file's name): one word to FTS5
    ("the nai\u0308ve re\u0301sume\u0301 of a long session, and then some more words to pass the window", "naive resume"),
    ("a private-use character x\ue000y inside a word", "x\ue000y"),
    ("Άλφα and αλφα are two words to unicode61", "Άλφα"),
])
def test_the_snippet_is_sqlites_on_texts_that_move_its_window(fts, text, query):
    assert ours(text, query) == sqlite_snippet(fts, text, query)


def test_a_text_that_does_not_hold_the_words_gives_its_start():
    assert ours("nothing to see here at all", "wombat") == "nothing to see here at all"
    assert ours(" ".join(f"w{i}" for i in range(40)), "wombat") == " ".join(f"w{i}" for i in range(16)) + "…"
