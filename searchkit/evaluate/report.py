"""``searchkit report``: run folders as one self-contained HTML page (SPEC E4).

``build_report`` turns run folders (``searchkit eval --out``) of one dataset split into a page: the
headline table (each run's metrics as ``metrics.json`` holds them), the comparison against the
first run with paired tests and significance marks (``compare.compare_runs``) and a table per
metric for each breakdown (every metric with its ``n`` per group, and the no-answer AUROC per group
where a group holds both classes), each run's config against the baseline's (dotted keys, old ->
new), the no-answer ROC curves (a line style and marker per run, so identical curves stay
visible), nDCG@10 per kind and per language (value axis zoomed to the data, and saying so), and the
worst queries of the first run with every run's cards (record kind, date, title and text, read
from the dataset the runs name). Figures are SVG (``plots``) inlined as ``data:`` images; the page
has no script and loads nothing from anywhere, so it opens offline, from a file, anywhere.

Record text is shown as the tools show it (issue 27 item 6): titles, card text and query texts
pass through the redaction of both tools (``Policy.redact_secrets`` of history cards, then
``redact.redact`` of task excerpts: secrets and e-mail addresses become ``[redacted]`` /
``[email]``), the whole text before it is cut to a card. ``text=False`` (``--no-text``) leaves record
and query text out altogether, for a report that leaves the lab: ids, refs, redacted titles and
scores only. A card (and a relevant id) shows a record only where the query's caller may see it, as
the history tool would (H15; issue 39 item 8c): shared records, and personal ones to the caller the
query names when it is their owner; a query that names no caller shows none, and the page says so.

``write_report`` builds the whole page before it touches the disk and then writes it to a
temporary file beside ``out`` that is renamed into place: a reader never sees half a report, and
a failure leaves no file. It replaces only a report this tool wrote (``REPORT_MARKER`` in the
page) or writes a new path (``check_out``, issue 27 item 9): an unrelated file, a folder, a link,
a device or a FIFO is refused with one line naming the path. Runs of different datasets (or
splits, or dataset contents) are refused with one line naming them: their numbers do not compare.
"""
from __future__ import annotations

import base64
import functools
import html
import math
import os
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from searchkit import __version__ as version
from searchkit.errors import SearchkitError
from searchkit.evaluate.compare import CORRECTION_NAMES, N_PERMUTATIONS, SEED, compare_runs, correction_text
from searchkit.evaluate.datasets import load_dataset, resolve_dataset
from searchkit.evaluate.plots import grouped_bars, roc_figure, svg
from searchkit.evaluate.provenance import dataset_hash, now
from searchkit.evaluate.report_out import NO_TEXT_MARKER, REPORT_MARKER, ReportError, ReportWriteError, check_out
from searchkit.evaluate.research import DEFAULT, config_changes, significance_marks, worst_queries
from searchkit.evaluate.run import BREAKDOWNS
from searchkit.evaluate.runs import load_run
from searchkit.evaluate.task_eval import is_task_set, load_task_set
from searchkit.ingest.policy import Policy, can_see
from searchkit.ingest.redact import redact
from searchkit.util import atomic_write_text, write_failure_line

__all__ = ["HEADLINE", "NO_TEXT_MARKER", "REPORT_MARKER", "ReportError", "ReportWriteError", "build_report", "check_one_dataset", "check_out",
           "write_report"]

HEADLINE: tuple[str, ...] = ("nDCG@10", "RR@10", "R@1", "R@5", "R@10", "R@20", "R@100")
BAR_METRIC = "nDCG@10"
CARD_TEXT = 300
CONFIG_VALUE = 160
"""A config value longer than this (a model's coefficients) is cut in the config-diff table."""
def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _num(v: Any, signed: bool = False) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return f"{v:+.4f}" if signed else f"{v:.4f}"
    return _e(v)


def _describe(run: Any) -> str:
    d, s, h = run.query_set
    return f"{run.path} ({d} {s}, dataset sha256 {h[:12]})"


