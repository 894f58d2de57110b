"""``searchkit config``: show, validate, schema, export, verify (E6)."""
from __future__ import annotations

import argparse
import json
import sys

from searchkit import export
from searchkit.cli.common import load_config
from searchkit.config import schema_text


def cmd_config(args: argparse.Namespace) -> int:
    """show | validate | schema | export | verify (SPEC E6).

    ``validate`` exits 1 when the file is invalid (every problem on its own line), 2 when it cannot
    be read; ``verify`` exits 1 when a ranking differs, 3 when the replay dataset changed."""
    if args.action == "show":
        cfg = export.load_config(args.file) if args.file else load_config(None)
        print(cfg.to_json())
    elif args.action == "schema":
        sys.stdout.write(schema_text())
    elif args.action == "validate":
        cfg, problems, notes = export.validate_file(args.file)
        for note in notes:
            print(f"note: {note}")
        if problems:
            n = f"{len(problems)} problem{'s' if len(problems) > 1 else ''}"
            print(f"{args.file}: invalid, {n}:")
            for p in problems:
                print(f"  {p}")
            print(f"searchkit config validate: {args.file} is invalid ({n}, listed above)", file=sys.stderr)
            return 1
        assert cfg is not None  # no problems: validate_file gives the config
        print(f"{args.file}: valid (fingerprint {cfg.fingerprint()}, index fingerprint {cfg.index_fingerprint()})")
    elif args.action == "export":
        path = export.export_config(
            args.tuned, args.out, name=args.name,
            replay_dataset=args.replay_dataset or export.DEFAULT_REPLAY[0],
            replay_split=args.replay_split or export.DEFAULT_REPLAY[1],
            runs=args.runs or (), tuned_on=args.tuned_on or (), show_progress=not args.quiet,
        )
        doc = json.loads(path.read_text(encoding="utf-8"))
        rb = doc["replay"]
        print(f"{path}: version {doc['version']}, config {doc['config_fingerprint']}, index {doc['index_fingerprint']}, "
              f"replay {rb['dataset']}/{rb['split']} {rb['queries']} queries (sha256 {rb['rankings_sha256'][:16]})")
    elif args.action == "verify":
        v = export.verify(args.file, dataset=args.dataset, show_progress=not args.quiet)
        for pkg, (was, now) in v.version_changes.items():
            print(f"warning: {pkg} {was or 'absent'} at export, {now or 'absent'} now")
        if v.status == "dataset_changed":
            print(f"dataset changed: {v.dataset}/{v.split} content sha256 {v.dataset_sha256[:16]}, recorded "
                  f"{v.recorded_sha256[:16]}; the replay cannot be compared (give the exported data with --dataset)")
            return 3
        if v.status == "differs":
            print(f"replay differs: {len(v.diffs)} of {v.queries} queries rank differently"
                  + (f", {len(v.missing)} queries missing or new" if v.missing else ""))
            for d in v.diffs[: args.show]:
                print(_diff_line(d))
            if len(v.diffs) > args.show:
                print(f"  ... and {len(v.diffs) - args.show} more (--show N prints more)")
            return 1
        print(f"replay identical: {v.queries} queries")
    return 0


def _diff_line(d: export.QueryDiff) -> str:
    """One differing query of a replay: the top-k ids recorded at export beside today's, and the
    first rank where they part (an older export records the top-k of its sample queries only)."""
    head = f"  {d.query_id} {d.text[:60]!r}: "
    if d.expected is None:
        return head + f"expected top-{len(d.got)} not recorded (older export: digests only); actual {list(d.got)}"
    first = next((i for i, (a, b) in enumerate(zip(d.expected, d.got)) if a != b), min(len(d.expected), len(d.got)))
    return head + f"expected {list(d.expected)}, actual {list(d.got)} (first difference at rank {first + 1})"
