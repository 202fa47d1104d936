"use strict";
(function () {
  // The partitions' detail: compact JSON, gzipped, in base64.
  var packed = JSON.parse(document.getElementById("klog-data").textContent);
  var bin = Uint8Array.from(atob(packed), function (c) { return c.charCodeAt(0); });
  new Response(new Blob([bin]).stream().pipeThrough(new DecompressionStream("gzip"))).text().then(function (t) {
    start(JSON.parse(t));
  }, function (e) {
    document.getElementById("parts-more").textContent = "this browser cannot read the partitions' detail: " + e;
  });
})();

function start(D) {
  var SVG = "http://www.w3.org/2000/svg";
  var MAX_ROWS = 2000;
  var W = 960, LEFT = 70, BASE = 170, TOP = 10;
  var tbody = document.querySelector("#parts tbody");
  var more = document.getElementById("parts-more");
  var filter = document.getElementById("filter");

  function human(n) {
    if (n < 1024) return String(n);
    var u = "KMGTPE", i = -1, v = n;
    while (v >= 1024 && i < 5) { v /= 1024; i++; }
    return n + " (" + v.toFixed(1) + " " + u[i] + "iB)";
  }
  function iso(ms) { return ms < 0 ? "-" : new Date(ms).toISOString(); }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function sv(tag, attrs, title) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (title !== undefined) { var t = document.createElementNS(SVG, "title"); t.textContent = title; e.appendChild(t); }
    return e;
  }
  function chart(id, label) {
    var s = sv("svg", { id: id, viewBox: "0 0 " + W + " 200", width: W, height: 200, role: "img", "aria-label": label });
    s.appendChild(sv("line", { "class": "axis", x1: LEFT, y1: BASE, x2: W - 10, y2: BASE }));
    var t = sv("text", { x: LEFT, y: 196 }); t.textContent = label; s.appendChild(t);
    return s;
  }
  function text(s, x, y, str) { var t = sv("text", { x: x, y: y }); t.textContent = str; s.appendChild(t); }
  function name(p) { return D.t[p[0]] + "-" + p[1]; }
  function deletable(p) {
    var n = 0;
    p[11].forEach(function (r) { if (r[1]) n += r[5]; });
    return n;
  }

  // Segments on a time axis: each segment a box from its smallest to its
  // largest batch timestamp, its height its size; the active one marked.
  function segmentChart(p, i) {
    var segs = p[9];
    var s = chart("seg-chart-" + i, "segments on a time axis (x: min to max timestamp, height: size; orange: active)");
    var lo = Infinity, hi = -Infinity, top = 1;
    segs.forEach(function (g) { if (g[4] >= 0) { lo = Math.min(lo, g[4]); hi = Math.max(hi, g[5]); } top = Math.max(top, g[2]); });
    if (lo === Infinity) { lo = 0; hi = 1; }
    if (hi <= lo) hi = lo + 1;
    var span = W - LEFT - 20;
    segs.forEach(function (g, j) {
      var x0 = g[4] < 0 ? LEFT : LEFT + span * (g[4] - lo) / (hi - lo);
      var x1 = g[5] < 0 ? LEFT : LEFT + span * (g[5] - lo) / (hi - lo);
      var h = Math.max(2, (BASE - TOP) * g[2] / top);
      var r = sv("rect", { "class": "seg" + (j === segs.length - 1 ? " active" : ""), x: x0, y: BASE - h, width: Math.max(3, x1 - x0), height: h,
        "data-base": g[0], "data-last": g[1], "data-size": g[2], "data-max-ts": g[5] },
        "offsets " + g[0] + "-" + g[1] + ", " + human(g[2]) + " bytes, " + g[3] + " records, max timestamp " + iso(g[5]) + (j === segs.length - 1 ? " (active)" : ""));
      s.appendChild(r);
    });
    text(s, LEFT, BASE + 16, iso(lo));
    text(s, W - 190, BASE + 16, iso(hi));
    text(s, 4, 14, human(top));
    return s;
  }

  function hourChart(p, i) {
    var hours = p[10];
    var s = chart("hour-chart-" + i, "bytes per hour (bars) and records (dots), UTC");
    if (!hours.length) return s;
    var H = 3600000, first = hours[0][0], last = hours[hours.length - 1][0];
    var n = last - first + 1, slot = (W - LEFT - 10) / n, tb = 1, tr = 1;
    hours.forEach(function (h) { tb = Math.max(tb, h[1]); tr = Math.max(tr, h[2]); });
    hours.forEach(function (h) {
      var ms = D.h0 + h[0] * H, x = LEFT + slot * (h[0] - first), bh = (BASE - TOP) * h[1] / tb;
      s.appendChild(sv("rect", { "class": "hour", x: x, y: BASE - bh, width: Math.max(1, slot * 0.8), height: bh,
        "data-key": ms, "data-value": h[1], "data-value2": h[2] }, iso(ms) + ": " + human(h[1]) + " bytes, " + h[2] + " records"));
      s.appendChild(sv("circle", { "class": "rec", cx: x, cy: BASE - (BASE - TOP) * h[2] / tr, r: 2 }));
    });
    text(s, LEFT, BASE + 16, iso(D.h0 + first * H).slice(0, 13) + "h");
    text(s, 4, 14, human(tb));
    return s;
  }

  // The retention timeline: each segment at the time it becomes deletable
  // (red: now, grey at the right edge: never), and why.
  function retentionChart(p, i) {
    var ret = p[11];
    var s = chart("ret-chart-" + i, "retention: when each segment becomes deletable (red: now; grey: never), and why");
    var lo = D.now, hi = D.now + 1;
    ret.forEach(function (r) { if (r[2] >= 0) { lo = Math.min(lo, r[2]); hi = Math.max(hi, r[2]); } });
    var span = W - LEFT - 120;
    var nowX = LEFT + span * (D.now - lo) / (hi - lo);
    s.appendChild(sv("line", { "class": "now", x1: nowX, y1: TOP, x2: nowX, y2: BASE }));
    text(s, nowX + 3, TOP + 10, "now " + iso(D.now));
    var rowH = Math.min(14, (BASE - TOP - 14) / Math.max(1, ret.length));
    ret.forEach(function (r, j) {
      var never = r[2] < 0, x = never ? W - 40 : LEFT + span * (r[2] - lo) / (hi - lo), y = TOP + 14 + rowH * (j + 0.5);
      var why = D.w[r[3]];
      s.appendChild(sv("circle", { "class": "ret" + (r[1] ? " now" : never ? " never" : ""), cx: x, cy: y, r: 4,
        "data-base": r[0], "data-deletable": r[1], "data-deletable-at": r[2], "data-why": why },
        "segment " + r[0] + (r[1] ? ": deletable now (" + why + ")" : never ? ": never deletable (" + why + ")" : ": deletable at " + iso(r[2]) + " (" + why + ")")));
    });
    text(s, W - 60, BASE + 16, "never");
    return s;
  }

  function detail(p, i) {
    var td = el("td", { colspan: 9 });
    td.appendChild(el("p", { "class": "muted" }, D.l[p[3]] + "/" + name(p) + (D.w[p[12]] ? " — " + D.w[p[12]] : "")));
    td.appendChild(el("h3", {}, "Segments"));
    td.appendChild(segmentChart(p, i));
    td.appendChild(el("h3", {}, "Bytes and records per hour"));
    td.appendChild(hourChart(p, i));
    td.appendChild(el("h3", {}, "Retention"));
    td.appendChild(retentionChart(p, i));
    var t = el("table", { "class": "segs" });
    var hr = el("tr");
    ["base offset", "last offset", "batches", "records", "bytes", "min timestamp", "max timestamp", "codecs", "retention"].forEach(function (h) { hr.appendChild(el("th", {}, h)); });
    t.appendChild(el("thead")).appendChild(hr);
    var tb = t.appendChild(el("tbody"));
    var byBase = {};
    p[11].forEach(function (r) { byBase[r[0]] = r; });
    p[9].forEach(function (g) {
      var tr = el("tr"), codecs = [];
      D.c.forEach(function (c, k) { if (g[6] & (1 << k)) codecs.push(c); });
      var r = byBase[g[0]], verdict = !r ? "-" : r[1] ? "deletable now: " + D.w[r[3]] : r[2] >= 0 ? iso(r[2]) + " (" + D.w[r[3]] + ")" : "never (" + D.w[r[3]] + ")";
      [g[0], g[1], g[7], g[3], human(g[2]), iso(g[4]), iso(g[5]), codecs.join(","), verdict].forEach(function (v) { tr.appendChild(el("td", {}, String(v))); });
      tb.appendChild(tr);
    });
    td.appendChild(t);
    var row = el("tr", { "class": "detail", id: "detail-" + i });
    row.appendChild(td);
    return row;
  }

  function row(p, i) {
    var tr = el("tr", { "class": "part", id: "part-" + i, "data-index": i });
    [name(p), p[2], p[9].length, p[6], p[7], p[5], human(p[4]), human(deletable(p)), p[8]].forEach(function (v, k) {
      var td = el("td", k ? { "class": "n" } : {}, String(v));
      if (k === 8 && p[8] > 0) td.className = "n bad";
      tr.appendChild(td);
    });
    tr.addEventListener("click", function () {
      var open = document.getElementById("detail-" + i);
      if (open) { open.remove(); tr.classList.remove("open"); return; }
      tr.classList.add("open");
      tr.after(detail(p, i));
    });
    return tr;
  }

  function render() {
    var q = filter.value.trim().toLowerCase(), shown = 0, matched = 0;
    tbody.textContent = "";
    D.p.forEach(function (p, i) {
      if (q && name(p).toLowerCase().indexOf(q) < 0 && String(p[2]) !== q) return;
      matched++;
      if (shown >= MAX_ROWS) return;
      tbody.appendChild(row(p, i));
      shown++;
    });
    more.textContent = matched > shown ? (matched - shown) + " more partitions: filter to narrow" : "";
  }
  filter.addEventListener("input", render);
  render();
  document.body.setAttribute("data-ready", "1");
}
