// SPDX-License-Identifier: Apache-2.0
/* app.js - the agent's web page (docs/agent.md "The web page"). Reads the
 * JSON API of the agent that served it (relative URLs: works behind an SSH
 * tunnel) once per sampling interval; only GET requests, so nothing here can
 * change the server. Every value from the server goes into the page as text
 * (textContent, attributes), never as markup. */
"use strict";

var SPARK_SECONDS = 900;   /* the cards' sparklines: 15 minutes */
var SERIES = [             /* /api/v1/history's series (sample keys, docs/json.md): key, label, unit scale */
  { key: "util_gpu_pct", label: "utilization %", max: 100 },
  { key: "util_mem_pct", label: "memory bandwidth %", max: 100 },
  { key: "mem_used_bytes", label: "memory used GiB", scale: 1 / 1073741824, maxKey: "mem_total_bytes" },
  { key: "power_mw", label: "power W", scale: 0.001, maxKey: "power_limit_mw" },
  { key: "temp_c", label: "temperature C" },
  { key: "sm_clock_mhz", label: "SM clock MHz" },
  /* the profiling figures (NVML GPM; docs/metrics.md): none on GPUs before Hopper ("no data") */
  { key: "prof_sm_active_pct", label: "SM activity %", max: 100 },
  { key: "prof_sm_occupancy_pct", label: "SM occupancy %", max: 100 },
  { key: "prof_tensor_active_pct", label: "tensor activity %", max: 100 },
  { key: "prof_dram_active_pct", label: "DRAM activity %", max: 100 }
];
/* the clock event reasons /api/v1/gpus names (docs/json.md), as the card says them */
var THROTTLE_NAMES = { gpu_idle: "idle", applications_clocks_setting: "app clocks", sw_power_cap: "SW power cap",
  hw_slowdown: "HW slowdown", sync_boost: "sync boost", sw_thermal_slowdown: "SW thermal",
  hw_thermal_slowdown: "HW thermal", hw_power_brake_slowdown: "HW power brake", display_clock_setting: "display clocks" };

var state = { interval: 1, gpus: [], health: null, hist: {}, lastT: 0, cards: {}, detail: -1, detailHist: null,
  detailBusy: false, updates: 0, timer: 0 };

function $(id) { return document.getElementById(id); }
function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function showError(msg) {
  var box = $("errors");
  box.hidden = false;
  box.textContent = msg;
}
function clearError() { var box = $("errors"); box.hidden = true; box.textContent = ""; }
function num(v, digits) { return typeof v === "number" ? v.toFixed(digits || 0) : "-"; }
function gib(b) { return typeof b === "number" ? (b / 1073741824).toFixed(1) : "-"; }
function verdictOf(v) { return ["PASS", "WARN", "FAIL"].indexOf(v) >= 0 ? v : "N/A"; }
function timeText(t) { return typeof t === "number" ? new Date(t * 1000).toLocaleString() : "-"; }
function throttleText(reasons) {
  if (!Array.isArray(reasons)) return "";
  var names = reasons.map(function (r) { return THROTTLE_NAMES[r] || String(r); });
  return names.length ? "clock event reasons: " + names.join(", ") : "";
}
/* a value of a GPU's sample (docs/json.md: absent when there is none), times unit */
function sv(g, key, unit) {
  var v = g && g.sample ? g.sample[key] : undefined;
  return typeof v === "number" ? v * (unit || 1) : null;
}

function getJSON(url) {
  return fetch(url, { cache: "no-store", credentials: "same-origin" }).then(function (r) {
    if (!r.ok) return r.text().then(function (t) { throw new Error(url + ": " + r.status + " " + t.trim()); });
    return r.json();
  });
}

