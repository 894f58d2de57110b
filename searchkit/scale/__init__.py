"""Scale-out: the same builds and sweeps on a Ray cluster (the ``scale`` extra, ``pip install
'searchkit[scale]'``).

``searchkit.scale.ray_engine.RayEngine`` embeds passages with a Ray Data pipeline (an actor pool,
one model load per actor) through the embedding cache, and runs ``tune_fusion``'s grid × datasets
as parallel Ray tasks. Importing this package registers it as the ``ray`` engine of
``searchkit.index.engine``, the seam builds use to reach it (the CLI's ``--engine`` imports it);
nothing here imports Ray, or the engine's module, until an engine is made.
"""
from __future__ import annotations

from typing import Any

from searchkit.index import engine as _engine

__all__: list[str] = []


def _ray_engine(*, address: str | None = None, workers: int | None = None) -> Any:
    """``make_engine("ray", ...)``: a missing ``scale`` extra shows here as ``ModuleNotFoundError``
    for ``ray``, before anything is read or built. ``ray_engine`` loads here, not with the package:
    it brings the searcher, the harness and the HTTP clients (~200 ms a ``searchkit --help`` would
    pay)."""
    import ray  # noqa: F401

    from searchkit.scale.ray_engine import RayEngine

    return RayEngine(address=address, workers=workers)


_engine.register("ray", _ray_engine)
