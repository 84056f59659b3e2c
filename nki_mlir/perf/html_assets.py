"""The inline stylesheet and script of the HTML timeline page (:mod:`.html`): the script
draws the slices of the embedded JSON into one canvas per queue (binary search for the
visible ones; hover, zoom, pan) and marks the DOM when drawn (``data-drawn`` /
``data-ready``)."""

CSS = r"""
*{box-sizing:border-box}
html,body{margin:0;padding:0}
body{font:13px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif;
 background:#eef0f3;color:#1d2330}
header{background:#1f2633;color:#f3f5f8;padding:10px 18px;display:flex;align-items:baseline;
 gap:14px;flex-wrap:wrap}
header h1{font-size:18px;margin:0;font-weight:600}
header .chip{background:#334056;border-radius:10px;padding:1px 9px;font-size:12px;color:#d8e0ec}
header .est{margin-left:auto;color:#aab4c3;font-size:12px}
main{padding:10px 14px 24px}
.cards{display:grid;grid-template-columns:repeat(7,minmax(0,1fr));gap:8px;margin-bottom:10px}
.card{background:#fff;border-radius:6px;padding:7px 11px;border:1px solid #d9dde4}
.card .ct{font-size:11px;text-transform:uppercase;letter-spacing:.04em;color:#667085}
.card .cv{font-size:20px;font-weight:600;white-space:nowrap}
.card .sub{font-size:11.5px;color:#5b6474;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.card.main .cv{color:#1a5fb4}
.card.warn .cv{color:#b54708}
.panel{background:#fff;border:1px solid #d9dde4;border-radius:6px;padding:8px 12px;
 margin-bottom:10px}
.panel h2{font-size:13px;margin:8px 0 6px;color:#344054}
.panel h2:first-child{margin-top:2px}
.toolbar{display:flex;align-items:center;gap:8px;padding:2px 0 6px}
.toolbar button{font:inherit;border:1px solid #c4cad4;background:#f6f7f9;border-radius:4px;
 padding:0 9px;cursor:pointer;min-width:28px}
.toolbar button:hover{background:#e6eaf0}
.muted{color:#667085}
.hint{margin-left:auto;font-size:11.5px}
.axisrow,.track{display:flex;align-items:stretch}
.tlabel{flex:0 0 132px;width:132px;display:flex;align-items:center;gap:6px;padding:0 8px;
 font-weight:600;font-size:12.5px;border-right:1px solid #d9dde4;background:#f8f9fb;
 white-space:nowrap;overflow:hidden}
.tlabel .tn{overflow:hidden;text-overflow:ellipsis}
.tlabel .tb{margin-left:auto;font-weight:400;color:#667085;font-size:11.5px}
.axislabel{color:#98a2b3;font-weight:400;background:#fff}
#axis{flex:1 1 auto;height:24px;min-width:0;display:block}
.track{height:34px;border-top:1px solid #edf0f3}
.track:nth-child(odd) .lane{background:#fcfcfd}
.track .lane{flex:1 1 auto;height:33px;min-width:0;display:block;cursor:grab}
.track .lane.drag{cursor:grabbing}
.track[data-kind=dma]{height:27px}
.track[data-kind=dma] .lane{height:26px}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;flex:0 0 10px}
.k-tensor{background:hsl(145,52%,40%)}.k-vector{background:hsl(214,66%,50%)}
.k-scalar{background:hsl(32,85%,50%)}.k-gpsimd{background:hsl(275,45%,54%)}
.k-dma{background:hsl(186,55%,38%)}.k-program,.k-other{background:hsl(220,9%,55%)}
.empty{padding:10px;color:#667085}
.details{display:grid;grid-template-columns:minmax(0,5fr) minmax(0,7fr);gap:10px}
table{border-collapse:collapse;width:100%;font-size:12.5px}
th{text-align:left;font-weight:600;color:#475467;border-bottom:1px solid #d0d5dd;padding:3px 6px}
td{border-bottom:1px solid #eef0f3;padding:3px 6px;vertical-align:top;white-space:nowrap}
td:last-child{white-space:normal}
th{white-space:nowrap}
td code{font:12px/1.35 ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;color:#1d2939;
 background:#f2f4f7;padding:0 4px;border-radius:3px;white-space:pre-wrap;word-break:break-all}
.loc{color:#475467;font-size:11.5px;margin-right:6px;white-space:nowrap}
.bar{position:relative;background:#eef0f3;border-radius:3px;height:16px;min-width:120px}
.bar .fill{position:absolute;left:0;top:0;bottom:0;border-radius:3px;opacity:.45}
.bar span{position:relative;padding-left:6px;font-size:11.5px;line-height:16px}
.tag{display:inline-block;font-size:11px;border-radius:8px;padding:0 7px;background:#e0eaff;
 color:#1849a9}
.tag.w{background:#fef0c7;color:#93370d}
.warnings,.notes{margin:0;padding-left:18px}
.warnings li,.notes li{margin:2px 0}
#tip{position:fixed;display:none;z-index:10;max-width:560px;background:#1f2633;color:#f3f5f8;
 border-radius:6px;padding:8px 10px;font-size:12px;box-shadow:0 4px 14px rgba(0,0,0,.25);
 pointer-events:none}
#tip .tt{font-weight:600;font-size:13px;margin-bottom:3px}
#tip .row{display:flex;gap:8px}
#tip .k{color:#98a2b3;flex:0 0 74px}
#tip .v{word-break:break-all}
#tip code{font:11.5px ui-monospace,"DejaVu Sans Mono",Menlo,monospace;color:#fde68a}
footer{color:#667085;font-size:11.5px;padding:0 16px 14px}
"""