/* ---- charts (SVG polylines; points are numbers only) ---- */
var SVGNS = "http://www.w3.org/2000/svg";
function svg(cls) {
  var s = document.createElementNS(SVGNS, "svg");
  s.setAttribute("class", cls);
  s.setAttribute("viewBox", "0 0 300 100");
  s.setAttribute("preserveAspectRatio", "none");
  s.appendChild(document.createElementNS(SVGNS, "polyline"));
  return s;
}
/* Draws ts/vs (null = gap, drawn as a break) over [t0, t1] into s; y from 0 to max (or the data's max). */
function draw(s, ts, vs, t0, t1, max) {
  var line = s.firstChild, pts = [], top = max || 0;
  for (var i = 0; i < vs.length; i++) if (typeof vs[i] === "number" && vs[i] > top) top = vs[i];
  if (!(top > 0)) top = 1;
  var span = t1 > t0 ? t1 - t0 : 1;
  for (var k = 0; k < ts.length; k++) {
    if (ts[k] < t0 || typeof vs[k] !== "number") continue;
    pts.push(((ts[k] - t0) / span * 300).toFixed(1) + "," + (100 - vs[k] / top * 98).toFixed(1));
  }
  line.setAttribute("points", pts.join(" "));
  s.setAttribute("data-points", String(pts.length));
}

/* ---- history ---- */
function mergeHistory(doc, keepSeconds) {
  (doc.gpus || []).forEach(function (g) {
    var h = state.hist[g.index];
    if (!h) { h = state.hist[g.index] = { t: [] }; SERIES.forEach(function (s) { h[s.key] = []; }); }
    for (var k = 0; k < g.t.length; k++) {
      h.t.push(g.t[k]);
      SERIES.forEach(function (s) { h[s.key].push(g[s.key][k]); });
      if (g.t[k] > state.lastT) state.lastT = g.t[k];
    }
    var cut = 0, oldest = state.lastT - keepSeconds;
    while (cut < h.t.length && h.t[cut] < oldest) cut++;
    if (cut) { h.t.splice(0, cut); SERIES.forEach(function (s) { h[s.key].splice(0, cut); }); }
  });
}
function scaled(vs, scale) { return scale ? vs.map(function (v) { return typeof v === "number" ? v * scale : v; }) : vs; }

