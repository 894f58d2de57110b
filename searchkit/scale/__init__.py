"""Scale-out: the same builds and sweeps on a Ray cluster (the ``scale`` extra, ``pip install
'searchkit[scale]'``).

``searchkit.scale.ray_engine.RayEngine`` embeds passages with a Ray Data pipeline (an actor pool,
one model load per actor) through the embedding cache, and runs ``tune_fusion``'s grid × datasets
as parallel Ray tasks; ``searchkit.index.engine`` is the seam builds use to reach it. Nothing here
imports Ray until an engine is made.
"""
from __future__ import annotations

from searchkit.errors import SearchkitError

__all__ = ["ScaleError", "ClusterUnreachable", "WorkerFailed"]


class ScaleError(SearchkitError, RuntimeError):
    """A distributed job could not run or did not finish; the message says why in one line."""


class ClusterUnreachable(ScaleError, ConnectionError):
    """The Ray cluster at the given address cannot be reached (or a local one cannot start)."""


class WorkerFailed(ScaleError):
    """A Ray worker raised or died; the message carries the worker's error. What was embedded
    before stays in the embedding cache, so a rerun resumes."""
