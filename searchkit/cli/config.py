"""``searchkit config``: show, validate, schema, export, verify (E6). Runs from ``searchkit.cli.commands.config``."""
from __future__ import annotations

import argparse

from searchkit.cli.dispatch import Verb

cmd_config = Verb("searchkit.cli.commands.config:cmd_config")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pc = sub.add_parser("config", help="show, validate, export or verify a SearchConfig")
    pcs = pc.add_subparsers(dest="action", required=True)
    c = pcs.add_parser("show", help="print a config (default: the shipped one) as JSON")
    c.add_argument("file", nargs="?", help="a config JSON or an exported file")
    c = pcs.add_parser("validate", help="list every problem of a config file (exit 1 when invalid, 2 unreadable)")
    c.add_argument("file", help="a config JSON or an exported file")
    pcs.add_parser("schema", help="print the JSON Schema of the config file")
    c = pcs.add_parser("export", help="write DIR/NAME.v<N>.json: config, fingerprints, provenance, replay")
    c.add_argument("tuned", help="the tuned config (bare JSON or an earlier export)")
    c.add_argument("--out", required=True, help="folder of the exported versions")
    c.add_argument("--name", help="base name of the file (default: TUNED's)")
    c.add_argument("--replay-dataset", help="dataset replayed, a folder or a name (default: mini, from any working "
                   "directory)")
    c.add_argument("--replay-split", metavar="SPLIT", help="its split, any the dataset has (default: dev)")
    c.add_argument("--runs", nargs="+", metavar="RUN_DIR", help="run folders (eval --out) the config was reported on")
    c.add_argument("--tuned-on", nargs="+", metavar="DATASET", help="datasets whose dev tune half it was tuned on")
    c.add_argument("--quiet", action="store_true", help="no progress bars")
    c = pcs.add_parser("verify", help="re-run an export's replay; exit 1 on any ranking difference")
    c.add_argument("file", help="an exported file")
    c.add_argument("--dataset", help="the replay dataset's folder, when it is not where the file says")
    c.add_argument("--show", type=int, default=5, help="how many differing queries to print")
    c.add_argument("--quiet", action="store_true", help="no progress bars")
    pc.set_defaults(func=cmd_config)


