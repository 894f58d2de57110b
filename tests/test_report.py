"""``searchkit report`` (E4): one self-contained page per dataset split, written atomically, checked
in a real headless Chromium (the OS package, driven by selenium through /usr/bin/chromedriver)."""
from __future__ import annotations

import base64
import io
import json
import os
import re
import stat
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from report_runs import ROOT, make_run

from searchkit.errors import InputError, ResourceError
from searchkit.cli import main
from searchkit.evaluate.compare import compare_runs
from searchkit.evaluate.report import (
    NO_TEXT_MARKER,
    REPORT_MARKER,
    build_report,
    check_out,
    write_report,
)
from searchkit.config import SearchConfig
from searchkit.evaluate.runs import load_run

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
BROWSER_REQUIRED = os.environ.get("SEARCHKIT_BROWSER_TESTS") == "required"
"""``.ci/run`` sets it: there a missing browser fails the test instead of skipping it."""


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # provenance paths (datasets/mini) are relative to the repository root


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("report-runs")
    a = make_run(base / "baseline", seed=1)
    b = make_run(base / "better", seed=1, shift=0.3)  # the same draws, 0.3 higher: significant
    c = make_run(base / "other", seed=7)
    return [load_run(p) for p in (a, b, c)]


class _Cells(HTMLParser):
    """Headline cells (``data-metric``), image sources, scripts and any external reference."""

    def __init__(self):
        super().__init__()
        self.cells, self.images, self.external, self.scripts = [], [], [], 0
        self._cell = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script":
            self.scripts += 1
        for key in ("src", "href"):
            v = a.get(key)
            if v is not None and not (v.startswith("data:") or v.startswith("#")):
                self.external.append(v)
        if tag == "img":
            self.images.append(a["src"])
        if tag == "td" and "data-metric" in a:
            self._cell = {"run": a["data-run"], "metric": a["data-metric"], "value": a["data-value"], "text": ""}

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"] += data

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self.cells.append(self._cell)
            self._cell = None


def _parse(page: str) -> _Cells:
    p = _Cells()
    p.feed(page)
    return p


def _expected_headline(run) -> dict[tuple[str, str], float]:
    out = {(run.name, m): float(v) for m, v in run.metrics["metrics"].items()}
    out[(run.name, "AUROC")] = float(run.metrics["no_answer"]["AUROC"])
    return out


def test_page_is_self_contained_and_holds_the_headline(runs):
    page = build_report(runs, n_resamples=2000)
    p = _parse(page)
    assert p.scripts == 0 and p.external == []
    assert len(p.images) >= 3  # ROC, per kind, per language
    for src in p.images:
        assert src.startswith("data:image/svg+xml;base64,")
        svg = base64.b64decode(src.split(",", 1)[1]).decode("utf-8")
        ET.fromstring(svg)  # well-formed
        assert not re.search(r'(?:xlink:)?href="(?!#)', svg)  # nothing outside the image itself
    expected = {}
    for r in runs:
        expected.update(_expected_headline(r))
    got = {(c["run"], c["metric"]): c for c in p.cells}
    assert set(got) == set(expected)
    for key, v in expected.items():
        assert float(got[key]["value"]) == v
        assert got[key]["text"] == f"{v:.4f}"


def test_compare_table_marks_what_compare_runs_finds(runs):
    page = build_report(runs, n_resamples=2000)
    cmp = compare_runs(runs, n_resamples=2000)
    allsec = next(s for s in cmp.sections if s["breakdown"] == "all")
    ndcg = next(m for m in allsec["metrics"] if m["metric"] == "nDCG@10")
    assert ndcg["significant"][1] is True  # "better" is 0.3 higher on every query
    assert f"{ndcg['delta'][1]:+.4f}*" in page
    assert "Benjamini-Hochberg-adjusted over the" in page  # every group x metric x run (issue 31 item 3)
    assert 'class="num sig up"' in page


def test_worst_queries_show_query_text_and_cards(runs):
    page = build_report(runs[:2], worst=3, cards=2, n_resamples=2000)
    from searchkit.evaluate.research import worst_queries

    first = worst_queries(runs[0], "nDCG@10", 1)[0]
    from report_runs import mini_dev

    ds = mini_dev()
    text = next(q.text for q in ds.queries if q.id == first["id"])
    assert f"<code>{first['id']}</code> {text}" in page
    top = first["ranking"][0]
    record = next(r for r in ds.records if r.id == top)
    assert f"<code>{top}</code>" in page and (record.title or "")[:20] in page
    assert page.count('<article class="query">') == 3


