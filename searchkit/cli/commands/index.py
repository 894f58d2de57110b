"""``searchkit index``: build an index folder from a dataset or a workspace (H2, H3)."""
from __future__ import annotations

import argparse
import sys

from searchkit.cli.commands import engine
from searchkit.cli.common import load_config
from searchkit.config import SearchConfig
from searchkit.errors import InputError, SearchkitError
from searchkit.evaluate.datasets import load_corpus, resolve_dataset
from searchkit.index import store
from searchkit.ingest.policy import CAPS, DEFAULT_POLICY, Policy
from searchkit.searcher import Searcher
from searchkit.tools.history import HistoryIndex
from searchkit.tools.terminal import one_line
from searchkit.util import write_failure_line


def cmd_index(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    if args.dataset:
        if args.update:
            raise InputError("--update works with --workspace", usage=True)
        if args.cap:
            raise InputError("--cap works with --workspace", usage=True)
        where = resolve_dataset(args.dataset)
        store.check_target(args.out, [where])
        records = load_corpus(where)  # an index needs the corpus only: no queries, qrels or splits
    elif args.workspace:
        policy = _policy(args.cap)
        store.check_target(args.out, [args.workspace])
        if args.update and not store.is_index(args.out):
            raise InputError(f"--update: {args.out!r} holds no index to update; build one first (without --update)", usage=True)
        with engine.engine_scope(args):
            return _index_workspace(args, config, policy)
    else:
        raise InputError("give --dataset DIR or --workspace DIR", usage=True)
    with engine.engine_scope(args):
        s = Searcher.build(records, config, show_progress=not args.quiet)
        _embed_rerank_sentences(s, args)
    _save(s, args.out)
    print(f"indexed {len(s.records)} records ({len(s.passages)} passages) into {args.out}", file=sys.stderr)
    return 0


def _save(index: Searcher | HistoryIndex, out: str) -> None:
    """``index.save(out)``; a write the system refuses (no permission to create the folder) is one
    line naming ``--out``, never a raw ``[Errno N]`` (issue 39 item 8); the store's own errors
    (a full disk, a target it refuses) already name the path."""
    try:
        index.save(out)
    except SearchkitError:
        raise
    except OSError as exc:
        raise InputError(write_failure_line("--out", out, exc), usage=True) from None


def _embed_rerank_sentences(s: Searcher, args: argparse.Namespace) -> None:
    """The reranking stage's sentences, embedded now (into the embedding cache) rather than while a
    query waits for them."""
    n = s.embed_rerank_sentences(show_progress=not args.quiet)
    if n and not args.quiet:
        print(f"{n} sentences embedded for the reranking stage (rerank.languages: "
              f"{', '.join(s.config.rerank.languages) or 'every language'})", file=sys.stderr)


def _policy(caps: list[str]) -> Policy | None:
    """The default never-index policy with the ``--cap NAME=VALUE`` changes (issue 27 item 17)."""
    changes: dict[str, int] = {}
    for item in caps:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in CAPS:
            raise InputError(f"--cap {item[:60]!r}: expected NAME=VALUE with NAME one of {', '.join(CAPS)}", usage=True)
        try:
            changes[name] = int(value.strip()) if len(value.strip()) <= 18 else -1
        except ValueError:
            changes[name] = -1
        if changes[name] < 1:
            raise InputError(f"--cap {name}: expected a positive integer (at most 18 digits), got {value.strip()[:30]!r}", usage=True)
    return DEFAULT_POLICY.with_caps(changes) if changes else None


def _index_workspace(args: argparse.Namespace, config: SearchConfig, policy: Policy | None) -> int:
    if args.update:
        idx = HistoryIndex.load(args.out, config if args.config else None)
        rep = idx.update(args.workspace, show_progress=not args.quiet, policy=policy)
        print(rep.line(), file=sys.stderr)
    else:
        idx = HistoryIndex.build(args.workspace, config, show_progress=not args.quiet, policy=policy)
    _embed_rerank_sentences(idx.searcher, args)
    _save(idx, args.out)
    s = idx.searcher
    print(f"indexed {len(s.records)} records ({len(s.passages)} passages) into {args.out}", file=sys.stderr)
    if idx.report is not None:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(idx.report.counts.items()))
        print(f"records by kind: {counts}", file=sys.stderr)
        for word, items in (("skipped", idx.report.skips), ("note", idx.report.notes)):
            for sk in items:  # a file name may hold ESC or U+202E: no control character reaches the terminal
                detail = f" ({one_line(sk.detail)})" if sk.detail else ""
                print(f"{word} {one_line(sk.path_or_table)}: {sk.rule}{detail}", file=sys.stderr)
    return 0

