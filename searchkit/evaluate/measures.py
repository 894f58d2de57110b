"""The metric registry (SPEC E4; issue 40 item 4): every name ``eval``, ``compare``, ``gate``, ``report``
and the notebooks accept, what each is and where a run folder holds its per-query values.

A metric name is one of:

- an **ir_measures measure** (https://ir-measur.es): ``nDCG@10``, ``RR@10``, ``R@100``, ``P@5``, ``AP``,
  ``Judged@10``, ``nDCG@20``, ``Bpref``, ``nDCG(dcg='exp-log2')@10``, ... A name is valid when
  ``ir_measures.parse_measure`` parses it and an installed evaluator computes it; it is reported under
  its canonical form (the measure's ``repr``: ``MAP`` is ``AP``, ``MRR@10`` is ``RR@10``). Per-query
  values live in a query row's ``metrics``.
- a **ragas** score: ``ragas:id_context_precision@K`` and ``ragas:id_context_recall@K`` (ID-based, no
  LLM; ``eval --metrics ragas``, K = 10) in a row's ``ragas``; ``ragas:faithfulness@K`` and
  ``ragas:answer_relevancy@K`` (LLM-judged; ``eval --metrics ragas-llm``, K = ``--llm-k``) in its
  ``ragas_llm``.
- a **no-answer** figure (``metrics.no_answer_metrics``): ``AUROC``, ``AP-noanswer``, ``recall@5%FW``,
  ``warn-precision``, ``warn-recall``, ``false-warn-rate``. These are over all queries at once, not
  per query; ``compare`` tests the AUROC with a paired bootstrap.

``DEFAULT_METRICS`` is what ``eval`` reports unless told otherwise: nDCG@10, RR@10, R@1/5/10/20/100.
``metric(name)`` checks a name (a bad one raises ``InputError``: one line naming it, a close match
where there is one, and the valid forms); ``metrics_option`` reads ``eval --metrics``.
"""
from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Mapping

from searchkit.errors import InputError

__all__ = ["DEFAULT_METRICS", "EVAL_KEYWORDS", "NO_ANSWER_METRICS", "RAGAS_ID_SCORES", "RAGAS_LLM_SCORES",
           "Metric", "MetricsChoice", "VALID_FORMS", "canonical", "ir_measure", "metric",
           "metrics_option", "provider_of", "row_value", "shared_names", "split_names"]

RECALL_KS: tuple[int, ...] = (1, 5, 10, 20, 100)
DEFAULT_METRICS: tuple[str, ...] = ("nDCG@10", "RR@10", *(f"R@{k}" for k in RECALL_KS))
"""What every eval reports unless ``--metrics`` names ir_measures measures (SPEC E4)."""

NO_ANSWER_METRICS: tuple[str, ...] = ("AUROC", "AP-noanswer", "recall@5%FW", "warn-precision", "warn-recall",
                                      "false-warn-rate")
"""The no-answer figures (``metrics.no_answer_metrics``): over all queries, not per query."""
LOWER_IS_BETTER: frozenset[str] = frozenset({"false-warn-rate"})

RAGAS_ID_SCORES: tuple[str, ...] = ("id_context_precision", "id_context_recall")
RAGAS_LLM_SCORES: tuple[str, ...] = ("faithfulness", "answer_relevancy")
EVAL_KEYWORDS: tuple[str, ...] = ("default", "ragas", "ragas-llm")
"""Words ``eval --metrics`` takes beside metric names: ``default`` (DEFAULT_METRICS), ``ragas`` (the
ID-based ragas scores at 10), ``ragas-llm`` (the LLM-judged ones at ``--llm-k``)."""

VALID_FORMS = ("an ir_measures measure (e.g. nDCG@10, RR@10, R@100, P@5, AP, Judged@10, nDCG(dcg='exp-log2')@20; "
               "https://ir-measur.es), ragas:id_context_precision@K, ragas:id_context_recall@K, "
               "ragas:faithfulness@K, ragas:answer_relevancy@K, or a no-answer figure (" + ", ".join(NO_ANSWER_METRICS)
               + ")")

PROVIDERS: tuple[str, ...] = ("pytrec_eval", "msmarco", "judged", "compat", "accuracy", "gdeval", "cwl_eval",
                              "trectools", "pyndeval", "ranx")
"""ir_measures' evaluators in the order tried: trec_eval's C code first (every metric searchkit reported
before issue 40 comes from it or from MS MARCO's evaluator for ``RR@k``), ranx last (its first call in a
process compiles numba code for seconds)."""

_RAGAS = re.compile(r"ragas:([a-z_]+)@([0-9]+)")


