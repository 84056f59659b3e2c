"""The self-contained HTML timeline (nki_mlir/perf/html.py) on hand-built estimates:
one static track row per queue, no remote resources, the summary figures, escaping."""
import html
import json
import re

import pytest

from nki_mlir.errors import NKIError
from nki_mlir.perf.estimate import CriticalEntry, Estimate, PerfWarning, Slice, TrackStats
from nki_mlir.perf.html import render_html, write_html


def pipeline_estimate(tiles: int = 4, kernel: str = "toy_matmul") -> Estimate:
    """A hand-made tiled-matmul-like timeline: per tile two loads (dma0, dma1), a matmul
    (tensor), a PSUM copy (vector) and a store (dma2); times in ns, no overlaps per queue."""
    mm = "dst=128x512xf32@psum stationary=128x128xbf16@sbuf moving=128x512xbf16@sbuf"
    slices, t, idx = [], 0.0, 0
    free = {"dma0": 0.0, "dma1": 0.0, "dma2": 0.0, "tensor": 0.0, "vector": 0.0}

    def put(track, name, dur, ready, label, line, src, waited=None, nbytes=0, flops=0.0):
        nonlocal idx
        start = max(free[track], ready)
        s = Slice(track, name, start, start + dur, label, f"examples/kernels.py:{line}", src,
                  waited, sid=line, index=idx, bytes=nbytes, flops=flops)
        idx += 1
        free[track] = s.end_ns
        slices.append(s)
        return s

    for i in range(tiles):
        a = put("dma0", "nisa.dma_copy", 400.0, 1300.0 + 300 * i,
                "dst=128x128xbf16@sbuf src=128x128xbf16@hbm", 28,
                "nisa.dma_copy(dst=lhs, src=a_t[nl.ds(k * tk, tk), nl.ds(m * tm, tm)])",
                nbytes=32768)
        b = put("dma1", "nisa.dma_copy", 1500.0, 1300.0 + 300 * i,
                "dst=128x512xbf16@sbuf src=128x512xbf16@hbm", 29,
                "nisa.dma_copy(dst=rhs, src=b[nl.ds(k * tk, tk), nl.ds(n * tn, tn)])",
                nbytes=131072)
        m = put("tensor", "nisa.matmul", 366.0, max(a.end_ns, b.end_ns), mm, 30,
                "nisa.nc_matmul(dst=acc, stationary=lhs, moving=rhs)",
                "nisa.dma_copy @ examples/kernels.py:29 (dma1)", flops=2 * 128 * 128 * 512)
        c = put("vector", "nisa.tensor_copy", 550.0, m.end_ns,
                "dst=128x512xf32@sbuf src=128x512xf32@psum", 32,
                "nisa.tensor_copy(dst=res, src=acc)", "nisa.matmul @ examples/kernels.py:30 (tensor)")
        put("dma2", "nisa.dma_copy", 1800.0, c.end_ns + 1300.0,
            "dst=128x512xf32@hbm src=128x512xf32@sbuf", 33,
            "nisa.dma_copy(dst=out[nl.ds(m * tm, tm), nl.ds(n * tn, tn)], src=res)",
            "nisa.tensor_copy @ examples/kernels.py:32 (vector)", nbytes=262144)
        t = max(t, free["dma2"])
    latency = max(s.end_ns for s in slices)
    busy = {}
    for s in slices:
        busy[s.track] = busy.get(s.track, 0.0) + s.dur_ns
    tracks = [TrackStats(n, busy[n], busy[n] / latency * 100,
                         sum(1 for s in slices if s.track == n))
              for n in ("tensor", "vector", "dma0", "dma1", "dma2")]
    dma = [s for s in slices if s.track.startswith("dma")]
    nbytes = sum(s.bytes for s in dma)
    return Estimate(
        kernel=kernel, target="trn2", schedule="list", latency_ns=latency, tracks=tracks,
        dma_bytes=nbytes, hbm_bytes=nbytes, dma_count=len(dma), avg_dma_bytes=nbytes / len(dma),
        matmul_flops=tiles * 2 * 128 * 128 * 512, mfu_pct=4.25, mbu_pct=31.5,
        bound_ns=latency / 3.5, bound_kind="dma", bounds={"dma": latency / 3.5, "matmul": 300.0,
                                                          "hbm": latency / 5},
        ratio=3.5,
        critical_path=[CriticalEntry("nisa.dma_copy", "examples/kernels.py:29",
                                     "nisa.dma_copy(dst=rhs, src=b[...])", "dma1",
                                     1500.0 * tiles, tiles, 55.0)],
        warnings=[PerfWarning("idle_on_dma", "tensor idle 60% waiting on DMA",
                              "examples/kernels.py:30")],
        slices=slices, instructions=len(slices), notes=["hand-made estimate"])