def check_one_dataset(runs: Sequence[Any]) -> None:
    """Refuse runs that do not share one query set (dataset, split and content hash).

    Raises:
        ReportError: one line naming the first run and the first that differs from it.
    """
    if not runs:
        raise ReportError("no run folders given")
    base = runs[0]
    for other in runs[1:]:
        if other.query_set == base.query_set:
            continue
        (d1, s1, _), (d2, s2, _) = base.query_set, other.query_set
        if (d1, s1) != (d2, s2):
            raise ReportError(
                f"{base.path} is a run of {d1} {s1} but {other.path} is a run of {d2} {s2}: a report covers "
                "runs of one dataset split (make one report per dataset)")
        raise ReportError(f"{_describe(base)} and {_describe(other)} are runs of different contents of {d1} {s1}: "
                          "rerun them on the same data")


# --------------------------------------------------------------------------- dataset lookup


def _dataset_of(run: Any) -> tuple[Any, str]:
    """The dataset split a run measured (for query texts and cards), and a note when it cannot be
    read or has changed since (then the page shows ids only)."""
    prov = run.provenance
    rel = prov.get("dataset_path")
    candidates = [Path.cwd() / rel] if rel else []
    name, split = str(prov.get("dataset")), str(prov.get("split"))
    try:
        root = next((c for c in candidates if c.is_dir()), None) or resolve_dataset(name)
        ds = load_task_set(root, split) if is_task_set(root) else load_dataset(root, split=split)
    except SearchkitError as exc:
        return None, f"the cards show record ids only: dataset {name} cannot be read here ({' '.join(str(exc).split())[:200]})"
    if dataset_hash(ds) != prov.get("dataset_sha256"):
        return ds, f"dataset {name} {split} has changed since these runs: query texts and cards show its current content"
    return ds, ""


# --------------------------------------------------------------------------- pieces of the page


def _figure(fig: Any, alt: str, caption: str) -> str:
    data = base64.b64encode(svg(fig).encode("utf-8")).decode("ascii")
    return (f'<figure><img alt="{_e(alt)}" src="data:image/svg+xml;base64,{data}">'
            f"<figcaption>{_e(caption)}</figcaption></figure>")


def _headline(runs: Sequence[Any]) -> str:
    head = "".join(f"<th>{_e(m)}</th>" for m in HEADLINE)
    rows = []
    for r in runs:
        m = r.metrics
        cells = []
        for metric in HEADLINE + ("AUROC",):
            v = (m.get("no_answer") or {}).get("AUROC") if metric == "AUROC" else (m.get("metrics") or {}).get(metric)
            v = math.nan if v is None else float(v)
            cells.append(f'<td class="num" data-run="{_e(r.name)}" data-metric="{_e(metric)}" data-value="{v!r}">'
                         f"{_num(v)}</td>")
        c = m.get("counts") or {}
        rows.append(f'<tr><th scope="row">{_e(r.name)}</th>{"".join(cells)}<td class="num">{_e(c.get("queries", ""))}'
                    f'</td><td class="num">{_e(c.get("answerable", ""))}</td><td class="num">'
                    f'{_e(c.get("unanswerable", ""))}</td></tr>')
    return (f'<table class="headline"><thead><tr><th>run</th>{head}<th>AUROC (no answer)</th><th>queries</th>'
            f'<th>answerable</th><th>unanswerable</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')


def _cmp_cells(row: Mapping[str, Any], i: int, correction: str, alpha: float) -> str:
    sig = bool(row["significant"][i])
    delta = row["delta"][i]
    cls = "sig up" if sig and delta is not None and delta > 0 else ("sig down" if sig else "")
    mark = "*" if sig else ""

    tip = f"p < {alpha}" + (f" after {CORRECTION_NAMES[correction]}" if correction != "none" else "") if sig else "not significant"
    return (f'<td class="num {cls}" title="{_e(tip)}">{_num(delta, signed=True)}{mark}</td>'
            f'<td class="num {cls}">{_num(row["p_adjusted"][i])}</td>')


def _untested_cells(row: Mapping[str, Any], i: int) -> str:
    """Δ of a row the comparison did not test (a group's AUROC): no p, and a title saying why."""
    return (f'<td class="num">{_num(row["delta"][i], signed=True)}</td>'
            '<td class="num" title="not tested per group: the comparison tests the AUROC over all queries">–</td>')


