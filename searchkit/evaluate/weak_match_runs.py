"""The eval runs ``searchkit tune weak-match`` fits on, and the config the fit is written into
(issue 40 item 1; SPEC H11, E4).

A weak-match model reads the signals of the runs it was fitted on, and those signals are the
config's: its retrievers, embedder, reranker, fusion and evidence settings. So the fitted model
goes only into the config that made the runs: their own (a run folder of ``searchkit eval --out``
holds it as ``config.json``), the shipped one when the runs' fingerprint is the shipped config's, or
the ``--config`` given when it is the runs' config with the weak-match *models* aside
(``fit_fingerprint``). Anything else is a :class:`InputError` of one line naming both fingerprints;
runs of several configs at once are refused naming them.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from searchkit.config import ConfigError, SearchConfig, WeakMatchModel
from searchkit.config_file import load_export
from searchkit.errors import DataError, InputError
from searchkit.evaluate.tune import LabelledSignals, from_eval_json
from searchkit.util import problem_of, read_json_file

__all__ = ["EvalRun", "config_for_runs", "fit_fingerprint", "read_eval_run"]


def fit_fingerprint(cfg: SearchConfig) -> str:
    """The config's fingerprint with the weak-match *models* set aside: ``weak_match``'s
    ``enabled``, ``features``, ``coef``, ``intercept``, ``threshold`` and the conversation model's
    weights, which decide no signal (a run's signals are the same under any of them). Everything
    else counts, the weak-match evidence settings and whether there is a conversation model (which
    decides the model that scores a query) included."""
    wm = cfg.weak_match
    aside = dataclasses.replace(wm, enabled=True, features=(), coef=(), intercept=0.0, threshold=0.5,
                                conversation=None if wm.conversation is None else WeakMatchModel())
    return cfg.replace(weak_match=aside).fingerprint()


@dataclass(frozen=True)
class EvalRun:
    """One ``--runs`` entry: a run folder (``eval --out``) or an ``eval --json --queries`` file."""

    path: str
    """As given on the command line."""
    fingerprint: str
    """The ``config_fingerprint`` the run records."""
    rows: tuple[LabelledSignals, ...]
    config: SearchConfig | None = None
    """A run folder's ``config.json`` (None for a JSON file, which records only the fingerprint)."""

    @property
    def key(self) -> str:
        """Which config made it, the weak-match models aside where the config is at hand."""
        return fit_fingerprint(self.config) if self.config is not None else self.fingerprint


def _read(path: Path, what: str) -> Any:
    try:
        return read_json_file(path)
    except DataError as exc:
        raise InputError(f"{what}: {problem_of(exc)}") from None
    except OSError as exc:
        raise InputError(f"{what}: {exc.strerror or type(exc).__name__}") from None


def read_eval_run(path: str) -> EvalRun:
    """Read one ``--runs`` entry: a run folder (its ``metrics.json`` and ``config.json``) or an
    ``eval --json --queries`` file. A run that records no config fingerprint, or a folder whose
    config does not load, is a :class:`InputError` naming it."""
    p = Path(path)
    folder = p.is_dir() and (p / "metrics.json").exists()
    metrics = p / "metrics.json" if folder else p
    data = _read(metrics, f"cannot read eval run {metrics}")
    try:
        rows = tuple(from_eval_json(data))
    except ValueError as exc:
        raise InputError(f"eval run {metrics}: {exc}") from None
    fp = data.get("config_fingerprint") if isinstance(data, dict) else None
    if not isinstance(fp, str) or not fp:
        raise InputError(f"eval run {metrics} records no config_fingerprint, so the config that made its signals is "
                        "unknown; write it again with searchkit eval --out DIR (or --json --queries)")
    config = None
    if folder:
        if not (p / "config.json").exists():
            raise InputError(f"run folder {path} has no config.json; write it again with searchkit eval --out")
        try:
            loaded = load_export(p / "config.json")
        except (ConfigError, OSError) as exc:
            raise InputError(f"run folder {path}: its config.json does not load ({_first_line(exc)})") from None
        if not loaded.notes and loaded.config.fingerprint() != fp:
            raise InputError(f"run folder {path}: its config.json is config {loaded.config.fingerprint()}, but its "
                            f"metrics.json was made with config {fp}; write the run again with searchkit eval --out")
        config = loaded.config
    return EvalRun(path, fp, rows, config)


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def _named(runs: Sequence[EvalRun], most: int = 3) -> str:
    names = [r.path for r in runs[:most]]
    more = len(runs) - len(names)
    return ", ".join(names) + (f" and {more} more" if more else "")


def config_for_runs(runs: Sequence[EvalRun], config: SearchConfig | None = None,
                    config_name: str | None = None) -> tuple[SearchConfig, str]:
    """The config a model fitted on ``runs`` is written into, and where it came from (``the runs'
    own config``, ``--config NAME``, ``the shipped config``).

    ``config`` (``--config``, named ``config_name``): taken when it is the runs' config, the
    weak-match models aside (``fit_fingerprint``; a JSON run, which records only its fingerprint,
    needs the very config). Without it: a run folder's own config, else the shipped config when
    the runs were made with it. Runs of several configs, or a config other than the runs', are a
    :class:`InputError` of one line naming the fingerprints."""
    if not runs:
        raise InputError("no eval runs to fit on")
    groups: dict[str, list[EvalRun]] = {}
    known = {r.fingerprint: r.key for r in runs if r.config is not None}  # a JSON run of a folder's config is one
    for r in runs:
        groups.setdefault(known.get(r.fingerprint, r.key), []).append(r)
    if len(groups) > 1:
        parts = "; ".join(f"config {', '.join(sorted({r.fingerprint for r in g}))} ({_named(g)})" for g in groups.values())
        raise InputError(f"the runs were made with {len(groups)} different configs ({parts}): a weak-match model is "
                        "fitted on the signals of one config; give the runs of one config")
    ((key, mine),) = groups.items()
    own = next((r.config for r in mine if r.config is not None), None)
    made = own.fingerprint() if own is not None else mine[0].fingerprint
    if config is not None:
        where = f"--config {config_name}" if config_name else "--config"
        same = fit_fingerprint(config) == key if own is not None else config.fingerprint() == made
        if not same:
            how = ("even with the weak-match models aside" if own is not None else
                   "and eval --json files record only their config's fingerprint; run folders (eval --out) "
                   "hold their config, which may then differ in the weak-match models alone")
            raise InputError(f"{where} is config {config.fingerprint()}, but the runs ({_named(mine)}) were made with "
                            f"config {made} ({how}): the model would read signals that config does not make; "
                            "pass the runs' config as --config, or leave --config out to write into the runs' own")
        return config, where
    if own is not None:
        return own, "the runs' own config"
    shipped = SearchConfig()
    if made != shipped.fingerprint():
        raise InputError(f"the runs ({_named(mine)}) were made with config {made}, not the shipped config "
                        f"{shipped.fingerprint()} the model would be written into: pass that config as --config, "
                        "or give run folders (searchkit eval --out), which hold it")
    return shipped, "the shipped config"
