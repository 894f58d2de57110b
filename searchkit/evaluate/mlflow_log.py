"""Optional MLflow logging of an eval (``searchkit eval ... --mlflow URI``; issue 31 item 7).

One eval is one MLflow run in the experiment ``searchkit`` (``--mlflow-experiment`` names another):

- **params**: the config's difference from the shipped default (``SearchConfig()``), one flattened
  dotted key each (``fusion.weights.bm25``); a value longer than MLflow allows is logged as its
  length and sha256 (``config.json``, an artifact, has it whole);
- **metrics**: the headline ranking figures, ``no_answer/...``, ``missing_id/...`` and each
  breakdown group's (``by_lang/ru/nDCG_at_10``, ``by_lang/ru/n``); MLflow names allow no ``@`` or
  ``%``, so ``nDCG@10`` is logged as ``nDCG_at_10`` and ``recall@5%FW`` as ``recall_at_5pctFW``;
  undefined figures are left out;
- **tags**: dataset, split, measured path, config and index fingerprints, git commit;
- **artifacts**: ``metrics.json`` (strict JSON, per-query rows included), ``run.trec`` and
  ``config.json``, as a run folder holds them.

``URI`` is any MLflow tracking URI: a local folder store (``file:///path/mlruns``), a database or a
tracking server. mlflow comes from the ``mlflow`` extra (mlflow-skinny: the tracking client without
the UI server) and is imported only here, only when asked for.

- MLflow 3 keeps its folder store in maintenance mode and refuses it unless
  ``MLFLOW_ALLOW_FILE_STORE`` is true: naming a ``file:`` URI is taken as that opt-in.
- A tracking server that does not answer is given up after ``HTTP_DEFAULTS`` (2 retries, 30 s a
  request) instead of MLflow's 7 retries with back-off (over 4 minutes).

Both are environment variables set for the call only and restored after; a value the user set is
left alone. A URI holding a credential (``user:password@``, a token in its query string) is refused
before anything runs, naming what it holds and never the value: MLflow reads
``MLFLOW_TRACKING_USERNAME`` / ``MLFLOW_TRACKING_PASSWORD`` or ``MLFLOW_TRACKING_TOKEN`` from the
environment. Errors show the URI without its user part or query string.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import math
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Iterator, Mapping
from urllib.parse import urlsplit, urlunsplit

from searchkit import strict_json
from searchkit.config import SearchConfig
from searchkit.credentials import scrub, url_secrets
from searchkit.errors import ResourceError
from searchkit.evaluate.provenance import git_commit, now
from searchkit.evaluate.run import BREAKDOWNS, EvalReport
from searchkit.evaluate.runs import trec_text
from searchkit.util import dotted_leaves

__all__ = ["EXPERIMENT", "HTTP_DEFAULTS", "INSTALL_HINT", "check_uri", "config_params",
           "eval_metrics", "is_available", "log_eval", "metric_key", "shown_uri"]

EXPERIMENT = "searchkit"
INSTALL_HINT = ("--mlflow needs mlflow, from the 'mlflow' extra: pip install 'searchkit[mlflow]' "
                "(or SEARCHKIT_EXTRAS=mlflow bash scripts/setup.sh)")
MAX_PARAM_LENGTH = 6000  # MLflow's limit on a param value
_BATCH = 100  # MLflow's log_batch takes at most 100 params (1000 metrics) a call
_BAD_NAME = re.compile(r"[^\w./\- ]")
HTTP_DEFAULTS: dict[str, str] = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
                                 "MLFLOW_HTTP_REQUEST_TIMEOUT": "30"}
"""MLflow's HTTP settings during ``log_eval`` when the environment sets none."""


def is_available() -> bool:
    """Whether mlflow is installed (the ``mlflow`` extra)."""
    return importlib.util.find_spec("mlflow") is not None


