"""ragas as a metric provider (SPEC E1, E4): its ID-based context precision and recall.

ragas (https://docs.ragas.io) scores retrieval for RAG. Its ``IDBasedContextPrecision`` and
``IDBasedContextRecall`` need no LLM: over a query's retrieved context ids and its reference ids,

    precision = |retrieved ∩ reference| / |retrieved|      recall = |retrieved ∩ reference| / |reference|

Given the top ``k`` of a run as the retrieved contexts and the relevant documents (grade > 0) of the
qrels as the reference, ragas' recall is our ``R@k`` (ranx ``recall@k``) and its precision our
``P@k`` (ranx ``precision@k``) wherever the run returned at least ``k`` documents (ranx divides by
``k``, ragas by the number retrieved). ``tests/test_ragas.py`` checks both.

Those two only restate our P@k and R@k. What ragas adds is its LLM-judged metrics, here
(``searchkit eval --metrics ragas-llm``, off by default) over an answer written from the top cards:
for each query, an LLM at any OpenAI-compatible endpoint (:class:`LLMJudge`: ``base_url``,
``model``, ``api_key_env``) writes a short answer from the query's top ``k`` cards
(:func:`answer_messages`), and ragas 0.4's ``Faithfulness`` (the share of the answer's statements
the cards support, judged by the same LLM) and ``AnswerRelevancy`` (the mean cosine between the
question and questions the LLM writes back from the answer; 0 when the answer is noncommittal)
score it (:func:`judge_scores`). ragas drives the LLM through ``instructor`` over the ``openai``
client (``ragas.llms.llm_factory``, JSON mode), so any server that speaks ``POST
/chat/completions`` serves; ``AnswerRelevancy``'s embeddings come from the endpoint's
``/embeddings`` when ``embedding_model`` is given, else from the search's own embedder.

ragas is optional (the ``research`` extra); ``is_available()`` says whether it is installed and
``INSTALL_HINT`` how to install it. ragas' usage analytics are switched off
(``RAGAS_DO_NOT_TRACK=true``) before it is imported: an eval never calls out to the network
(the LLM-judged metrics call the endpoint they are given, and nothing else).
"""
from __future__ import annotations

import asyncio
import logging
import math
import os
import re
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Protocol, Sequence

from searchkit.credentials import shown_url, url_secrets
from searchkit.errors import InputError, ResourceError
from searchkit.http_client import attempts_text, redacted
from searchkit.ingest.policy import can_see

if TYPE_CHECKING:
    from searchkit.evaluate.datasets import Dataset
    from searchkit.evaluate.run import EvalReport
    from searchkit.index.embedding import Embedder

__all__ = ["INSTALL_HINT", "JudgeItem", "LLMJudge", 
           "answer_messages", "is_available", "judge_items", "judge_names", "judge_scores", "judge_summary",
           "ragas_scores", "ragas_summary"]

log = logging.getLogger(__name__)

INSTALL_HINT = (
    "ragas is not installed; install the research extra: "
    "SEARCHKIT_EXTRAS=test,research bash scripts/setup.sh (or pip install 'searchkit[research]')"
)


def is_available() -> bool:
    """True when ragas can be imported."""
    import importlib.util

    return importlib.util.find_spec("ragas") is not None


def _metrics():
    if not is_available():
        raise ResourceError(INSTALL_HINT)
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    with warnings.catch_warnings():
        # ragas 0.4 marks these imports deprecated in favour of ragas.metrics.collections,
        # which does not hold the ID-based metrics yet
        warnings.simplefilter("ignore", DeprecationWarning)
        from ragas.dataset_schema import SingleTurnSample
        from ragas.metrics import IDBasedContextPrecision, IDBasedContextRecall
    return SingleTurnSample, IDBasedContextPrecision(), IDBasedContextRecall()


def names(k: int) -> tuple[str, str]:
    """The names the scores are reported under: ``ragas:id_context_precision@k``, ``…recall@k``."""
    return f"ragas:id_context_precision@{k}", f"ragas:id_context_recall@{k}"


