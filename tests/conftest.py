"""Shared fixtures: a tiny trilingual corpus and a config on the hashing embedder."""
import pytest

from searchkit.config import SearchConfig
from searchkit.records import Record


@pytest.fixture(scope="session")
def hashing_config() -> SearchConfig:
    return SearchConfig.from_dict({"dense": {"embedder": "hashing", "hashing_dim": 256}})


@pytest.fixture(scope="session")
def tiny_records() -> list[Record]:
    return [
        Record(id="r1", kind="file", space="acme", date="2026-10-01", title="Скрипт выгрузки",
               ref="scripts/export.py", text="Скрипт выгрузки отчётов в CSV запускается по понедельникам. ATL-1655"),
        Record(id="r2", kind="chat", space="acme", date="2026-10-05", title="Обсуждение миграции",
               ref="chat:ses_1", text="Решили перенести базу на Postgres 16 в ноябре."),
        Record(id="r3", kind="log", space="research", date="2026-10-10", title="2026-10-10",
               ref="log.md#2026-10-10", text="満月の周期を計算するスクリプトを書いた。"),
        Record(id="r4", kind="app", space="research", date="2026-10-12", title="tasks #57",
               ref="app:tasks#57", text="title: deploy dashboard\nstatus: done\nTable: tasks (id, title, status)"),
        Record(id="r5", kind="digest", space="acme", date="2026-10-20", title="Turn summary",
               ref="digest:t1", text="Asked: export the quarterly report. Done: wrote the export script.\nChat: chat:ses_1"),
        Record(id="r6", kind="page", space="acme", date="2026-11-02", title="Sales dashboard",
               ref="page:p1", text="Weekly sales by region, revenue and churn."),
    ]


def pytest_collection_modifyitems(config, items):  # noqa: ARG001
    """A test that starts a Ray cluster is slow too (issue 42 item 8): `scripts/test.sh` leaves both
    out, and `.ci/run` runs them in its second pass (`scripts/test.sh --slow`)."""
    for item in items:
        if item.get_closest_marker("ray") is not None and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)
