"""``searchkit eval --metrics ragas-llm``: the judge the ``--llm-*`` flags (``searchkit.cli.judge``)
name, and the block the eval prints and writes (``searchkit.evaluate.ragas_metrics``: faithfulness and
answer relevancy of an answer an LLM writes from each query's top cards)."""
from __future__ import annotations

import argparse
from typing import Any

from searchkit.cli.common import fmt
from searchkit.errors import InputError
from searchkit.evaluate import ragas_metrics
from searchkit.config import SearchConfig
from searchkit.evaluate.datasets import Dataset
from searchkit.evaluate.measures import MetricsChoice, metrics_option
from searchkit.evaluate.run import EvalReport
from searchkit.searcher import make_embedder

_FLAGS = ("llm_base_url", "llm_model", "llm_api_key_env", "llm_embedding_model", "llm_queries")


def judge_from_args(args: argparse.Namespace, choice: MetricsChoice | None = None) -> ragas_metrics.LLMJudge | None:
    """The :class:`LLMJudge` the flags name with ``--metrics ragas-llm`` (None without it), checked
    before anything is indexed; a missing or bad flag is one line naming it, and so is an ``--llm-*``
    flag given without ``--metrics ragas-llm`` (it would do nothing). ``choice``: ``measures.metrics_option``
    of ``--metrics`` (read here when not given)."""
    choice = choice if choice is not None else metrics_option(args.metrics)
    if choice.llm_k is not None and args.llm_k is not None and args.llm_k != choice.llm_k:
        raise InputError(f"--metrics names LLM-judged scores at {choice.llm_k} cards but --llm-k is {args.llm_k}; give one", usage=True)
    k = choice.llm_k or args.llm_k or 5
    if not choice.ragas_llm:
        if args.llm_k is not None:
            raise InputError("--llm-k is for --metrics ragas-llm, which is not asked for", usage=True)
        given = [name for name in _FLAGS if getattr(args, name) is not None]
        if given:
            raise InputError(f"--{given[0].replace('_', '-')} is for --metrics ragas-llm, which is not asked for", usage=True)
        return None
    missing = [flag for flag, value in (("--llm-base-url", args.llm_base_url), ("--llm-model", args.llm_model))
               if not value]
    if missing:
        raise InputError(f"--metrics ragas-llm needs {' and '.join(missing)} (an OpenAI-compatible endpoint and its model)", usage=True)
    if args.llm_queries is not None and args.llm_queries < 1:
        raise InputError(f"--llm-queries must be at least 1, got {args.llm_queries}", usage=True)
    if not ragas_metrics.is_available():
        raise InputError(ragas_metrics.INSTALL_HINT, usage=True)
    try:
        judge = ragas_metrics.LLMJudge(base_url=args.llm_base_url, model=args.llm_model,
                                       api_key_env=args.llm_api_key_env, embedding_model=args.llm_embedding_model,
                                       k=k, timeout=args.llm_timeout)
        judge.api_key()  # a named variable that is not set: said now, not after the indexing
    except InputError as exc:  # the judge's settings (LLMJudge raises nothing else)
        raise InputError(f"--metrics ragas-llm: {exc}", usage=True) from None
    return judge


def judge_block(judge: ragas_metrics.LLMJudge, args: argparse.Namespace, report: EvalReport, ds: Dataset,
                config: SearchConfig, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Judge the eval's queries; each per-query row gets ``ragas_llm`` (None when not judged) and the
    block holds the means over the answerable and the unanswerable queries (each with its ``n``)."""
    items = ragas_metrics.judge_items(report, ds, judge, limit=args.llm_queries)
    embedder = None
    if judge.embedding_model is None:
        embedder = make_embedder(config)
    scores = ragas_metrics.judge_scores(items, judge, embedder=embedder)
    for row in rows:
        row["ragas_llm"] = scores.get(row["id"])
    section = config.embedder_section()
    used = f"config {section}.embedder ({getattr(config, section).embedder})" if section else "none"
    return {"k": judge.k, "endpoint": judge.shown_url, "model": judge.model,
            "embeddings": judge.embedding_model or used,
            "queries": len(items), **ragas_metrics.judge_summary(scores, items, judge.k)}


def _shown(v: object) -> str:
    return "n/a" if v is None else fmt(v)


def print_block(block: dict[str, Any]) -> None:
    """One line a group: the mean faithfulness and answer relevancy and how many queries."""
    k = block["k"]
    f_name, r_name = f"ragas:faithfulness@{k}", f"ragas:answer_relevancy@{k}"
    for group in ("answerable", "unanswerable"):
        g = block[group]
        if not g["n"]:
            continue
        print(f"ragas-llm ({block['model']}, answer from the top {k} cards), {group} n={g['n']}: faithfulness "
              f"{_shown(g['mean'][f_name])} (scored {g['scored'][f_name]}), answer relevancy {_shown(g['mean'][r_name])} "
              f"(scored {g['scored'][r_name]})")
