"""Secret values known in a workspace (issue 39 item 4 (a); ``searchkit.ingest.redact.known``).

A value the rules redacted once is redacted wherever it appears again in its scope; only salted
digests are kept, and a set read back from them redacts exactly what the set of plain values did.
"""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from searchkit.ingest.redact import SECRET
from searchkit.ingest.redact.known import KnownSecrets, found_values, scope_of, scopes_for, value_keys
from searchkit.ingest.tasks.model import redact_text

SHARED = scope_of("acme")
ANNA = scope_of("acme", "u-anna", "personal")


def _known(*values: str, scope: str = SHARED) -> KnownSecrets:
    known = KnownSecrets(bytes(range(16)))
    for v in values:
        known.add(scope, v)
    return known


@pytest.mark.parametrize("values,text,shown", [
    (["Незабудка"], "Записал: Незабудка", f"Записал: {SECRET}"),
    (["Незабудка"], "незабудка, НЕЗАБУДКА!", f"{SECRET}, {SECRET}!"),  # case folded, punctuation kept
    (["Незабудка"], "Незабудками пахнет", "Незабудками пахнет"),  # another word
    (["Pa55w0rd!"], "try Pa55w0rd! or (Pa55w0rd)", f"try {SECRET}! or ({SECRET})"),
    (["Ｔｏｋｅｎ_99"], "Token_99 works", f"{SECRET} works"),  # full width folded
    (["lunar tide marble"], "it was lunar tide\nmarble", f"it was {SECRET} {SECRET}\n{SECRET}"),
    (["lunar tide marble"], "a lunar tide", "a lunar tide"),  # a part of a phrase is not the phrase
    (["4417-9920 8812-3301"], "use 8812-3301 now", f"use {SECRET} now"),  # each code of a list
    (["つばめ"], "つばめで入れました", f"{SECRET}で入れました"),  # Japanese: inside a token
    (["つばめ"], "abcつばめ", f"abc{SECRET}"),
    (["ひまわり22"], "ひまわり223 は違う", "ひまわり223 は違う"),  # a digit joins it to more digits
    (["user:Tr0ub4dor"], "the password Tr0ub4dor", f"the password {SECRET}"),
    (["abc"], "abc", "abc"),  # too short to be a value
    (["12"], "12 items", "12 items"),
    ([SECRET], f"{SECRET} stays", f"{SECRET} stays"),
])
def test_values_are_found_where_they_appear_again(values, text, shown):
    known = _known(*values)
    assert known.redact(text, [SHARED])[0] == shown
    assert known.forget_values().redact(text, [SHARED])[0] == shown  # by the digests alone


def test_a_value_applies_only_to_its_scopes():
    known = _known("Ромашка_55", scope=ANNA)
    known.add(SHARED, "Незабудка")
    text = "Ромашка_55 и Незабудка"
    assert known.redact(text, scopes_for("acme"))[0] == f"Ромашка_55 и {SECRET}"  # a shared record
    assert known.redact(text, scopes_for("acme", "u-anna", "personal"))[0] == f"{SECRET} и {SECRET}"
    assert known.redact(text, scopes_for("acme", "u-boris", "personal"))[0] == f"Ромашка_55 и {SECRET}"
    assert known.redact(text, scopes_for("other"))[0] == text


def test_saved_digests_hold_no_value_and_read_back_the_same():
    values = ["Незабудка", "Pa55w0rd!", "つばめ", "lunar tide marble", "4417-9920"]
    known = _known(*values)
    data = json.dumps(known.to_dict(), ensure_ascii=False)
    for shown in values + [w for v in values for w in v.split()]:
        assert shown not in data and shown.casefold() not in data
    again = KnownSecrets.from_dict(json.loads(data))
    assert again is not None and again.to_dict() == known.to_dict()
    text = "Незабудка, pa55w0rd!, つばめです, lunar tide marble, 4417-9920"
    assert again.redact(text, [SHARED]) == known.redact(text, [SHARED])
    assert KnownSecrets.from_dict({"format": "x"}) is None
    assert KnownSecrets.from_dict({**known.to_dict(), "salt": "zz"}) is None


def test_with_values_leaves_the_set_as_it_was():
    known = _known("Незабудка").forget_values()
    more = known.with_values(SHARED, ["Ромашка_55"])
    assert more.redact("Ромашка_55", [SHARED])[0] == SECRET
    assert known.redact("Ромашка_55", [SHARED])[0] == "Ромашка_55"


def test_the_rules_report_the_values_they_replace_only_inside_the_block():
    with found_values() as found:
        redact_text("пароль: Незабудка, mail anna@example.com")
    assert found == [("key_value", "Незабудка")]  # an e-mail address is not a secret value
    with found_values() as again:
        pass
    redact_text("пароль: Ромашка")
    assert again == []


@pytest.mark.parametrize("value,keys", [
    ("Незабудка", [("незабудка",)]), ("つばめ", ["つばめ"]), ("ab", []), ("x" * 300, []),
    ("one two three four five six seven", []), ("lunar tide marble", [("lunar", "tide", "marble")]),
])
def test_value_keys(value, keys):
    assert value_keys(value) == keys


WORDS = ["Незабудка", "Ромашка_55", "Pa55w0rd!", "つばめ", "ひまわり22", "lunar", "tide", "marble", "4417-9920",
         "8812-3301", "пароль", "password", "パスワード", "です", "で", "and", "и", "the", "Записал", "ok"]
SEPS = [" ", "  ", "\n", ", ", ": ", "", "/", "「", "」", "(", ")", "=", "。"]


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.sampled_from(WORDS + ["lunar tide marble", "つばめ ひまわり22", "4417-9920 8812-3301"]),
                       min_size=1, max_size=4),
       parts=st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPS)), min_size=1, max_size=12))
def test_the_digests_find_exactly_what_the_plain_values_find(values, parts):
    """Ingest finds known values with the values in memory; a live reader of a saved set with their
    digests alone: the spans must be the same for any text."""
    known = _known(*values)
    text = "".join(w + s for w, s in parts)
    assert known.forget_values().spans(text, [SHARED]) == known.spans(text, [SHARED])
