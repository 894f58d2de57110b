"""What the research notebooks call (``notebooks/*.ipynb``, SPEC E4-E6).

The notebooks hold parameters, calls and figures; every step they need is a function here (or in
``run``, ``runs``, ``compare``, ``tune``, ``task_eval``, ``plots``, ``searchkit.export``), tested
like the rest of the package.

- Parameters: ``notebook_config`` (a config file and an embedder override), ``check_datasets``
  (every dataset a notebook names exists, before anything is computed). A bad parameter raises
  ``InputError``, which a notebook shows as its one line, without a traceback.
- Run folders: ``ensure_run`` / ``ensure_task_run`` evaluate a dataset split under a config and
  write a run folder (``searchkit eval --out``), or reuse the one already in the notebook's runs
  folder when its dataset content, config, commit and package versions are the same;
  ``reported_runs``: the run folders an export of a config records.
- Fusion: ``fusion_sweep`` (the grid and the shipped config itself, with its adaptive model,
  scored alike), ``fusion_rows`` / ``fusion_significance_rows``.
- Tables (pandas): ``headline_frame``, ``breakdown_frame``, ``query_frame`` / ``worst_frame``,
  ``comparison_frame``, ``star_reach`` (whether a group of n queries can show a significant
  difference at all), ``no_answer_rows``, ``missing_id_table``, ``config_diff`` /
  ``config_changes``, ``cards_side_by_side``; ``notebook_display`` (pandas display options).
- Choices: ``threshold_for_false_alarm`` (the weak-match threshold that meets a false-alarm rate
  on answerable queries), ``thresholds_by_model`` / ``apply_thresholds`` (one for each weak-match
  model, on the queries it scored, written into that model).
"""
from __future__ import annotations

from searchkit.evaluate.research.base import (
    HEADLINE,
    check_datasets,
    config_label,
    notebook_config,
    notebook_display,
    save_config,
    work_from_repo_root,
)
from searchkit.evaluate.research.cards import DEFAULT, cards_side_by_side, config_changes, config_diff, per_query_deltas
from searchkit.evaluate.research.folders import ensure_run, ensure_task_run, find_runs, reported_runs
from searchkit.evaluate.research.sweeps import (
    SHIPPED_POINT,
    FusionSweep,
    apply_thresholds,
    curves,
    fusion_label,
    fusion_rows,
    fusion_significance_rows,
    fusion_sweep,
    missing_id_table,
    no_answer_rows,
    setting_label,
    threshold_changes,
    threshold_for_false_alarm,
    threshold_report,
    threshold_rows,
    thresholds_by_model,
    trial_matching,
)
from searchkit.evaluate.research.tables import (
    breakdown_frame,
    comparison_frame,
    group_table,
    headline_frame,
    min_p,
    query_frame,
    significance_marks,
    star_reach,
    star_reach_note,
    worst_frame,
    worst_queries,
)

__all__ = [
    "DEFAULT", "HEADLINE", "SHIPPED_POINT",
    "cards_side_by_side", "check_datasets", "comparison_frame", "config_changes", "config_diff",
    "config_label", "curves", "group_table", "save_config", "significance_marks", "work_from_repo_root",
    "ensure_run", "ensure_task_run", "find_runs", "fusion_rows", "fusion_significance_rows", "headline_frame",
    "breakdown_frame", "missing_id_table", "no_answer_rows", "notebook_config", "per_query_deltas", "query_frame",
    "setting_label", "threshold_for_false_alarm", "threshold_report", "trial_matching", "worst_queries",
    "FusionSweep", "fusion_label", "fusion_sweep", "min_p", "notebook_display", "reported_runs", "star_reach", "star_reach_note",
    "worst_frame",
    "apply_thresholds", "threshold_changes", "threshold_rows", "thresholds_by_model",
]
