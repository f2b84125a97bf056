"""Issue 38: every kind's `suite report` page in a real browser (Debian's headless chromium, installed by
tools/install-debian-packages.sh): its first screen (1280x800) holds the verdict and the headline figures.

Per kind, `suite report` on a committed result (tests/data; nothing is run), then ONE chromium call on a
probe copy of the page (the page forbids scripts by its CSP; the copy drops the CSP and adds a script
that writes, into the DOM, the bounding boxes of the verdict (#page-verdict) and of the headline figures
(#page-headline .figure), as suite/report/html.py marks them): --screenshot of the first screen and
--dump-dom. The screenshot must be a real page (not blank); the boxes must lie inside the first screen;
no word in a table is cut by a line break (a cell breaks at spaces, after "/" and after "-" only);
no table is wider than the page at 1280 px (issue 47: it fits, or the page shows it as a list).
Skipped when chromium is absent.
"""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import paths
from suite.kinds import registry

WIDTH_PX, HEIGHT_PX = 1280, 800
KV_LEAF = (paths.DATA / "v3" / "kv_cache_FarmGPU" / "open" / "FarmGPU" / "results" / "potato8-qlc-np6-open-tnf-70b"
           / "kv_cache" / "llama3.1-70b-instruct" / "run" / "20260709_215001")
PAGES = {                                    # kind -> a committed result of that kind
    "training": paths.DATA / "suite-run" / "unet3d-h100",
    "checkpointing": paths.DATA / "checkpoint" / "v3-llama3-8b-miniature",
    "kv_cache": KV_LEAF,
    "vector_database": paths.DATA / "v3" / "vector_database_TTA",
    "tpcx-ai": paths.DATA / "tpcxai-sf0.01",
    "mlperf-v3-tree": paths.DATA / "v3" / "tree",    # suite/published: the pooled layout's page of a v3.0 tree
}
PROBE = r"""<script>addEventListener('load', () => {
  const box = e => { const r = e.getBoundingClientRect();
                     return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, text: e.textContent}; };
  const v = document.getElementById('page-verdict'), h = document.getElementById('page-headline');
  const broken = [];      // pieces of words (split at spaces, after "/" and "-") that a line break cut in two
  for (const cell of document.querySelectorAll('td, th')) {
    const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      for (const m of n.data.matchAll(/[^\s\/-]+[\/-]?/g)) {
        const r = document.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
        const tops = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
        if (tops.size > 1 && broken.length < 10) broken.push(m[0]);
      }
    }
  }
  document.body.dataset.firstScreen = JSON.stringify({
    verdict: v && box(v), figures: h ? [...h.querySelectorAll('.figure')].map(box) : [],
    h1: box(document.querySelector('h1')), broken: broken, width: innerWidth, height: innerHeight,
    cut: [...document.querySelectorAll('.table-wrap')].filter(w => w.scrollWidth > w.clientWidth + 1)
         .map(w => [...w.querySelectorAll('th')].map(t => t.textContent).join('|').slice(0, 120)),
    overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth});
});</script></body>"""


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        pytest.skip("chromium is not installed (tools/install-debian-packages.sh)")
    return exe


def first_screen(page: Path, tmp_path: Path) -> tuple[Path, dict]:
    """The first screen of `page` as a PNG, and what the probe recorded of it."""
    exe = chromium()
    probe = page.with_name("probe.html")
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page.read_text())
    probe.write_text(text.replace("</body>", PROBE, 1))
    shot = tmp_path / "first-screen.png"
    done = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update", "--disable-sync",
                           f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={WIDTH_PX},{HEIGHT_PX}",
                           f"--screenshot={shot}", "--dump-dom", probe.as_uri()],
                          capture_output=True, text=True, timeout=120)
    found = re.search(r'data-first-screen="([^"]*)"', done.stdout)
    assert done.returncode == 0 and found, (done.returncode, done.stderr[-2000:])
    import html

    return shot, json.loads(html.unescape(found.group(1)))


def assert_not_blank(shot: Path):
    from PIL import Image, ImageStat

    with Image.open(shot) as im:
        assert im.size == (WIDTH_PX, HEIGHT_PX)
        rgb = im.convert("RGB")
        colours = rgb.resize((320, 200)).getcolors(maxcolors=1 << 20)
        assert len(colours) > 50                          # text, cards, a header; a blank page has a handful
        assert max(ImageStat.Stat(rgb.convert("L")).stddev) > 20   # not one flat colour


def test_every_kind_has_a_page_here():
    pages = [*registry.KINDS, *(x for x in registry.LAYOUTS if x.report_page is not None)]
    assert {k.name for k in pages} == set(PAGES)     # and every layout with a page of its own (benchdirs: its kinds')


@pytest.mark.timeout(240)
@pytest.mark.parametrize("kind", sorted(PAGES))
def test_the_first_screen_holds_the_verdict_and_the_headline_figures(kind, run_cli, tmp_path):
    out = tmp_path / "rep"
    code, _, err = run_cli("report", PAGES[kind], "--out", out)
    assert code == 0, err
    shot, seen = first_screen(out / "index.html", tmp_path)
    assert_not_blank(shot)
    # the window is 1280x800; the viewport inside it (what a person sees of the page) is what counts
    assert seen["width"] == WIDTH_PX and 0 < seen["height"] <= HEIGHT_PX and seen["overflow"] <= 0, seen
    screen = seen["height"]
    assert seen["broken"] == [], (kind, "words broken across lines", seen["broken"])   # issue 38: "invali d"
    assert seen["cut"] == [], (kind, "tables wider than the page at 1280 px (issue 47)", seen["cut"])
    v = seen["verdict"]
    assert v is not None, f"{kind}: no #page-verdict on the page"
    said = re.search(r"verdict: (CLOSED|OPEN|INVALID)", v["text"])
    assert said, (kind, v["text"])
    assert 0 <= v["top"] and v["bottom"] <= screen, (kind, "verdict below the first screen", screen, v)
    if said.group(1) != "CLOSED":                         # the title says it too
        assert said.group(1) in seen["h1"]["text"], (kind, seen["h1"]["text"])
    figures = seen["figures"]
    assert figures, f"{kind}: no headline figures (#page-headline .figure)"
    for f in figures:
        assert f["bottom"] <= screen and f["right"] <= WIDTH_PX, (kind, "headline figure off the first screen", screen, f)
        assert f["text"].strip(), (kind, f)
