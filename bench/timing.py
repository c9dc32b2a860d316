"""Timing shared by the bench scripts that time views in-process (bench/tabs.py,
bench/context_views.py): the median of several runs, in milliseconds, since one run on a
shared machine says little."""

from __future__ import annotations

import statistics
import time


def median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(1000 * (time.perf_counter() - t))
    return statistics.median(times)