def _compare_table(cmp: Any, rows: Sequence[Mapping[str, Any]], first_col: str, *, metric: str = "") -> str:
    """Rows of a comparison: the first column, ``n`` (the queries the row is over), each run's
    value and, per run after the first, its delta and adjusted p (``–`` for a row not tested)."""
    names = [r["name"] for r in cmp.runs]
    head = "".join(f"<th>{_e(n)}</th>" for n in names)
    head += "".join(f"<th>Δ {_e(n)}</th><th>p {_e(n)}</th>" for n in names[1:])
    body = []
    for row in rows:
        n = row.get("n", row.get("queries", ""))
        cells = f'<td class="num">{_e(n)}</td>' + "".join(f'<td class="num">{_num(v)}</td>' for v in row["values"])
        tested = "p_adjusted" in row
        cells += "".join(_cmp_cells(row, i, cmp.correction, cmp.alpha) if tested else _untested_cells(row, i)
                         for i in range(1, len(names)))
        where = f' data-metric="{_e(metric or row.get("metric", ""))}" data-group="{_e(row.get("group", "all"))}"'
        body.append(f'<tr{where} data-n="{_e(n)}"><th scope="row">{_e(row[first_col])}</th>{cells}</tr>')
    return (f'<table class="compare"><thead><tr><th>{_e(first_col)}</th><th>n</th>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>')


def _compare(cmp: Any, runs: Sequence[Any]) -> str:
    parts = []
    how = (f"{'Fisher randomization test' if cmp.test == 'fisher' else 'paired t-test'} over queries, seed {cmp.seed}; "
           f"* marks p &lt; {cmp.alpha}, p {_e(correction_text(cmp.correction, cmp.tests))}")
    parts.append(f"<p>Baseline <b>{_e(cmp.runs[0]['name'])}</b>; {how}. Green: significantly better than the "
                 "baseline, red: significantly worse.</p>")
    sections = list(cmp.sections)
    allsec = next(s for s in sections if s["breakdown"] == "all")
    rows = [dict(m, metric=m["metric"]) for m in allsec["metrics"]]
    if cmp.no_answer is not None:
        na = cmp.no_answer
        rows.append(dict(na, metric="AUROC (no answer)"))
    parts.append(f"<h3>All judged queries ({allsec['queries']})</h3>" + _compare_table(cmp, rows, "metric"))
    if cmp.no_answer is not None:
        parts.append(f"<p class=\"note\">AUROC: {_e(cmp.no_answer['method'])}.</p>")
    breakdowns: dict[str, list[Mapping[str, Any]]] = {}
    for s in sections:
        if s["breakdown"] != "all":
            breakdowns.setdefault(s["breakdown"], []).append(s)
    if breakdowns:
        parts.append("<h3>Per group</h3><p>One table per metric for each breakdown: every group with the judged "
                     "queries it holds (<i>n</i>), each run's value, its delta and p (the same tests and correction as "
                     "above; a group of one query has no test). The no-answer AUROC per group is over all its queries, "
                     "where it holds both answerable and unanswerable ones; it is not tested per group.</p>")
    for name, secs in breakdowns.items():
        parts.append(_group_tables(cmp, runs, name, secs))
    for n in cmp.notes:
        parts.append(f'<p class="note">{_e(n)}</p>')
    return "".join(parts)


