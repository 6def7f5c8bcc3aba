"""The HTML report in a real browser (Debian's chromium, headless; .ci/run installs it): after rendering, the
DOM holds every dataset row and every pipeline column of the significance table and a drawn CD diagram; a
screenshot is not blank; with scripts off everything is still there. Skipped, with the reason, where no
chromium is installed."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pytest

import toolkit

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (apt-get install -y chromium)")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]
DATASETS = ["iris", "vote", "glass"]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("browser")
    results = toolkit.evaluate(DATASETS, ["nb-weka", "nb-gaussian", "liblinear-lr:C=1,B=1"], runs=3,
                               metrics=["error", "accuracy"], out=folder / "r.jsonl")
    toolkit.write_report(folder / "r.jsonl", folder / "r.html")
    return folder, results.pipelines()


def _chromium(folder, *args):
    profile = folder / f"profile-{len(list(folder.glob('profile-*')))}"
    command = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


class _Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.in_table = False
        self.rows, self.header, self.sortable = [], [], 0
        self.cd, self.cd_items, self.cell = False, {}, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("id") == "significance-table":
            self.in_table = True
        if self.in_table and tag == "tr" and "data-dataset" in a:
            self.rows.append(a["data-dataset"])
        if self.in_table and tag == "th" and "data-pipeline" in a:
            self.header.append(a["data-pipeline"])
        if tag == "th" and "sortable" in (a.get("class") or ""):
            self.sortable += 1
        if tag == "svg" and a.get("class") == "cd-diagram":
            self.cd = True
        if self.cd and a.get("data-role"):
            self.cd_items.setdefault(a["data-role"], []).append(a)
            if tag == "text":
                self.cell = a["data-role"]

    def handle_data(self, data):
        if self.cd and self.cell == "method":
            self.cd_items.setdefault("method-text", []).append(data)
        self.cell = None

    def handle_endtag(self, tag):
        if tag == "table":
            self.in_table = False
        if tag == "svg":
            self.cd = False


def _check_dom(dom: _Dom, pipelines):
    assert dom.rows == DATASETS
    assert dom.header == pipelines
    assert len(dom.cd_items.get("method", [])) == len(pipelines)
    assert len(dom.cd_items.get("method-line", [])) == 2 * len(pipelines)
    assert dom.cd_items.get("cd-bar") and dom.cd_items.get("axis")
    for name in pipelines:
        assert any(text.strip().startswith(name) or text.strip().endswith(name) for text in dom.cd_items["method-text"])


def test_rendered_dom_has_every_row_column_and_the_cd_diagram(report):
    folder, pipelines = report
    dom = _Dom()
    dom.feed(_chromium(folder, "--dump-dom", (folder / "r.html").as_uri()))
    _check_dom(dom, pipelines)
    assert dom.sortable > 0, "the sorting script ran (it marks the headers it made sortable)"


def test_readable_with_scripts_off(report):
    """Headless chromium cannot dump a page whose scripts are disabled (--blink-settings=scriptEnabled=false
    prints nothing), so the page a browser without scripts shows is rendered instead: the report with its
    script elements removed."""
    import re

    folder, pipelines = report
    text = (folder / "r.html").read_text(encoding="utf-8")
    bare = re.sub(r"<script(?![^>]*application/json)[^>]*>.*?</script>", "", text, flags=re.S)
    assert bare != text and "<script>" not in bare
    (folder / "r-noscript.html").write_text(bare, encoding="utf-8")
    dom = _Dom()
    dom.feed(_chromium(folder, "--dump-dom", (folder / "r-noscript.html").as_uri()))
    _check_dom(dom, pipelines)
    assert dom.sortable == 0, "no script ran"


def test_screenshot_is_not_blank(report):
    from PIL import Image

    folder, _ = report
    shot = folder / "shot.png"
    _chromium(folder, "--window-size=1280,2200", "--hide-scrollbars", f"--screenshot={shot}", (folder / "r.html").as_uri())
    pixels = np.asarray(Image.open(shot).convert("RGB"), dtype=np.int64)
    assert pixels.shape[:2] == (2200, 1280)
    ink = np.any(pixels < 200, axis=2)
    assert ink.mean() > 0.01, "almost nothing drawn"
    colours = len(np.unique(pixels.reshape(-1, 3) // 16, axis=0))
    assert colours > 20
    # the CD diagram's red clique bars or the distributions' boxes: coloured ink, not only black text
    red = (pixels[:, :, 0] > 150) & (pixels[:, :, 1] < 90) & (pixels[:, :, 2] < 90)
    assert red.sum() > 50


def test_cd_diagram_labels_stay_inside_the_picture(tmp_path):
    """Long pipeline names: every label's box, as the browser lays the text out, lies within the SVG."""
    import json

    names = ["nb-gaussian:var_smoothing=1e-09", "nb-gaussian:var_smoothing=0.001", "nb-weka"]
    toolkit.evaluate(DATASETS, names, runs=2, metrics=["error"], out=tmp_path / "r.jsonl")
    toolkit.write_report(tmp_path / "r.jsonl", tmp_path / "cd.svg")
    svg = (tmp_path / "cd.svg").read_text(encoding="utf-8")
    page = tmp_path / "measure.html"
    page.write_text("<!doctype html><html><body>" + svg[svg.index("<svg"):] + """
<pre id="out"></pre><script>
const svg = document.querySelector('svg'), width = svg.viewBox.baseVal.width || svg.width.baseVal.value;
const boxes = [...svg.querySelectorAll('text')].map(t => { const b = t.getBBox();
  return {text: t.textContent, x0: b.x, x1: b.x + b.width}; });
document.getElementById('out').textContent = JSON.stringify({width, boxes});
</script></body></html>""", encoding="utf-8")
    dumped = _chromium(tmp_path, "--dump-dom", page.as_uri())
    start = dumped.index('<pre id="out">') + len('<pre id="out">')
    got = json.loads(dumped[start:dumped.index("</pre>", start)].replace("&quot;", '"').replace("&amp;", "&"))
    labels = [b for b in got["boxes"] if "var_smoothing" in b["text"]]
    assert len(labels) == 2
    for box in got["boxes"]:
        assert box["x0"] >= 0 and box["x1"] <= got["width"], (box, got["width"])
