"""Is a remote endpoint an eval needs there, before the eval starts? (issue 40 item 7; SPEC E4, H16)

``searchkit eval`` indexes and ranks for minutes before it reaches an LLM judge (``--metrics
ragas-llm``) or an HTTP reranker (``rerank.method`` ``http``): an endpoint that is down, or that
refuses the key, failed only then. Here each is asked once, cheaply, first:

- the **LLM** (``check_llm``): ``GET {base_url}/models`` (listing the models costs no tokens), with
  the key where one is named, through ``searchkit.http_client`` (one attempt within a whole-request
  deadline; a redirect is never followed, so the key goes to no other host). Any HTTP answer but
  401/403 means the server is there (a server that does not list models answers 404, and is there);
  no answer, or 401/403, is one line naming ``--llm-base-url`` (the URL shown without credentials)
  and why, never the key or the body.
- the **HTTP reranker** (``check_reranker``): one ``/rerank`` request of one tiny passage to each
  provider in turn (``rerank.base_url``, then ``rerank.fallbacks[i].base_url``), one attempt each;
  the check passes when one answers (as the eval would fall back) and fails with one line naming
  every provider's config key and why when none does.

A check never retries: it is a question, not the work. Library code: it raises, never prints.
"""
from __future__ import annotations

import http.client
from typing import TYPE_CHECKING

from searchkit.credentials import scrub, shown_url
from searchkit.errors import ResourceError
from searchkit.http_client import fetch, redacted
from searchkit.rank.http_rerank import HTTPReranker

if TYPE_CHECKING:
    from searchkit.config import SearchConfig
    from searchkit.evaluate.ragas_metrics import LLMJudge

__all__ = ["CHECK_TIMEOUT", "check_llm", "check_reranker"]

CHECK_TIMEOUT = 10.0
"""The most seconds one check waits (less where the endpoint's own timeout is shorter)."""


def _why(exc: BaseException) -> str:
    reason = getattr(exc, "reason", exc)
    text = " ".join(str(reason).split()) or type(reason).__name__
    return f"{type(reason).__name__}: {scrub(text, ())[:160]}"


def check_llm(judge: LLMJudge, *, timeout: float = CHECK_TIMEOUT) -> None:
    """Ask the judge's endpoint for its models once (``GET {base_url}/models``).

    Raises:
        ResourceError: no answer (refused, unknown host, timed out) or HTTP 401/403; the message names
            ``--llm-base-url`` and never the key or what the server answered.
    """
    url = judge.base_url.rstrip("/") + "/models"
    shown = judge.shown_url
    key = judge.api_key()
    headers = {"Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    wait = min(float(timeout), float(getattr(judge, "timeout", timeout) or timeout))
    try:
        answer = fetch("GET", url, headers=headers, timeout=wait, cap=1 << 16)
    except (ResourceError, ValueError) as exc:  # refused, unknown host, timed out; a URL urllib cannot use
        if isinstance(exc, ResourceError) and not exc.retry:
            return  # it answered (more than a list of models needs, over the cap): it is there
        late = isinstance(exc, ResourceError) and exc.late
        cause = (exc.cause if isinstance(exc, ResourceError) else None) or exc
        why = "TimeoutError: timed out" if late else _why(cause)
        raise ResourceError(f"--llm-base-url {shown}: no answer within {wait:g}s ({redacted(why, [key] if key else [])}); "
                           "nothing was evaluated") from None
    if answer.status in (401, 403):
        why = f"HTTP {answer.status}: it refused " + ("the key" if key else "a request without a key (name one with "
                                                      "--llm-api-key-env)")
        raise ResourceError(f"--llm-base-url {shown}: {why}; nothing was evaluated")
    # any other answer: it is there (404: a server that does not list its models; a redirect, never
    # followed: the key goes to no other host)


def check_reranker(config: SearchConfig, *, timeout: float = CHECK_TIMEOUT) -> None:
    """One ``/rerank`` request to the config's HTTP reranker (``rerank.method`` ``http``, enabled),
    each provider in turn until one answers; nothing to do for any other reranker.

    Raises:
        ResourceError: no provider answered; one line naming each provider's config key, URL and why.
    """
    rr = getattr(config, "rerank", None)
    if rr is None or not rr.enabled or rr.method != "http":
        return
    failures = []
    for i, p in enumerate(rr.providers()):
        key = "rerank.base_url" if i == 0 else f"rerank.fallbacks[{i - 1}].base_url"
        try:
            provider = HTTPReranker(base_url=p.base_url, model=p.model, api=p.api, api_key_env=p.api_key_env or None,
                                    api_model=p.api_model or None, timeout=min(float(timeout), float(p.timeout)),
                                    max_retries=0)
            provider.rerank("searchkit endpoint check", ["searchkit endpoint check"])
            return
        except (ResourceError, ValueError, OSError, http.client.HTTPException) as exc:
            failures.append(f"config {key} {shown_url(str(p.base_url))}: {' '.join(str(exc).split())[:200]}")
    raise ResourceError("the HTTP reranker did not answer (" + "; ".join(failures) + "); nothing was indexed")