@dataclass(frozen=True)
class Metric:
    """One registry entry.

    Attributes:
        name: the canonical name, under which values are written and shown.
        source: ``ir_measures``, ``ragas``, ``ragas-llm`` or ``no-answer``.
        field: the key of a per-query row (``metrics.json``'s ``queries``) holding the values:
            ``metrics``, ``ragas`` or ``ragas_llm``; None for a figure that is not per query.
        k: the cutoff of a ragas score.
        lower_is_better: a rise is the regression (``false-warn-rate``).
    """

    name: str
    source: str
    field: str | None
    k: int | None = None
    lower_is_better: bool = False

    @property
    def per_query(self) -> bool:
        return self.field is not None


def split_names(values: str | Iterable[str] | None) -> list[str]:
    """Metric names from an option that is repeatable and takes comma lists; a comma inside
    parentheses belongs to the measure (``P(rel=2,judged_only=True)@10``). Empty parts are dropped."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    out: list[str] = []
    for value in values:
        depth = 0
        part: list[str] = []
        for ch in str(value):
            depth += (ch == "(") - (ch == ")")
            if ch == "," and depth <= 0:
                out.append("".join(part).strip())
                part = []
            else:
                part.append(ch)
        out.append("".join(part).strip())
    return [p for p in out if p]


def _shown(name: str) -> str:
    return repr(name[:60])


@lru_cache(maxsize=None)
def ir_measure(name: str) -> Any:
    """The ir_measures measure a name parses to.

    Raises:
        InputError: not an ir_measures measure, or no installed evaluator computes it.
    """
    import ir_measures

    try:
        measure = ir_measures.parse_measure(name.strip())
        measure.validate_params()
    except (NameError, ValueError, AssertionError, TypeError, SyntaxError) as exc:
        raise InputError(f"unknown metric {_shown(name)}{_why(name, exc)}; give {VALID_FORMS}") from None
    if provider_of(measure) is None:
        needs = [k for k, p in ir_measures.providers.registry.items() if k != "runtime" and p.supports(measure)]
        raise InputError(f"metric {_shown(name)}: no installed evaluator computes it (it needs "
                          f"{' or '.join(needs) or 'an evaluator ir_measures lacks'}); give {VALID_FORMS}")
    return measure


def _why(name: str, exc: BaseException) -> str:
    """What is wrong with a name ir_measures refused, with the closest valid spelling where there is one."""
    import ir_measures

    base = re.split(r"[(@]", name.strip(), maxsplit=1)[0]
    rest = name.strip()[len(base):]
    known = list(ir_measures.measures.registry)
    if base not in known:
        lower: dict[str, str] = {}
        for k in known:  # the registry's first spelling (nDCG before its alias NDCG)
            lower.setdefault(k.lower(), k)
        close = ([lower[base.lower()]] if base.lower() in lower else
                 difflib.get_close_matches(base, known, n=1, cutoff=0.6))
        return f" (no measure {base[:40]!r}" + (f"; did you mean {close[0]}{rest[:40]}?)" if close else ")")
    if isinstance(exc, AssertionError):
        return f" ({str(exc)[:80]})"
    return " (write it as Measure(param=value)@cutoff)"


def provider_of(measure: Any) -> Any:
    """The first installed ir_measures evaluator (in ``PROVIDERS`` order) that computes ``measure``,
    or None."""
    import ir_measures

    for key in PROVIDERS:
        provider = ir_measures.providers.registry.get(key)
        if provider is not None and provider.supports(measure) and provider.is_available():
            return provider
    return None


@lru_cache(maxsize=None)
def metric(name: str) -> Metric:
    """The registry entry of a metric name (see the module docstring for the forms).

    Raises:
        InputError: a name in none of the forms (one line: the name, a close match, the valid forms).
    """
    text = str(name).strip()
    if not text:
        raise InputError(f"no metric named; give {VALID_FORMS}")
    if text in NO_ANSWER_METRICS:
        return Metric(text, "no-answer", None, lower_is_better=text in LOWER_IS_BETTER)
    if text.startswith("ragas"):
        m = _RAGAS.fullmatch(text)
        if m is None or m.group(1) not in (*RAGAS_ID_SCORES, *RAGAS_LLM_SCORES) or int(m.group(2)) < 1:
            head, _, at = text.partition("@")
            close = difflib.get_close_matches(head, [f"ragas:{s}" for s in (*RAGAS_ID_SCORES, *RAGAS_LLM_SCORES)],
                                              n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]}@{at[:10] or 'K'}?)" if close else ""
            raise InputError(f"unknown metric {_shown(text)}{hint}; a ragas score is ragas:NAME@K with NAME one of "
                              f"{', '.join((*RAGAS_ID_SCORES, *RAGAS_LLM_SCORES))} and K >= 1")
        score, k = m.group(1), int(m.group(2))
        llm = score in RAGAS_LLM_SCORES
        return Metric(f"ragas:{score}@{k}", "ragas-llm" if llm else "ragas", "ragas_llm" if llm else "ragas", k=k)
    return Metric(repr(ir_measure(text)), "ir_measures", "metrics")


def canonical(name: str) -> str:
    """The name a metric is written and shown under (``MAP`` -> ``AP``); raises ``InputError``."""
    return metric(name).name


def row_value(row: Mapping[str, Any], m: Metric) -> float | None:
    """A per-query row's value of ``m`` (``metrics.json``'s ``queries``), or None where the row does
    not hold a finite one (an unjudged query, a score ragas left undefined)."""
    if m.field is None:
        return None
    holder = row.get(m.field)
    if not isinstance(holder, Mapping):
        return None
    v = holder.get(m.name)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


@dataclass(frozen=True)
class MetricsChoice:
    """What ``eval --metrics`` asks for.

    Attributes:
        ranking: the ir_measures measures to report (canonical names; DEFAULT_METRICS when the option
            names none).
        ragas_k: the cutoff of the ID-based ragas scores (``ragas``: 10), None when not asked.
        ragas_llm: the LLM-judged ragas scores are asked (``ragas-llm`` or a named one).
        llm_k: the cutoff a named LLM-judged score gives (``ragas:faithfulness@5``: 5), None when
            ``--llm-k`` decides.
    """

    ranking: tuple[str, ...] = DEFAULT_METRICS
    ragas_k: int | None = None
    ragas_llm: bool = False
    llm_k: int | None = None

    @property
    def ragas(self) -> bool:
        return self.ragas_k is not None

    @property
    def names(self) -> tuple[str, ...]:
        """Every per-query metric name the eval writes (the ragas-llm ones where ``llm_k`` is known)."""
        ragas = [f"ragas:{s}@{self.ragas_k}" for s in RAGAS_ID_SCORES] if self.ragas_k else []
        llm = [f"ragas:{s}@{self.llm_k}" for s in RAGAS_LLM_SCORES] if self.ragas_llm and self.llm_k else []
        return (*self.ranking, *ragas, *llm)


def metrics_option(values: str | Iterable[str] | None) -> MetricsChoice:
    """Read ``eval --metrics`` (repeatable, comma lists): ir_measures names, ``default``, ``ragas``,
    ``ragas-llm`` and ragas score names, e.g. ``AP,P@5,nDCG@20,Judged@10`` or ``default,AP,ragas``.
    Without an ir_measures name the ranking metrics are ``DEFAULT_METRICS``.

    Raises:
        InputError: a bad name (one line naming it), a no-answer figure (always reported), or ragas
            scores of one kind at two cutoffs.
    """
    ranking: list[str] = []
    ragas_ks: set[int] = set()
    llm = False
    llm_ks: set[int] = set()
    for name in split_names(values):
        if name == "default":
            ranking.extend(DEFAULT_METRICS)
            continue
        if name == "ragas":
            ragas_ks.add(10)
            continue
        if name == "ragas-llm":
            llm = True
            continue
        m = metric(name)
        if m.source == "no-answer":
            raise InputError(f"--metrics {name}: the no-answer figures ({', '.join(NO_ANSWER_METRICS)}) are always "
                              "reported; name ranking metrics, ragas or ragas-llm")
        if m.source == "ragas":
            ragas_ks.add(int(m.k or 10))
        elif m.source == "ragas-llm":
            llm = True
            llm_ks.add(int(m.k or 0))
        else:
            ranking.append(m.name)
    for what, ks in (("ID-based", ragas_ks), ("LLM-judged", llm_ks)):
        if len(ks) > 1:
            raise InputError(f"--metrics names {what} ragas scores at {len(ks)} cutoffs "
                              f"({', '.join(str(k) for k in sorted(ks))}); give one")
    return MetricsChoice(tuple(dict.fromkeys(ranking)) or DEFAULT_METRICS, next(iter(ragas_ks), None), llm,
                         next(iter(llm_ks), None))


def shared_names(figures: Iterable[Mapping[str, Any]]) -> list[str]:
    """The metric names every one of ``figures`` holds (e.g. each run's headline ``metrics``):
    those of ``DEFAULT_METRICS`` first, in its order, then the others in the first's order. What a
    table over several runs shows (``report``'s headline, instead of a fixed list)."""
    figures = list(figures)
    if not figures:
        return []
    common = [m for m in figures[0] if all(m in f for f in figures[1:])]
    return [m for m in DEFAULT_METRICS if m in common] + [m for m in common if m not in DEFAULT_METRICS]