def _group_tables(cmp: Any, runs: Sequence[Any], breakdown: str, secs: Sequence[Mapping[str, Any]]) -> str:
    """A ``<details>`` table per metric of one breakdown (nDCG@10 open), then the AUROC per group."""
    label = breakdown.removeprefix("by_").replace("_", " ")
    metrics = list(dict.fromkeys(m["metric"] for s in secs for m in s["metrics"]))
    out = []
    for metric in metrics:
        rows = [dict(m, group=s["group"]) for s in secs for m in s["metrics"] if m["metric"] == metric]
        is_open = " open" if metric == BAR_METRIC else ""
        out.append(f'<details class="groups" data-breakdown="{_e(breakdown)}"{is_open}><summary>{_e(metric)} by '
                   f"{_e(label)} ({len(rows)} groups)</summary>" + _compare_table(cmp, rows, "group", metric=metric)
                   + "</details>")
    auroc = _group_auroc(runs, breakdown)
    if auroc:
        out.append(f'<details class="groups" data-breakdown="{_e(breakdown)}"><summary>AUROC (no answer) by '
                   f"{_e(label)} ({len(auroc)} groups with both classes)</summary>"
                   + _compare_table(cmp, auroc, "group", metric="AUROC") + "</details>")
    return "".join(out)


def _group_auroc(runs: Sequence[Any], breakdown: str) -> list[dict[str, Any]]:
    """The no-answer AUROC of each run in each group of ``breakdown`` over all the group's queries
    (answerable or not), where the group holds both classes: ``{group, n, unanswerable, values,
    delta}`` rows (scikit-learn's ``roc_auc_score``, as ``metrics.json``'s AUROC)."""
    from sklearn.metrics import roc_auc_score

    if breakdown not in BREAKDOWNS:
        return []
    members: dict[str, list[str]] = {}
    base_rows = {q["id"]: q for q in runs[0].queries}
    for q in base_rows.values():
        for g in BREAKDOWNS[breakdown](q):
            members.setdefault(g, []).append(q["id"])
    rows_by_run = [{q["id"]: q for q in r.queries} for r in runs]
    out = []
    for group, ids in sorted(members.items()):
        y = [bool(base_rows[i].get("answerable")) for i in ids]
        if len(set(y)) < 2 or any(i not in rr for rr in rows_by_run for i in ids):
            continue
        values = [float(roc_auc_score(y, [float(rr[i].get("answer_probability", 0.0)) for i in ids])) for rr in rows_by_run]
        out.append({"group": group, "n": len(ids), "unanswerable": y.count(False), "metric": "AUROC",
                    "values": values, "delta": [None] + [v - values[0] for v in values[1:]]})
    return out


def _config_value(value: Any) -> str:
    """A config value as the diff shows it: JSON (a string bare), redacted as record text is (a
    config holds no secret by design; any that slipped in stays out), cut at ``CONFIG_VALUE``."""
    import json

    if isinstance(value, str):
        text = value if value == DEFAULT else json.dumps(value, ensure_ascii=False)
    else:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    text = shown_text(text)
    return text if len(text) <= CONFIG_VALUE else f"{text[:CONFIG_VALUE - 1]}… ({len(text)} characters)"


def _config_section(runs: Sequence[Any]) -> str:
    """Each run's config (``config.json``) against the baseline's: every dotted key that differs,
    old -> new (``research.config_changes``)."""
    base = runs[0]
    fp = base.provenance.get("config_fingerprint", "")
    parts = [f"<p>Each run's config (<code>config.json</code>) against the baseline's, <b>{_e(base.name)}</b> "
             f"(config <code>{_e(fp)}</code>): every dotted key that differs, old → new; <code>(default)</code>: "
             "the config leaves the key out and takes its default.</p>"]
    if len(runs) < 2:
        parts.append('<p class="note">One run: no other config to compare.</p>')
    for r in runs[1:]:
        changes = config_changes(base.config, r.config)
        head = (f'<h3>{_e(r.name)} <span class="note">(config <code>{_e(r.provenance.get("config_fingerprint", ""))}'
                "</code>)</span></h3>")
        if not changes:
            parts.append(head + f'<p class="note" data-run="{_e(r.name)}">The same config as the baseline.</p>')
            continue
        rows = "".join(f'<tr data-key="{_e(k)}"><th scope="row"><code>{_e(k)}</code></th><td><code>'
                       f"{_e(_config_value(old))}</code></td><td>→</td><td><code>{_e(_config_value(new))}</code></td></tr>"
                       for k, old, new in changes)
        parts.append(head + f'<table class="config" data-run="{_e(r.name)}"><thead><tr><th>key</th><th>'
                     f"{_e(base.name)} (old)</th><th></th><th>{_e(r.name)} (new)</th></tr></thead><tbody>{rows}</tbody>"
                     "</table>")
    return "".join(parts)


