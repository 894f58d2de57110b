"""H12: identifiers are compared canonically, never as substrings (issue 7 item 1)."""
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchkit.analyze import NON_ID_PREFIXES, NON_ID_WORDS, canonical_identifier, extract_identifiers, identifier_forms
from searchkit.rank.signals import mentions, missing_ids
from searchkit.records import Hit, Passage, Record


def _hit(text: str, title: str = "card") -> Hit:
    r = Record(id="r", text=text, title=title)
    return Hit(record=r, score=1.0, rank=1, passage=Passage("r", 0, text, 0, len(text)))


@pytest.mark.parametrize(
    "text, ident",
    [
        ("see ATL-1650 for details", "ATL-16"),
        ("ticket #412 is open", "#41"),
        ("merged PR-88 yesterday", "PR-8"),
        ("released v2.3.1", "v2.3"),
        ("released v2.3", "v2.3.1"),
        ("DOC-2026-117 signed", "DOC-2026"),
        ("DOC-2026-117 signed", "DOC-2026-118"),
        ("DOC-2026-117 signed", "DOC-2027-117"),
    ],
)
def test_a_longer_or_different_number_is_not_a_mention(text, ident):
    assert not mentions(text, ident)


@pytest.mark.parametrize(
    "text, ident",
    [
        ("задача atl-1656 закрыта", "ATL-1656"),
        ("задача ATL1656 закрыта", "ATL-1656"),
        ("задача ＡＴＬ－１６５６ закрыта", "ATL-1656"),
        ("задача ATL–1656 закрыта", "ATL-1656"),  # en dash
        ("договор №412", "#412"),
        ("договор № 412", "#412"),
        ("договор ＃４１２", "#412"),
        ("see Issue #412", "#412"),
        ("pr#88 merged", "PR-88"),
        ("PR 88 merged", "PR-88"),
        ("DOC-2026-117 signed", "DOC-2026-117"),
        ("release v2.3.1", "v2.3.1"),
    ],
)
def test_spellings_of_one_identifier_are_the_same_identifier(text, ident):
    assert mentions(text, ident)


def test_multi_group_ids_are_read_whole():
    assert extract_identifiers("DOC-2026-118 NDA") == ["DOC-2026-118"]
    assert missing_ids("DOC-2027-117 NDA", [_hit("DOC-2026-117 signed")]) == ["DOC-2027-117"]
    assert missing_ids("DOC-2026-118 NDA", [_hit("DOC-2026-117 signed")]) == ["DOC-2026-118"]
    assert missing_ids("DOC-2026-117 NDA", [_hit("x", title="DOC-2026-117")]) == []


def test_query_aliases_count_as_mentioned():
    # "Issue #412" in the query is satisfied by a card saying "#412", and the other way round
    assert missing_ids("Issue #412 status", [_hit("status of #412")]) == []
    assert missing_ids("#412 status", [_hit("Issue #412 is done")]) == []


def test_plain_words_are_not_identifiers():
    assert extract_identifiers("top-10 utf-8 covid-19 mp3 C#412 &#412; 2024 3.14") == []
    # encodings, standards, hashes and model names are not task or document numbers
    text = "кодировка Windows-1251, ISO-8601, GPT-4, SHA-256, COVID-19, UTF-8, windows-1252, ISO 8601"
    assert extract_identifiers(text) == []
    assert missing_ids(f"{text} выгрузка", [_hit("выгрузка")]) == []
    # "capitals space number" is an identifier, unless the number is a year
    assert extract_identifiers("ATL 1656 выгрузка; NDA 2026 с Globex") == ["ATL-1656"]
    # a further -part makes another identifier, not a mention of the shorter one
    assert not mentions("DOC-2026-117-A signed", "DOC-2026-117")
    assert mentions("CVE-2024-1234 fixed", "CVE-2024-1234")


_PREFIX = st.text(alphabet="ABCDEFGHJKLMNPQRSTUVWXYZ", min_size=2, max_size=5).filter(
    lambda p: p not in NON_ID_PREFIXES and p not in NON_ID_WORDS)
_NUM = st.integers(min_value=100, max_value=99999)