def test_one_run_has_no_comparison(runs):
    page = build_report(runs[:1])
    assert "One run: nothing to compare." in page
    assert len(_parse(page).cells) == len(runs[0].metrics["metrics"]) + 1


def test_runs_of_different_datasets_stop_with_one_line_and_write_nothing(tmp_path, capsys):
    a = make_run(tmp_path / "a", seed=1)
    b = make_run(tmp_path / "b", seed=2, dataset_name="xquad-ru")
    out = tmp_path / "site" / "report.html"
    with pytest.raises(InputError) as err:
        write_report([a, b], out)
    msg = str(err.value)
    assert "\n" not in msg and "mini dev" in msg and "xquad-ru dev" in msg and str(b) in msg
    rc = main(["report", str(a), str(b), "--out", str(out)])
    lines = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("searchkit report: ") and "xquad-ru" in lines[0]
    assert not out.exists() and not out.parent.exists()


def test_runs_of_changed_data_are_refused(tmp_path):
    a = make_run(tmp_path / "a", seed=1)
    b = make_run(tmp_path / "b", seed=2, sha="f" * 64)
    with pytest.raises(InputError, match="different contents of mini dev"):
        write_report([a, b], tmp_path / "r.html")


def test_written_atomically(tmp_path, monkeypatch, capsys):
    a = make_run(tmp_path / "a", seed=1)
    out = tmp_path / "report.html"
    assert main(["report", str(a), "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    first = out.read_text(encoding="utf-8")
    assert first.startswith("<!DOCTYPE html>") and first.rstrip().endswith("</html>")
    assert (out.stat().st_mode & 0o777) == 0o600

    def broken(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(ResourceError, match="the disk is full"):
        write_report([a], out, title="second")
    assert out.read_text(encoding="utf-8") == first  # the old page stays whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "report.html"]  # no temporary file left


def test_bad_out_and_bad_runs(tmp_path, capsys):
    a = make_run(tmp_path / "a", seed=1)
    assert main(["report", str(a), "--out", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "nope"), "--out", str(tmp_path / "r.html")]) == 2
    assert "no such run folder or TREC run file" in capsys.readouterr().err  # a file may be a TREC run (issue 40)
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty"), "--out", str(tmp_path / "r.html")]) == 2
    assert "not a run folder" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_missing_dataset_gives_a_note_not_a_failure(tmp_path):
    a = make_run(tmp_path / "a", seed=1)
    prov = json.loads((a / "provenance.json").read_text())
    prov.update(dataset_path="datasets/gone", dataset="gone")
    (a / "provenance.json").write_text(json.dumps(prov))
    page = build_report([load_run(a)])
    assert "the cards show record ids only: dataset gone cannot be read here" in page


# --------------------------------------------------------------------------- a real browser


def _driver():
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists()]
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing.append("selenium (pip install 'searchkit[notebooks]')")
    if missing:
        msg = f"needs {', '.join(missing)} (apt-get install chromium chromium-driver)"
        if BROWSER_REQUIRED:
            pytest.fail(msg)
        pytest.skip(msg)
    os.environ.setdefault("SE_OFFLINE", "true")  # selenium never downloads a driver or a browser
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-default-apps",
                "--disable-extensions", "--disable-sync", "--no-first-run", "--no-default-browser-check",
                "--window-size=1280,1600"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def test_report_in_headless_chromium(runs, tmp_path):
    out = write_report([r.path for r in runs], tmp_path / "report.html", n_resamples=2000)
    driver = _driver()
    try:
        driver.set_page_load_timeout(60)
        driver.get(out.resolve().as_uri())
        assert driver.execute_script("return document.readyState") == "complete"
        errors = [e for e in driver.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]
        assert errors == []
        # nothing was fetched: no resource besides the page itself
        assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
        images = driver.execute_script(
            "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight])")
        assert len(images) >= 3 and all(ok and w > 100 and h > 100 for ok, w, h in images)
        cells = driver.execute_script(
            "return Array.from(document.querySelectorAll('table.headline td[data-metric]'))"
            ".map(td => [td.dataset.run, td.dataset.metric, td.innerText.trim()])")
        expected = {}
        for r in runs:
            expected.update(_expected_headline(r))
        assert {(run, metric): text for run, metric, text in cells} == {k: f"{v:.4f}" for k, v in expected.items()}
        # the config-diff section and the per-group tables are there and the page needs no sideways scroll
        assert driver.execute_script("return document.querySelectorAll('#config h3').length") == len(runs) - 1
        assert driver.execute_script("return document.querySelectorAll('details.groups').length") >= 8
        assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
        png = driver.get_screenshot_as_png()
    finally:
        driver.quit()
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("L")
    hist = img.histogram()
    dark = sum(hist[:200]) / (img.width * img.height)
    assert img.width >= 1000 and 0.01 < dark < 0.9  # text and tables drawn on a white page
    assert len([h for h in hist if h]) > 20  # more than a flat colour


# --------------------------------------------------------------------------- issue 27 items 6 and 9

SECRETS = ("Summer-2026", "TOKENJA_99", "anna.secret@example.com", "Hunter_2")


def _secret_dataset(tmp_path):
    """A copy of mini whose every record and query carries secrets, in text and title."""
    import shutil

    from searchkit.evaluate.datasets import load_dataset

    root = tmp_path / "mini-secrets"
    shutil.copytree(ROOT / "datasets" / "mini", root)
    lines = []
    for line in (root / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        row["text"] = f"password: Summer-2026\n{row.get('text', '')}\ntoken: TOKENJA_99, mail anna.secret@example.com"
        row["title"] = f"{row.get('title') or 'x'} (password: Hunter_2)"
        lines.append(json.dumps(row, ensure_ascii=False))
    (root / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    queries = []
    for line in (root / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        row["text"] = f"{row['text']} token: TOKENJA_99"
        queries.append(json.dumps(row, ensure_ascii=False))
    (root / "queries.jsonl").write_text("\n".join(queries) + "\n", encoding="utf-8")
    return root, load_dataset(root, split="dev")


def _secret_run(tmp_path):
    root, ds = _secret_dataset(tmp_path)
    run = make_run(tmp_path / "secret-run", seed=1, dataset=ds)
    prov = json.loads((run / "provenance.json").read_text())
    prov["dataset_path"] = str(root)
    (run / "provenance.json").write_text(json.dumps(prov))
    return run


def test_cards_titles_and_queries_are_redacted_as_the_tools_redact(tmp_path):
    run = _secret_run(tmp_path)
    page = build_report([load_run(run)], worst=5, cards=3)
    assert '<article class="query">' in page and "<li class=\"card" in page
    assert "[redacted]" in page and "[email]" in page
    assert [s for s in SECRETS if s in page] == []
    assert "password: [redacted]" in page  # the key word stays, as in the tools
    assert REPORT_MARKER in page and NO_TEXT_MARKER not in page


def test_no_text_leaves_record_and_query_text_out(tmp_path, capsys):
    run = _secret_run(tmp_path)
    out = tmp_path / "out.html"
    assert main(["report", str(run), "--out", str(out), "--no-text", "--worst", "5", "--cards", "3"]) == 0
    page = out.read_text(encoding="utf-8")
    assert NO_TEXT_MARKER in page and "--no-text" in page
    assert [s for s in SECRETS if s in page] == []
    cards = re.findall(r'<li class="card[^"]*">(.*?)</li>', page, re.S)
    assert cards and all("<p>" not in c for c in cards)  # ids, refs and redacted titles only
    assert all("<code>" in c for c in cards)
    ds = _secret_dataset(tmp_path / "again")[1]
    for q in ds.queries[:20]:
        assert q.text.split(" token:")[0] not in page  # no query text at all
    checked = 0
    for r in ds.records:
        line = r.text.split("\n")[1][:40]  # the record's own first line (a title may repeat it)
        if len(line) >= 20 and line not in (r.title or ""):
            assert line not in page  # no record text at all
            checked += 1
    assert checked >= 20


def test_out_replaces_a_report_this_tool_wrote(tmp_path):
    a = make_run(tmp_path / "a", seed=1)
    out = tmp_path / "r.html"
    write_report([a], out, title="first")
    write_report([a], out, title="second")
    assert "<title>second</title>" in out.read_text(encoding="utf-8")
    legacy = out.read_text(encoding="utf-8").replace(REPORT_MARKER, "")  # a page written before the marker
    out.write_text(legacy, encoding="utf-8")
    write_report([a], out, title="third")
    assert "<title>third</title>" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("what", ["json", "html", "empty", "fifo", "symlink", "loop", "device", "under_a_file"])
def test_out_refuses_anything_that_is_not_its_report(tmp_path, capsys, what):
    a = make_run(tmp_path / "a", seed=1)
    target = tmp_path / "target"
    before = None
    if what == "json":
        target.write_text('{"keep": "me"}\n', encoding="utf-8")
        before = target.read_bytes()
    elif what == "html":
        target.write_text("<!DOCTYPE html><html><body>someone's page</body></html>\n", encoding="utf-8")
        before = target.read_bytes()
    elif what == "empty":
        target.write_bytes(b"")
        before = b""
    elif what == "fifo":
        os.mkfifo(target)
    elif what == "symlink":
        report = tmp_path / "real.html"
        write_report([a], report)
        target.symlink_to(report)
    elif what == "loop":  # a symbolic link to itself (issue 39 item 6)
        target.symlink_to(target.name)
    elif what == "device":
        target = Path("/dev/null")
    elif what == "under_a_file":
        (tmp_path / "file").write_text("x", encoding="utf-8")
        target = tmp_path / "file" / "r.html"
    rc = main(["report", str(a), "--out", str(target)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("searchkit report: --out ") and str(target) in err[0]
    assert "Traceback" not in err[0]
    if before is not None:
        assert target.read_bytes() == before
    if what == "fifo":
        assert stat.S_ISFIFO(os.lstat(target).st_mode)
    if what in ("symlink", "loop"):
        assert target.is_symlink() and "refusing" in err[0]
    if what == "device":
        assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and "character device" in err[0]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary file left
    with pytest.raises(InputError):
        check_out(target)


# --------------------------------------------------------------------------- issue 31 item 8


def _runs_with_configs(tmp_path, configs: dict[str, dict]) -> list:
    out = []
    for i, (name, cfg) in enumerate(configs.items()):
        folder = make_run(tmp_path / name, seed=1, shift=0.1 * i)
        (folder / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
        out.append(load_run(folder))
    return out


def _section(page: str, sid: str) -> str:
    return page.split(f'<section id="{sid}">', 1)[1].split("</section>", 1)[0]


def test_config_section_lists_each_runs_changes(tmp_path):
    runs = _runs_with_configs(tmp_path, {
        "baseline": {},
        "rrf": {"fusion": {"method": "rrf", "rrf_k": 30}},
        "same": {"fusion": {"method": "wsum"}},  # the default, written out: no change
        "fixed": {"fusion": {"adaptive": None}},
    })
    page = build_report(runs, n_resamples=200)
    assert '<a href="#config">Config</a>' in page
    sec = _section(page, "config")
    rrf = sec.split('<table class="config" data-run="rrf">', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'data-key="([^"]+)"', rrf) == ["fusion.method", "fusion.rrf_k"]
    assert "<code>&quot;wsum&quot;</code></td><td>→</td><td><code>&quot;rrf&quot;</code>" in rrf
    assert "<code>60</code></td><td>→</td><td><code>30</code>" in rrf
    assert '<p class="note" data-run="same">The same config as the baseline.</p>' in sec
    fixed = sec.split('<table class="config" data-run="fixed">', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'data-key="([^"]+)"', fixed) == ["fusion.adaptive"]  # one row, not one per coefficient
    assert "characters)</code>" in fixed and "<code>null</code>" in fixed  # the long model cut


def _group_rows(page: str) -> dict[tuple[str, str, str], tuple[str, list[str]]]:
    """``{(breakdown, metric, group): (n, cells)}`` of the per-group tables."""
    out = {}
    for block in re.findall(r'<details class="groups" data-breakdown="([^"]+)"[^>]*>(.*?)</details>', page, re.S):
        breakdown, body = block
        for metric, group, n, cells in re.findall(
                r'<tr data-metric="([^"]+)" data-group="([^"]+)" data-n="([^"]*)">(.*?)</tr>', body, re.S):
            out[(breakdown, metric, group)] = (n, re.findall(r"<td[^>]*>(.*?)</td>", cells))
    return out


def test_per_group_tables_for_every_metric(runs):
    from sklearn.metrics import roc_auc_score

    from searchkit.evaluate.run import BREAKDOWNS

    page = build_report(runs, n_resamples=200)
    rows = _group_rows(page)
    cmp = compare_runs(runs, n_resamples=200)
    for sec in cmp.sections:
        if sec["breakdown"] == "all":
            continue
        for m in sec["metrics"]:
            n, cells = rows[(sec["breakdown"], m["metric"], sec["group"])]
            assert n == str(sec["n"])
            assert cells[1] == f"{m['values'][0]:.4f}"
            stored = runs[0].metrics.get(sec["breakdown"], {}).get(sec["group"])
            if stored:  # what metrics.json holds for the group
                assert cells[1] == f"{stored[m['metric']]:.4f}"
    metrics = {metric for (_, metric, _) in rows}
    assert {"nDCG@10", "RR@10", "R@1", "R@5", "R@10", "R@20", "R@100", "AUROC"} <= metrics
    # the no-answer AUROC per language, over each group's queries (answerable or not)
    for lang in runs[0].metrics["by_lang"]:
        qs = [q for q in runs[0].queries if lang in BREAKDOWNS["by_lang"](q)]
        want = roc_auc_score([q["answerable"] for q in qs], [q["answer_probability"] for q in qs])
        n, cells = rows[("by_lang", "AUROC", lang)]
        assert n == str(len(qs)) and cells[1] == f"{want:.4f}"


def _line_styles(svg_text: str) -> list[str]:
    """The style of each data line of a matplotlib SVG (the grey chance / calibration diagonal left out)."""
    ns = "{http://www.w3.org/2000/svg}"
    root = ET.fromstring(svg_text)
    in_legend = {id(el) for g in root.iter(f"{ns}g") if g.get("id", "").startswith("legend_") for el in g.iter()}
    out = []
    for g in root.iter(f"{ns}g"):
        if not g.get("id", "").startswith("line2d_") or id(g) in in_legend:
            continue
        for path in g.findall(f"{ns}path"):
            style = path.get("style", "")
            colour = re.search(r"stroke: #(\w\w)(\w\w)(\w\w)", style)
            if "stroke-width" in style and colour and len(set(colour.groups())) > 1:  # greys: the diagonal, the grid
                out.append(style)
    return out


@pytest.mark.parametrize("figure", ["roc_figure", "pr_figure", "reliability_figure"])
def test_identical_curves_stay_visible(figure):
    """Two runs with the same probabilities draw the same curve: each in its own dash pattern, the
    first wider, so the one drawn first still shows around the one over it."""
    from searchkit.evaluate import plots

    y = [True, False, True, True, False, True, False, True] * 3
    p = [0.9, 0.2, 0.7, 0.4, 0.5, 0.8, 0.1, 0.6] * 3
    text = plots.svg(getattr(plots, figure)({"a": (y, p), "b": (y, p), "c": (y, p)}))
    styles = _line_styles(text)
    widths = [float(re.search(r"stroke-width: ([\d.]+)", s).group(1)) for s in styles]
    dashes = [(re.search(r"stroke-dasharray: ([^;]+)", s) or [None, "solid"])[1] for s in styles]
    assert len(styles) == 3, styles
    assert widths == sorted(widths, reverse=True) and len(set(widths)) == 3
    assert len(set(dashes)) == 3


def test_report_roc_of_identical_runs_keeps_both(tmp_path):
    a = load_run(make_run(tmp_path / "a", seed=4))
    b = load_run(make_run(tmp_path / "b", seed=4))  # the same probabilities: the same ROC curve
    page = build_report([a, b], n_resamples=200)
    src = re.search(r'<img alt="ROC curves[^"]*" src="data:image/svg\+xml;base64,([^"]+)"', page).group(1)
    styles = _line_styles(base64.b64decode(src).decode("utf-8"))
    assert len(styles) == 2 and styles[0] != styles[1]
    assert "identical curves stay visible" in page


def test_value_axes_zoom_to_the_data():
    from searchkit.evaluate import plots

    assert plots.value_limits([0.86, 0.93, 0.91]) == (0.8, 1.0)
    assert plots.value_limits([0.42, 0.61]) == (0.35, 0.7)
    assert plots.value_limits([0.05, 0.9]) == (0.0, 1.0)  # the data spans the scale: nothing to zoom
    assert plots.value_limits([float("nan")]) == (0.0, 1.0)
    for values in ([0.86, 0.93], [0.3, 0.31], [0.0, 0.12], [0.99, 1.0]):
        lo, hi = plots.value_limits(values)
        assert 0.0 <= lo <= min(values) and max(values) <= hi <= 1.0
    high = plots.grouped_bars({"a": {"en": 0.88, "ja": 0.92}, "b": {"en": 0.9, "ja": 0.95}}, title="t", xlabel="x",
                              ylabel="y")
    bottom, top = high.axes[0].get_ylim()
    assert bottom == pytest.approx(0.8) and 1.0 <= top < 1.05
    assert "zoomed to the data: from 0.80" in "".join(t.get_text() for t in high.axes[0].texts)
    spread = plots.grouped_bars({"a": {"en": 0.1, "ja": 0.9}}, title="t", xlabel="x", ylabel="y")
    assert spread.axes[0].get_ylim()[0] == 0.0
    assert not [t for t in spread.axes[0].texts if "zoomed" in t.get_text()]
    wide = plots.grouped_bars({f"run{i}": {f"g{j}": 0.5 for j in range(40)} for i in range(6)}, title="t",
                              xlabel="x", ylabel="y")
    assert wide.get_figwidth() <= plots.MAX_WIDTH_IN


# --------------------------------------------------------------------------- issue 39 item 8c


def _owned_dataset(root: Path) -> Path:
    """A workspace-style dataset: shared records and personal ones (an owner, visibility personal)."""
    root.mkdir(parents=True)
    rows = [
        {"_id": "acme/chat:anna", "title": "ANNA-PRIVATE-TITLE ротация ключей", "kind": "chat", "space": "acme",
         "owner": "u-anna", "visibility": "personal",
         "text": "ANNA-PRIVATE-TEXT ротация ключей деплоя: план Анны, личная переписка"},
        {"_id": "acme/chat:boris", "title": "BORIS-PRIVATE-TITLE ротация ключей", "kind": "chat", "space": "acme",
         "owner": "u-boris", "visibility": "personal",
         "text": "BORIS-PRIVATE-TEXT ротация ключей деплоя: заметки Бориса"},
        {"_id": "acme/digest:1", "title": "SHARED-TITLE ротация ключей", "kind": "digest", "space": "acme",
         "owner": "u-anna", "visibility": "shared", "text": "SHARED-TEXT ротация ключей деплоя раз в квартал"},
        {"_id": "acme/digest:2", "title": "Отчёт по продажам", "kind": "digest", "space": "acme",
         "visibility": "shared", "text": "выгрузка отчёта по продажам за октябрь"},
    ]
    (root / "corpus.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    queries = [
        {"_id": "q-nobody", "text": "ротация ключей деплоя", "lang": "ru", "answerable": True, "split": "dev"},
        {"_id": "q-anna", "text": "ротация ключей деплоя план", "lang": "ru", "answerable": True, "split": "dev",
         "caller": "u-anna"},
    ]
    (root / "queries.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries),
                                        encoding="utf-8")
    (root / "qrels").mkdir()
    (root / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq-nobody\tacme/digest:2\t1\n"
                                            "q-anna\tacme/digest:2\t1\n", encoding="utf-8")
    return root


def _article(page: str, qid: str) -> str:
    start = page.index(f"<h3><code>{qid}</code>")
    return page[start:page.index("</article>", start)]


def test_cards_show_personal_records_only_to_the_querys_caller(tmp_path, monkeypatch):
    """A query that names no caller was ranked over every record (the searcher path applies no
    visibility without a caller), and the report's cards showed the personal chats' titles and
    text (issue 39 item 8c). Now a card shows a record only where the query's caller may see it
    (H15: shared records; personal ones to their owner only), and the page says so."""
    monkeypatch.setenv("SEARCHKIT_CACHE", str(tmp_path / "cache.sqlite"))
    ds = _owned_dataset(tmp_path / "owned")
    cfg = tmp_path / "cfg.json"
    SearchConfig.from_dict({"dense": {"embedder": "hashing"}, "weak_match": {"enabled": False}}).save(cfg)
    run = tmp_path / "run"
    assert main(["eval", "--dataset", str(ds), "--config", str(cfg), "--out", str(run), "--quiet"]) == 0
    rankings = {q["id"]: q["ranking"] for q in load_run(run).queries}
    assert "acme/chat:anna" in rankings["q-nobody"][:5] and "acme/chat:boris" in rankings["q-nobody"][:5]
    page = build_report([load_run(run)], worst=10, cards=5)
    nobody, anna = _article(page, "q-nobody"), _article(page, "q-anna")
    for secret in ("ANNA-PRIVATE", "BORIS-PRIVATE", "acme/chat:anna", "acme/chat:boris"):
        assert secret not in nobody
    assert "SHARED-TEXT" in nobody
    assert "ANNA-PRIVATE-TEXT" in anna and "BORIS-PRIVATE" not in anna and "acme/chat:boris" not in anna
    assert "BORIS-PRIVATE" not in page
    assert "personal records are shown only to the caller a query names" in page
