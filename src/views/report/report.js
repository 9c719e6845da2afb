// trainvitals report: draws the charts of the page's data (the "tv-data"
// script element) with uPlot. No request leaves the page.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("tv-data").textContent);
  var runs = data.runs;
  var CHARTS = [
    { id: "gpu_busy", title: "GPU busy (util) and SM activity", axes: ["ratio"] },
    { id: "gpu_memory", title: "GPU memory: used, the job's, allocator reserved and allocated", axes: ["bytes"] },
    { id: "cpu", title: "CPU: the host's busy share and the job's cores", axes: ["ratio", "cores"] },
    { id: "memory", title: "Host memory: used, the job's PSS and its RSS sum", axes: ["bytes"] },
    { id: "power", title: "GPU power and cumulative energy", axes: ["watts", "joules"] },
    { id: "training", title: "Training: steps per second and data-wait share", axes: ["rate", "ratio"] },
  ];
  var PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
    "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd"];
  var css = getComputedStyle(document.documentElement);
  function cssVar(name) { return css.getPropertyValue(name).trim(); }

  function two(n) { return (n < 10 ? "0" : "") + n; }
  function elapsed(s) {
    if (s == null) return "";
    var neg = s < 0; s = Math.abs(s);
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = Math.floor(s % 60);
    var text = h > 0 ? h + ":" + two(m) + ":" + two(sec) : m > 0 ? m + ":" + two(sec) :
      (Math.round(s * 10) / 10) + " s";
    return (neg ? "-" : "") + text;
  }
  function bytes(mib) {
    if (mib == null) return "—";
    return Math.abs(mib) >= 1024 ? (mib / 1024).toFixed(2) + " GiB" : mib.toFixed(0) + " MiB";
  }
  var FORMAT = {
    ratio: function (v) { return v == null ? "—" : v.toFixed(1) + " %"; },
    bytes: bytes,
    cores: function (v) { return v == null ? "—" : v.toFixed(2) + " cores"; },
    watts: function (v) { return v == null ? "—" : v.toFixed(0) + " W"; },
    joules: function (v) { return v == null ? "—" : v >= 1000 ? (v / 1000).toFixed(2) + " kWh" : v.toFixed(1) + " Wh"; },
    rate: function (v) { return v == null ? "—" : (Math.round(v * 100) / 100) + "/s"; },
  };
  var AXIS = {
    ratio: function (v) { return v + "%"; },
    bytes: function (v) { return Math.abs(v) >= 1024 ? +(v / 1024).toFixed(1) + "G" : v + "M"; },
    cores: function (v) { return String(v); },
    watts: function (v) { return v + "W"; },
    joules: function (v) { return v >= 1000 ? +(v / 1000).toFixed(1) + "kWh" : v + "Wh"; },
    rate: function (v) { return String(v); },
  };

  // Steps of the time axis, in seconds: round minutes and hours.
  var TIME_STEPS = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200,
    10800, 21600, 43200, 86400, 172800, 604800];

  // Steps of a memory axis, in MiB: round MiB, then round GiB.
  var BYTE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1024, 2048, 5120, 10240, 20480, 51200,
    102400, 204800, 512000, 1048576];

  var list = document.getElementById("chart-list");
  function width() { return Math.max(320, list.clientWidth || 800); }
  var charts = [];
  var syncing = false;

  // Epochs and phases of run A shaded under the series; run B's epoch
  // boundaries dashed.
  function drawSpans(u) {
    var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height;
    ctx.save();
    ctx.beginPath();
    ctx.rect(u.bbox.left, top, u.bbox.width, h);
    ctx.clip();
    runs.forEach(function (run, r) {
      run.spans.forEach(function (s) {
        if (s[2] !== "epoch" && s[2] !== "phase") return;
        var x0 = u.valToPos(s[0], "x", true), x1 = u.valToPos(s[1] == null ? run.end : s[1], "x", true);
        if (r > 0) {
          if (s[2] !== "epoch") return;
          ctx.strokeStyle = cssVar("--epoch-edge");
          ctx.setLineDash([4, 4]);
          ctx.beginPath(); ctx.moveTo(x0, top); ctx.lineTo(x0, top + h); ctx.stroke();
          ctx.setLineDash([]);
          return;
        }
        if (s[2] === "epoch") {
          ctx.fillStyle = cssVar("--epoch");
          ctx.fillRect(x0, top, x1 - x0, h);
          ctx.strokeStyle = cssVar("--epoch-edge");
          ctx.lineWidth = 1;
          ctx.beginPath(); ctx.moveTo(x0, top); ctx.lineTo(x0, top + h); ctx.stroke();
          if (x1 - x0 > 60 * devicePixelRatio) {
            ctx.fillStyle = cssVar("--muted");
            ctx.font = (10 * devicePixelRatio) + "px sans-serif";
            ctx.fillText(s[3], x0 + 4 * devicePixelRatio, top + 12 * devicePixelRatio);
          }
        } else if (s[3] !== "train") {
          ctx.fillStyle = cssVar("--phase");
          ctx.fillRect(x0, top, x1 - x0, h);
        }
      });
    });
    ctx.restore();
  }

  // Findings and alerts as bars along the bottom of the plot, from opening to
  // closing (or the end), with a tick where they opened.
  function drawMarks(u) {
    var ctx = u.ctx, bottom = u.bbox.top + u.bbox.height, dpr = devicePixelRatio;
    ctx.save();
    runs.forEach(function (run, r) {
      var lane = 0;
      run.spans.forEach(function (s) {
        if (s[2] !== "finding" && s[2] !== "alert") return;
        var x0 = u.valToPos(s[0], "x", true), x1 = u.valToPos(s[1] == null ? run.end : s[1], "x", true);
        var y = bottom - (3 + (lane % 4) * 5 + r * 20) * dpr;
        ctx.fillStyle = cssVar(s[2] === "finding" ? "--finding" : "--alert");
        ctx.fillRect(x0, y, Math.max(x1 - x0, 2 * dpr), 3 * dpr);
        ctx.fillRect(x0, y - 6 * dpr, 1.5 * dpr, 9 * dpr);
        lane++;
      });
    });
    ctx.restore();
  }

  // What the time under the cursor lies in: epoch, phase, open findings and
  // firing alerts, run by run.
  function marksAt(t) {
    var parts = [];
    runs.forEach(function (run) {
      var here = run.spans.filter(function (s) {
        return t >= s[0] && t <= (s[1] == null ? run.end : s[1]);
      }).map(function (s) { return (s[2] === "epoch" || s[2] === "phase" ? "" : s[2] + " ") + s[3]; });
      if (here.length) parts.push((runs.length > 1 ? run.label + ": " : "") + here.join("; "));
    });
    return parts.join(" | ");
  }

  function rangeFrom0(u, min, max) {
    if (max == null || !isFinite(max)) return [0, 1];
    return [Math.min(0, min), max > 0 ? max * 1.05 : 1];
  }

  CHARTS.forEach(function (chart) {
    var tables = [], series = [{ label: "elapsed", value: function (u, v) { return elapsed(v); } }];
    var used = {};
    runs.forEach(function (run, r) {
      var cols = run.series.filter(function (s) { return s.chart === chart.id; });
      if (cols.length === 0) return;
      tables.push([run.x].concat(cols.map(function (s) { return s.v; })));
      cols.forEach(function (s, i) {
        used[s.scale] = true;
        series.push({
          label: (runs.length > 1 ? run.label + " " : "") + s.label,
          scale: s.scale,
          stroke: PALETTE[i % PALETTE.length],
          width: 1.5,
          dash: r > 0 ? [6, 4] : undefined,
          spanGaps: runs.length > 1,
          value: (function (f) { return function (u, v) { return f(v); }; })(FORMAT[s.scale]),
        });
      });
    });
    if (tables.length === 0) return;
    var aligned = tables.length === 1 ? tables[0] : uPlot.join(tables);
    var muted = cssVar("--muted"), grid = cssVar("--line");
    var axes = [{
      stroke: muted, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, incrs: TIME_STEPS,
      values: function (u, splits) { return splits.map(elapsed); },
    }];
    var scales = { x: { time: false } };
    chart.axes.forEach(function (scale, i) {
      if (!used[scale]) return;
      scales[scale] = { range: scale === "ratio" ? function (u, min, max) { return [0, Math.max(100, max || 0)]; } : rangeFrom0 };
      axes.push({
        scale: scale, side: i === 0 ? 3 : 1, stroke: muted, size: 60,
        incrs: scale === "bytes" ? BYTE_STEPS : undefined,
        grid: { show: i === 0, stroke: grid, width: 1 }, ticks: { stroke: grid },
        values: function (u, splits) { return splits.map(AXIS[scale]); },
      });
    });
    var box = document.createElement("div");
    box.className = "chart";
    box.id = "chart-" + chart.id;
    var h = document.createElement("h3");
    h.textContent = chart.title;
    box.appendChild(h);
    list.appendChild(box);
    var readout = document.createElement("div");
    readout.className = "marks";
    var plot = new uPlot({
      width: width(), height: 220, series: series, axes: axes, scales: scales,
      cursor: { sync: { key: "tv" }, drag: { x: true, y: false } },
      legend: { live: true },
      hooks: {
        drawAxes: [drawSpans],
        draw: [drawMarks],
        setCursor: [function (u) {
          var i = u.cursor.idx;
          readout.textContent = i == null ? "" : elapsed(u.data[0][i]) + "  " + marksAt(u.data[0][i]);
        }],
        setScale: [function (u, key) {
          if (key !== "x" || syncing) return;
          syncing = true;
          charts.forEach(function (c) {
            if (c.plot !== u) c.plot.setScale("x", { min: u.scales.x.min, max: u.scales.x.max });
          });
          syncing = false;
        }],
      },
    }, aligned, box);
    box.appendChild(readout);
    charts.push({
      id: chart.id,
      plot: plot,
      points: aligned[0].length,
      series: series.slice(1).map(function (s, i) {
        return { label: s.label, points: aligned[i + 1].filter(function (v) { return v != null; }).length };
      }),
    });
  });
  if (charts.length === 0) {
    var p = document.createElement("p");
    p.className = "note";
    p.textContent = "No samples to chart.";
    list.appendChild(p);
  }
  function resize(w) { charts.forEach(function (c) { c.plot.setSize({ width: w, height: 220 }); }); }
  var pending = null;
  window.addEventListener("resize", function () {
    clearTimeout(pending);
    pending = setTimeout(function () { resize(width()); }, 100);
  });
  // A4 portrait less the margins: about 700 CSS pixels.
  window.addEventListener("beforeprint", function () { resize(700); });
  window.addEventListener("afterprint", function () { resize(width()); });
  window.tvCharts = charts;
})();
