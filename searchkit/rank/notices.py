"""The notices above the cards of one search (H11, H12) and the weak-match signals behind them.

``search_notices`` reads the candidates as the ``evidence`` stage saw them (``searchkit.rank.stages``):
the weak-match model is the one for what that evidence is (``evidence_shape_of`` its ranking), the
signals carry every feature (``searchkit.rank.signals.FEATURES``), ``answer_probability`` and
``conversation_model`` (1: the conversation model scored it); the missing-ID notice reads the hits.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

from searchkit.rank import signals
from searchkit.rank.candidates import Candidates
from searchkit.rank.conversation import evidence_shape
from searchkit.records import Hit, Notice

if TYPE_CHECKING:
    from searchkit.config import WeakMatchConfig


def evidence_shape_of(ranked: Sequence[tuple[int, float]], kind_of: Callable[[int], str], weak_match: WeakMatchConfig,
                      speaker_named: bool = True) -> str:
    """``conversation`` or ``documents``: the weak-match model that reads the evidence of a ranking
    (``(record, score)`` best first; ``kind_of(record)`` its kind), by the kinds of its top records
    and whether the question names a speaker of the conversations in scope (``speaker_named``, the
    ``speaker_query`` evidence): ``rank.conversation.evidence_shape`` under
    ``weak_match.conversation_kinds``, ``conversation_depth``, ``conversation_share`` and
    ``conversation_needs_speaker``; never by the corpus's text."""
    wm = weak_match
    top = [kind_of(ri) for ri, _ in ranked[:wm.conversation_depth]]
    return evidence_shape(top, wm.conversation_kinds, wm.conversation_depth, wm.conversation_share,
                          speaker_named=speaker_named, needs_speaker=wm.conversation_needs_speaker)


def search_notices(query: str, c: Candidates, hits: Sequence[Hit], kind_of: Callable[[int], str],
                   weak_match: WeakMatchConfig, shown: Sequence[Hit] | None = None) -> tuple[list[Notice], dict[str, float]]:
    """H11 and H12 above the cards, and the signals: ``c`` is the candidates with the ranking the
    evidence was read from (``c.fused``) and every piece of evidence; ``hits`` the ranked hits and
    ``shown`` those a caller shows of them (default: all), which the missing-ID notice reads."""
    out = []
    sig: dict[str, float] = {}
    wm = weak_match
    if hits:
        shape = evidence_shape_of(c.fused, kind_of, wm, c.evidence.get("speaker_query", 0.0) > 0)
        model = wm.model_for(shape)
        sig = signals.compute_features(c)
        sig["answer_probability"] = signals.answer_probability(sig, model)
        sig["conversation_model"] = 1.0 if model is not wm else 0.0
        if wm.enabled:
            w = signals.weak_match_warning(sig, model)
            if w is not None:
                out.append(w)
    m = signals.missing_ids_warning(query, hits if shown is None else shown)
    if m is not None:
        out.append(m)
    return out, sig