def _bars(runs: Sequence[Any], cmp: Any, breakdown: str, what: str) -> str:
    table = {r.name: {g: float(v.get(BAR_METRIC, math.nan)) for g, v in (r.metrics.get(breakdown) or {}).items()}
             for r in runs}
    if not any(table.values()):
        return f'<p class="note">No {what} breakdown: the judged queries fall into one {what} group.</p>'
    fig = grouped_bars(table, title=f"{BAR_METRIC} per {what}", xlabel=what,
                       ylabel=f"{BAR_METRIC} (mean over judged queries, 0-1)", marks=significance_marks(cmp, breakdown, BAR_METRIC))
    return _figure(fig, f"bar chart of {BAR_METRIC} per {what}, one bar per run",
                   f"{BAR_METRIC} per {what}; * = significantly different from the baseline. The value axis is zoomed to "
                   "the data where every bar sits high or low (the axes then say where it starts).")


def _no_answer(runs: Sequence[Any]) -> str:
    curves = {r.name: ([bool(q.get("answerable")) for q in r.queries],
                       [float(q.get("answer_probability", 0.0)) for q in r.queries]) for r in runs}
    parts = []
    if any(len(set(y)) == 2 for y, _ in curves.values()):
        parts.append(_figure(roc_figure(curves), "ROC curves of the weak-match probability, one per run",
                             "How well P(answer) separates answerable from unanswerable queries; each run in its own "
                             "line style and marker, the first widest, so identical curves stay visible"))
    else:
        parts.append('<p class="note">No ROC curve: the split has no unanswerable queries.</p>')
    keys = ("AUROC", "AP-noanswer", "warn-precision", "warn-recall", "false-warn-rate")
    head = "".join(f"<th>{_e(k)}</th>" for k in keys)
    rows = "".join(
        f'<tr><th scope="row">{_e(r.name)}</th>'
        + "".join(f'<td class="num">{_num(float((r.metrics.get("no_answer") or {}).get(k, math.nan)))}</td>' for k in keys)
        + "</tr>" for r in runs)
    parts.append(f'<table class="noanswer"><thead><tr><th>run</th>{head}</tr></thead><tbody>{rows}</tbody></table>')
    mi_rows = [(r.name, r.metrics.get("missing_id") or {}) for r in runs]
    if any(m.get("queries") for _, m in mi_rows):
        mk = ("queries", "id_absent", "precision", "recall", "false-warn-rate")
        rows = "".join(f'<tr><th scope="row">{_e(n)}</th>'
                       + "".join(f'<td class="num">{_num(m.get(k, math.nan))}</td>' for k in mk) + "</tr>"
                       for n, m in mi_rows)
        parts.append("<h3>Missing-ID warning (H12)</h3><table class=\"missing\"><thead><tr><th>run</th>"
                     + "".join(f"<th>{_e(k)}</th>" for k in mk) + f"</tr></thead><tbody>{rows}</tbody></table>")
    return "".join(parts)


@functools.lru_cache(maxsize=1)
def _policy() -> Any:
    return Policy()


def shown_text(text: str) -> str:
    """``text`` as the tools would show it: secrets redacted as history cards have them
    (``Policy.redact_secrets``), then secrets and e-mail addresses as task excerpts have them
    (``redact.redact``). Whole, before any cut: a secret cut in half is not recognised."""
    return redact(_policy().redact_secrets(text)[0]) if text else text


def _card(rid: str, rank: int, records: Mapping[str, Any], grades: Mapping[str, int], *, text: bool = True) -> str:
    grade = int(grades.get(rid, 0))
    rec = records.get(rid)
    cls = "card relevant" if grade > 0 else "card"
    mark = f'<span class="grade" title="relevance grade">✓ {grade}</span>' if grade > 0 else ""
    if rec is None:
        return f'<li class="{cls}"><div class="meta">{rank}. <code>{_e(rid)}</code> {mark}</div></li>'
    meta = " · ".join(x for x in (rec.kind, (rec.date or "")[:10], shown_text(rec.title or "")) if x)
    body = ""
    if text:
        shown = " ".join(shown_text(rec.text or "").split())
        shown = shown if len(shown) <= CARD_TEXT else shown[:CARD_TEXT - 1] + "…"
        body = f"<p>{_e(shown)}</p>"
    return (f'<li class="{cls}"><div class="meta">{rank}. {_e(meta)} {mark}</div>'
            f'<div class="ref"><code>{_e(rid)}</code></div>{body}</li>')