def _spellings(prefix: str, n: int) -> list[str]:
    full = unicodedata.normalize("NFKC", f"{prefix}-{n}")
    wide = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in full)
    return [f"{prefix}-{n}", f"{prefix.lower()}-{n}", f"{prefix}{n}", wide, f"{prefix}\u2013{n}"]


@settings(max_examples=200, deadline=None)
@given(prefix=_PREFIX, n=_NUM, m=_NUM, spelling=st.integers(0, 4), other=st.integers(0, 4))
def test_mention_iff_same_canonical_identifier(prefix, n, m, spelling, other):
    card = f"заметка про {_spellings(prefix, n)[spelling]} и прочее"
    query_id = _spellings(prefix, m)[other]
    assert canonical_identifier(query_id) == f"{prefix}-{m}"
    assert mentions(card, query_id) == (n == m)
    assert (missing_ids(f"где {query_id}?", [_hit(card)]) == []) == (n == m)


@settings(max_examples=200, deadline=None)
@given(a=st.lists(st.integers(1, 9999), min_size=1, max_size=3), b=st.lists(st.integers(1, 9999), min_size=1, max_size=3))
def test_number_groups_compare_whole(a, b):
    ida = "DOC-" + "-".join(map(str, a))
    idb = "DOC-" + "-".join(map(str, b))
    forms = identifier_forms(f"see {ida}.")
    assert {f for f in forms if not f.startswith("*")} == {ida}  # and "*-N", the number any prefix names
    assert mentions(f"see {ida}.", idb) == (a == b)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 99999), m=st.integers(1, 99999))
def test_hash_numbers_and_versions(n, m):
    assert mentions(f"тикет №{n} открыт", f"#{m}") == (n == m)
    assert mentions(f"release v{n}.{m}", f"v{n}.{m}")
    assert not mentions(f"release v{n}.{m}.1", f"v{n}.{m}")


# -- issue 28 item 5: the gaps -------------------------------------------------------------------

def test_a_letter_suffix_part_is_its_own_document():
    assert extract_identifiers("подписан DOC-2026-117-A") == ["DOC-2026-117-A"]
    assert missing_ids("DOC-2026-117-A статус", [_hit("DOC-2026-117 signed")]) == ["DOC-2026-117-A"]
    assert missing_ids("DOC-2026-117-A статус", [_hit("DOC-2026-117-B signed")]) == ["DOC-2026-117-A"]
    assert missing_ids("DOC-2026-117-A статус", [_hit("signed DOC-2026-117-A today")]) == []
    assert missing_ids("DOC-2026-117 статус", [_hit("signed DOC-2026-117-A today")]) == ["DOC-2026-117"]


@pytest.mark.parametrize("query", ["PR 88/89", "PR 88 / 89", "pr#88/#89", "PR-88/89"])
def test_every_number_after_one_keyword_is_checked(query):
    assert extract_identifiers(query) == ["PR-88", "PR-89"]
    assert len(missing_ids(query, [_hit("merged PR-88 yesterday")])) == 1
    assert missing_ids(query, [_hit("merged PR-88 and PR 89")]) == []
    assert len(missing_ids(query, [_hit("nothing here")])) == 2


@pytest.mark.parametrize("card", ["заказ ЗАК-1655 оплачен", "заказ зак-1655 оплачен", "заказ ЗАК1655", "заказ ЗАК–1655"])
def test_cyrillic_prefixes_are_identifiers(card):
    assert extract_identifiers("где ЗАК-1655?") == ["ЗАК-1655"]
    assert missing_ids("где ЗАК-1655?", [_hit("заказ оплачен")]) == ["ЗАК-1655"]
    assert missing_ids("где ЗАК-1655?", [_hit(card)]) == []
    assert missing_ids("где ЗАК-1656?", [_hit(card)]) == ["ЗАК-1656"]
    # standards and classifiers are not document numbers; nor is an ordinary hyphenated word
    assert extract_identifiers("по ГОСТ-34 и ОКВЭД 2, из-за то-то") == []


