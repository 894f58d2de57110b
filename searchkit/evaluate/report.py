"""``searchkit report``: runs as one self-contained HTML page (SPEC E4).

``build_report`` turns runs of one dataset split (run folders, ``searchkit eval --out``, and other
systems' TREC run files, ``any_run.load_any_run``) into a page: the headline table (each run's
metrics as ``metrics.json`` holds them: every metric the runs share, ``measures.shared_names``), the
comparison against the first run (``report_compare``: the headline rows as one family, the per-group
tables as another; each delta with its 95% interval, Cohen's d, raw and adjusted p, or
``identical``), each run's config against the baseline's (dotted keys, old -> new; a TREC run has
none), the no-answer ROC, precision-recall and reliability curves of the runs that hold a
weak-match probability (``report_curves``; a line style and marker per run, so identical curves stay
visible), the LLM-judged ragas scores where a run holds them, nDCG@10 per kind and per language
(value axis zoomed to the data, and saying so), and the worst queries of the first run with every
run's cards (record kind, date, title and text, read from the dataset the runs name). Figures are
SVG (``plots``) inlined as ``data:`` images; the page has no script and loads nothing from
anywhere, so it opens offline, from a file, anywhere.

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

import functools
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from searchkit import __version__ as version
from searchkit.errors import InputError, ResourceError, SearchkitError
from searchkit.evaluate.any_run import is_trec, load_any_runs
from searchkit.evaluate.compare import N_PERMUTATIONS, SEED, compare_runs, has_no_answer
from searchkit.evaluate.datasets import load_dataset, resolve_dataset
from searchkit.evaluate.measures import shared_names
from searchkit.evaluate.plots import grouped_bars
from searchkit.evaluate.provenance import dataset_hash, now
from searchkit.evaluate.report_compare import compare_section
from searchkit.evaluate.report_compare import esc as _e
from searchkit.evaluate.report_compare import num as _num
from searchkit.evaluate.report_curves import NO_PROBABILITY, figure, has_llm, llm_section, no_answer_section
from searchkit.evaluate.report_out import NO_TEXT_MARKER, REPORT_MARKER, check_out
from searchkit.evaluate.research import DEFAULT, config_changes, significance_marks, worst_queries
from searchkit.evaluate.task_eval import is_task_set, load_task_set
from searchkit.ingest.policy import Policy, can_see
from searchkit.ingest.redact import redact
from searchkit.util import atomic_write_text, write_failure_line

if TYPE_CHECKING:
    from searchkit.evaluate.compare import Comparison
    from searchkit.evaluate.datasets import Dataset
    from searchkit.evaluate.runs import RunFolder
    from searchkit.evaluate.task_eval import TaskSet

__all__ = ["NO_CONFIG", "NO_TEXT_MARKER", "REPORT_MARKER", "build_report",
           "check_one_dataset", "check_out", "write_report"]

NO_CONFIG = "a TREC run file: no searchkit config"
"""What the config section says of another system's TREC run."""
BAR_METRIC = "nDCG@10"
CARD_TEXT = 300
CONFIG_VALUE = 160
"""A config value longer than this (a model's coefficients) is cut in the config-diff table."""


def _describe(run: RunFolder) -> str:
    d, s, h = run.query_set
    return f"{run.path} ({d} {s}, dataset sha256 {h[:12]})"


def check_one_dataset(runs: Sequence[Any]) -> None:
    """Refuse runs that do not share one query set (dataset, split and content hash).

    Raises:
        InputError: one line naming the first run and the first that differs from it.
    """
    if not runs:
        raise InputError("no run folders given")
    base = runs[0]
    for other in runs[1:]:
        if other.query_set == base.query_set:
            continue
        (d1, s1, _), (d2, s2, _) = base.query_set, other.query_set
        if (d1, s1) != (d2, s2):
            raise InputError(
                f"{base.path} is a run of {d1} {s1} but {other.path} is a run of {d2} {s2}: a report covers "
                "runs of one dataset split (make one report per dataset)")
        raise InputError(f"{_describe(base)} and {_describe(other)} are runs of different contents of {d1} {s1}: "
                          "rerun them on the same data")


# --------------------------------------------------------------------------- dataset lookup


def _dataset_of(run: RunFolder) -> tuple[Any, str]:
    """The dataset split a run measured (for query texts and cards), and a note when it cannot be
    read or has changed since (then the page shows ids only)."""
    held = getattr(run, "dataset", None)  # a TREC run file's split, loaded to score it
    if held is not None:
        return held, ""
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