/* ---- cards ---- */
function metricRow(grid, label, key) {
  grid.appendChild(el("span", "k", label));
  var spark = null;
  if (key) { spark = svg("spark"); grid.appendChild(spark); } else grid.appendChild(el("span"));
  var v = el("span", "v");
  grid.appendChild(v);
  return { v: v, spark: spark };
}
function makeCard(index) {
  var c = el("article", "card");
  c.id = "gpu-" + index;
  c.setAttribute("data-gpu", String(index));
  c.tabIndex = 0;
  var head = el("div", "card-head");
  var title = el("span", "card-title");
  var badge = el("span", "badge", "N/A");
  head.appendChild(title); head.appendChild(badge); c.appendChild(head);
  var grid = el("div", "metrics");
  var rows = {
    util: metricRow(grid, "utilization", "util_gpu_pct"),
    mem: metricRow(grid, "memory", "mem_used_bytes"),
    power: metricRow(grid, "power", "power_mw"),
    temp: metricRow(grid, "temperature", "temp_c"),
    smact: metricRow(grid, "SM / tensor", "prof_sm_active_pct"),
    clock: metricRow(grid, "SM clock")
  };
  c.appendChild(grid);
  var throttle = el("div", "throttle"), lasterr = el("div", "lasterr");
  c.appendChild(throttle); c.appendChild(lasterr);
  /* the detail has its own address (#gpu=N): a link to it opens it */
  c.addEventListener("click", function () { location.hash = "gpu=" + index; });
  c.addEventListener("keydown", function (e) { if (e.key === "Enter") location.hash = "gpu=" + index; });
  $("cards").appendChild(c);
  return { root: c, title: title, badge: badge, rows: rows, throttle: throttle, lasterr: lasterr };
}
function healthOf(index) {
  var h = state.health;
  if (!h || !h.gpus) return null;
  for (var i = 0; i < h.gpus.length; i++) if (h.gpus[i].index === index) return h.gpus[i];
  return null;
}
function updateCard(g, now) {
  var c = state.cards[g.index] || (state.cards[g.index] = makeCard(g.index));
  c.title.textContent = "GPU " + g.index + " \u00b7 " + (g.name || "?");
  var hv = healthOf(g.index), v = verdictOf(hv && hv.verdict);
  c.root.className = "card v-" + v.replace("/", "") + (g.up ? "" : " down");
  c.root.setAttribute("data-verdict", v);
  c.badge.className = "badge v-" + v.replace("/", "");
  c.badge.textContent = g.up ? v : v + " (down)";
  var r = c.rows;
  var memTotal = sv(g, "mem_total_bytes"), powerLimit = sv(g, "power_limit_mw", 0.001);
  r.util.v.textContent = num(sv(g, "util_gpu_pct")) + " %";
  r.mem.v.textContent = gib(sv(g, "mem_used_bytes")) + " / " + gib(memTotal) + " GiB";
  r.power.v.textContent = num(sv(g, "power_mw", 0.001)) + " / " + num(powerLimit) + " W";
  r.temp.v.textContent = num(sv(g, "temp_c")) + " C";
  r.clock.v.textContent = num(sv(g, "sm_clock_mhz")) + " MHz";
  /* SM and tensor activity (GPM): "n/a" where the GPU has none, never a made-up 0 */
  var smact = sv(g, "prof_sm_active_pct"), tensor = sv(g, "prof_tensor_active_pct");
  r.smact.v.textContent = smact === null && tensor === null ? "n/a" : num(smact) + " / " + num(tensor) + " %";
  c.throttle.textContent = throttleText(g.sample && g.sample.clock_event_reasons);
  c.lasterr.textContent = g.up ? "" : (g.error || "down");
  var h = state.hist[g.index];
  if (h && h.t.length) {
    /* the last 15 minutes, or what there is of them while the agent is younger */
    var t0 = Math.max(now - SPARK_SECONDS, h.t[0]);
    draw(r.util.spark, h.t, h.util_gpu_pct, t0, now, 100);
    draw(r.mem.spark, h.t, h.mem_used_bytes, t0, now, memTotal);
    draw(r.power.spark, h.t, h.power_mw, t0, now, sv(g, "power_limit_mw"));
    draw(r.temp.spark, h.t, h.temp_c, t0, now, 0);
    draw(r.smact.spark, h.t, h.prof_sm_active_pct, t0, now, 100);
  }
}

/* ---- tables ---- */
function fillTable(id, rows, emptyText) {
  var body = $(id).tBodies[0], frag = document.createDocumentFragment();
  rows.forEach(function (cells) {
    var tr = el("tr");
    cells.forEach(function (c) {
      var td = el("td", c && c.cls, c && typeof c === "object" ? c.text : c);
      tr.appendChild(td);
    });
    frag.appendChild(tr);
  });
  if (!rows.length) {
    var tr = el("tr"), td = el("td", "empty", emptyText);
    td.colSpan = $(id).tHead.rows[0].cells.length;
    tr.appendChild(td);
    frag.appendChild(tr);
  }
  while (body.firstChild) body.removeChild(body.firstChild);
  body.appendChild(frag);
}
function updateTables() {
  var procs = [], xids = [], links = [], finds = [];
  state.gpus.forEach(function (g) {
    (g.processes || []).forEach(function (p) {
      procs.push([g.index, p.pid, p.user, p.name, { cls: "num", text: gib(p.used_mem_bytes) + " GiB" }]);
    });
    (g.xid || []).forEach(function (x) {
      xids.push([g.index, x.xid, { cls: "num", text: x.count }, timeText(x.last_seen)]);
    });
    var pcie = sv(g, "pcie_gen") ? "gen " + sv(g, "pcie_gen") + " x" + num(sv(g, "pcie_width")) : "-";
    var nvl = typeof g.nvlink_links === "number" ? g.nvlink_links_up + " / " + g.nvlink_links : "-";
    links.push([g.index, g.pci_bus_id || "-", pcie, { cls: "num", text: num(sv(g, "pcie_replays")) }, nvl]);
  });
  var h = state.health;
  if (h) {
    var add = function (who, f) { finds.push([who, f.verdict, f.rule, f.reason, f.evidence, f.action, f.hint]); };
    ((h.system && h.system.findings) || []).forEach(function (f) { add("system", f); });
    (h.gpus || []).forEach(function (g) { (g.findings || []).forEach(function (f) { add(g.index, f); }); });
  }
  fillTable("procs", procs, "no processes");
  fillTable("xids", xids, "no XID events");
  fillTable("links", links, "no GPUs");
  fillTable("findings", finds, "no findings");
}

