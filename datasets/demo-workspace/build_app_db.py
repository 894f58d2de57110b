"""Build the demo workspace's data tables: ``acme/.space/app.sqlite`` and ``research/.space/app.sqlite``.

Deterministic: the same literal rows every run, no clock, no randomness. Run from anywhere:

    python datasets/demo-workspace/build_app_db.py

Each database shows an H2 rule next to ordinary data tables: a secret-like column
(``clients.api_key``, ``observers.password_hash``), journal tables (``messages``, ``audit_log``,
``events``), and a table without an ``id`` column (``settings``, reported as bad input).
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

HERE = Path(__file__).resolve().parent

ACME = {
    "tasks": (
        "id INTEGER PRIMARY KEY, title TEXT, status TEXT, score REAL, deadline TEXT, updated_at TEXT",
        [
            (51, "ATL-1650 Выгрузка отчёта ломает кириллицу", "done", 0.9, "2026-10-24", "2026-10-21T10:20:00+03:00"),
            (52, "Шаблон приветствия для новых клиентов", "done", 0.7, "2026-11-02", "2026-11-02T16:30:00+03:00"),
            (53, "Churn dashboard for Q3", "done", 0.8, "2026-10-28", "2026-10-28T16:00:00+03:00"),
            (54, "Nightly CRM import check", "in_progress", 0.6, "2026-11-10", "2026-11-01T03:05:00+03:00"),
            (55, "Отчёт о продажах за октябрь", "todo", 0.5, "2026-11-07", "2026-11-03T09:10:00+03:00"),
            (57, "ATL-1655 CSV export drops the last row", "done", 1.0, "2026-11-05", "2026-11-02T15:40:00+03:00"),
        ],
    ),
    "clients": (
        "id INTEGER PRIMARY KEY, name TEXT, city TEXT, plan TEXT, api_key TEXT, updated_at TEXT",
        [
            (1, "ООО «Ромашка»", "Москва", "pro", "demo-key-not-real-1", "2026-11-01T03:00:00+03:00"),
            (2, "Globex", "Berlin", "basic", "demo-key-not-real-2", "2026-11-01T03:00:00+03:00"),
            (3, "Initech", "Austin", "pro", "demo-key-not-real-3", "2026-11-01T03:00:00+03:00"),
            (4, "ИП Смирнов", "Казань", "basic", "demo-key-not-real-4", "2026-11-01T03:00:00+03:00"),
        ],
    ),
    "deals": (
        "id INTEGER PRIMARY KEY, client_id INTEGER, amount INTEGER, stage TEXT, channel TEXT, updated_at TEXT",
        [
            (301, 1, 420000, "won", "контекстная реклама", "2026-11-02T11:00:00+03:00"),
            (302, 2, 180000, "negotiation", "search ads", "2026-10-30T14:00:00+03:00"),
            (303, 3, 95000, "lost", "social", "2026-10-18T10:00:00+03:00"),
        ],
    ),
    "messages": (  # a channel's message history: never indexed (journal_table)
        "id INTEGER PRIMARY KEY, channel TEXT, author TEXT, text TEXT, updated_at TEXT",
        [(1, "#sales", "Boris", "кто забрал выгрузку?", "2026-10-21T09:00:00+03:00")],
    ),
    "audit_log": (  # a journal: never indexed
        "id INTEGER PRIMARY KEY, actor TEXT, action TEXT, updated_at TEXT",
        [(1, "u-anna", "export_report", "2026-10-21T10:05:00+03:00")],
    ),
    "settings": (  # no id column: reported (no_id_column), not indexed
        "key TEXT PRIMARY KEY, value TEXT, updated_at TEXT",
        [("report.schedule", "Mon 09:00 MSK", "2026-10-21T10:20:00+03:00")],
    ),
}

RESEARCH = {
    "experiments": (
        "id INTEGER PRIMARY KEY, name TEXT, model TEXT, status TEXT, score REAL, updated_at TEXT",
        [
            (7, "exp-07 埋め込み比較", "multilingual-e5-small", "done", 0.71, "2026-10-30T11:00:00+09:00"),
            (8, "exp-08 embedding comparison", "bge-m3", "done", 0.74, "2026-10-30T11:10:00+09:00"),
            (9, "exp-09 BM25+e5 RRF", "e5-small + BM25", "done", 0.76, "2026-10-31T09:00:00+09:00"),
        ],
    ),
    "observers": (
        "id INTEGER PRIMARY KEY, name TEXT, site TEXT, password_hash TEXT, updated_at TEXT",
        [
            (1, "健二", "国立天文台 三鷹", "demo-hash-not-real", "2026-10-22T10:00:00+09:00"),
            (2, "Anna", "Moscow", "demo-hash-not-real", "2026-10-22T10:00:00+09:00"),
        ],
    ),
    "events": (  # journal-like: never indexed
        "id INTEGER PRIMARY KEY, kind TEXT, payload TEXT, updated_at TEXT",
        [(1, "deploy", "lunar_period.py v2 (#412)", "2026-11-04T17:30:00+09:00")],
    ),
}


def build(path: Path, tables: dict) -> None:
    """(Re)create one SQLite file holding these tables and rows."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA page_size = 1024")
        for name, (schema, rows) in tables.items():
            conn.execute(f'CREATE TABLE "{name}" ({schema})')
            marks = ", ".join("?" for _ in rows[0])
            conn.executemany(f'INSERT INTO "{name}" VALUES ({marks})', rows)
        conn.commit()
        conn.execute("VACUUM")
    finally:
        conn.close()


def main() -> None:
    build(HERE / "acme" / ".space" / "app.sqlite", ACME)
    build(HERE / "research" / ".space" / "app.sqlite", RESEARCH)


if __name__ == "__main__":
    main()