def _headline(runs: Sequence[Any]) -> str:
    """Each run's headline figures: the metrics every run holds (``measures.shared_names``: today's
    defaults first, then any other measure they share) and the no-answer AUROC (``–`` for a run with
    no weak-match probability)."""
    names = shared_names([r.metrics.get("metrics") or {} for r in runs])
    head = "".join(f"<th>{_e(m)}</th>" for m in names)
    rows = []
    for r in runs:
        m = r.metrics
        cells = []
        for metric in names:
            v = (m.get("metrics") or {}).get(metric)
            v = math.nan if v is None else float(v)
            cells.append(f'<td class="num" data-run="{_e(r.name)}" data-metric="{_e(metric)}" data-value="{v!r}">'
                         f"{_num(v)}</td>")
        if has_no_answer(r):
            v = (m.get("no_answer") or {}).get("AUROC")
            v = math.nan if v is None else float(v)
            cells.append(f'<td class="num" data-run="{_e(r.name)}" data-metric="AUROC" data-value="{v!r}">{_num(v)}</td>')
        else:
            cells.append(f'<td class="num" title="{_e(NO_PROBABILITY)}">–</td>')
        c = m.get("counts") or {}
        rows.append(f'<tr><th scope="row">{_e(r.name)}</th>{"".join(cells)}<td class="num">{_e(c.get("queries", ""))}'
                    f'</td><td class="num">{_e(c.get("answerable", ""))}</td><td class="num">'
                    f'{_e(c.get("unanswerable", ""))}</td></tr>')
    return (f'<div class="scroll"><table class="headline"><thead><tr><th>run</th>{head}<th>AUROC (no answer)</th>'
            f'<th>queries</th><th>answerable</th><th>unanswerable</th></tr></thead><tbody>{"".join(rows)}</tbody>'
            "</table></div>")


def _config_value(value: object) -> str:
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
    if is_trec(base):
        parts.append(f'<p class="note" data-run="{_e(base.name)}">The baseline is {NO_CONFIG}: the other runs\' configs '
                     "are not compared against it.</p>")
    for r in runs[1:]:
        head = (f'<h3>{_e(r.name)} <span class="note">(config <code>{_e(r.provenance.get("config_fingerprint", ""))}'
                "</code>)</span></h3>")
        if is_trec(r) or is_trec(base):
            what = f"{NO_CONFIG}." if is_trec(r) else "a searchkit config; the baseline has none to compare with."
            parts.append(head + f'<p class="note" data-run="{_e(r.name)}">{_e(what[0].upper() + what[1:])}</p>')
            continue
        changes = config_changes(base.config, r.config)
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


def _bars(runs: Sequence[Any], cmp: Comparison | None, breakdown: str, what: str) -> str:
    table = {r.name: {g: float(v.get(BAR_METRIC, math.nan)) for g, v in (r.metrics.get(breakdown) or {}).items()}
             for r in runs}
    if not any(table.values()):
        return f'<p class="note">No {what} breakdown: the judged queries fall into one {what} group.</p>'
    fig = grouped_bars(table, title=f"{BAR_METRIC} per {what}", xlabel=what,
                       ylabel=f"{BAR_METRIC} (mean over judged queries, 0-1)", marks=significance_marks(cmp, breakdown, BAR_METRIC))
    return figure(fig, f"bar chart of {BAR_METRIC} per {what}, one bar per run",
                   f"{BAR_METRIC} per {what}; * = significantly different from the baseline. The value axis is zoomed to "
                   "the data where every bar sits high or low (the axes then say where it starts).")


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


def _has_personal(dataset: Dataset | TaskSet | None) -> bool:
    return dataset is not None and any(getattr(r, "visibility", "shared") != "shared" for r in dataset.records)


PERSONAL_NOTE = ("Cards show what the query's caller may see, as the history tool would (H15): shared records, "
                 "and personal records are shown only to the caller a query names (their owner); a query that names "
                 "no caller shows no personal record, although its ranking and figures include them.")
"""Said above the worst queries of a dataset that holds personal records (issue 39 item 8c)."""


