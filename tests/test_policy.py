"""H2 never-index rules, H14 space selection and H15 visibility (searchkit.ingest.policy)."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchkit.ingest.policy import (
    DEFAULT_POLICY,
    MAX_SPACES,
    RULES,
    IndexingReport,
    Policy,
    Skip,
    binary_reason,
    can_see,
    name_tokens,
    searchable_spaces,
)
from searchkit.records import Record


# -- files ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("path, rule", [
    ("uploads/scan.txt", "excluded_dir"),
    ("docs/uploads/a.md", "excluded_dir"),
    (".git/config", "excluded_dir"),
    ("web/node_modules/x.js", "excluded_dir"),
    ("node_modules", "excluded_dir"),
    (".env", "excluded_file"),
    (".env.local", "excluded_file"),
    ("config/.ENV.production", "excluded_file"),
    ("credentials.json", "excluded_file"),
    ("keys/credentials-prod.json", "excluded_file"),
    ("token.json", "excluded_file"),
])
def test_path_rules_fire(path, rule):
    assert DEFAULT_POLICY.path_skip(path)[0] == rule


@pytest.mark.parametrize("path", [
    "notes/env.md", "my.env", "notes/credentials-howto.md", "tokens.json", "scripts/token.py", "upload/a.md",
    "notes/uploads.md", "git/config", "log.md", "keys.md", "notes/ssh.md", "secretary.md", "monkey.txt",
])
def test_path_rules_spare_ordinary_files(path):
    assert DEFAULT_POLICY.path_skip(path) is None


def test_binary_reason():
    assert "NUL" in binary_reason(b"# title\x00rest")
    assert binary_reason("Старая заметка: выгрузка по пятницам".encode("cp1251")) is None  # H1: text in cp1251
    assert "PNG" in binary_reason(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert binary_reason("выгрузка 満月 export".encode("utf-8")) is None
    assert binary_reason(b"\xef\xbb\xbfBOM text") is None
    assert binary_reason(b"") is None


# -- tables and columns ----------------------------------------------------------------------------

@pytest.mark.parametrize("name, tokens", [
    ("chatMessages", ("chat", "messages")),
    ("APIKey", ("api", "key")),
    ("audit_log", ("audit", "log")),
    ("events-2024", ("events", "2024")),
])
def test_name_tokens(name, tokens):
    assert name_tokens(name) == tokens


@pytest.mark.parametrize("name", [
    "messages", "chat_messages", "ChatMessages", "channel_msgs", "audit", "audit_log", "AuditTrail",
    "audit_entries", "events", "event_log", "events_2024", "history", "deal_history", "logs", "journal",
    "changelog", "transcripts",
])
def test_journal_tables(name):
    assert DEFAULT_POLICY.table_skip(name, ["id", "updated_at"])[0] == "journal_table"


@pytest.mark.parametrize("name", [
    "tasks", "deals", "clients", "message_templates", "logistics", "blog_posts", "catalog", "backlog",
    "event_plans", "experiments",
])
def test_data_tables_are_not_journals(name):
    assert DEFAULT_POLICY.table_skip(name, ["id", "title", "updated_at"]) is None


def test_message_history_by_columns():
    cols = ["id", "channel", "sender", "text", "updated_at"]
    assert DEFAULT_POLICY.table_skip("ops_dump", cols)[0] == "message_history_table"
    # a marketing table with a channel and a text column but no sender is data
    assert DEFAULT_POLICY.table_skip("ads", ["id", "channel", "text", "budget"]) is None


@pytest.mark.parametrize("column", [
    "password", "user_password", "passwd", "pwd", "password_hash", "api_key", "apiKey", "APIKEY",
    "token", "access_token", "refresh_token", "secret", "client_secret", "private_key", "privateKey",
    "aws_access_key_id", "secret_key", "otp", "credentials",
])
def test_secret_columns(column):
    assert DEFAULT_POLICY.secret_column(column)


@pytest.mark.parametrize("column", [
    "id", "name", "status", "score", "deadline", "updated_at", "keyboard", "primary_key", "tokenizer",
    "passage", "channel",
])
def test_ordinary_columns(column):
    assert not DEFAULT_POLICY.secret_column(column)


def test_select_tables_keeps_the_newest_and_breaks_ties_by_name():
    policy = Policy(max_tables=3)
    modified = {"a": "2026-01-01", "b": "2026-03-01", "c": "2026-03-01", "d": None, "e": "2026-02-01"}
    assert policy.select_tables(modified) == (["b", "c", "e"], ["a", "d"])
    assert Policy(max_tables=5).select_tables(modified)[0] == ["b", "c", "e", "a", "d"]


@pytest.mark.parametrize("name, value", [("max_rows", 0), ("max_tables", -1), ("max_file_bytes", 1.5)])
def test_policy_rejects_bad_caps(name, value):
    with pytest.raises(ValueError, match=name):
        Policy(**{name: value})


def test_skip_rules_are_a_registry():
    with pytest.raises(ValueError, match="valid rules"):
        Skip("x", "no_such_rule")
    report = IndexingReport(skips=[Skip("a", "binary")], notes=[Skip("b", "log_no_headings")])
    assert [s.path_or_table for s in report.by_rule("binary")] == ["a"]
    assert report.to_dict()["notes"][0]["rule"] == "log_no_headings"
    assert {"excluded_dir", "excluded_file", "binary", "journal_table", "secret_column", "table_cap",
            "row_cap"} <= set(RULES)


# -- visibility (H15) ------------------------------------------------------------------------------

def _rec(owner, visibility):
    return Record(id="s/chat:x", kind="chat", space="s", owner=owner, visibility=visibility)


@pytest.mark.parametrize("owner, visibility, caller, container, seen", [
    ("u-anna", "personal", "u-anna", "personal", True),
    ("u-anna", "personal", "u-boris", "personal", False),
    ("u-anna", "personal", None, "personal", False),
    ("u-anna", "personal", "u-anna", "shared", False),  # never in a shared container
    ("u-anna", "personal", None, "shared", False),
    (None, "personal", None, "personal", False),
    ("u-anna", "shared", "u-boris", "personal", True),
    (None, "shared", None, "shared", True),
])
def test_can_see(owner, visibility, caller, container, seen):
    assert can_see(_rec(owner, visibility), caller, container) is seen


def test_can_see_rejects_unknown_container():
    with pytest.raises(ValueError, match="container"):
        can_see(_rec(None, "shared"), "u-anna", "team")


USERS = st.sampled_from(["u-anna", "u-boris", "u-kenji"])


@settings(max_examples=300, deadline=None)
@given(
    owner=st.none() | USERS,
    visibility=st.sampled_from(["shared", "personal"]),
    caller=st.none() | USERS,
    container=st.sampled_from(["personal", "shared"]),
)
def test_can_see_never_leaks_personal_records(owner, visibility, caller, container):
    seen = can_see(_rec(owner, visibility), caller, container)
    if visibility == "personal" and seen:
        assert container == "personal" and caller is not None and owner == caller
    if visibility == "shared":
        assert seen


# -- spaces (H14) ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Space:
    slug: str
    members: tuple[str, ...]
    history_search: bool = True


SPACES = {
    "acme": _Space("acme", ("u-anna", "u-boris")),
    "research": _Space("research", ("u-anna",)),
    "legal": _Space("legal", ("u-boris",)),
    "archive": _Space("archive", ("u-anna",), history_search=False),
}


def test_searchable_spaces_list():
    searched, skipped = searchable_spaces(SPACES, "u-anna", ["acme", "legal", "archive", "nope", "acme"], "acme")
    assert searched == ["acme"]
    assert skipped == [("legal", "not_member"), ("archive", "history_search_off"), ("nope", "not_member")]


def test_searchable_spaces_all_puts_current_first_and_hides_foreign_spaces():
    searched, skipped = searchable_spaces(SPACES, "u-anna", "all", "research")
    assert searched == ["research", "acme"]
    assert skipped == [("archive", "history_search_off")]


def test_searchable_spaces_default_is_current_space():
    assert searchable_spaces(SPACES, "u-anna", None, "acme") == (["acme"], [])
    assert searchable_spaces(SPACES, None, None, "legal") == (["legal"], [])  # shared container
    assert searchable_spaces(SPACES, "u-anna", None, "legal") == ([], [("legal", "not_member")])


@pytest.mark.parametrize("requested, match", [
    ("acme", "spaces"), ([], "spaces"), ([""], "spaces"), (42, "spaces"),
    ([f"s{i}" for i in range(MAX_SPACES + 1)], "at most 60"),
])
def test_searchable_spaces_errors_name_spaces(requested, match):
    with pytest.raises(ValueError, match=match):
        searchable_spaces(SPACES, "u-anna", requested, "acme")


def test_searchable_spaces_more_errors():
    with pytest.raises(ValueError, match="spaces: not available in a shared workspace container"):
        searchable_spaces(SPACES, None, "all", "acme")
    with pytest.raises(ValueError, match="space: unknown space 'nope'"):
        searchable_spaces(SPACES, None, None, "nope")  # a shared container's own space must exist
    # a caller is never told whether a space they are not in exists
    assert searchable_spaces(SPACES, "u-anna", None, "nope") == searchable_spaces(SPACES, "u-anna", None, "legal")[:1] + ([("nope", "not_member")],)
    many = {f"s{i}": _Space(f"s{i}", ("u-anna",)) for i in range(61)}
    assert len(searchable_spaces(many, "u-anna", [f"s{i}" for i in range(60)], "s0")[0]) == 60


@settings(max_examples=200, deadline=None)
@given(
    members=st.dictionaries(st.sampled_from(["a", "b", "c", "d", "e"]),
                            st.tuples(st.lists(USERS, max_size=3), st.booleans()), min_size=1),
    caller=USERS,
    requested=st.lists(st.sampled_from(["a", "b", "c", "d", "e", "zz"]), min_size=1, max_size=8),
)
def test_searchable_spaces_only_member_spaces_with_search_on(members, caller, requested):
    spaces = {s: _Space(s, tuple(m), on) for s, (m, on) in members.items()}
    searched, skipped = searchable_spaces(spaces, caller, requested, next(iter(spaces)))
    for slug in searched:
        assert caller in spaces[slug].members and spaces[slug].history_search
    assert sorted(searched + [s for s, _ in skipped]) == sorted(set(requested))
    for slug, reason in skipped:
        expected = ("not_member" if slug not in spaces or caller not in spaces[slug].members
                    else "history_search_off")
        assert reason == expected
