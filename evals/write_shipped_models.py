"""Write the shipped config's fitted models (``searchkit/shipped_models.json``, package data).

The last step of ``reproduce_defaults.sh`` (``--config``: the tuned config's ``fusion.adaptive``,
``weak_match`` documents model and ``weak_match.conversation``) and of
``defaults/reproduce_bm25_only.sh`` (``--bm25-only-fit``: the ``weak_match`` of that fit, to 6
decimals). A model not given is kept from ``--base`` (default: the file as it is). What
``searchkit.config`` reads at import is then exactly what the procedure fitted; no literal is pasted
into Python. ``tests/test_config.py`` checks that the committed fits (``defaults/fusion.json`` with
``defaults/weak_match_fit.json``'s model, ``defaults/bm25_only_weak_match_fit.json``) write exactly
the committed file.

    .venv/bin/python evals/write_shipped_models.py --config runs/defaults/tuned.json
    .venv/bin/python evals/write_shipped_models.py --bm25-only-fit evals/defaults/bm25_only_weak_match_fit.json
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from searchkit.config import ConfigError, SearchConfig, bm25_only_of, models_of, models_path, models_text
from searchkit.util import atomic_write_text, read_json_file


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", type=Path, help="the tuned config (reproduce_defaults.sh: $OUT/tuned.json)")
    ap.add_argument("--bm25-only-fit", type=Path, help="a `tune weak-match` fit of the BM25-only model")
    ap.add_argument("--base", type=Path, default=models_path(), help="the models kept where none is given")
    ap.add_argument("--out", type=Path, default=models_path(), help="default: searchkit/shipped_models.json")
    args = ap.parse_args()
    if args.config is None and args.bm25_only_fit is None:
        ap.error("give --config, --bm25-only-fit or both")
    try:
        models = dict(read_json_file(args.base))
        if args.config is not None:
            models.update(models_of(SearchConfig.from_dict(read_json_file(args.config))))
        if args.bm25_only_fit is not None:
            models.update(bm25_only_of(read_json_file(args.bm25_only_fit)))
        text = models_text(models)
    except (OSError, ConfigError, KeyError, TypeError, ValueError) as exc:
        print(f"write_shipped_models: {exc}", file=sys.stderr)
        return 2
    atomic_write_text(args.out, text)
    print(json.dumps({"out": str(args.out), "models": sorted(k for k in json.loads(text) if k != "about")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