def ragas_scores(
    run: Mapping[str, Mapping[str, float]],
    qrels: Mapping[str, Mapping[str, int]],
    k: int = 10,
) -> dict[str, dict[str, float]]:
    """ragas' ID-based context precision and recall of the top ``k`` of ``run`` per query.

    Args:
        run: ``{query_id: {doc_id: score}}`` (higher first), e.g. ``EvalReport.run()``.
        qrels: ``{query_id: {doc_id: grade}}``; queries without a positive grade are skipped.
        k: how many top documents count as retrieved.

    Returns:
        ``{query_id: {"ragas:id_context_precision@k": p, "ragas:id_context_recall@k": r}}``;
        precision is nan where the run returned nothing (ragas' own convention).

    Raises:
        ResourceError: ragas is not installed.
    """
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    Sample, precision, recall = _metrics()
    p_name, r_name = names(k)
    out: dict[str, dict[str, float]] = {}
    for qid in sorted(qrels):
        reference = [d for d, g in qrels[qid].items() if int(g) > 0]
        if not reference:
            continue
        ranked = sorted(run.get(qid, {}).items(), key=lambda kv: -kv[1])[:k]
        sample = Sample(retrieved_context_ids=[d for d, _ in ranked], reference_context_ids=reference)
        out[qid] = {p_name: float(precision.single_turn_score(sample)), r_name: float(recall.single_turn_score(sample))}
    return out


