"""searchkit: hybrid retrieval for workspace history and task search, and its research harness.

The public face is small; everything heavy is imported lazily by the modules that need it.
"""
from searchkit.config import SearchConfig
from searchkit.config_file import load_config
from searchkit.records import Hit, Passage, Record, Result, Notice

__version__ = "0.1.0"

__all__ = ["SearchConfig", "Record", "Passage", "Hit", "Result", "Notice", "Searcher", "Filters", "load_config",
           "__version__"]


def __getattr__(name: str):
    if name in ("Searcher", "Filters"):
        from searchkit import searcher

        return getattr(searcher, name)
    raise AttributeError(f"module 'searchkit' has no attribute {name!r}")
