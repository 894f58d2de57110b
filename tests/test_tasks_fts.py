"""FTS5 trigram helpers (SPEC T4, T8): quoting, MATCH expressions, LIKE patterns, availability."""
import sqlite3

import pytest

from searchkit.ingest.tasks import fts


class NoFts5(sqlite3.Connection):
    """A connection whose SQLite behaves as if built without FTS5."""

    def execute(self, sql, *args):
        if "fts5" in sql.lower():
            raise sqlite3.OperationalError("no such module: fts5")
        return super().execute(sql, *args)


def test_quote_term_doubles_quotes():
    assert fts.quote_term('say "hi" OR') == '"say ""hi"" OR"'
    assert fts.quote_term("NEAR(a b)") == '"NEAR(a b)"'


@pytest.mark.parametrize("bad", ["", None, "a\x00b"])
def test_quote_term_rejects(bad):
    with pytest.raises(ValueError):
        fts.quote_term(bad)


def test_match_expression_any_all():
    assert fts.match_expression(["ログイン", "認証フロー"], "any") == '"ログイン" OR "認証フロー"'
    assert fts.match_expression(["ログイン", "認証フロー"], "all") == '"ログイン" AND "認証フロー"'


def test_match_expression_refuses_short_terms_and_unknown_mode():
    with pytest.raises(ValueError, match="LIKE"):
        fts.match_expression(["認証", "ログイン"], "any")
    with pytest.raises(ValueError, match="all, any"):
        fts.match_expression(["abc"], "near")
    with pytest.raises(ValueError):
        fts.match_expression([], "any")


def test_needs_like():
    assert fts.needs_like(["ログイン", "認証"])
    assert not fts.needs_like(["ログイン", "abc"])


def test_like_pattern_escapes():
    assert fts.like_pattern("50%_a\\b") == "%50\\%\\_a\\\\b%"


def test_like_pattern_matches_literally_in_sqlite():
    c = sqlite3.connect(":memory:")
    c.execute("CREATE TABLE t(s TEXT)")
    c.executemany("INSERT INTO t VALUES (?)", [("rate 50%_off",), ("rate 50x off",), ("a\\b",)])
    q = "SELECT s FROM t WHERE s LIKE ? ESCAPE '\\'"
    assert [r[0] for r in c.execute(q, (fts.like_pattern("50%_"),))] == ["rate 50%_off"]
    assert [r[0] for r in c.execute(q, (fts.like_pattern("a\\b"),))] == ["a\\b"]


def test_available_here_and_absent_when_simulated():
    assert fts.fts5_available()
    assert fts.fts5_available(sqlite3.connect(":memory:"))
    assert not fts.fts5_available(sqlite3.connect(":memory:", factory=NoFts5))


def test_probe_leaves_no_table_behind():
    c = sqlite3.connect(":memory:")
    fts.fts5_available(c)
    assert c.execute("SELECT count(*) FROM sqlite_temp_master").fetchone()[0] == 0
    assert c.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0


def test_create_trigram_table_and_substring_match():
    c = sqlite3.connect(":memory:")
    fts.create_trigram_table(c, "ft", ("text",))
    fts.create_trigram_table(c, "ft", ("text",))  # idempotent
    c.executemany("INSERT INTO ft(rowid, text) VALUES (?, ?)",
                  [(1, "既存の認証フローは変更しない"), (2, "ОШИБКА импорта"), (3, "a AND b OR c")])
    match = "SELECT rowid FROM ft WHERE ft MATCH ? ORDER BY rowid"
    assert [r[0] for r in c.execute(match, (fts.match_expression(["認証フロー"]),))] == [1]
    assert [r[0] for r in c.execute(match, (fts.match_expression(["ошибка"]),))] == [2]
    # operator words inside a term are text: only the row holding "AND b" matches
    assert [r[0] for r in c.execute(match, (fts.match_expression(["AND"]),))] == [3]
    assert [r[0] for r in c.execute(match, (fts.match_expression(['"*"x']),))] == []


def test_create_refuses_without_fts5_and_bad_names():
    with pytest.raises(RuntimeError, match="FTS5"):
        fts.create_trigram_table(sqlite3.connect(":memory:", factory=NoFts5), "ft")
    with pytest.raises(ValueError, match="identifier"):
        fts.create_trigram_table(sqlite3.connect(":memory:"), "ft; DROP TABLE x")
