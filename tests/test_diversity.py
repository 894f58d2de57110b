"""H8 kind diversity: hand-built candidate lists, arithmetic checkable by eye."""
import pytest

from searchkit.rank.diversity import diversify
from searchkit.records import Hit, Passage, Record


def _hits(spec):
    """spec: list of (id, kind, score), best first."""
    out = []
    for i, (rid, kind, score) in enumerate(spec, start=1):
        r = Record(id=rid, kind=kind, text=rid)
        out.append(Hit(record=r, score=score, rank=i, passage=Passage(rid, 0, rid, 0, len(rid))))
    return out


def test_close_enough_kind_replaces_weakest_card_of_crowded_kind():
    hits = _hits([("f1", "file", 1.0), ("f2", "file", 0.9), ("f3", "file", 0.8), ("f4", "file", 0.7),
                  ("c1", "chat", 0.6), ("a1", "app", 0.55), ("a2", "app", 0.52), ("l1", "log", 0.1)])
    got = diversify(hits, 4, per_kind=2, min_relative_score=0.5)
    assert [h.record.id for h in got] == ["f1", "f2", "c1", "a1"]
    assert [h.rank for h in got] == [1, 2, 3, 4]


def test_kind_not_close_enough_does_not_come_in():
    hits = _hits([("f1", "file", 1.0), ("f2", "file", 0.9), ("f3", "file", 0.8), ("l1", "log", 0.3),
                  ("p1", "page", 0.0)])
    got = diversify(hits, 3, per_kind=2, min_relative_score=0.5)
    assert [h.record.id for h in got] == ["f1", "f2", "f3"]


def test_no_kind_with_more_than_enough_means_no_replacement():
    hits = _hits([("f1", "file", 1.0), ("f2", "file", 0.9), ("c1", "chat", 0.85), ("c2", "chat", 0.8),
                  ("a1", "app", 0.7)])
    got = diversify(hits, 4, per_kind=2, min_relative_score=0.5)
    assert [h.record.id for h in got] == ["f1", "f2", "c1", "c2"]


def test_at_most_per_kind_cards_come_in_for_a_kind():
    hits = _hits([("f1", "file", 1.0), ("f2", "file", 0.95), ("f3", "file", 0.9), ("f4", "file", 0.85),
                  ("f5", "file", 0.8), ("c1", "chat", 0.7), ("c2", "chat", 0.7), ("c3", "chat", 0.7),
                  ("x1", "page", 0.0)])
    got = diversify(hits, 5, per_kind=2, min_relative_score=0.5)
    assert [h.record.id for h in got] == ["f1", "f2", "f3", "c1", "c2"]


def test_close_enough_is_scale_free():
    # the same list shifted and scaled (as RRF vs z-score fusion would give) picks the same cards
    spec = [("f1", "file", 1.0), ("f2", "file", 0.9), ("f3", "file", 0.8), ("f4", "file", 0.7),
            ("c1", "chat", 0.6), ("a1", "app", 0.55), ("a2", "app", 0.52), ("l1", "log", 0.1)]
    shifted = [(i, k, 3.0 * s - 2.0) for i, k, s in spec]
    a = [h.record.id for h in diversify(_hits(spec), 4)]
    b = [h.record.id for h in diversify(_hits(shifted), 4)]
    assert a == b == ["f1", "f2", "c1", "a1"]


def test_fewer_hits_than_limit_and_bad_limit():
    hits = _hits([("f1", "file", 1.0)])
    assert [h.record.id for h in diversify(hits, 8)] == ["f1"]
    with pytest.raises(ValueError, match="limit"):
        diversify(hits, 0)
