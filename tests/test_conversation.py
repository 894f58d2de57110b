"""Who said it (H11 in long chats): attribution by speaker, never by mention; digests by sentence."""
from __future__ import annotations

import pytest

from searchkit.rank.conversation import Speakers, attribution


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
