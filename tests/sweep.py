"""Sampled sweeps: a sweep over many files x many views runs every view on every file in each run
(as a page or as htmx's fragment, the two alternating along the files), and which member of a
class it asks (which entry, which form, which example) is drawn from one seed per run. Every
member is asked over runs, every class in each run.

The seed is drawn once per run (tests/conftest.py, in the process that starts xdist's workers, so
that they share it) and printed at the end of the run and in a failing sweep's message;
`SWEEP_SEED=N` given back repeats that run's draws. A draw depends on the seed and on what is
drawn (its key), not on the order the tests run in, so a failure repeats however xdist deals
the tests out.
"""

from __future__ import annotations

import os
import random
import secrets
from typing import Sequence, TypeVar

SEED_VAR = "SWEEP_SEED"
T = TypeVar("T")


def ensure_seed() -> int:
    """The run's seed: the one given in the environment, else a new one put there, where the
    workers started after this inherit it."""
    given = os.environ.get(SEED_VAR, "").strip()
    if not given:
        given = str(secrets.randbelow(1_000_000))
        os.environ[SEED_VAR] = given
    return int(given)


def seed() -> int:
    return ensure_seed()


def rng(*key: object) -> random.Random:
    """A generator for one draw: the same seed and key give the same numbers in any process."""
    return random.Random(f"{seed()}/" + "/".join(map(str, key)))


def pick(options: Sequence[T], *key: object) -> T:
    return rng(*key).choice(options)


def repeat_with() -> str:
    """What a failing sweep's message says, so that its draw can be made again."""
    return f"{SEED_VAR}={seed()}"