JS = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("nkim-data").textContent);
  var HUE = {tensor: [145, 52, 40], vector: [214, 66, 50], scalar: [32, 85, 50],
             gpsimd: [275, 45, 54], dma: [186, 55, 38]};
  var OTHER = [220, 9, 55];
  var byName = {};
  D.tracks.forEach(function (t) { byName[t.name] = t; });
  var END = D.end_ns > 0 ? D.end_ns : 1;
  var v0 = 0, v1 = END * 1.01;
  var MIN_SPAN = 0.5;
  var dpr = window.devicePixelRatio || 1;
  var axis = document.getElementById("axis");
  var rangeEl = document.getElementById("range");
  var tip = document.getElementById("tip");
  var lanes = [];
  var colorCache = {};
  var hover = null;

  Array.prototype.forEach.call(document.querySelectorAll("#tracks .track"), function (row) {
    var name = row.getAttribute("data-track");
    var t = byName[name] || {name: name, kind: "other", s: [], e: [], o: [], w: [], i: []};
    lanes.push({row: row, canvas: row.querySelector("canvas"), t: t, w: 0, h: 0});
  });

  function color(kind, op, light) {
    var key = kind + ":" + op + (light ? "L" : "");
    var c = colorCache[key];
    if (!c) {
      var h = HUE[kind] || OTHER;
      var l = h[2] + ((op * 7) % 5 - 2) * 4 + (light ? 18 : 0);
      c = colorCache[key] = "hsl(" + h[0] + "," + h[1] + "%," + l + "%)";
    }
    return c;
  }

  function lowerBound(arr, x) {  // first index with arr[i] >= x
    var lo = 0, hi = arr.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (arr[mid] < x) lo = mid + 1; else hi = mid; }
    return lo;
  }

  function niceStep(raw) {
    var p = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10)), m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
  }

  function fmtTime(ns, step) {
    if (step >= 1e6) {
      var dm = Math.max(0, -Math.floor(Math.log(step / 1e6) / Math.LN10 + 1e-9));
      return (ns / 1e6).toFixed(Math.min(dm, 6)) + " ms";
    }
    if (step >= 1000 || Math.abs(ns) >= 10000) {
      var d = step >= 1000 ? Math.max(0, -Math.floor(Math.log(step / 1000) / Math.LN10 + 1e-9)) : 3;
      return (ns / 1000).toFixed(Math.min(d, 6)) + " \u00b5s";
    }
    var dn = Math.max(0, -Math.floor(Math.log(step) / Math.LN10 + 1e-9));
    return ns.toFixed(Math.min(dn, 3)) + " ns";
  }

  function fmtUs(ns) {
    return ns === 0 ? "0 \u00b5s" : (ns / 1000).toFixed(Math.abs(ns) < 10 ? 5 : 3) + " \u00b5s";
  }

  function ticks(width) {
    var step = niceStep((v1 - v0) / Math.max(1, width / 110));
    var out = [];
    for (var t = Math.ceil(v0 / step) * step; t <= v1; t += step) out.push(t);
    return {step: step, list: out};
  }

  function sizeCanvas(c) {
    var w = c.clientWidth, h = c.clientHeight;
    if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) {
      c.width = Math.round(w * dpr); c.height = Math.round(h * dpr);
    }
    var ctx = c.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return {ctx: ctx, w: w, h: h};
  }

  function drawAxis() {
    var g = sizeCanvas(axis), ctx = g.ctx;
    ctx.clearRect(0, 0, g.w, g.h);
    ctx.fillStyle = "#ffffff"; ctx.fillRect(0, 0, g.w, g.h);
    var k = g.w / (v1 - v0), tk = ticks(g.w);
    ctx.strokeStyle = "#98a2b3"; ctx.fillStyle = "#344054";
    ctx.font = "11px system-ui, 'DejaVu Sans', sans-serif"; ctx.textBaseline = "middle";
    ctx.beginPath();
    tk.list.forEach(function (t) {
      var x = Math.round((t - v0) * k) + 0.5;
      ctx.moveTo(x, g.h - 7); ctx.lineTo(x, g.h);
      ctx.fillText(fmtTime(t, tk.step), x + 3, g.h / 2 - 2);
    });
    ctx.moveTo(0, g.h - 0.5); ctx.lineTo(g.w, g.h - 0.5);
    ctx.stroke();
    var xe = (END - v0) * k;
    if (xe >= 0 && xe <= g.w) {
      ctx.fillStyle = "#d92d20"; ctx.fillRect(Math.round(xe) - 1, 0, 2, g.h);
    }
    rangeEl.textContent = "view " + fmtUs(Math.max(v0, 0)) + " \u2013 " + fmtUs(v1) +
      "  \u00b7  estimated end " + fmtUs(END);
    return tk;
  }

  function drawLane(lane, tk) {
    var g = sizeCanvas(lane.canvas), ctx = g.ctx, t = lane.t;
    lane.w = g.w; lane.h = g.h;
    ctx.clearRect(0, 0, g.w, g.h);
    var k = g.w / (v1 - v0);
    ctx.strokeStyle = "#eaecf0"; ctx.beginPath();
    tk.list.forEach(function (tt) {
      var x = Math.round((tt - v0) * k) + 0.5; ctx.moveTo(x, 0); ctx.lineTo(x, g.h);
    });
    ctx.stroke();
    var xe = (END - v0) * k;
    if (xe >= 0 && xe <= g.w) { ctx.fillStyle = "rgba(217,45,32,.35)"; ctx.fillRect(Math.round(xe), 0, 1, g.h); }
    var s = t.s, e = t.e, o = t.o, n = s.length, kind = t.kind;
    var y = 3, h = g.h - 6, count = 0;
    // Slices narrower than 1.5 px add their width to a per-pixel occupancy column (drawn
    // as a utilisation bar: full height = busy the whole pixel); wider ones are rectangles.
    var W = Math.ceil(g.w) + 2;
    if (!lane.occ || lane.occ.length !== W) lane.occ = new Float32Array(W); else lane.occ.fill(0);
    var occ = lane.occ, anyOcc = false, labels = [];
    for (var j = lowerBound(e, v0); j < n && s[j] <= v1; j++) {
      count++;
      var x0 = (s[j] - v0) * k, x1 = (e[j] - v0) * k;
      if (x1 - x0 < 1.5) {
        if (x1 < 0 || x0 > g.w) continue;
        if (x1 - x0 < 1e-6) x1 = x0 + 1e-6;  // zero-length instructions stay visible (1 px)
        var c0 = Math.max(0, Math.floor(x0)), c1 = Math.min(W - 1, Math.floor(x1));
        for (var c = c0; c <= c1; c++) occ[c] += Math.min(x1, c + 1) - Math.max(x0, c);
        anyOcc = true;
        continue;
      }
      if (x0 < -2) x0 = -2;
      if (x1 > g.w + 2) x1 = g.w + 2;
      ctx.fillStyle = color(kind, o[j], false);
      ctx.fillRect(x0, y, x1 - x0 >= 4 ? x1 - x0 - 1 : x1 - x0, h);  // 1 px gap when wide
      if (x1 - x0 > 30) labels.push(j);
    }
    if (anyOcc) {
      var hb = HUE[kind] || OTHER;
      ctx.fillStyle = "hsl(" + hb[0] + "," + hb[1] + "%," + hb[2] + "%)";
      for (var q = 0; q < W; q++) {
        if (occ[q] <= 0) continue;
        var f = occ[q] >= 1 ? 1 : occ[q], hh = Math.max(1, Math.round(h * f));
        ctx.fillRect(q, y + h - hh, 1, hh);
      }
    }
    ctx.font = "11px system-ui, 'DejaVu Sans', sans-serif"; ctx.textBaseline = "middle";
    ctx.fillStyle = "#ffffff";
    labels.forEach(function (j) {
      var x0 = Math.max((s[j] - v0) * k, 0), x1 = Math.min((e[j] - v0) * k, g.w);
      var text = D.ops[o[j]][0], room = x1 - x0 - 8;
      if (room < 14) return;
      if (ctx.measureText(text).width > room) text = D.ops[o[j]][1];  // op name only
      if (ctx.measureText(text).width > room) {
        var lo = 0, hi = text.length;
        while (lo < hi) {
          var mid = (lo + hi + 1) >> 1;
          if (ctx.measureText(text.slice(0, mid) + "\u2026").width <= room) lo = mid; else hi = mid - 1;
        }
        if (lo === 0) return;
        text = text.slice(0, lo) + "\u2026";
      }
      ctx.fillText(text, x0 + 4, y + h / 2 + 0.5);
    });
    if (hover && hover.lane === lane) {
      var hx0 = (s[hover.j] - v0) * k, hx1 = Math.max((e[hover.j] - v0) * k, hx0 + 1);
      ctx.strokeStyle = "#101828"; ctx.lineWidth = 2;
      ctx.strokeRect(hx0, y - 1, hx1 - hx0, h + 2); ctx.lineWidth = 1;
    }
    lane.canvas.setAttribute("data-drawn", String(count));
    return count;
  }

  var pending = false;
  function draw() {
    pending = false;
    var tk = drawAxis(), total = 0;
    lanes.forEach(function (l) { total += drawLane(l, tk); });
    document.body.setAttribute("data-drawn", String(total));
  }
  function drawIfPending() { if (pending) draw(); }
  function schedule() {  // one redraw per frame; the timer covers hosts without frames
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(drawIfPending);
    window.setTimeout(drawIfPending, 40);
  }

  function clampView() {
    var span = v1 - v0, full = END * 1.01;
    if (span < MIN_SPAN) { var mid = (v0 + v1) / 2; v0 = mid - MIN_SPAN / 2; v1 = mid + MIN_SPAN / 2; span = MIN_SPAN; }
    if (span > full * 4) { v0 = -full * 1.5; v1 = full * 2.5; span = v1 - v0; }
    if (v1 < full * 0.02) { v1 = full * 0.02; v0 = v1 - span; }
    if (v0 > full * 0.98) { v0 = full * 0.98; v1 = v0 + span; }
  }
  function zoomAt(tm, factor) {
    v0 = tm - (tm - v0) * factor; v1 = tm + (v1 - tm) * factor; clampView(); schedule();
  }
  function fit() { v0 = 0; v1 = END * 1.01; schedule(); }
  function pan(frac) { var d = (v1 - v0) * frac; v0 += d; v1 += d; clampView(); schedule(); }

  function laneTime(lane, clientX) {
    var r = lane.canvas.getBoundingClientRect();
    return v0 + (clientX - r.left) / r.width * (v1 - v0);
  }

  function pick(lane, clientX) {
    var t = lane.t, r = lane.canvas.getBoundingClientRect();
    if (!t.s.length || r.width <= 0) return -1;
    var per = (v1 - v0) / r.width, tm = laneTime(lane, clientX), tol = 3 * per;
    var j = lowerBound(t.e, tm - tol), best = -1, bestD = Infinity;
    for (var q = j; q < t.s.length && t.s[q] <= tm + tol; q++) {
      var d = tm < t.s[q] ? t.s[q] - tm : tm > t.e[q] ? tm - t.e[q] : 0;
      if (d < bestD) { bestD = d; best = q; }
      if (d === 0) break;
    }
    return best;
  }

  function row(parent, key, value, code) {
    var r = document.createElement("div"); r.className = "row";
    var a = document.createElement("span"); a.className = "k"; a.textContent = key;
    var b = document.createElement(code ? "code" : "span"); b.className = "v"; b.textContent = value;
    r.appendChild(a); r.appendChild(b); parent.appendChild(r);
  }

  function showTip(lane, j, ev) {
    var t = lane.t, op = D.ops[t.o[j]];
    while (tip.firstChild) tip.removeChild(tip.firstChild);
    var title = document.createElement("div"); title.className = "tt";
    title.textContent = op[0]; tip.appendChild(title);
    row(tip, "queue", t.name + "  (instance #" + t.i[j] + ")");
    row(tip, "start", fmtUs(t.s[j]));
    row(tip, "duration", fmtUs(t.e[j] - t.s[j]));
    if (op[2]) row(tip, "operands", op[2], true);
    row(tip, "source", op[3] || "unknown");
    if (op[4]) row(tip, "line", op[4], true);
    row(tip, "waited on", t.w[j] >= 0 ? D.waits[t.w[j]] : "\u2014 (queue order)");
    if (op[5]) row(tip, "bytes", String(op[5]));
    if (op[6]) row(tip, "FLOPs", String(op[6]));
    tip.style.display = "block";
    var W = window.innerWidth, H = window.innerHeight, tw = tip.offsetWidth, th = tip.offsetHeight;
    var x = ev.clientX + 14, y = ev.clientY + 16;
    if (x + tw > W - 4) x = Math.max(4, ev.clientX - tw - 14);
    if (y + th > H - 4) y = Math.max(4, ev.clientY - th - 12);
    tip.style.left = x + "px"; tip.style.top = y + "px";
  }
  function hideTip() {
    tip.style.display = "none";
    if (hover) { hover = null; schedule(); }
  }

  var drag = null;
  lanes.forEach(function (lane) {
    var c = lane.canvas;
    c.addEventListener("mousemove", function (ev) {
      if (drag) return;
      var j = pick(lane, ev.clientX);
      if (j < 0) { hideTip(); return; }
      if (!hover || hover.lane !== lane || hover.j !== j) { hover = {lane: lane, j: j}; schedule(); }
      showTip(lane, j, ev);
    });
    c.addEventListener("mouseleave", hideTip);
    c.addEventListener("mousedown", function (ev) {
      if (ev.button !== 0) return;
      var r = c.getBoundingClientRect();
      drag = {x: ev.clientX, v0: v0, v1: v1, w: r.width, el: c};
      c.classList.add("drag"); hideTip(); ev.preventDefault();
    });
    c.addEventListener("dblclick", fit);
  });
  window.addEventListener("mousemove", function (ev) {
    if (!drag) return;
    var dt = (ev.clientX - drag.x) / drag.w * (drag.v1 - drag.v0);
    v0 = drag.v0 - dt; v1 = drag.v1 - dt; clampView(); schedule();
  });
  window.addEventListener("mouseup", function () {
    if (drag) { drag.el.classList.remove("drag"); drag = null; }
  });
  var tl = document.getElementById("timeline");
  tl.addEventListener("wheel", function (ev) {
    var lane = lanes[0]; if (!lane) return;
    ev.preventDefault();
    if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
      pan((ev.deltaX || ev.deltaY) / 800); return;
    }
    var tm = laneTime(lane, ev.clientX);
    if (tm < v0 || tm > v1) tm = (v0 + v1) / 2;
    zoomAt(tm, Math.exp(ev.deltaY * 0.0015));
  }, {passive: false});
  axis.addEventListener("dblclick", fit);
  document.getElementById("zin").addEventListener("click", function () { zoomAt((v0 + v1) / 2, 0.5); });
  document.getElementById("zout").addEventListener("click", function () { zoomAt((v0 + v1) / 2, 2); });
  document.getElementById("zfit").addEventListener("click", fit);
  window.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.target && /INPUT|TEXTAREA/.test(ev.target.tagName)) return;
    var key = ev.key.toLowerCase();
    if (key === "w" || key === "+" || key === "=") zoomAt((v0 + v1) / 2, 0.7);
    else if (key === "s" || key === "-") zoomAt((v0 + v1) / 2, 1 / 0.7);
    else if (key === "a") pan(-0.2);
    else if (key === "d") pan(0.2);
    else if (key === "0") fit();
  });
  window.addEventListener("resize", schedule);

  // #hover=<track>,<slice index>: show that slice's tooltip on load (tests, links)
  function hoverFromHash() {
    var m = /^#hover=([^,]+),([0-9]+)$/.exec(window.location.hash || "");
    if (!m) return;
    var name = decodeURIComponent(m[1]), j = parseInt(m[2], 10);
    lanes.forEach(function (lane) {
      if (lane.t.name !== name || j >= lane.t.s.length) return;
      var r = lane.canvas.getBoundingClientRect();
      var x = r.left + ((lane.t.s[j] + lane.t.e[j]) / 2 - v0) / (v1 - v0) * r.width;
      hover = {lane: lane, j: j};
      showTip(lane, j, {clientX: x, clientY: r.top + r.height / 2});
      draw();
    });
  }

  var t0 = (window.performance || Date).now();
  draw();
  document.body.setAttribute("data-draw-ms", ((window.performance || Date).now() - t0).toFixed(1));
  hoverFromHash();
  window.addEventListener("hashchange", hoverFromHash);
  document.body.setAttribute("data-ready", "1");
})();
"""
