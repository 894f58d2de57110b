"""Kind diversity (H8): one kind does not crowd out the others.

Cards come by relevance. A kind that has fewer than ``per_kind`` cards in the top ``limit`` but
has further candidates that are close enough to the question gets up to ``per_kind`` cards, each in place of the
weakest card of a kind that has more than ``per_kind`` cards ("more than enough"). When no kind
has more than enough, nothing is replaced. The answer stays ordered by relevance.

"Close enough" (``closeness``, issue 39 item 9) is judged on a scale that does not depend on how
many candidates there are, so a filter that leaves few candidates (``kinds``, ``since``/``until``)
judges a record as a search with many does: each retriever's own score of the record, relative to
the best score that retriever gives any candidate, on a scale whose zero is fixed (BM25: no query
term; an embedding's cosine: as far as can be, by the ratio of the best candidate's distance
``1 - cos`` to the record's), averaged with the fusion weights; a candidate is close enough when that is
at least ``min_relative_score``. Weaker candidates coming or going change nothing (before, the
fused score was min-max normalised over the candidate list, so the last of a short list always
scored 0 and was never close enough). Being raw retriever scores, it means the same under RRF and
under score fusion. Hits without any retriever's score (built by hand) are judged as before, by
their fused score min-max normalised over the list.

Result groups (issue 11 item 3, issue 28 item 4): with ``group`` given, candidates that share a
group key (the history tool's key is the session: a chat and the digests of its turns) fill at
most ``per_group`` cards while other candidates compete: a group's best-ranked candidate always
may, a further one only when it is close enough (with ``prefer``, the history tool's other matching
turns of a session before its chat), the others give way before the cards are picked, so the freed
slots go to the next candidates under the same H8 rule. A group never leaves a slot empty: when the
candidates run out before ``limit``, a group's further close-enough candidates fill the rest, in
relevance order (issue 39 item 9: a filter leaving one session's turns shows all that match). A
candidate whose key is ``None`` is a group of its own.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Callable, Hashable, Mapping, Optional, Sequence

from searchkit.errors import InputError
from searchkit import retrievers
from searchkit.records import Hit

GroupKey = Callable[[Hit], Optional[Hashable]]
Weights = Optional[Mapping[str, float]]


def one_per_group(hits: Sequence[Hit], group: GroupKey) -> list[Hit]:
    """``hits`` (best first) less every hit whose group key an earlier hit already has; hits
    keyed ``None`` are all kept. Order and ranks are unchanged."""
    seen: set = set()
    out: list[Hit] = []
    for h in hits:
        key = group(h)
        if key is not None:
            if key in seen:
                continue
            seen.add(key)
        out.append(h)
    return out


def cap_groups(
    hits: Sequence[Hit], group: GroupKey, per_group: int = 1, *, min_relative_score: float = 0.5,
    prefer: Callable[[Hit], bool] | None = None, weights: Weights = None,
) -> list[Hit]:
    """``hits`` (best first) with at most ``per_group`` hits of each group key: the first of a
    group always stays, a further one only when close enough (``closeness`` over ``hits``, with
    ``weights``, at least ``min_relative_score``). With ``prefer``, a group's further places
    go to its close-enough hits that ``prefer`` holds for before the others (the history tool:
    a session's other matching turns before its chat), each in relevance order. Hits keyed
    ``None`` all stay; order and ranks are unchanged. ``per_group`` 1 is ``one_per_group``."""
    if per_group < 1:
        raise InputError(f"per_group must be at least 1, got {per_group}")
    if per_group == 1 or not hits:
        return one_per_group(hits, group)
    close = close_enough(hits, min_relative_score, weights)
    members: dict[Hashable, list[Hit]] = {}
    for h in hits:
        key = group(h)
        if key is not None:
            members.setdefault(key, []).append(h)
    keep: set[int] = set()
    for first, *rest in members.values():
        further = [h for h in rest if close(h)]
        if prefer is not None:
            further.sort(key=lambda h: not prefer(h))  # stable: relevance order within each class
        keep.update(id(h) for h in [first, *further[:per_group - 1]])
    return [h for h in hits if group(h) is None or id(h) in keep]


def closeness(hits: Sequence[Hit], weights: Weights = None) -> Callable[[Hit], float]:
    """H8's "how close to the question" of each of ``hits`` (the candidates, best first), 0..1, on a
    scale that does not depend on how many candidates there are: for each retriever that scored
    some candidate, the record's score relative to the best score that retriever gives any of
    ``hits`` (1 for the best), with a fixed zero: BM25 and any other retriever ``score / best``
    (0: no query term), a retriever that embeds (a cosine, at most 1) ``(1 - best) / (1 - cos)``,
    the best candidate's distance over the record's (0: as far as can be); a retriever that did not
    return the record gives it 0. Averaged with ``weights`` (the fusion weights by retriever; the
    retrievers without a positive weight leave out, all equal when none has one).

    Hits that carry no retriever's score at all (built by hand) are judged by their fused score,
    min-max normalised over ``hits`` (top = 1, last = 0; 0 for all when all are equal)."""
    names = sorted({n for h in hits for n in h.scores})
    if not names:
        return _minmax(hits)
    best = {n: max(float(h.scores[n]) for h in hits if n in h.scores) for n in names}
    w = {n: float((weights or {}).get(n, 0.0)) for n in names}
    w = {n: x for n, x in w.items() if x > 0} or {n: 1.0 for n in names}
    total = sum(w.values())
    cosine = {n: _embeds(n) for n in w}

    def of(h: Hit) -> float:
        s = 0.0
        for n, x in w.items():
            if n in h.scores:
                s += x * _relative(float(h.scores[n]), best[n], cosine[n])
        return s / total

    return of


def _relative(score: float, best: float, cosine: bool) -> float:
    """A retriever's score of a record relative to its best over the candidates, 0..1."""
    if cosine:
        far, near = 1.0 - score, max(1.0 - best, 0.0)
        return 1.0 if far <= near else near / far
    if best <= 0:
        return 0.0
    return min(max(score / best, 0.0), 1.0)


def _embeds(name: str) -> bool:
    try:
        return bool(retrievers.get(name).embeds)
    except ValueError:  # a retriever this process does not know: its scores as any other's
        return False


def _minmax(hits: Sequence[Hit]) -> Callable[[Hit], float]:
    top = max((h.score for h in hits), default=0.0)
    low = min((h.score for h in hits), default=0.0)
    span = top - low

    def of(h: Hit) -> float:
        return (h.score - low) / span if span > 0 else 0.0

    return of


def close_enough(hits: Sequence[Hit], min_relative_score: float, weights: Weights = None) -> Callable[[Hit], bool]:
    """H8's "close enough": a hit's ``closeness`` over ``hits`` is at least ``min_relative_score``
    (never for hand-built hits whose fused scores are all equal)."""
    of = closeness(hits, weights)
    flat = not any(h.scores for h in hits) and len({h.score for h in hits}) < 2

    def ok(h: Hit) -> bool:
        return not flat and of(h) >= min_relative_score

    return ok


def diversify(
    hits: Sequence[Hit],
    limit: int,
    *,
    per_kind: int = 2,
    min_relative_score: float = 0.5,
    group: GroupKey | None = None,
    per_group: int = 1,
    prefer: Callable[[Hit], bool] | None = None,
    weights: Weights = None,
) -> list[Hit]:
    """Pick ``limit`` cards from ``hits`` (ranked candidates, best first) as H8 describes, at
    most ``per_group`` per ``group`` key when ``group`` is given while other candidates compete,
    a group's second and later card only when close enough, those ``prefer`` holds for first (see
    the module docstring and ``cap_groups``); ``weights`` (the fusion weights by retriever) weigh
    ``closeness``.

    Returns the chosen hits in their original relevance order, re-numbered from rank 1.
    """
    if limit < 1:
        raise InputError(f"limit must be at least 1, got {limit}")
    pool = list(hits) if group is None else cap_groups(hits, group, per_group, min_relative_score=min_relative_score,
                                                       prefer=prefer, weights=weights)
    chosen = list(pool[:limit])
    close = close_enough(hits, min_relative_score, weights)
    if chosen and per_kind >= 1:
        rest = [h for h in pool[limit:] if close(h)]
        counts = Counter(h.record.kind for h in chosen)
        for cand in rest:
            kind = cand.record.kind
            if counts[kind] >= per_kind:
                continue
            # the weakest card of a kind with more than enough cards
            victim = None
            for h in reversed(chosen):
                if counts[h.record.kind] > per_kind:
                    victim = h
                    break
            if victim is None:
                break
            chosen.remove(victim)
            counts[victim.record.kind] -= 1
            chosen.append(cand)
            counts[kind] += 1
    chosen += fill_up(hits, pool, limit - len(chosen), close)
    order = {id(h): i for i, h in enumerate(hits)}
    chosen.sort(key=lambda h: order[id(h)])
    return renumber(chosen)


def fill_up(hits: Sequence[Hit], pool: Sequence[Hit], free: int, close: Callable[[Hit], bool]) -> list[Hit]:
    """The slots a group cap would leave empty (``free`` of them, the candidates run out): the
    close-enough ``hits`` the cap kept out of ``pool``, in relevance order."""
    if free <= 0 or len(pool) == len(hits):
        return []
    kept = {id(h) for h in pool}
    return [h for h in hits if id(h) not in kept and close(h)][:free]


def renumber(hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` with ranks 1, 2, ... in their order."""
    return [replace(h, rank=i) for i, h in enumerate(hits, start=1)]