/* ---- the job pool (api/v1/pool: `gpuctl queue --json` with "pool": true; {"pool": false} without one) ---- */
var POOL_ROWS = 500;       /* the first jobs in queue order; the count says how many more */
function nsText(ns) { return typeof ns === "number" && ns > 0 ? timeText(ns / 1e9) : "-"; }
function jobGpus(j) {      /* as `gpuctl queue`: the GPUs a job holds, or what it asks for */
  if (j.state === "pending") {
    var r = j.request || {};
    return "(" + (r.mig ? "MIG " + r.mig : (r.gpus || 0) + (r.nvlink ? " NVLink" : "")) + ")";
  }
  var g = (j.gpus || []).join(",");
  if (j.mig_instance) g += " (MIG gi " + j.mig_instance.gi + ")";
  return g || "-";
}
function updatePool(doc) {
  $("pool").hidden = !doc.pool;
  if (!doc.pool) return;
  var jobs = doc.jobs || [];
  $("pool-count").textContent = doc.running + " running, " + doc.pending + " pending" +
    (jobs.length > POOL_ROWS ? " (the first " + POOL_ROWS + " shown)" : "");
  fillTable("jobs", jobs.slice(0, POOL_ROWS).map(function (j) {
    var reason = j.reason === j.state ? "" : j.reason;
    if (j.state === "pending" && j.est_start_ns > 0) reason += "; expected start " + nsText(j.est_start_ns);
    if (j.warning) reason = (reason ? reason + "; " : "") + "warning: " + j.warning;
    return [{ cls: "num", text: j.id }, j.user, j.name || "-", j.state, jobGpus(j), nsText(j.submit_ns),
      nsText(j.start_ns), reason];
  }), "no jobs");
}

