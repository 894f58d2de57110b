"""``--engine``, ``--address`` and ``--workers``: where the verbs that build indexes (``index``,
``eval``, ``tune fusion``) embed passages. Not a verb; the verb modules call it."""
from __future__ import annotations

import argparse
import contextlib
from typing import Any, Iterator

from searchkit.cli.common import CLIError
from searchkit.index.engine import make_engine, using
from searchkit import scale  # noqa: F401 - registers the "ray" engine (Ray and the engine load when one is made)


def add_arguments(parser: argparse.ArgumentParser, *, what: str = "passages are embedded") -> None:
    g = parser.add_argument_group("scale-out (--engine ray needs the 'scale' extra: pip install 'searchkit[scale]')")
    g.add_argument("--engine", choices=["local", "ray"], default="local",
                   help=f"where {what}: this process (local, the default) or a Ray cluster (ray); "
                        "the index and the results are the same")
    g.add_argument("--address", metavar="ADDR",
                   help="with --engine ray: join the Ray cluster at ADDR (host:port of its head, ray://host:port, "
                        "or auto); default: start a local cluster for this command")
    g.add_argument("--workers", type=int, metavar="N",
                   help="with --engine ray: embedding actors (default: one per CPU of the cluster)")


@contextlib.contextmanager
def engine_scope(args: argparse.Namespace) -> Iterator[Any]:
    """Run the block with the engine the arguments name (None for local): a Ray engine is started
    (or joined) here and stopped when the block ends."""
    name = getattr(args, "engine", "local")
    address, workers = getattr(args, "address", None), getattr(args, "workers", None)
    if name != "ray":
        if address is not None or workers is not None:
            raise CLIError("--address and --workers go with --engine ray")
        yield None
        return
    if workers is not None and workers < 1:
        raise CLIError(f"--workers must be at least 1, got {workers}")
    engine = make_engine("ray", address=address, workers=workers)
    with engine, using(engine):
        yield engine