def _shown_to(caller: str | None, records: Mapping[str, Any]) -> Callable[[str], bool]:
    """Whether a card (or a relevant id) of a record may be on the page for a query of ``caller``:
    as the history tool would show it (H15, ``can_see`` in a personal container), shared records to
    everyone and personal ones to their owner only; a query that names no caller sees no personal
    record (issue 39 item 8c). An id the dataset does not hold (it cannot be read here) is shown:
    only its id is on the page."""
    def shown(rid: str) -> bool:
        rec = records.get(rid)
        return rec is None or can_see(rec, caller, "personal")

    return shown


def _has_personal(dataset: Any) -> bool:
    return dataset is not None and any(getattr(r, "visibility", "shared") != "shared" for r in dataset.records)


PERSONAL_NOTE = ("Cards show what the query's caller may see, as the history tool would (H15): shared records, "
                 "and personal records are shown only to the caller a query names (their owner); a query that names "
                 "no caller shows no personal record, although its ranking and figures include them.")
"""Said above the worst queries of a dataset that holds personal records (issue 39 item 8c)."""


def _worst(runs: Sequence[Any], dataset: Any, n: int, cards: int, *, text: bool = True) -> str:
    base = runs[0]
    rows = worst_queries(base, BAR_METRIC, n)
    if not rows:
        return '<p class="note">No judged queries.</p>'
    records = {r.id: r for r in dataset.records} if dataset is not None else {}
    texts = {q.id: q.text for q in dataset.queries} if dataset is not None and text else {}
    callers = {q.id: getattr(q, "caller", None) for q in dataset.queries} if dataset is not None else {}
    qrels = dataset.qrels if dataset is not None else {}
    by_run = [{q["id"]: q for q in r.queries} for r in runs]
    out = []
    for q in rows:
        qid = q["id"]
        shown = _shown_to(callers.get(qid), records)
        grades = {d: g for d, g in qrels.get(qid, {}).items() if shown(d)}
        values = " · ".join(
            f"{_e(r.name)}: {_num(float(((rq.get(qid) or {}).get('metrics') or {}).get(BAR_METRIC, math.nan)))}"
            for r, rq in zip(runs, by_run))
        cols = []
        for r, rq in zip(runs, by_run):
            ranking = list((rq.get(qid) or {}).get("ranking") or [])[:cards]
            items = "".join(_card(rid, i, records, grades, text=text) for i, rid in enumerate(ranking, 1)
                            if shown(rid)) or '<li class="card empty">no results to show</li>'
            cols.append(f'<div class="run-cards"><h4>{_e(r.name)}</h4><ol>{items}</ol></div>')
        relevant = ", ".join(f"{d} ({g})" for d, g in sorted(grades.items(), key=lambda kv: -kv[1]) if g > 0)
        out.append(
            f'<article class="query"><h3><code>{_e(qid)}</code> {_e(shown_text(texts.get(qid, "")))}</h3>'
            f'<p class="qmeta">{_e(q.get("lang") or "")} · {_e(q.get("category") or "")} · {BAR_METRIC} {values}</p>'
            f'<p class="qmeta">relevant: {_e(relevant or "(see qrels)")}</p>'
            f'<div class="cards">{"".join(cols)}</div></article>')
    return "".join(out)