def ragas_summary(scores: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Mean of each ragas score over the queries where it is defined."""
    import numpy as np

    keys = sorted({m for v in scores.values() for m in v})
    out = {}
    for m in keys:
        vals = np.array([v[m] for v in scores.values() if m in v], dtype=float)
        out[m] = float(np.nanmean(vals)) if np.isfinite(vals).any() else float("nan")
    return out


# --------------------------------------------------------------------------- LLM-judged metrics


ANSWER_INSTRUCTIONS = (
    "You answer a question from the search results below and from nothing else. Answer in the "
    "language of the question, in at most three sentences. If the results do not answer the "
    "question, say that they do not."
)
"""The system message of the answer the metrics judge (:func:`answer_messages`)."""

_URL = re.compile(r"^https?://[^/\s]+")


@dataclass(frozen=True)
class LLMJudge:
    """An OpenAI-compatible endpoint that writes and judges the answers (``--metrics ragas-llm``).

    Args:
        base_url: the API root, e.g. ``http://127.0.0.1:8000/v1`` (``/chat/completions`` and, with
            ``embedding_model``, ``/embeddings`` are asked under it); a URL holding a credential
            (``user:password@``, a key in its query string) is refused.
        model: the chat model, as the endpoint names it.
        api_key_env: the environment variable holding the API key (sent as a bearer token; read at
            each run, never stored, never in a message); None: no key.
        embedding_model: the endpoint's embedding model for answer relevancy; None: the search's own
            embedder (the config's ``dense`` embedder).
        k: how many top cards the answer is written from.
        timeout: seconds for one request; ``max_retries`` more tries after a failed one.
        max_chars: the most characters of one card the answer is written from (H9's passage).

    Raises:
        InputError: a setting out of range, naming it.
    """

    base_url: str
    model: str
    api_key_env: str | None = None
    embedding_model: str | None = None
    k: int = 5
    timeout: float = 60.0
    max_retries: int = 2
    max_chars: int = 1500

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise InputError("; ".join(problems))

    def problems(self) -> list[str]:
        """Every problem of these settings, each naming the setting (empty: usable)."""
        out = []
        if not isinstance(self.base_url, str) or not _URL.match(self.base_url):
            out.append(f"llm base_url must be an http(s) URL, got {shown_url(str(self.base_url))!r}")
        else:
            out += [f"llm base_url holds {what}: put the API key in an environment variable and name it "
                    "with the llm api_key_env setting" for what in url_secrets(self.base_url)]
        for name in ("model", "embedding_model", "api_key_env"):
            value = getattr(self, name)
            if (value is not None or name == "model") and (not isinstance(value, str) or not value.strip()):
                out.append(f"llm {name} must be a non-empty string")
        for name, lo in (("k", 1), ("max_retries", 0), ("max_chars", 50)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < lo:
                out.append(f"llm {name} must be an integer of at least {lo}, got {value!r}")
        t = self.timeout
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t <= 0:
            out.append(f"llm timeout must be a positive number of seconds, got {t!r}")
        return out

    @property
    def shown_url(self) -> str:
        """The endpoint as messages show it (no user name, password or query values)."""
        return shown_url(self.base_url)

    def api_key(self) -> str | None:
        """The API key, read from ``api_key_env`` now; None when no variable is named.

        Raises:
            InputError: the variable is named but not set.
        """
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise InputError(f"environment variable {self.api_key_env} (the LLM endpoint's API key, "
                                     "llm api_key_env) is not set")
        return key

    def names(self) -> tuple[str, str]:
        """The names the scores are reported under (see :func:`judge_names`)."""
        return judge_names(self.k)


def judge_names(k: int) -> tuple[str, str]:
    """``ragas:faithfulness@k`` and ``ragas:answer_relevancy@k``: of an answer written from the top ``k`` cards."""
    return f"ragas:faithfulness@{k}", f"ragas:answer_relevancy@{k}"


@dataclass(frozen=True)
class JudgeItem:
    """One query to judge: its question and the cards its answer is written from, best first."""

    query_id: str
    question: str
    contexts: tuple[str, ...]
    answerable: bool = True


def judge_items(report: EvalReport, dataset: Dataset, judge: LLMJudge, limit: int | None = None) -> list[JudgeItem]:
    """The queries of an eval (``EvalReport``) with at least one card, in the report's order, each
    with the title and text of its top ``judge.k`` records that the query's caller may see (shared
    ones; personal ones only to their owner: H15) (``judge.max_chars`` characters each);
    ``limit``: the first ``limit`` of them only."""
    questions = {q.id: q.text for q in dataset.queries}
    callers = {q.id: q.caller for q in dataset.queries}
    by_id = {r.id: r for r in dataset.records}
    out = []
    for o in report.outcomes:
        # only what the query's caller may see leaves for the judge (H15; issue 39 item 8c): shared
        # records, personal ones to a query naming their owner; a query naming no caller sends none
        caller = callers.get(o.query_id)
        cards = [by_id[d] for d in o.ranking if d in by_id and can_see(by_id[d], caller, "personal")][:judge.k]
        if not cards or o.query_id not in questions:
            continue
        contexts = tuple(_card_text(r.title, r.text)[:judge.max_chars] for r in cards)
        out.append(JudgeItem(o.query_id, questions[o.query_id], contexts, bool(o.answerable)))
        if limit is not None and len(out) >= limit:
            break
    return out


def _card_text(title: str, text: str) -> str:
    return f"{title}\n{text}" if title and not text.startswith(title) else text


def answer_messages(question: str, contexts: Sequence[str]) -> list[dict[str, str]]:
    """The chat messages that ask for an answer to ``question`` from the numbered ``contexts``."""
    cards = "\n\n".join(f"[{i}] {c}" for i, c in enumerate(contexts, start=1))
    return [{"role": "system", "content": ANSWER_INSTRUCTIONS},
            {"role": "user", "content": f"Question: {question}\n\nSearch results:\n{cards}"}]


ANSWER_MAX_TOKENS = 300
"""The most tokens of one written answer."""
RELEVANCY_STRICTNESS = 3
"""Questions the LLM writes back from one answer for answer relevancy (ragas' default)."""


def judge_scores(items: Sequence[JudgeItem], judge: LLMJudge,
                 embedder: Embedder | None = None) -> dict[str, dict[str, float | None]]:
    """ragas' faithfulness and answer relevancy of an answer the judge's LLM writes for each item
    from its cards (:func:`answer_messages`), one query after another.

    A score ragas leaves undefined (an answer without statements) is None, and so are both scores
    of a query whose answer is empty or whose judgement the LLM did not give as the JSON ragas asked
    for (its ``instructor`` retries spent): those are logged and the other queries go on.

    Args:
        items: the queries (:func:`judge_items`).
        judge: the endpoint and its settings.
        embedder: a searchkit embedder (``embed_queries``) for answer relevancy when
            ``judge.embedding_model`` is None.

    Returns:
        ``{query_id: {"ragas:faithfulness@k": f, "ragas:answer_relevancy@k": r}}``.

    Raises:
        ResourceError: ragas (or the openai client) is not installed.
        InputError: the API key's variable is not set, or neither an embedding model nor an
            embedder is given.
        ResourceError: the endpoint failed (after its retries); nothing is returned.
    """
    if judge.embedding_model is None and embedder is None:
        raise InputError("answer relevancy needs embeddings: give the llm embedding_model or an embedder")
    key = judge.api_key()
    if not items:
        return {}
    parts = _judge_parts()
    return asyncio.run(_judge_all(list(items), judge, key, embedder, parts))


def _judge_parts() -> dict[str, Any]:
    if not is_available():
        raise ResourceError(INSTALL_HINT)
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import openai
        from ragas.embeddings.base import BaseRagasEmbedding
        from ragas.embeddings.openai_provider import OpenAIEmbeddings
        from ragas.llms.base import llm_factory
        from ragas.metrics.collections import AnswerRelevancy, Faithfulness
    return {"openai": openai, "base_embedding": BaseRagasEmbedding, "openai_embeddings": OpenAIEmbeddings,
            "llm_factory": llm_factory, "faithfulness": Faithfulness, "relevancy": AnswerRelevancy}


async def _judge_all(items: list[JudgeItem], judge: LLMJudge, key: str | None, embedder: Embedder | None,
                     parts: Mapping[str, Any]) -> dict[str, dict[str, float | None]]:
    openai = parts["openai"]
    # the SDK always sends a bearer token: a placeholder when no key is configured (never OPENAI_API_KEY)
    client = openai.AsyncOpenAI(base_url=judge.base_url, api_key=key or "none", timeout=judge.timeout,
                                max_retries=judge.max_retries)
    try:
        llm = parts["llm_factory"](judge.model, client=client)
        if judge.embedding_model is not None:
            embeddings = parts["openai_embeddings"](client=client, model=judge.embedding_model)
        else:
            embeddings = _own_embeddings(parts["base_embedding"], embedder)
        faithfulness = parts["faithfulness"](llm=llm)
        relevancy = parts["relevancy"](llm=llm, embeddings=embeddings, strictness=RELEVANCY_STRICTNESS)
        out: dict[str, dict[str, float | None]] = {}
        for item in items:
            try:
                out[item.query_id] = await _judge_one(item, judge, client, faithfulness, relevancy)
            except openai.APIError as exc:
                raise _endpoint_error(judge, exc, key) from None
        return out
    finally:
        await client.close()


class _Completions(Protocol):
    """What an answer is written with: the chat completions of an ``openai.AsyncOpenAI`` client."""

    async def create(self, *, model: str, messages: list[dict[str, str]], temperature: float,
                     max_tokens: int) -> object: ...


class _Chat(Protocol):
    @property
    def completions(self) -> _Completions: ...


class _ChatClient(Protocol):
    """The part of an ``openai.AsyncOpenAI`` client the judge uses."""

    @property
    def chat(self) -> _Chat: ...


class _Scored(Protocol):
    @property
    def value(self) -> object: ...


class _Metric(Protocol):
    """A ragas metric (``Faithfulness``, ``AnswerRelevancy``): ``ascore`` of one answer."""

    async def ascore(self, **fields: object) -> _Scored: ...


async def _judge_one(item: JudgeItem, judge: LLMJudge, client: _ChatClient, faithfulness: _Metric,
                     relevancy: _Metric) -> dict[str, float | None]:
    f_name, r_name = judge.names()
    answer = await _write_answer(item, judge, client)
    if not answer:
        log.warning("ragas-llm: the LLM wrote an empty answer for query %s; its scores are left out", item.query_id)
        return {f_name: None, r_name: None}
    try:
        f = await faithfulness.ascore(user_input=item.question, response=answer, retrieved_contexts=list(item.contexts))
        r = await relevancy.ascore(user_input=item.question, response=answer)
    except _unparsed_errors() as exc:
        log.warning("ragas-llm: query %s: the LLM's judgement is not the JSON ragas asked for (%s); its scores are "
                    "left out", item.query_id, type(exc).__name__)
        return {f_name: None, r_name: None}
    return {f_name: _finite(f.value), r_name: _finite(r.value)}


async def _write_answer(item: JudgeItem, judge: LLMJudge, client: _ChatClient) -> str:
    resp = await client.chat.completions.create(model=judge.model, messages=answer_messages(item.question, item.contexts),
                                                temperature=0, max_tokens=ANSWER_MAX_TOKENS)
    choices = getattr(resp, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    content = getattr(message, "content", None)
    return content.strip() if isinstance(content, str) else ""


def _unparsed_errors() -> tuple[type[BaseException], ...]:
    """What an answer the metric cannot read raises: instructor's spent retries, pydantic's and
    JSON's errors, ragas' own checks (ValueError)."""
    import importlib
    import json

    import pydantic

    errors: list[type[BaseException]] = [pydantic.ValidationError, json.JSONDecodeError, ValueError]
    # where instructor keeps it moved between releases (1.3: instructor.retry; 1.17: instructor.core)
    for where in ("instructor.core", "instructor.exceptions", "instructor.retry"):
        try:
            module = importlib.import_module(where)
        except ImportError:
            continue
        found = getattr(module, "InstructorRetryException", None)
        if isinstance(found, type) and issubclass(found, BaseException):
            errors.append(found)
            break
    return tuple(errors)


def _finite(value: Any) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _endpoint_error(judge: LLMJudge, exc: BaseException, key: str | None) -> ResourceError:
    """One line naming the endpoint and what failed: the status code or the kind of failure, never
    the answer's body (it may echo the key or the cards)."""
    import openai

    tries = judge.max_retries + 1
    after = " " + attempts_text(tries)  # as searchkit.http_client says it of the embedders and rerankers
    if isinstance(exc, openai.APITimeoutError):
        why = f"no answer within the {judge.timeout:g}s timeout{after}"
    elif isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        why = "connection failed" + (f" ({type(cause).__name__})" if cause is not None else "") + after
    elif isinstance(exc, openai.APIStatusError):
        why = f"HTTP {exc.status_code}" + (after if exc.status_code in (408, 409, 429) or exc.status_code >= 500 else "")
    else:
        why = f"{type(exc).__name__}"
    return ResourceError(f"LLM endpoint {judge.shown_url} (model {judge.model!r}): {redacted(why, [key] if key else [])}")


def _own_embeddings(base: type, embedder: Any) -> Any:
    """A searchkit embedder as ragas' embeddings (the question and the questions written back are
    embedded as queries)."""

    class SearchkitEmbeddings(base):
        def __init__(self) -> None:
            super().__init__()
            self.embedder = embedder

        def embed_text(self, text: str, **_: object) -> list[float]:
            return self.embed_texts([text])[0]

        def embed_texts(self, texts: list[str], **_: object) -> list[list[float]]:
            return [[float(x) for x in row] for row in self.embedder.embed_queries(list(texts))]

        async def aembed_text(self, text: str, **_: object) -> list[float]:
            return self.embed_text(text)

        async def aembed_texts(self, texts: list[str], **_: object) -> list[list[float]]:
            return self.embed_texts(texts)

    return SearchkitEmbeddings()


def judge_summary(scores: Mapping[str, Mapping[str, float | None]], items: Sequence[JudgeItem],
                  k: int) -> dict[str, dict[str, Any]]:
    """The mean of each score over the answerable and over the unanswerable queries judged, each
    group with ``n`` (queries judged) and, per score, how many had it defined (``scored``); a mean
    over no query is None."""
    names = judge_names(k)
    out: dict[str, dict[str, Any]] = {}
    for group, answerable in (("answerable", True), ("unanswerable", False)):
        rows = [scores[i.query_id] for i in items if i.answerable is answerable and i.query_id in scores]
        means: dict[str, float | None] = {}
        scored: dict[str, int] = {}
        for name in names:
            vals = [v[name] for v in rows if v.get(name) is not None]
            scored[name] = len(vals)
            means[name] = float(sum(vals) / len(vals)) if vals else None  # type: ignore[arg-type]
        out[group] = {"n": len(rows), "mean": means, "scored": scored}
    return out