def check_uri(uri: str) -> str:
    """``uri`` when it can be used; refused (``ResourceError``, naming what it holds, never the
    value) when it is empty or holds a credential."""
    if not uri.strip():
        raise ResourceError("--mlflow needs a tracking URI, e.g. file:///path/to/mlruns")
    found = url_secrets(uri)
    if found:
        raise ResourceError(f"--mlflow {shown_uri(uri)} holds {found[0]}: credentials never go in a URL; MLflow reads "
                             "MLFLOW_TRACKING_USERNAME / MLFLOW_TRACKING_PASSWORD or MLFLOW_TRACKING_TOKEN from the environment")
    return uri


def shown_uri(uri: str) -> str:
    """``uri`` as errors may show it: without a user/password part or a query string."""
    parts = urlsplit(uri)
    if not parts.scheme or not parts.netloc:
        return uri.split("?", 1)[0]
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def metric_key(name: str) -> str:
    """A figure's name as MLflow accepts it: ``@`` becomes ``_at_``, ``%`` ``pct``, any other
    character MLflow refuses ``_``."""
    return _BAD_NAME.sub("_", str(name).replace("@", "_at_").replace("%", "pct"))


def _param_value(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    if len(text) <= MAX_PARAM_LENGTH:
        return text
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return f"<{len(text)} characters, sha256 {digest}; see config.json>"


def config_params(config: SearchConfig, shipped: SearchConfig | None = None) -> dict[str, str]:
    """The config's difference from ``shipped`` (default: the shipped ``SearchConfig()``) as
    MLflow params: ``{dotted key: value}`` for every leaf that differs (``(absent)`` where one side
    lacks the key); empty for the shipped config itself."""
    mine, base = dotted_leaves(config.to_dict()), dotted_leaves((shipped or SearchConfig()).to_dict())
    absent = "(absent)"
    differ = [k for k in sorted(set(mine) | set(base)) if mine.get(k, absent) != base.get(k, absent)]
    # a section one side sets to null while the other fills it: its key once, not each of its leaves
    leaves = set(mine) | set(base)
    differ = [k for k in differ if not any(p in leaves for p in _prefixes(k))]
    return {metric_key(k): _param_value(mine.get(k, absent)) for k in differ}


def _prefixes(key: str) -> list[str]:
    parts = key.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def eval_metrics(body: Mapping[str, Any]) -> dict[str, float]:
    """The figures of an eval (``EvalReport.to_dict()`` or a ``metrics.json``) as MLflow metrics:
    headline, ``no_answer/``, ``missing_id/``, ``counts/``, ``timing/`` and each breakdown group's;
    undefined (null / NaN) figures are left out."""
    out: dict[str, float] = {}
    for name, value in (body.get("metrics") or {}).items():
        out[metric_key(name)] = value
    for block in ("no_answer", "missing_id", "counts", "timing"):
        for name, value in (body.get(block) or {}).items():
            out[f"{block}/{metric_key(name)}"] = value
    for breakdown in BREAKDOWNS:
        for group, figures in (body.get(breakdown) or {}).items():
            for name, value in figures.items():
                out[f"{breakdown}/{metric_key(group)}/{metric_key(name)}"] = value
    return {k: float(v) for k, v in out.items() if _number(v)}


def _tags(body: Mapping[str, Any], config: SearchConfig) -> dict[str, str]:
    git = git_commit() or {}
    tags = {"searchkit.dataset": body.get("dataset"), "searchkit.split": body.get("split"),
            "searchkit.path": body.get("path"), "searchkit.config_fingerprint": config.fingerprint(),
            "searchkit.index_fingerprint": config.index_fingerprint(), "searchkit.git_commit": git.get("commit"),
            "searchkit.git_dirty": git.get("dirty")}
    return {k: str(v) for k, v in tags.items() if v is not None}


def log_eval(uri: str, report: EvalReport, config: SearchConfig, body: Mapping[str, Any], *, run_name: str | None = None,
             experiment: str = EXPERIMENT) -> str:
    """Log one eval to the MLflow tracking store at ``uri`` (params, metrics, tags, artifacts; see
    the module doc) and return the MLflow run id. The run is marked FAILED if logging stops half-way.

    Raises:
        ResourceError: mlflow refused the URI or a write (one line naming the URI without credentials).
        ModuleNotFoundError: mlflow is not installed (the CLI names the extra).
    """
    import mlflow  # noqa: F401  (before anything else: a missing extra is one clear line)

    check_uri(uri)
    settings = dict(HTTP_DEFAULTS)
    if uri.startswith("file:"):
        settings["MLFLOW_ALLOW_FILE_STORE"] = "true"
    with _environment(settings):
        return _log(uri, report, config, body, run_name=run_name, experiment=experiment)


@contextlib.contextmanager
def _environment(settings: Mapping[str, str]) -> Iterator[None]:
    """``settings`` in ``os.environ`` during the call, each only where the user set nothing; removed after."""
    added = [k for k in settings if k not in os.environ]
    for k in added:
        os.environ[k] = settings[k]
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)


