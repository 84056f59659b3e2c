"""The HTML timeline of the tiled matmul opened in headless Chromium: a screenshot and the
DOM after the page's script ran (one ``.track`` row per engine queue, slices drawn).

Needs Debian's ``chromium`` package.  Under CI (``CI`` set) the fixture installs it with
apt-get when missing; elsewhere the test skips with that reason.
"""
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from nki_mlir.perf.html import render_html, write_html
from nki_mlir.perf.trace import ordered_tracks

ROOT = Path(__file__).resolve().parents[2]
WINDOW = (1600, 1000)
SKIP_REASON = "chromium (Debian package 'chromium') is not installed; CI installs it"


def _apt_install() -> None:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "--no-install-recommends", "chromium"]
    if subprocess.run(cmd, env=env, capture_output=True, timeout=600).returncode != 0:
        subprocess.run(["apt-get", "update"], env=env, capture_output=True, timeout=600)
        subprocess.run(cmd, env=env, capture_output=True, timeout=600)


@pytest.fixture(scope="module")
def chromium():
    exe = shutil.which("chromium")
    if exe is None and os.environ.get("CI") and shutil.which("apt-get"):
        try:
            _apt_install()
        except (OSError, subprocess.SubprocessError):
            pass
        exe = shutil.which("chromium")
    if exe is None:
        pytest.skip(SKIP_REASON)
    return exe


def _matmul_estimate():
    """The cost model's estimate of examples/kernels.py::tiled_matmul on bf16 [256, 256] and
    [256, 512] (2 x 1 output tiles, 2 K steps)."""
    import ml_dtypes

    import nki_mlir
    from nki_mlir.perf import estimate
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from kernels import tiled_matmul
    finally:
        sys.path.remove(str(ROOT / "examples"))
    a_t = np.ones((256, 256), dtype=ml_dtypes.bfloat16)
    b = np.ones((256, 512), dtype=ml_dtypes.bfloat16)
    return estimate(nki_mlir.compile(tiled_matmul, a_t, b))