/* ---- detail (1 h charts of one GPU) ---- */
function openDetail(index) {
  state.detail = index;
  state.detailHist = null;
  $("detail").hidden = false;
  $("detail-title").textContent = "GPU " + index + ": the last hour";
  var box = $("detail-charts");
  while (box.firstChild) box.removeChild(box.firstChild);
  SERIES.forEach(function (s) {
    var b = el("div", "chart-box");
    b.id = "chart-" + s.key;
    var k = el("div", "k");
    k.appendChild(el("span", null, s.label));
    k.appendChild(el("span", "range"));
    b.appendChild(k);
    b.appendChild(svg("chart"));
    box.appendChild(b);
  });
  $("detail").scrollIntoView({ block: "nearest" });
  refreshDetail();
}
function refreshDetail() {
  var index = state.detail;
  if (index < 0 || state.detailBusy) return Promise.resolve(); /* one request at a time: no point twice */
  state.detailBusy = true;
  var since = state.detailHist && state.detailHist.t.length ? state.detailHist.t[state.detailHist.t.length - 1] : 0;
  var url = "api/v1/history?gpu=" + index + (since ? "&since=" + since : "");
  return getJSON(url).then(function (doc) {
    if (state.detail !== index) return;
    var g = (doc.gpus || [])[0];
    if (!g) return;
    var h = state.detailHist || (state.detailHist = { t: [] });
    h.t = h.t.concat(g.t);
    SERIES.forEach(function (s) { h[s.key] = (h[s.key] || []).concat(g[s.key]); });
    var span = doc.window_seconds || doc.capacity * doc.interval_seconds, t1 = h.t.length ? h.t[h.t.length - 1] : 0;
    var cut = 0;
    while (cut < h.t.length && h.t[cut] < t1 - span) cut++;
    if (cut) { h.t.splice(0, cut); SERIES.forEach(function (s) { h[s.key].splice(0, cut); }); }
    var cur = state.gpus.filter(function (x) { return x.index === index; })[0] || {};
    SERIES.forEach(function (s) {
      var b = $("chart-" + s.key), vs = scaled(h[s.key], s.scale), lo = null, hi = null;
      vs.forEach(function (v) { if (typeof v === "number") { lo = lo === null || v < lo ? v : lo; hi = hi === null || v > hi ? v : hi; } });
      var max = s.max || (s.maxKey ? sv(cur, s.maxKey) * (s.scale || 1) : 0);
      draw(b.querySelector("svg"), h.t, vs, Math.max(t1 - span, h.t.length ? h.t[0] : 0), t1, max);
      b.querySelector(".range").textContent = lo === null ? "no data" : "min " + lo.toFixed(1) + "  max " + hi.toFixed(1);
    });
  }).then(function () { state.detailBusy = false; }, function (e) { state.detailBusy = false; throw e; });
}

function applyHash() {
  var m = /^#gpu=([0-9]{1,2})$/.exec(location.hash);
  if (m && state.cards[+m[1]]) { if (state.detail !== +m[1]) openDetail(+m[1]); return; }
  state.detail = -1;
  $("detail").hidden = true;
}

/* ---- the loop ---- */
function tick() {
  var since = state.lastT;
  var histUrl = "api/v1/history" + (since ? "?since=" + since : "");
  return Promise.all([getJSON("api/v1/gpus"), getJSON("api/v1/health"), getJSON(histUrl),
    getJSON("api/v1/pool")]).then(function (r) {
    var gpus = r[0], health = r[1], hist = r[2];
    state.interval = hist.interval_seconds > 0 ? hist.interval_seconds : 1;
    state.gpus = gpus.gpus || [];
    state.health = health;
    mergeHistory(hist, SPARK_SECONDS);
    $("host").textContent = gpus.hostname || "";
    var sim = $("sim");
    sim.hidden = !gpus.simulated;
    sim.textContent = gpus.simulated ? "SIMULATED" + (gpus.server ? " " + gpus.server : "") : "";
    var now = typeof gpus.taken === "number" ? gpus.taken : state.lastT;
    state.gpus.forEach(function (g) { updateCard(g, now); });
    updateTables();
    updatePool(r[3]);
    state.updates++;
    document.body.setAttribute("data-updates", String(state.updates));
    document.body.setAttribute("data-taken", String(gpus.taken));
    $("status").textContent = "verdict " + verdictOf(health.verdict) + " \u00b7 updated " + timeText(gpus.taken) +
      " \u00b7 every " + state.interval + " s";
    clearError();
    if (state.updates === 1) applyHash();
    return refreshDetail();
  }).catch(function (e) {
    showError("cannot read the agent: " + (e && e.message ? e.message : e));
  });
}
function loop() {
  tick().then(function () {
    state.timer = setTimeout(loop, Math.max(250, state.interval * 1000));
  });
}
window.addEventListener("error", function (e) { showError("page error: " + e.message); });
document.addEventListener("DOMContentLoaded", function () {
  $("detail-close").addEventListener("click", function () { location.hash = ""; });
  window.addEventListener("hashchange", applyHash);
  /* the first history request asks for the sparklines' 15 minutes only */
  getJSON("api/v1/gpus").then(function (g) {
    if (typeof g.taken === "number") state.lastT = g.taken - SPARK_SECONDS;
  }).catch(function () {}).then(loop);
});
