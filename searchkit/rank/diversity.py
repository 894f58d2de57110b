"""Kind diversity (H8): one kind does not crowd out the others.

Cards come by relevance. A kind that has fewer than ``per_kind`` cards in the top ``limit`` but
has further candidates that are close enough to the question gets up to ``per_kind`` cards, each in place of the
weakest card of a kind that has more than ``per_kind`` cards ("more than enough"). When no kind
has more than enough, nothing is replaced. The answer stays ordered by relevance.

"Close enough" is scale-free, so it means the same under RRF and under score fusion: a candidate's
fused score, min-max normalised over the candidate list (top = 1, last = 0), must be at least
``min_relative_score``.
"""
from __future__ import annotations

from collections import Counter
from typing import Sequence

from searchkit.records import Hit


def diversify(hits: Sequence[Hit], limit: int, *, per_kind: int = 2, min_relative_score: float = 0.5) -> list[Hit]:
    """Pick ``limit`` cards from ``hits`` (ranked candidates, best first) as H8 describes.

    Returns the chosen hits in their original relevance order, re-numbered from rank 1.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    chosen = list(hits[:limit])
    if not chosen or per_kind < 1:
        return _renumber(chosen)
    top, low = hits[0].score, min(h.score for h in hits)
    span = top - low
    rest = [h for h in hits[limit:] if span > 0 and (h.score - low) / span >= min_relative_score]
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
    order = {id(h): i for i, h in enumerate(hits)}
    chosen.sort(key=lambda h: order[id(h)])
    return _renumber(chosen)


def _renumber(hits: list[Hit]) -> list[Hit]:
    from dataclasses import replace

    return [replace(h, rank=i) for i, h in enumerate(hits, start=1)]
