"""Kind diversity (H8): one kind does not crowd out the others.

Cards come by relevance. A kind that has fewer than ``per_kind`` cards in the top ``limit`` but
has further candidates that are close enough to the question gets up to ``per_kind`` cards, each in place of the
weakest card of a kind that has more than ``per_kind`` cards ("more than enough"). When no kind
has more than enough, nothing is replaced. The answer stays ordered by relevance.

"Close enough" is scale-free, so it means the same under RRF and under score fusion: a candidate's
fused score, min-max normalised over the candidate list (top = 1, last = 0), must be at least
``min_relative_score``.

Result groups (issue 11 item 3, issue 28 item 4): with ``group`` given, candidates that share a
group key (the history tool's key is the session: a chat and the digests of its turns) fill at
most ``per_group`` cards: a group's best-ranked candidate always may, a further one only when it
is close enough (the same rule as for kinds; with ``prefer``, the history tool's other matching
turns of a session before its chat), the others are dropped before the cards are picked,
so the freed slots go to the next candidates under the same H8 rule. A candidate whose key is
``None`` is a group of its own. "Close enough" is measured over the whole candidate list, so
grouping changes nothing for candidates outside any group but the slots.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Callable, Hashable, Optional, Sequence

from searchkit.records import Hit

GroupKey = Callable[[Hit], Optional[Hashable]]


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
    prefer: Callable[[Hit], bool] | None = None,
) -> list[Hit]:
    """``hits`` (best first) with at most ``per_group`` hits of each group key: the first of a
    group always stays, a further one only when close enough (its score, min-max normalised
    over ``hits``, at least ``min_relative_score``). With ``prefer``, a group's further places
    go to its close-enough hits that ``prefer`` holds for before the others (the history tool:
    a session's other matching turns before its chat), each in relevance order. Hits keyed
    ``None`` all stay; order and ranks are unchanged. ``per_group`` 1 is ``one_per_group``."""
    if per_group < 1:
        raise ValueError(f"per_group must be at least 1, got {per_group}")
    if per_group == 1 or not hits:
        return one_per_group(hits, group)
    close = _close_enough(hits, min_relative_score)
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


def _close_enough(hits: Sequence[Hit], min_relative_score: float) -> Callable[[Hit], bool]:
    """H8's "close enough": a hit's score, min-max normalised over ``hits`` (best first), is at
    least ``min_relative_score``; never when all scores are equal."""
    top, low = hits[0].score, min(h.score for h in hits)
    span = top - low
    return lambda h: span > 0 and (h.score - low) / span >= min_relative_score


def diversify(
    hits: Sequence[Hit],
    limit: int,
    *,
    per_kind: int = 2,
    min_relative_score: float = 0.5,
    group: GroupKey | None = None,
    per_group: int = 1,
    prefer: Callable[[Hit], bool] | None = None,
) -> list[Hit]:
    """Pick ``limit`` cards from ``hits`` (ranked candidates, best first) as H8 describes, at
    most ``per_group`` per ``group`` key when ``group`` is given, a group's second and later
    card only when close enough, those ``prefer`` holds for first (see the module docstring and
    ``cap_groups``).

    Returns the chosen hits in their original relevance order, re-numbered from rank 1.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    pool = list(hits) if group is None else cap_groups(hits, group, per_group, min_relative_score=min_relative_score,
                                                       prefer=prefer)
    chosen = list(pool[:limit])
    if not chosen or per_kind < 1:
        return renumber(chosen)
    close = _close_enough(hits, min_relative_score)
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
    order = {id(h): i for i, h in enumerate(pool)}
    chosen.sort(key=lambda h: order[id(h)])
    return renumber(chosen)


def renumber(hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` with ranks 1, 2, ... in their order."""
    return [replace(h, rank=i) for i, h in enumerate(hits, start=1)]
