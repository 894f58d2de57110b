"""The engine ``--engine``, ``--address`` and ``--workers`` name (``searchkit.cli.engine``), for the
verbs that build indexes (``index``, ``eval``, ``tune fusion``, ``tune adaptive-fusion``)."""
from __future__ import annotations

import argparse
import contextlib
from typing import Any, Iterator

from searchkit import scale  # noqa: F401 - registers the "ray" engine (Ray and the engine load when one is made)
from searchkit.errors import InputError
from searchkit.index.engine import make_engine, using


@contextlib.contextmanager
def engine_scope(args: argparse.Namespace) -> Iterator[Any]:
    """Run the block with the engine the arguments name (None for local): a Ray engine is started
    (or joined) here and stopped when the block ends."""
    name = getattr(args, "engine", "local")
    address, workers = getattr(args, "address", None), getattr(args, "workers", None)
    if name != "ray":
        if address is not None or workers is not None:
            raise InputError("--address and --workers go with --engine ray", usage=True)
        yield None
        return
    if workers is not None and workers < 1:
        raise InputError(f"--workers must be at least 1, got {workers}", usage=True)
    engine = make_engine("ray", address=address, workers=workers)
    with engine, using(engine):
        yield engine
