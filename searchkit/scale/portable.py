"""What travels to Ray workers as a recipe: an embedder (its state with locks made anew and a loaded
model left to load again there) or a sweep's retriever (without its embedder and cache)."""
from __future__ import annotations

import threading
from typing import Any

from searchkit.errors import ResourceError

__all__ = ["portable", "built"]


_LOCK_TYPES = (type(threading.Lock()), type(threading.RLock()))


class _Fresh:
    """Stands for a lock in a portable embedder's state (a new one is made on the worker)."""

    def __init__(self, reentrant: bool) -> None:
        self.reentrant = reentrant

    def make(self) -> Any:
        return threading.RLock() if self.reentrant else threading.Lock()


class _Portable:
    """An embedder (or a retriever) as a picklable recipe: its class and its state, with locks
    recreated and a loaded model (``_model``) left to load again on the worker. Embedders in lists
    (a fallback chain's members) travel the same way. The attributes named in ``leave`` travel as
    None (the worker sets its own: a retriever's embedder and cache)."""

    def __init__(self, embedder: object, leave: tuple[str, ...] = ()) -> None:
        self.cls: type[object] = type(embedder)
        self.state = {k: None if k in leave else _pack(k, v) for k, v in vars(embedder).items()}

    def build(self) -> Any:
        obj = self.cls.__new__(self.cls)
        vars(obj).update({k: _unpack(v) for k, v in self.state.items()})
        return obj


def _pack(key: str, value: object) -> Any:
    if isinstance(value, _LOCK_TYPES):
        return _Fresh(isinstance(value, type(threading.RLock())))
    if key == "_model":
        return None
    if isinstance(value, (list, tuple)) and value and all(hasattr(v, "fingerprint") and hasattr(v, "__dict__")
                                                         for v in value):
        return type(value)(_Portable(v) for v in value)
    return value


def _unpack(value: object) -> Any:
    if isinstance(value, _Fresh):
        return value.make()
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, _Portable) for v in value):
        return type(value)(v.build() for v in value)
    return value


def portable(embedder: object) -> Any:
    """What to send to workers for ``embedder``: itself when it pickles as it is, else a
    ``_Portable`` recipe (searchkit's embedders hold locks and, once used, a loaded model). The
    worker's copy has the same fingerprint."""
    from ray import cloudpickle

    try:
        cloudpickle.dumps(embedder)
        return embedder
    except Exception:  # noqa: BLE001 - any pickling failure: fall back to the recipe
        pass
    if not hasattr(embedder, "__dict__"):
        raise ResourceError(f"embedder {embedder!r} cannot be sent to Ray workers (it does not pickle)")
    recipe = _Portable(embedder)
    try:
        cloudpickle.dumps(recipe)
    except Exception as exc:  # noqa: BLE001
        raise ResourceError(f"embedder {embedder!r} cannot be sent to Ray workers ({_one_line(exc)})") from None
    return recipe


def built(recipe: object) -> Any:
    """The object ``recipe`` stands for: a ``_Portable`` recipe built, anything else as it is."""
    return recipe.build() if isinstance(recipe, _Portable) else recipe


def _one_line(exc: BaseException, limit: int = 300) -> str:
    text = str(exc).strip().splitlines()
    first = " ".join(text[0].split()) if text else type(exc).__name__
    return first if len(first) <= limit else first[: limit - 3] + "..."