def _worst(runs: Sequence[Any], dataset: Dataset | TaskSet | None, n: int, cards: int, *, text: bool = True) -> str:
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
.scroll{overflow-x:auto;max-width:100%}td.ci{white-space:nowrap;color:#57606a}td.raw{color:#57606a}
td.identical{color:#57606a;font-style:italic;text-align:center}.family{color:#57606a}
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
    """The HTML page of ``runs`` (``RunFolder`` objects of one dataset split: run folders, TREC run
    files as ``any_run.load_any_run`` reads them; the first is the baseline) as a string.

    Titles, card text and query texts are redacted as the tools redact them (``shown_text``);
    ``text=False`` leaves card and query text out (ids, refs, redacted titles and scores only).

    Raises:
        InputError: no runs, or runs over different query sets (one line naming them).
        InputError: an unknown test or an alpha outside (0, 1).
    """
    runs = list(runs)
    check_one_dataset(runs)
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        raise InputError("two runs have the same name (" + ", ".join(sorted({n for n in names if names.count(n) > 1}))
                          + "); give runs with distinct names (--label NAME, repeatable, in order)")
    cmp = headline = None
    if len(runs) > 1 and runs[0].per_query():
        seed_, n_resamples_ = SEED if seed is None else seed, N_PERMUTATIONS if n_resamples is None else n_resamples
        # the headline table: a family of its own tests
        headline = compare_runs(runs, by=["none"], test=test, alpha=alpha, seed=seed_, n_resamples=n_resamples_)
        # every breakdown: the per-group tables and the bars' marks
        cmp = compare_runs(runs, test=test, alpha=alpha, seed=seed_, n_resamples=n_resamples_)
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
        '<a href="#no-answer">No answer</a>' + ('<a href="#llm">LLM-judged</a>' if has_llm(runs) else "")
        + '<a href="#breakdowns">Per kind and language</a><a href="#worst">Worst queries</a>'
        '<a href="#provenance">Provenance</a></nav>',
        '<section id="headline"><h2>Headline</h2><p>Ranking metrics over the judged (answerable) queries; AUROC of '
        "the weak-match probability against the answerable label (what <code>metrics.json</code> holds).</p>"
        + _headline(runs) + "</section>",
        '<section id="compare"><h2>Comparison</h2>'
        + (compare_section(headline, cmp, runs) if headline is not None else '<p class="note">One run: nothing to '
           "compare.</p>") + "</section>",
        '<section id="config"><h2>Config</h2>' + _config_section(runs) + "</section>",
        '<section id="no-answer"><h2>No answer</h2>' + no_answer_section(runs) + "</section>",
        '<section id="breakdowns"><h2>Per kind and per language</h2>'
        + _bars(runs, cmp, "by_kind", "kind") + _bars(runs, cmp, "by_lang", "language") + "</section>",
        f'<section id="worst"><h2>Worst queries of {_e(runs[0].name)}</h2><p>The {worst} judged queries with the lowest '
        f"{BAR_METRIC} in the baseline, with each run's top {cards} cards (green: relevant, with its grade).</p>"
        + (f'<p class="note">{_e(PERSONAL_NOTE)}</p>' if _has_personal(dataset) else "")
        + _worst(runs, dataset, worst, cards, text=text) + "</section>",
        '<section id="provenance"><h2>Provenance</h2>' + _provenance(runs) + "</section>",
    ]
    if has_llm(runs):
        body.insert(5, '<section id="llm"><h2>LLM-judged (ragas)</h2>' + llm_section(runs) + "</section>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">" + REPORT_MARKER
            + (NO_TEXT_MARKER if not text else "")
            + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_e(title)}</title><link rel=\"icon\" href=\"data:,\"><style>{_CSS}</style></head>"
            f"<body>{''.join(body)}</body></html>\n")


def write_report(run_dirs: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str], *,
                 dataset: Dataset | str | os.PathLike[str] | None = None,
                 split: str | None = None, labels: Sequence[str] | None = None, **options: Any) -> Path:
    """Load the runs (run folders and TREC run files: ``any_run.load_any_runs`` with ``dataset``,
    ``split`` and ``labels``), build the page (``build_report``; ``options`` go to it) and write it
    to ``out`` atomically (a temporary file beside it, renamed into place). Returns ``out``.

    ``out`` must be a new path or a report this tool wrote (``check_out``), checked before
    anything is read and again just before the page replaces it.

    The page holds query texts and record text from the dataset (the cards, redacted), so it is
    created ``0600`` like the temporary file it was: only its owner reads it until they choose to
    share it.

    Raises:
        InputError: ``out`` is not safe to replace, or the runs cannot make one report.
        ResourceError: the page could not be written; ``out`` is as it was.
        DataError: a path is not a run folder. InputError: a TREC run file and no dataset.
    """
    target = check_out(out)
    runs = load_any_runs(run_dirs, dataset=dataset, split=split, labels=labels)
    page = build_report(runs, **options)
    check_out(target)  # what is there may have changed while the page was built
    try:
        atomic_write_text(target, page)  # a temporary file (mkstemp: 0600) renamed into place
    except OSError as exc:  # no permission, a full disk: one line naming --out (issue 39 item 8b)
        raise ResourceError(write_failure_line("--out", target, exc)) from None
    return target