def _log(uri: str, report: EvalReport, config: SearchConfig, body: Mapping[str, Any], *, run_name: str | None,
         experiment: str) -> str:
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    where = shown_uri(uri)
    name = run_name or f"{body.get('dataset')}-{body.get('split')}-{config.fingerprint()}"
    try:
        client = MlflowClient(tracking_uri=uri)
        found = client.get_experiment_by_name(experiment)
        experiment_id = found.experiment_id if found is not None else client.create_experiment(experiment)
        run = client.create_run(experiment_id, run_name=name, tags=_tags(body, config))
    except MlflowException as exc:
        raise ResourceError(f"--mlflow {where}: {_short(exc, uri, where)}") from None
    except OSError as exc:
        raise ResourceError(f"--mlflow {where}: {exc.strerror or type(exc).__name__}") from None
    run_id = run.info.run_id
    stamp = int(run.info.start_time or 0)
    try:
        params = [Param(k, v) for k, v in config_params(config).items()]
        metrics = [Metric(k, v, stamp, 0) for k, v in eval_metrics(body).items()]
        for i in range(0, max(len(params), len(metrics)), _BATCH):
            client.log_batch(run_id, metrics=metrics[i:i + _BATCH], params=params[i:i + _BATCH],
                             tags=[RunTag("searchkit.logged", now())] if i == 0 else [])
        with tempfile.TemporaryDirectory(prefix="searchkit-mlflow-") as tmp:
            files = {"metrics.json": strict_json.dumps(body) + "\n", "run.trec": trec_text(report.run(), tag=name),
                     "config.json": config.to_json() + "\n"}
            for file_name, text in files.items():
                (Path(tmp) / file_name).write_text(text, encoding="utf-8")
                client.log_artifact(run_id, str(Path(tmp) / file_name))
        client.set_terminated(run_id, status="FINISHED")
    except (MlflowException, OSError) as exc:
        try:
            client.set_terminated(run_id, status="FAILED")
        except (MlflowException, OSError):
            pass
        what = _short(exc, uri, where) if isinstance(exc, MlflowException) else (exc.strerror or type(exc).__name__)
        raise ResourceError(f"--mlflow {where}: logging run {run_id} failed: {what}") from None
    return run_id


def _short(exc: BaseException, uri: str, where: str) -> str:
    """An MLflow error as one short line, the URI shown as ``shown_uri`` shows it (its user part and
    query string never repeated, wherever MLflow put them)."""
    text = str(getattr(exc, "message", exc)).replace(uri, where)
    parts = urlsplit(uri)
    hidden = [parts.query, parts.fragment]
    if "@" in parts.netloc:
        hidden.append(parts.netloc.rsplit("@", 1)[0] + "@")
    for piece in sorted((h for h in hidden if h), key=len, reverse=True):
        text = text.replace(piece, "")
    text = scrub(" ".join(text.split()), [h for h in hidden if h])
    return (text[:200] + "...") if len(text) > 200 else (text or type(exc).__name__)