@pytest.mark.parametrize(
    "query, quoted",
    [("PR 89 status", ["PR 89"]), ("что с pr#89?", ["pr#89"]), ("PR 88/89", ["PR 88", "PR 89"]),
     ("задача ＡＴＬ－１６５６", ["ＡＴＬ－１６５６"]), ("договор № 412", ["№ 412"]), ("atl-1656 и ЗАК–1655", ["atl-1656", "ЗАК–1655"])],
)
def test_the_warning_quotes_the_id_as_typed(query, quoted):
    assert missing_ids(query, [_hit("ничего")]) == quoted
    from searchkit.rank.signals import missing_ids_warning

    w = missing_ids_warning(query, [_hit("ничего")])
    assert w.detail["ids"] == quoted and len(w.detail["canonical"]) == len(quoted)
    assert w.message == "No card mentions " + ", ".join(quoted) + "."


def test_the_wider_detection_leaves_bm25_tokens_as_they_were():
    """The warning's detection is kept apart from the analyzer's identifier tokens, so no ranking
    moves: ЗАК-1655, DOC-2026-117-A and PR 88/89 are tokenised exactly as before."""
    from searchkit.analyze import Analyzer

    tokens = Analyzer(route="script").index_tokens("ЗАК-1655 DOC-2026-117-A PR 88/89")
    assert "зак-1655" not in tokens and "doc-2026-117-a" not in tokens and "pr-89" not in tokens
    assert "pr-88" in tokens


@pytest.mark.parametrize(
    "query, ids",
    [("PR 88, 89", ["PR-88", "PR-89"]), ("PR-88, 89 и 90", ["PR-88", "PR-89", "PR-90"]),
     ("PR 88 and 89", ["PR-88", "PR-89"]), ("PR 88 или 89?", ["PR-88", "PR-89"]),
     ("PR 88、89", ["PR-88", "PR-89"]), ("PR #88, #89 & #90", ["PR-88", "PR-89", "PR-90"])],
)
def test_a_listed_number_after_one_keyword_is_checked_too(query, ids):
    """Issue 28 item 5: "PR-88, 89 и 90" names three PRs, not one."""
    assert extract_identifiers(query) == ids
    assert missing_ids(query, [_hit("merged " + " ".join(ids[:-1]))]) == [missing_ids(query, [_hit("x")])[-1]]


@pytest.mark.parametrize("query", ["PR 88 и 3 теста", "PR 88, 2026-11-01", "PR 412, 3 files"])
def test_a_count_or_a_date_after_a_number_is_not_listed(query):
    assert extract_identifiers(query)[1:] == []


def test_a_lowercase_id_with_a_letter_suffix_is_read():
    assert extract_identifiers("где doc-2026-117-a?") == ["DOC-2026-117-A"]
    assert missing_ids("где doc-2026-117-b?", [_hit("signed DOC-2026-117-A")]) == ["doc-2026-117-b"]
    assert missing_ids("где doc-2026-117-a?", [_hit("signed DOC-2026-117-A")]) == []


# -- issue 28 item 5, residuals: slash lists after a key, abc-13, MR !55, links ------------------

@pytest.mark.parametrize(
    "query, quoted",
    [("ATL-1655/1656", ["ATL-1655", "ATL-1656"]), ("atl-1655 / 1656", ["atl-1655", "atl-1656"]),
     ("ЗАК-1655/1656/1657", ["ЗАК-1655", "ЗАК-1656", "ЗАК-1657"]), ("ATL1655/1656", ["ATL1655", "ATL1656"]),
     ("DOC-2026-117/118", ["DOC-2026-117", "DOC-2026-118"]), ("abc-13/14", ["abc-13", "abc-14"])],
)
def test_a_slash_list_after_a_key_checks_every_number(query, quoted):
    assert missing_ids(query, [_hit("ничего")]) == quoted
    # the card names the first only: the second is still missing, quoted as typed
    first = extract_identifiers(query)[0]
    assert missing_ids(query, [_hit(f"закрыта {first}")]) == quoted[1:]
    assert missing_ids(query, [_hit(" ".join(extract_identifiers(query)))]) == []


@pytest.mark.parametrize("query", ["ATL-1655/56", "ATL-1655/3", "ATL-1655/spec.md", "ATL-1655 12/06"])
def test_a_short_number_or_a_path_after_a_slash_is_not_listed(query):
    assert extract_identifiers(query) == ["ATL-1655"]


