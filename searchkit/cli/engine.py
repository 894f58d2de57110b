"""``--engine``, ``--address`` and ``--workers``: where the verbs that build indexes (``index``,
``eval``, ``tune fusion``) embed passages: their flags. Not a verb; the verbs' parsers call it (the
engine itself: ``searchkit.cli.commands.engine``)."""
from __future__ import annotations

import argparse


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