def test_one_static_track_row_per_queue():
    est = pipeline_estimate()
    page = render_html(est)
    rows = re.findall(r'<div class="track" data-track="([^"]+)"', page)
    assert rows == ["tensor", "vector", "dma0", "dma1", "dma2"]
    assert page.count('class="track"') == 5
    assert page.count("<canvas class=\"lane\"") == 5


def test_no_remote_resources():
    est = pipeline_estimate()
    est.notes.append("see https://example.com/x and http://example.com/y")
    est.slices[0].source = 'x = load("//cdn.example.com/a.js")  # src="https://evil/"'
    page = render_html(est)
    assert "http://" not in page and "https://" not in page
    assert "src=" not in page.lower()
    assert not re.search(r"""(href|src|action)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "@import" not in page and "url(" not in page
    assert "<link" not in page and "<iframe" not in page and "<img" not in page
    # the escaped text still decodes to the source
    assert "see https://example.com/x" in html.unescape(page)


def test_summary_figures_appear():
    est = pipeline_estimate()
    page = render_html(est)
    text = html.unescape(re.sub(r"<[^>]+>", " ", page.split("<script")[0]))
    assert f"{est.latency_ns / 1e3:,.3f} µs" in text
    assert f"{est.bound_ns / 1e3:,.3f} µs" in text and "dma-bound" in text
    assert "3.50×" in text
    assert "4.2 %" in text or "4.3 %" in text   # MFU 4.25
    assert "31.5 %" in text                      # MBU
    assert "DMA bytes" in text and "avg" in text and "KiB" in text
    assert "idle_on_dma" in text and "tensor idle 60% waiting on DMA" in text
    assert "examples/kernels.py:29" in text.replace("&#47;", "/")
    assert "nisa.dma_copy(dst&#61;rhs" not in text   # unescaped for the reader
    for t in est.tracks:
        assert f"{t.busy_pct:.1f}" in text
    assert "toy_matmul" in text and "trn2" in text and "list" in text


def test_escaping_source_text_and_names():
    est = pipeline_estimate(kernel='k<b>&"q\'')
    evil = '</script><script>alert(1)</script> & "quoted" <!-- x'
    est.slices[0].source = evil
    est.slices[0].label = "dst=1x1xf32@sbuf </script>"
    est.critical_path[0].source = evil
    est.warnings[0].message = evil
    page = render_html(est)
    assert page.count("</script>") == 2          # the data block and the code block
    assert page.count("<script") == 2
    assert "k<b>" not in page and "alert(1)</" not in page
    assert "k&lt;b&gt;&amp;&quot;q&#x27;" in page
    m = re.search(r'<script type="application/json" id="nkim-data">(.*?)</script>', page, re.S)
    data = json.loads(m.group(1))
    assert data["kernel"] == 'k<b>&"q\''
    op = data["ops"][data["tracks"][2]["o"][0]]      # dma0's first slice
    assert op[4] == evil and op[2] == "dst=1x1xf32@sbuf </script>"
    assert html.unescape(page).count(evil) == 2      # critical path + warning, as text


def test_data_columns_sorted_and_complete():
    est = pipeline_estimate(tiles=6)
    page = render_html(est)
    m = re.search(r'id="nkim-data">(.*?)</script>', page, re.S)
    data = json.loads(m.group(1))
    assert sum(len(t["s"]) for t in data["tracks"]) == len(est.slices)
    for t in data["tracks"]:
        assert t["s"] == sorted(t["s"])
        assert all(e >= s for s, e in zip(t["s"], t["e"]))
        assert all(e <= s2 for e, s2 in zip(t["e"], t["s"][1:]))
    assert data["end_ns"] == pytest.approx(est.latency_ns)


def test_no_slices_kept():
    est = pipeline_estimate()
    est.slices = []
    page = render_html(est)
    assert len(re.findall(r'class="track" data-track=', page)) == 5
    assert "No slices were kept" in page


def test_write_html(tmp_path):
    est = pipeline_estimate()
    path = write_html(est, tmp_path / "out" / "t.html")
    assert path.read_text(encoding="utf-8") == render_html(est)
    with pytest.raises(NKIError, match="cannot write the HTML timeline"):
        write_html(est, tmp_path / "out")


def test_large_estimate_stays_compact():
    est = pipeline_estimate(tiles=20000)                # 100k slices
    page = render_html(est)
    assert page.count("<div") < 200                     # no DOM node per slice
    assert len(page) < 80 * len(est.slices)             # columnar data, shared op table