@pytest.mark.parametrize("query, ids", [("DOC-117/2026", ["DOC-117"]), ("договор № 45/2026", ["#45"]), ("#412/413", ["#412"])])
def test_a_year_or_a_number_after_a_numero_is_not_listed(query, ids):
    """``№ 45/2026`` and ``DOC-117/2026`` are one document of 2026, not document 2026 too."""
    assert extract_identifiers(query) == ids


@pytest.mark.parametrize("typed", ["abc-13", "Abc-13", "crm-42"])
def test_a_lowercase_key_with_two_digits_is_an_identifier(typed):
    assert missing_ids(f"что с {typed}?", [_hit("ничего")]) == [typed]
    assert missing_ids(f"что с {typed}?", [_hit(f"сделано {typed.upper()}")]) == []
    assert missing_ids(f"что с {typed}?", [_hit(f"сделано {typed.upper()}0")]) == [typed]


@pytest.mark.parametrize(
    "text",
    ["top-10 клиентов", "Top-20 list", "ТОП-100 товаров", "3 теста и 12 файлов", "отчёт за 2026-12-06",
     "COVID-19", "UTF-8 и UTF-16", "ISO-8601", "x86-64", "GPT-4", "python-311", "ubuntu-22.04", "PM-2.5",
     "jan-24 и dec-2026", "АК-47", "day-30 trial", "win-10", "ie-11", "mp-40", "wave 2", "из-за 10 минут",
     "see https://example.com/report-2026/page-12?id=ABC-DEF", "https://example.com/2026-12-06/v2.3.1"],
)
def test_words_dates_counts_and_versions_are_not_new_identifiers(text):
    assert extract_identifiers(text) == []
    assert missing_ids(f"{text} выгрузка", [_hit("выгрузка")]) == []


@pytest.mark.parametrize("query", ["MR !55", "mr!55", "MR 55", "MR-55"])
@pytest.mark.parametrize("card", ["merged MR !55", "merged !55", "merged MR-55", "https://gitlab.com/g/p/-/merge_requests/55"])
def test_a_gitlab_merge_request_is_an_identifier(query, card):
    assert missing_ids(f"статус {query}", [_hit("ничего")]) == [query]
    if "!" in query or "!" not in card:
        assert missing_ids(f"статус {query}", [_hit(card)]) == []
    assert missing_ids(f"статус {query}", [_hit(card.replace("55", "56"))]) == [query]


@pytest.mark.parametrize(
    "link, ident, card",
    [("https://github.com/acme/app/pull/412", "PR-412", "merged PR #412"),
     ("https://github.com/acme/app/issues/412", "ISSUE-412", "closed #412"),
     ("https://gitlab.com/acme/app/-/merge_requests/55", "MR-55", "merged !55"),
     ("github.com/acme/app/pull/412/files", "PR-412", "PR 412 merged"),
     ("https://jira.acme.io/browse/ATL-1655", "ATL-1655", "ATL-1655 закрыта")],
)
def test_a_link_names_the_task_it_opens(link, ident, card):
    query = f"что в {link}?"
    assert extract_identifiers(query) == [ident]
    assert missing_ids(query, [_hit(card)]) == []
    assert missing_ids(query, [_hit(card.replace("412", "413").replace("55", "56").replace("1655", "1656"))]) == \
        ([link.removesuffix("/files")] if ident != "ATL-1655" else ["ATL-1655"])  # quoted up to its number
    assert missing_ids(f"что в {ident}?", [_hit(f"see {link}")]) == []  # a card's link mentions it too


def test_nothing_else_inside_a_query_link_is_an_identifier():
    assert extract_identifiers("https://github.com/acme/repo-2024/blob/main/notes-v2.3.1.md") == []
    assert extract_identifiers("https://wiki.acme.io/page-123/report") == []


def test_a_card_naming_a_version_without_its_v_mentions_it():
    assert missing_ids("что в v2.3.1?", [_hit("вышла версия 2.3.1")]) == []
    assert missing_ids("что в v2.3.1?", [_hit("released 2.3.1")]) == []
    assert missing_ids("что в v2.3?", [_hit("release 2.3 is out")]) == []
    assert missing_ids("что в v2.3?", [_hit("scored 2.3 points")]) == ["v2.3"]
    assert missing_ids("что в v2.3.1?", [_hit("вышла версия 2.3.2")]) == ["v2.3.1"]