def _provenance(runs: Sequence[Any]) -> str:
    rows = []
    for r in runs:
        p = r.provenance
        git = p.get("git") or {}
        commit = (str(git.get("commit") or "")[:12] + (" (dirty)" if git.get("dirty") else "")) if git else "n/a"
        ver = (p.get("versions") or {}).get("searchkit")
        rows.append(f'<tr><th scope="row">{_e(r.name)}</th><td><code>{_e(r.path)}</code></td>'
                    f'<td><code>{_e(p.get("config_fingerprint", ""))}</code></td>'
                    f'<td><code>{_e(p.get("index_fingerprint", ""))}</code></td><td>{_e(p.get("path", ""))}</td>'
                    f'<td><code>{_e(commit)}</code></td><td>{_e(ver or "")}</td><td>{_e(p.get("time", ""))}</td></tr>')
    return ('<table class="provenance"><thead><tr><th>run</th><th>folder</th><th>config</th><th>index</th>'
            '<th>measured</th><th>commit</th><th>searchkit</th><th>written</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK JP",sans-serif;
 margin:0 auto;max-width:1200px;padding:1.5rem;color:#1b1f24;background:#fff}
h1{font-size:1.6rem;margin:0 0 .3rem}h2{margin-top:2.2rem;border-bottom:2px solid #d0d7de;padding-bottom:.2rem}
nav a{margin-right:1rem}table{border-collapse:collapse;margin:.6rem 0;font-size:13px}
th,td{border:1px solid #d0d7de;padding:.25rem .55rem;text-align:left}thead th{background:#f3f5f7}
td.num{text-align:right;font-variant-numeric:tabular-nums}td.sig.up{background:#dafbe1;font-weight:600}
td.sig.down{background:#ffebe9;font-weight:600}.note{color:#57606a}figure{margin:1rem 0}
figure img{max-width:100%;height:auto;border:1px solid #eaeef2}figcaption{color:#57606a;font-size:12px}
details{margin:.4rem 0}summary{cursor:pointer;font-weight:600}
article.query{border:1px solid #d0d7de;border-radius:6px;padding:.6rem .9rem;margin:1rem 0}
article.query h3{margin:.2rem 0;font-size:1.05rem}.qmeta{margin:.15rem 0;color:#57606a;font-size:12px}
.cards{display:flex;gap:1rem;flex-wrap:wrap}.run-cards{flex:1 1 320px;min-width:280px}
.run-cards h4{margin:.4rem 0}.run-cards ol{list-style:none;padding:0;margin:0}
li.card{border:1px solid #d0d7de;border-left:4px solid #d0d7de;border-radius:4px;padding:.3rem .5rem;margin:.35rem 0}
li.card.relevant{border-left-color:#1a7f37;background:#f6fff8}li.card p{margin:.2rem 0;font-size:12px}
.meta{font-weight:600;font-size:12px}.ref{font-size:11px;color:#57606a}.grade{color:#1a7f37}
code{font-size:12px}table.config td{max-width:520px;overflow-wrap:anywhere}
"""


def build_report(
    runs: Sequence[Any],
    *,
    title: str | None = None,
    worst: int = 10,
    cards: int = 5,
    test: str = "fisher",
    alpha: float = 0.05,
    seed: int | None = None,
    n_resamples: int | None = None,
    text: bool = True,
) -> str:
    """The HTML page of ``runs`` (``runs.load_run`` folders of one dataset split; the first is
    the baseline) as a string.

    Titles, card text and query texts are redacted as the tools redact them (``shown_text``);
    ``text=False`` leaves card and query text out (ids, refs, redacted titles and scores only).

    Raises:
        ReportError: no runs, or runs over different query sets (one line naming them).
        CompareError: an unknown test or an alpha outside (0, 1).
    """
    runs = list(runs)
    check_one_dataset(runs)
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        raise ReportError("two run folders have the same name (" + ", ".join(sorted({n for n in names if names.count(n) > 1}))
                          + "); give runs with distinct folder names")
    cmp = None
    if len(runs) > 1 and runs[0].per_query():
        cmp = compare_runs(runs, test=test, alpha=alpha, seed=SEED if seed is None else seed,
                           n_resamples=N_PERMUTATIONS if n_resamples is None else n_resamples)
    dataset, note = _dataset_of(runs[0])
    d, s, h = runs[0].query_set
    c = runs[0].metrics.get("counts") or {}
    title = title or f"searchkit report: {d} ({s})"
    body = [
        f"<header><h1>{_e(title)}</h1><p>{len(runs)} run{'s' if len(runs) != 1 else ''} of <b>{_e(d)}</b> split "
        f"<b>{_e(s)}</b> (dataset sha256 <code>{_e(h[:16])}</code>): {_e(c.get('queries', '?'))} queries, "
        f"{_e(c.get('answerable', '?'))} answerable, {_e(c.get('unanswerable', '?'))} unanswerable. "
        f"Written {_e(now())} by searchkit {_e(version)}.</p>"
        + (f'<p class="note">{_e(note)}</p>' if note else "")
        + ('<p class="note">Record and query text left out (<code>--no-text</code>): ids, refs, redacted titles and '
           "scores only.</p>" if not text else '<p class="note">Record text is shown redacted, as the tools show it '
           "(secrets and e-mail addresses replaced).</p>") + "</header>",
        '<nav><a href="#headline">Headline</a><a href="#compare">Comparison</a><a href="#config">Config</a>'
        '<a href="#no-answer">No answer</a><a href="#breakdowns">Per kind and language</a>'
        '<a href="#worst">Worst queries</a><a href="#provenance">Provenance</a></nav>',
        '<section id="headline"><h2>Headline</h2><p>Ranking metrics over the judged (answerable) queries; AUROC of '
        "the weak-match probability against the answerable label (what <code>metrics.json</code> holds).</p>"
        + _headline(runs) + "</section>",
        '<section id="compare"><h2>Comparison</h2>'
        + (_compare(cmp, runs) if cmp is not None else '<p class="note">One run: nothing to compare.</p>') + "</section>",
        '<section id="config"><h2>Config</h2>' + _config_section(runs) + "</section>",
        '<section id="no-answer"><h2>No answer</h2>' + _no_answer(runs) + "</section>",
        '<section id="breakdowns"><h2>Per kind and per language</h2>'
        + _bars(runs, cmp, "by_kind", "kind") + _bars(runs, cmp, "by_lang", "language") + "</section>",
        f'<section id="worst"><h2>Worst queries of {_e(runs[0].name)}</h2><p>The {worst} judged queries with the lowest '
        f"{BAR_METRIC} in the baseline, with each run's top {cards} cards (green: relevant, with its grade).</p>"
        + (f'<p class="note">{_e(PERSONAL_NOTE)}</p>' if _has_personal(dataset) else "")
        + _worst(runs, dataset, worst, cards, text=text) + "</section>",
        '<section id="provenance"><h2>Provenance</h2>' + _provenance(runs) + "</section>",
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">" + REPORT_MARKER
            + (NO_TEXT_MARKER if not text else "")
            + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_e(title)}</title><link rel=\"icon\" href=\"data:,\"><style>{_CSS}</style></head>"
            f"<body>{''.join(body)}</body></html>\n")


def write_report(run_dirs: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str], **options: Any) -> Path:
    """Load the run folders, build the page (``build_report``; ``options`` go to it) and write it
    to ``out`` atomically (a temporary file beside it, renamed into place). Returns ``out``.

    ``out`` must be a new path or a report this tool wrote (``check_out``), checked before
    anything is read and again just before the page replaces it.

    The page holds query texts and record text from the dataset (the cards, redacted), so it is
    created ``0600`` like the temporary file it was: only its owner reads it until they choose to
    share it.

    Raises:
        ReportError: ``out`` is not safe to replace, or the runs cannot make one report.
        ReportWriteError: the page could not be written (an ``OSError`` too); ``out`` is as it was.
        RunFolderError: a path is not a run folder.
    """
    target = check_out(out)
    runs = [load_run(p) for p in run_dirs]
    page = build_report(runs, **options)
    check_out(target)  # what is there may have changed while the page was built
    try:
        atomic_write_text(target, page)  # a temporary file (mkstemp: 0600) renamed into place
    except OSError as exc:  # no permission, a full disk: one line naming --out (issue 39 item 8b)
        raise ReportWriteError(write_failure_line("--out", target, exc)) from None
    return target