def _run(exe: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", f"--user-data-dir={profile}",
           f"--window-size={WINDOW[0]},{WINDOW[1]}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


class _Dom(HTMLParser):
    """Collects the attributes of ``<body>``, the ``.track`` rows and their canvases, and
    the text of the tooltip ``#tip``."""

    def __init__(self):
        super().__init__()
        self.body: dict = {}
        self.tracks: list[dict] = []
        self.canvases: list[dict] = []
        self.tip: dict = {}
        self.tip_text: list[str] = []
        self._tip_depth = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if self._tip_depth and tag == "div":
            self._tip_depth += 1
        if tag == "body":
            self.body = a
        elif tag == "div" and "track" in classes:
            self.tracks.append(a)
        elif tag == "canvas" and "lane" in classes:
            self.canvases.append(a)
        elif tag == "div" and a.get("id") == "tip":
            self.tip, self._tip_depth = a, 1

    def handle_endtag(self, tag):
        if self._tip_depth and tag == "div":
            self._tip_depth -= 1

    def handle_data(self, data):
        if self._tip_depth:
            self.tip_text.append(data)


@pytest.fixture(scope="module")
def rendered(chromium, tmp_path_factory):
    est = _matmul_estimate()
    tmp = tmp_path_factory.mktemp("timeline")
    page = write_html(est, tmp / "tiled_matmul.html")
    shot = tmp / "timeline.png"
    r = _run(chromium, tmp / "profile-shot", f"--screenshot={shot}", page.as_uri())
    assert shot.exists(), f"no screenshot: rc={r.returncode}\n{r.stderr[-2000:]}"
    # the page shows the tooltip of the slice named in #hover=<track>,<index> on load
    dom = _run(chromium, tmp / "profile-dom", "--dump-dom", page.as_uri() + "#hover=tensor,0")
    assert dom.returncode == 0, dom.stderr[-2000:]
    try:
        shutil.copyfile(shot, "/tmp/nki_timeline.png")
    except OSError:
        pass
    print(f"timeline screenshot: {shot} (copied to /tmp/nki_timeline.png); page: {page}")
    return est, shot, dom.stdout


def _png_chunks(data: bytes):
    pos = 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        yield kind, data[pos + 8:pos + 8 + length]
        pos += 12 + length


def test_screenshot_is_a_drawn_png(rendered):
    _, shot, _ = rendered
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks = list(_png_chunks(data))
    assert chunks[0][0] == b"IHDR"
    width, height = struct.unpack(">II", chunks[0][1][:8])
    assert (width, height) == WINDOW
    assert len(data) > 20_000                          # a blank page compresses to ~few KB
    raw = zlib.decompress(b"".join(c for k, c in chunks if k == b"IDAT"))
    assert len(set(raw[::61])) > 32                    # many distinct pixel values


def test_dom_has_one_drawn_track_per_queue(rendered):
    est, _, dom_text = rendered
    dom = _Dom()
    dom.feed(dom_text)
    assert dom.body.get("data-ready") == "1"           # the script ran to the end
    names = [t.get("data-track") for t in dom.tracks]
    expected = ordered_tracks(est)
    assert names == expected
    assert len(names) == len(set(names))
    assert {"tensor", "vector"} <= set(names)
    assert any(n.startswith("dma") for n in names)
    assert len(dom.canvases) == len(names)
    drawn = [int(c.get("data-drawn", -1)) for c in dom.canvases]
    per_track = [sum(1 for s in est.slices if s.track == n) for n in names]
    assert drawn == per_track                          # the fitted view shows every slice
    assert sum(drawn) == len(est.slices) > 0
    assert int(dom.body.get("data-drawn")) == len(est.slices)


def test_tooltip_shows_the_slice_details(rendered):
    est, _, dom_text = rendered
    dom = _Dom()
    dom.feed(dom_text)
    mm = min((s for s in est.slices if s.track == "tensor"), key=lambda s: s.start_ns)
    text = " ".join(dom.tip_text)
    assert "display: block" in dom.tip.get("style", "")
    assert text.startswith("matmul ")
    assert mm.label in text and mm.loc in text and mm.source in text
    assert f"{mm.start_ns / 1e3:.3f} µs" in text and f"{mm.dur_ns / 1e3:.3f} µs" in text
    assert (mm.waited_on or "queue order") in text


# Test-only script appended to the page: a wheel zoom at the middle of the first lane, a drag
# by half the lane width to the right, then the "0" key (fit); it records body data-drawn
# and the view range text after each step in body data-test.
_INTERACT = """<script>
(function () {
  var c = document.querySelector("#tracks .track canvas"), r = c.getBoundingClientRect();
  var x = r.left + r.width / 2, y = r.top + 5, rec = [];
  function state() {
    rec.push(document.body.getAttribute("data-drawn") + ";" +
             document.getElementById("range").textContent);
    document.body.setAttribute("data-test", rec.join("|"));
  }
  state();
  c.dispatchEvent(new WheelEvent("wheel", {deltaY: -1200, clientX: x, clientY: y,
                                            bubbles: true, cancelable: true}));
  setTimeout(function () {
    state();
    c.dispatchEvent(new MouseEvent("mousedown", {clientX: x, clientY: y, button: 0, bubbles: true}));
    window.dispatchEvent(new MouseEvent("mousemove", {clientX: x + r.width / 2, clientY: y}));
    window.dispatchEvent(new MouseEvent("mouseup", {clientX: x + r.width / 2, clientY: y}));
    setTimeout(function () {
      state();
      window.dispatchEvent(new KeyboardEvent("keydown", {key: "0"}));
      setTimeout(state, 100);
    }, 100);
  }, 100);
})();
</script>"""


def test_wheel_zoom_drag_pan_and_fit(rendered, chromium, tmp_path):
    est, _, _ = rendered
    page = tmp_path / "interact.html"
    page.write_text(render_html(est).replace("</body>", _INTERACT + "</body>"), encoding="utf-8")
    r = _run(chromium, tmp_path / "profile", "--virtual-time-budget=5000", "--dump-dom",
             page.as_uri())
    dom = _Dom()
    dom.feed(r.stdout)
    steps = dom.body.get("data-test", "").split("|")
    assert len(steps) == 4, (steps, r.stderr[-2000:])
    views = []
    for step in steps:
        drawn, text = step.split(";", 1)
        lo, hi = (float(v) for v in re.findall(r"([0-9.]+) µs", text)[:2])
        views.append((int(drawn), lo, hi))
    (n0, a0, b0), (n1, a1, b1), (n2, a2, b2), (n3, a3, b3) = views
    assert n0 == n3 == len(est.slices) and (a0, b0) == (a3, b3) == (0.0, b0)
    assert n1 < n0                                              # zoomed in: fewer in view
    assert b1 - a1 == pytest.approx((b0 - a0) * math.exp(-1.8), rel=0.01)
    assert (a1 + b1) / 2 == pytest.approx((a0 + b0) / 2, rel=0.01)   # about the mouse
    assert b2 - a2 == pytest.approx(b1 - a1, rel=0.01)           # drag keeps the span
    assert a1 - a2 == pytest.approx((b1 - a1) / 2, rel=0.02)     # moved by half a view