# -- issue 39 item 12(b): a word and a number name a ticket, an order, a contract ---------------
#
# "ticket 4521", "チケット 4521", "заказ № 1655": a word that names a numbered thing, then its number
# (after an optional № / # / "No." / 番号). It is an identifier (H12) whose number a card must name in
# a prefixed form: "TCK-4521", "#4521", "№ 4521", "ЗАК-1655", "ticket 4521" (the prefix is the
# workspace's, the query's word is not). A bare number in a card ("1655 рублей") is no mention; a
# number of fewer than three digits or a year without a № or # is no identifier ("order 66",
# "договор 2026 года"). The warning quotes it as typed (with a №, from the №, as before).


@pytest.mark.parametrize("query, typed", [
    ("что с ticket 4521?", "ticket 4521"), ("チケット 4521 の状況", "チケット 4521"), ("チケット4521", "チケット4521"),
    ("Ticket #4521 status", "#4521"), ("где заказ № 1655?", "№ 1655"), ("заказ №1655", "№1655"),
    ("статус заказа 1655", "заказа 1655"), ("注文番号 1655", "注文番号 1655"), ("invoice No. 20931", "invoice No. 20931"),
])
def test_a_word_and_a_number_is_an_identifier_the_warning_names(query, typed):
    assert missing_ids(query, [_hit("ничего про это")]) == [typed]
    assert missing_ids(query, [_hit("сумма 1655 рублей, 4521 штук, 20931")]) == [typed]  # a bare number is no mention


@pytest.mark.parametrize("query", ["ticket 4521", "チケット 4521", "заказ № 4521", "заказ 4521", "Ticket #4521"])
@pytest.mark.parametrize("card", ["закрыт TCK-4521", "см. #4521", "договор №4521 подписан", "ЗАК-4521 оплачен",
                                  "ticket 4521 closed", "チケット4521 完了", "tck-4521 done"])
def test_the_number_in_any_prefixed_form_is_a_mention(query, card):
    assert missing_ids(query, [_hit(card)]) == []
    assert missing_ids(query, [_hit(card.replace("4521", "45210"))]) != []  # another number
    assert missing_ids(query, [_hit(card.replace("4521", "452"))]) != []


def test_the_order_of_the_issue_is_found_by_its_cyrillic_key():
    """The issue's case: ``заказ № 1655`` warned ``№ 1655`` though a card held ``ЗАК-1655``."""
    assert missing_ids("заказ № 1655", [_hit("Заказ ЗАК-1655 оплачен 12.11")]) == []
    assert missing_ids("заказ № 1655", [_hit("Заказ ЗАК-1656 оплачен 12.11")]) == ["№ 1655"]
    assert missing_ids("№ 1655", [_hit("Заказ ЗАК-1655 оплачен")]) == ["№ 1655"]  # no word: # and № forms only
    assert missing_ids("ЗАК-1655", [_hit("заказ № 1655")]) == ["ЗАК-1655"]  # a key is its own prefix, as before


@pytest.mark.parametrize("text", ["order 66", "договор 2026 года", "заказ 15 штук", "ticket 12", "ticket 2025", "in case 500 errors",
                                  "3 теста", "UTF-8", "ISO-8601", "top-10", "ubuntu-22.04", "заказчик 1655",
                                  "заказ 1500 руб", "invoice 4521.50"])
def test_a_short_number_a_year_an_amount_or_another_word_is_not_one(text):
    assert extract_identifiers(text) == []
    assert missing_ids(f"{text} выгрузка", [_hit("выгрузка")]) == []


def test_the_word_stays_a_word_of_the_query():
    """The answer's language is read from the query's words: ``ticket`` stays one."""
    from searchkit.analyze import without_identifiers

    assert without_identifiers("ticket 4521").split() == ["ticket"]
    assert without_identifiers("заказ № 1655").split() == ["заказ"]
    assert without_identifiers("ATL-1655 #412").split() == []
