"""A question's date, in ranking (issue 11 item 3: temporal questions use the session dates)."""
from __future__ import annotations

import datetime as dt

import pytest

from searchkit.rank.dates import When, query_when, record_day
from searchkit.records import Record


@pytest.mark.parametrize("text, when", [
    ("When did Melanie go camping in June?", When(None, 6)),
    ("What did Mel paint in their latest project in July 2023?", When(2023, 7)),
    ("What painting did Melanie show to Caroline on October 13, 2023?", When(2023, 10, 13)),
    ("What did Maria participate in last weekend before April 10, 2023?", When(2023, 4, 10)),
    ("What was the pet John said goodbye to on 3 June, 2023?", When(2023, 6, 3)),
    ("the 13th of October", When(None, 10, 13)),
    ("Dec 2023 budget", When(2023, 12)),
    ("What did we decide on 2026-10-21?", When(2026, 10, 21)),
    ("How many times in 2023?", When(2023)),
    ("что было 8 мая 2023 года", When(2023, 5, 8)),
    ("что решили 21.10.2026", When(2026, 10, 21)),
    ("что мы делали в марте", When(None, 3)),
    ("отчёт за сентябрь 2026", When(2026, 9)),
    ("Сколько людей живет в Стамбуле в 2019 году?", When(2019)),
    ("2023年5月8日に何をした", When(2023, 5, 8)),
    ("２０２３年５月の会議", When(2023, 5)),  # full-width digits
    ("10月に話したこと", When(None, 10)),
    ("2023年の目標", When(2023)),
])
def test_the_most_specific_date_a_question_names(text, when):
    assert query_when(text) == when


@pytest.mark.parametrize("text", [
    "что с задачей ATL-2044?",      # an identifier, not a year
    "PR #2023 review",
    "may I ask about the pottery class?",
    "When did Caroline go to the support group?",  # a temporal question naming no date
    "What did Melanie do last year?",              # relative: no date given
    "",
])
def test_no_date_where_none_is_named(text):
    assert query_when(text) is None


def test_matching_a_day_a_month_and_a_year():
    day = When(2023, 4, 10)
    assert day.matches(dt.date(2023, 4, 10)) and day.matches(dt.date(2023, 4, 7)) and day.matches(dt.date(2023, 4, 13))
    assert not day.matches(dt.date(2023, 4, 14)) and not day.matches(dt.date(2022, 4, 10))
    assert When(None, 4, 10).matches(dt.date(2021, 4, 11))  # no year named: any year's April 10
    month = When(2023, 12)
    assert month.matches(dt.date(2023, 12, 31)) and not month.matches(dt.date(2024, 1, 1))
    assert not month.matches(dt.date(2022, 12, 5))
    assert When(None, 6).matches(dt.date(2020, 6, 1)) and not When(None, 6).matches(dt.date(2020, 7, 1))
    assert When(2023).matches(dt.date(2023, 1, 1)) and not When(2023).matches(dt.date(2024, 1, 1))
    assert not month.matches(None)
    assert not When(2023, 2, 30).matches(dt.date(2023, 3, 1))  # no such day


def test_a_records_day_is_its_date_else_the_whole_date_its_title_names():
    assert record_day(Record(id="a", date="2026-10-21T14:03:00+03:00", title="Chat on 8 May, 2023")) == dt.date(2026, 10, 21)
    assert record_day(Record(id="b", title="Chat Caroline & Melanie, 1:56 pm on 8 May, 2023")) == dt.date(2023, 5, 8)
    assert record_day(Record(id="c", title="Report May 2023")) is None  # not a whole date
    assert record_day(Record(id="d", title="Super Bowl 50")) is None
    assert record_day(Record(id="e", date="not a date")) is None


# workspace chats carry their date; the last one is dated only by its title, as LoCoMo's sessions are
SESSIONS = [
    ("s1", "2023-10-03T14:00:00", "Chat Maria & John",
     "Maria: I donated old clothes to the homeless shelter today.\nJohn: That's kind of you!"),
    ("s2", "2023-12-14T17:10:00", "Chat Maria & John",
     "Maria: I went by the shelter again and gave some food.\nJohn: Great!"),
    ("s3", None, "Chat Maria & John, 9:00 am on 20 January, 2024",
     "Maria: The homeless shelter asked me to donate clothes and food and toys, I donated a lot.\nJohn: Wow."),
    ("notes", None, "Shelter notes", "donated clothes to the homeless shelter, food for the homeless shelter"),
]


def _searcher(weight: float):
    from searchkit.config import SearchConfig
    from searchkit.index.cache import EmbeddingCache
    from searchkit.searcher import Searcher

    records = [Record(id=i, kind="chat", date=d, title=t, text=x) for i, d, t, x in SESSIONS]
    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing", "hashing_dim": 256},
                                  "fusion": {"date": weight}})
    return Searcher.build(records, cfg, cache=EmbeddingCache(None))


def _ranked(searcher, q):
    return [(h.record.id, h.score) for h in searcher.search(q, k=4).hits]


def test_fusion_date_moves_the_records_of_the_named_date_up():
    off, on = _searcher(0.0), _searcher(0.5)
    q = "What did Maria donate to the homeless shelter in December 2023?"
    before, after = dict(_ranked(off, q)), dict(_ranked(on, q))
    # the record of that month gains the weight; the others keep their scores, the undated ones too
    assert after["s2"] == pytest.approx(before["s2"] + 0.5)
    assert {r: s for r, s in after.items() if r != "s2"} == {r: s for r, s in before.items() if r != "s2"}
    assert _ranked(off, q)[0][0] != "s2" and _ranked(_searcher(1.0), q)[0][0] == "s2"
    # the weak-match signals are read before the stage: the same with it and without it
    assert on.search(q, k=4).signals == off.search(q, k=4).signals
    # a named day matches a record within three days of it (s1 is of October 3)
    day = "What did Maria donate on October 5, 2023?"
    assert dict(_ranked(on, day))["s1"] == pytest.approx(dict(_ranked(off, day))["s1"] + 0.5)
    assert dict(_ranked(on, day))["s3"] == dict(_ranked(off, day))["s3"]
    late = "What did Maria donate on October 7, 2023?"  # four days after: no match
    assert _ranked(on, late) == _ranked(off, late)
    # a month without a year: the record dated by its title (January 2024) gains
    jan = "What did Maria donate to the homeless shelter in January?"
    assert dict(_ranked(on, jan))["s3"] == pytest.approx(dict(_ranked(off, jan))["s3"] + 0.5)
    # a question naming no date, or a date no record is of, ranks as it did
    for plain in ("What did Maria donate to the homeless shelter?",
                  "What did Maria donate to the homeless shelter in March 2022?"):
        assert _ranked(on, plain) == _ranked(off, plain)
