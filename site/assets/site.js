// site.js: sortable tables and charts for the finrepro site. Chart options
// come from <script type="application/json"> blocks and are only parsed,
// never evaluated; ECharts draws every label as canvas text and tooltips in
// richText mode, so no option text becomes HTML.
"use strict";
(function () {
  var each = function (list, fn) { Array.prototype.forEach.call(list, fn); };

  // Sortable tables: every header of a table.sortable holds a button; a
  // click (or Enter, Space) sorts by that column, again to reverse. Cells
  // with data-v sort by number, with "" (undefined) always last; other
  // cells by text.
  function sortKey(cell) {
    if (!cell) return { miss: true };
    var v = cell.getAttribute("data-v");
    if (v !== null) {
      if (v === "") return { miss: true };
      return { num: parseFloat(v) };
    }
    return { text: cell.textContent.trim() };
  }
  function compare(a, b) {
    if (a.miss || b.miss) return (a.miss ? 1 : 0) - (b.miss ? 1 : 0);
    if (a.num !== undefined && b.num !== undefined) return a.num - b.num;
    return String(a.text !== undefined ? a.text : a.num).localeCompare(String(b.text !== undefined ? b.text : b.num), undefined, { numeric: true });
  }
  function sortBy(table, col, th) {
    var asc = th.getAttribute("aria-sort") !== "ascending";
    each(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows).map(function (r, i) {
      return { row: r, key: sortKey(r.cells[col]), i: i };
    });
    rows.sort(function (a, b) {
      if (a.key.miss || b.key.miss) return compare(a.key, b.key) || a.i - b.i;
      return (asc ? compare(a.key, b.key) : compare(b.key, a.key)) || a.i - b.i;
    });
    rows.forEach(function (r) { body.appendChild(r.row); });
  }
  // The view of a table is kept in the URL fragment,
  // #table=ANCHOR&sort=FIELD&dir=desc&q=TEXT, so that a link gives the
  // same filtered, sorted view; it is restored on load.
  function readState() {
    var h = location.hash.slice(1), o = {};
    if (h.indexOf("=") < 0) return o;
    h.split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i > 0) {
        try { o[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1)); } catch (e) { /* ignore a bad pair */ }
      }
    });
    return o;
  }
  function colKey(th, col) { return th.getAttribute("data-key") || String(col + 1); }
  function writeState(table) {
    var name = table.getAttribute("data-table");
    if (!name) return;
    var parts = ["table=" + encodeURIComponent(name)];
    each(table.tHead.rows[0].cells, function (th, col) {
      var s = th.getAttribute("aria-sort");
      if (s) {
        parts.push("sort=" + encodeURIComponent(colKey(th, col)));
        if (s === "descending") parts.push("dir=desc");
      }
    });
    var q = table.getAttribute("data-q");
    if (q) parts.push("q=" + encodeURIComponent(q));
    var h = "#" + parts.join("&");
    try { history.replaceState(null, "", h); } catch (e) { location.hash = h; }
  }
  // Filtering: long tables get a search box that hides the rows whose
  // text does not hold what is typed (case-insensitive).
  var minFilterRows = 8;
  function filter(table, q, count) {
    table.setAttribute("data-q", q);
    var needle = q.toLowerCase(), shown = 0, rows = table.tBodies[0].rows;
    each(rows, function (r) {
      var hide = needle !== "" && r.textContent.toLowerCase().indexOf(needle) < 0;
      r.hidden = hide;
      if (!hide) shown++;
    });
    if (count) count.textContent = needle === "" ? rows.length + " rows" : shown + " of " + rows.length + " rows";
  }
  var inputs = 0;
  each(document.querySelectorAll("table.sortable"), function (table) {
    if (!table.tHead) return;
    each(table.tHead.rows[0].cells, function (th, col) {
      var b = th.querySelector("button");
      if (b) b.addEventListener("click", function () { sortBy(table, col, th); writeState(table); });
    });
    if (!table.tBodies[0] || table.tBodies[0].rows.length < minFilterRows) return;
    var box = document.createElement("div");
    box.className = "filter";
    var id = "filter-" + (++inputs);
    var label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = "Filter rows ";
    var input = document.createElement("input");
    input.type = "search";
    input.id = id;
    input.autocomplete = "off";
    var count = document.createElement("span");
    count.className = "count";
    count.setAttribute("aria-live", "polite");
    box.appendChild(label); box.appendChild(input); box.appendChild(count);
    var wrap = table.closest(".scroll") || table;
    wrap.parentNode.insertBefore(box, wrap);
    table.filterInput = input;
    table.filterCount = count;
    filter(table, "", count);
    input.addEventListener("input", function () { filter(table, input.value, count); writeState(table); });
  });
  (function restore() {
    var st = readState();
    if (!st.table) return;
    var table = document.querySelector('table[data-table="' + st.table.replace(/["\\]/g, "") + '"]');
    if (!table || !table.tHead) return;
    if (st.q && table.filterInput) { table.filterInput.value = st.q; filter(table, st.q, table.filterCount); }
    if (st.sort) {
      each(table.tHead.rows[0].cells, function (th, col) {
        if (colKey(th, col) !== st.sort) return;
        sortBy(table, col, th);
        if (st.dir === "desc") sortBy(table, col, th);
      });
    }
    var sec = table.closest("section");
    if (sec) sec.scrollIntoView();
  })();

  // Folded verdicts: a task page entry with many verdicts holds them as
  // JSON; opening the fold turns them into table rows, as text.
  each(document.querySelectorAll("details[data-verdicts]"), function (d) {
    d.addEventListener("toggle", function () {
      if (!d.open || d.getAttribute("data-drawn")) return;
      d.setAttribute("data-drawn", "1");
      var src = document.getElementById(d.getAttribute("data-verdicts"));
      var body = d.querySelector("tbody");
      if (!src || !body) return;
      var frag = document.createDocumentFragment();
      JSON.parse(src.textContent).forEach(function (v) {
        var tr = document.createElement("tr");
        var th = document.createElement("th");
        th.scope = "row";
        th.textContent = v[0];
        var verdict = document.createElement("td");
        verdict.textContent = v[1];
        var td = document.createElement("td");
        var div = document.createElement("div");
        div.className = "reason";
        div.textContent = v[2];
        td.appendChild(div);
        if (v[3]) {
          var p = document.createElement("p");
          p.className = "note";
          p.textContent = "Cut here; the bundle holds the full text.";
          td.appendChild(p);
        }
        tr.appendChild(th); tr.appendChild(verdict); tr.appendChild(td);
        if (body.parentNode.tHead.rows[0].cells.length > 3) {
          var xc = document.createElement("td");
          if (v.length > 5 && v[4]) {
            var a = document.createElement("a");
            a.className = "xref";
            a.href = "#" + v[4];
            a.textContent = v[5];
            xc.appendChild(a);
          } else if (v.length > 5) {
            xc.textContent = v[5];
          } else {
            xc.textContent = "none";
          }
          tr.appendChild(xc);
        }
        frag.appendChild(tr);
      });
      body.appendChild(frag);
    });
  });

  // Folded outputs: the text waits in a JSON block until the fold opens.
  each(document.querySelectorAll("details[data-text]"), function (d) {
    d.addEventListener("toggle", function () {
      if (!d.open || d.getAttribute("data-drawn")) return;
      d.setAttribute("data-drawn", "1");
      var src = document.getElementById(d.getAttribute("data-text")), pre = d.querySelector("pre");
      if (src && pre) pre.textContent = JSON.parse(src.textContent);
    });
  });

  // Exchanges: a fold's request and response wait, as pieces shared by
  // the page's exchanges, in the page's exchange block; opening the fold
  // joins them into its two blocks, as text.
  var xblock = null;
  each(document.querySelectorAll("details[data-x]"), function (d) {
    d.addEventListener("toggle", function () {
      if (!d.open || d.getAttribute("data-drawn")) return;
      d.setAttribute("data-drawn", "1");
      if (!xblock) {
        var src = document.getElementById("exchanges");
        if (!src) return;
        xblock = JSON.parse(src.textContent);
      }
      var x = xblock.x[Number(d.getAttribute("data-x"))];
      if (!x) return;
      each(d.querySelectorAll("pre[data-part]"), function (pre) {
        var part = x[Number(pre.getAttribute("data-part"))] || [];
        pre.textContent = part.map(function (i) { return xblock.s[i]; }).join("");
      });
    });
  });
  // A link to an exchange opens its fold.
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var t = id && document.getElementById(id);
    if (t && t.tagName === "DETAILS" && t.classList.contains("exchange") && !t.open) {
      t.open = true;
      t.scrollIntoView();
    }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();

  // Charts.
  if (typeof echarts === "undefined") return;
  var abs = function (v) { return typeof v === "number" ? Math.abs(v) : v; };
  function prepare(opt, width) {
    var ex = opt.finrepro || {};
    delete opt.finrepro;
    opt.tooltip = opt.tooltip || {};
    opt.tooltip.renderMode = "richText";
    opt.tooltip.confine = true;
    // axis titles: the x title under the axis, the y title above it,
    // left-aligned, so that neither is cut at the edge of the chart
    var axes = function (a) { return a ? (Array.isArray(a) ? a : [a]) : []; };
    axes(opt.xAxis).forEach(function (a) {
      // a category label at 30 degrees needs about 30 px of the axis not
      // to overprint its neighbour: with more categories than fit, show
      // every k-th label only (the table below has them all)
      if (a.axisLabel && a.axisLabel.rotate && Array.isArray(a.data) && width > 0 && width / a.data.length < 30)
        a.axisLabel.interval = Math.ceil(30 * a.data.length / width) - 1;
      if (!a.name) return;
      // below rotated category labels: about 3.3 px of height per
      // character of the longest label at 30 degrees
      var gap = 28;
      if (a.axisLabel && a.axisLabel.rotate && Array.isArray(a.data)) {
        var longest = 0;
        a.data.forEach(function (d) { longest = Math.max(longest, String(d).length); });
        gap = Math.min(150, 20 + longest * 3.3);
      }
      a.nameLocation = "middle";
      a.nameGap = gap;
      opt.grid.bottom = Math.max(opt.grid.bottom, 36);
    });
    axes(opt.yAxis).forEach(function (a) {
      if (a.name) { a.nameLocation = "end"; a.nameTextStyle = { align: "left" }; }
    });
    if (ex.range) {
      opt.visualMap = { min: ex.range[0], max: ex.range[1], calculable: true, orient: "horizontal", left: "center", bottom: 0,
        inRange: { color: ["#2166ac", "#f7f7f7", "#b2182b"] } };
      opt.grid.bottom = 56;
    }
    if (ex.labels) {
      // heatmap axes show abbreviated labels; a cell's tooltip names its
      // row and column in full
      var lx = ex.labels.x || [], ly = ex.labels.y || [];
      opt.tooltip.formatter = function (p) {
        var v = p.value || [];
        return String(ly[v[1]]) + " × " + String(lx[v[0]]) + ": " + (v[2] === "-" ? "n/a" : String(v[2]));
      };
      // and hovering an axis label names it in full (see axisTips)
      axes(opt.xAxis).concat(axes(opt.yAxis)).forEach(function (a) { a.triggerEvent = true; });
    }
    if (ex.errorBars) {
      var eb = ex.errorBars;
      opt.series.push({
        type: "custom", name: eb.name, data: eb.data, z: 10,
        encode: { x: 0, y: [1, 2] },
        renderItem: function (params, api) {
          var x = api.value(0), lo = api.coord([x, api.value(1)]), hi = api.coord([x, api.value(2)]);
          var band = api.size([1, 0])[0], w = band * 0.12;
          // the first bar's centre: ECharts leaves 20% of the band as gap
          // between categories and 30% of a bar's width between bars
          var n = eb.series, bw = band * 0.8 / (n + 0.3 * (n - 1)), off = -band * 0.4 + bw / 2;
          var cx = lo[0] + off, st = { stroke: "#1b1f24", lineWidth: 1.5 };
          return { type: "group", children: [
            { type: "line", shape: { x1: cx, y1: lo[1], x2: cx, y2: hi[1] }, style: st },
            { type: "line", shape: { x1: cx - w / 2, y1: lo[1], x2: cx + w / 2, y2: lo[1] }, style: st },
            { type: "line", shape: { x1: cx - w / 2, y1: hi[1], x2: cx + w / 2, y2: hi[1] }, style: st }
          ] };
        }
      });
    }
    if (ex.bands && opt.series[0]) {
      // tie groups as shaded bands behind the bars, labelled at the top
      opt.series[0].markArea = { silent: true, data: ex.bands.map(function (b, i) {
        return [{ name: b.name, xAxis: b.from, itemStyle: { color: i % 2 ? "rgba(9, 105, 218, 0.10)" : "rgba(130, 80, 223, 0.10)" },
          label: { position: "insideTop", color: "#57606a", fontSize: 11 } }, { xAxis: b.to }];
      }) };
    }
    if (ex.groups && opt.series[0]) {
      // rows not in group order: each bar in its tie group's colour
      var palette = ["#0969da", "#8250df", "#bf8700", "#1a7f37", "#cf222e", "#6e7781", "#1b7c83", "#bf3989", "#7d4e2a", "#7d8b24"], order = [];
      ex.groups.forEach(function (g) { if (g !== "" && order.indexOf(g) < 0) order.push(g); });
      order.sort(function (a, b) { return a.localeCompare(b, undefined, { numeric: true }); });
      opt.series[0].data = opt.series[0].data.map(function (d, i) {
        var g = ex.groups[i], k = order.indexOf(g);
        if (k < 0) return d;
        var v = d && typeof d === "object" ? d : { value: d };
        v.itemStyle = { color: palette[k % palette.length] };
        return v;
      });
      opt.title = opt.title || {};
      var names = ["blue", "purple", "ochre", "green", "red", "grey", "teal", "pink", "brown", "olive"];
      // the key, in as many lines as the chart's width needs (about 6.5
      // px per character at 11 px), the plot moved down by the extra lines
      var per = Math.max(20, Math.floor(((width > 0 ? width : 600) - 16) / 6.5)), rows = [], cur = "tie groups:";
      order.forEach(function (g, k) {
        var piece = g + " " + names[k % names.length] + (k < order.length - 1 ? "," : "");
        if (cur.length + 1 + piece.length > per) { rows.push(cur); cur = piece; } else cur += " " + piece;
      });
      rows.push(cur);
      opt.title.subtext = rows.join("\n");
      opt.title.subtextStyle = { fontSize: 11, lineHeight: 14 };
      if (rows.length > 1) {
        opt.grid = opt.grid || {};
        opt.grid.top = (typeof opt.grid.top === "number" ? opt.grid.top : 60) + 14 * (rows.length - 1);
      }
      opt.title.right = 8;
      opt.title.top = 0;
    }
    var lines = (opt.series || []).filter(function (sr) { return sr.type === "line"; });
    lines.forEach(function (sr) {
      // an ideal (diagonal) series: a dashed grey reference line
      if (/^ideal\b/i.test(String(sr.name))) {
        sr.lineStyle = { type: "dashed", color: "#6e7781", width: 1.5 };
        sr.itemStyle = { color: "#6e7781" };
        sr.symbol = "none";
        sr.z = 1;
      }
    });
    if (ex.counts) {
      // points sized by how many items they stand on, grey when too few
      var most = 1, min = ex.counts.min || 0;
      ex.counts.series.forEach(function (c) { (c || []).forEach(function (n) { if (typeof n === "number") most = Math.max(most, n); }); });
      ex.counts.series.forEach(function (c, k) {
        var sr = opt.series[k];
        if (!c || !sr || !Array.isArray(sr.data)) return;
        sr.data = sr.data.map(function (d, j) {
          var v = d && typeof d === "object" ? d : { value: d }, n = c[j];
          if (typeof n !== "number") return v;
          v.n = n;
          v.symbolSize = 4 + 14 * Math.sqrt(n / most);
          if (n < min) v.itemStyle = { color: "#c4c9cf", borderColor: "#8c959f" };
          return v;
        });
        sr.symbol = "circle";
      });
      opt.tooltip.formatter = function (ps) {
        ps = Array.isArray(ps) ? ps : [ps];
        var out = [String(ps.length ? ps[0].axisValueLabel : "")];
        ps.forEach(function (p) {
          var v = p.data && typeof p.data === "object" ? p.data.value : p.data;
          if (v === null || v === undefined || v === "-") return;
          var n = p.data && typeof p.data === "object" && typeof p.data.n === "number" ? p.data.n : null;
          out.push(p.seriesName + ": " + v + (n !== null ? " (n = " + n + (n < min ? ", too few" : "") + ")" : ""));
        });
        return out.join("\n");
      };
      opt.title = opt.title || {};
      opt.title.subtext = width >= 500 ? "marker size: items in the bin; grey: fewer than " + min : "size: items; grey: < " + min;
      opt.title.subtextStyle = { fontSize: 11 };
      opt.title.right = 8;
      opt.title.top = 22;
      opt.title.padding = 0;
      opt.grid.top = Math.max(opt.grid.top || 0, 64);
    }
    if (lines.length > 6) {
      // many lines: the best few on average in colour, the rest thin and
      // grey; hovering a line brings it forward, the legend shows or
      // hides each
      var top = 4, mean = function (sr) {
        var sum = 0, n = 0;
        (sr.data || []).forEach(function (d) {
          var v = d && typeof d === "object" ? d.value : d;
          if (typeof v === "number") { sum += v; n++; }
        });
        return n ? sum / n : -Infinity;
      };
      var ranked = lines.slice().sort(function (a, b) { return mean(b) - mean(a); });
      var colours = ["#0969da", "#cf222e", "#1a7f37", "#8250df"];
      ranked.forEach(function (sr, k) {
        sr.emphasis = { focus: "series" };
        if (k < top) {
          sr.lineStyle = { width: 2.5, color: colours[k] };
          sr.itemStyle = { color: colours[k] };
          sr.z = 3;
        } else {
          sr.lineStyle = { width: 1, color: "#c4c9cf" };
          sr.itemStyle = { color: "#c4c9cf" };
          sr.symbolSize = 3;
          sr.z = 2;
        }
      });
      opt.title = opt.title || {};
      opt.title.subtext = width >= 700 ? "in colour: the " + top + " highest on average; the rest grey (hover a line, or pick names in the legend)" :
        "colour: top " + top + "; grey: the rest";
      opt.title.subtextStyle = { fontSize: 11 };
      opt.title.right = 8;
      opt.title.top = 22;
      opt.title.padding = 0;
      opt.grid.top = Math.max(opt.grid.top || 0, 64);
      opt.tooltip.trigger = "item";
    }
    if (ex.mirror) {
      var xa = Array.isArray(opt.xAxis) ? opt.xAxis[0] : opt.xAxis;
      xa.axisLabel = xa.axisLabel || {};
      xa.axisLabel.formatter = function (v) { return String(Math.abs(v)); };
      if (opt.series[0]) opt.series[0].tooltip = { valueFormatter: abs };
      var ya = Array.isArray(opt.yAxis) ? opt.yAxis[0] : opt.yAxis;
      if (ex.mirror.data && ya && Array.isArray(ya.data)) {
        // rows sorted by the delta, the one favouring the left side most
        // on top; each delta marked on the side it favours (a positive
        // delta, left over right, on the left), its size as the label
        var delta = ya.data.map(function () { return null; });
        ex.mirror.data.forEach(function (d) { delta[d[1]] = d[0]; });
        var order = ya.data.map(function (_, i) { return i; });
        order.sort(function (a, b) {
          var da = delta[a] === null ? -Infinity : delta[a], db = delta[b] === null ? -Infinity : delta[b];
          return db - da || a - b;
        });
        var at = [];
        order.forEach(function (i, k) { at[i] = k; });
        ya.data = order.map(function (i) { return ya.data[i]; });
        opt.series.forEach(function (sr) {
          if (Array.isArray(sr.data)) sr.data = order.map(function (i) { return sr.data[i]; });
        });
        var marks = ex.mirror.data.map(function (d) { return { value: [-d[0], at[d[1]]], delta: d[0] }; });
        opt.series.push({ type: "scatter", name: ex.mirror.name, data: marks, symbol: "diamond", symbolSize: 12, z: 10,
          itemStyle: { color: "#1b1f24" }, tooltip: { valueFormatter: abs },
          label: { show: true, position: "top", fontSize: 10, color: "#1b1f24",
            formatter: function (p) { var v = p.data.delta; return (v > 0 ? "+" : "") + v; } } });
      }
      opt.legend = opt.legend || {};
      opt.legend.show = true;
    }
    if (ex.zone) {
      var s = opt.series[0];
      s.markArea = { silent: true, itemStyle: { color: "rgba(46, 160, 67, 0.15)" },
        label: { show: true, position: "insideBottomLeft", color: "#1a7f37" },
        data: [[{ name: ex.zone.name, xAxis: ex.zone.x[0], yAxis: ex.zone.y[0] }, { xAxis: ex.zone.x[1], yAxis: ex.zone.y[1] }]] };
    }
    if (opt.series[0] && opt.series[0].type === "scatter" && !ex.mirror) {
      // label only the points whose label fits: a label that would pass
      // the right edge goes to the left of its point, one that overlaps
      // another is hidden (the tooltip and the table have every name)
      opt.series[0].label = { show: true, position: "right", formatter: "{b}", fontSize: 11 };
      opt.series[0].labelLayout = function (p) {
        if (width > 0 && p.labelRect.x + p.labelRect.width > width - 2)
          return { x: p.rect.x - 4, align: "right", hideOverlap: true };
        return { hideOverlap: true };
      };
    }
    return opt;
  }
  // fitLeft moves the grid right by what the leftmost text of the chart
  // reaches past its left edge: a rotated category label hangs left of its
  // tick, and containLabel does not count that part. Texts in a clipped
  // group (a scrolling legend's hidden items) do not count. The grid moves
  // by at most a third of the chart, so that a very long label cannot
  // squeeze the plot away.
  function hidden(e) {
    for (; e; e = e.parent || e.__hostTarget) if (e.invisible || e.ignore || e.getClipPath && e.getClipPath()) return true;
    return false;
  }
  function fitLeft(chart, left) {
    var most = Math.max(left, Math.floor(chart.getWidth() / 3));
    for (var i = 0; i < 3 && left < most; i++) {
      var over = 0;
      chart.getZr().storage.getDisplayList(true).forEach(function (e) {
        if (e.type !== "tspan" || hidden(e)) return;
        var r = e.getBoundingRect().clone();
        if (e.transform) r.applyTransform(e.transform);
        over = Math.min(over, r.x);
      });
      if (over > -1) return;
      left = Math.min(most, left + Math.ceil(-over) + 4);
      chart.setOption({ grid: { left: left } });
    }
  }
  // axisTips shows the full name of an abbreviated axis label while the
  // pointer is on it: in the chart's tooltip (canvas text, as every
  // tooltip) and as the chart's title. labels are the full names by axis
  // ("x", "y"), in the order of the axis' categories.
  function axisTips(chart, el, labels) {
    chart.on("mouseover", function (p) {
      if (p.targetType !== "axisLabel") return;
      var axis = p.componentType === "xAxis" ? "x" : "y";
      var a = chart.getOption()[p.componentType][p.componentIndex || 0] || {};
      var i = (a.data || []).indexOf(p.value);
      var full = (labels[axis] || [])[i];
      if (full == null) return;
      full = String(full);
      el.title = full;
      var e = p.event || {};
      chart.dispatchAction({ type: "showTip", x: e.offsetX, y: e.offsetY, tooltip: { formatter: function () { return full; } } });
    });
    chart.on("mouseout", function (p) {
      if (p.targetType !== "axisLabel") return;
      el.removeAttribute("title");
      chart.dispatchAction({ type: "hideTip" });
    });
  }
  var drawn = [];
  each(document.querySelectorAll("[data-chart]"), function (el) {
    var src = document.getElementById(el.getAttribute("data-chart"));
    if (!src) return;
    var h = parseInt(el.getAttribute("data-height"), 10);
    if (h > 0 && window.matchMedia && !window.matchMedia("(max-width: 40em)").matches) el.style.height = h + "px";
    var chart = echarts.init(el, null, { renderer: "canvas" });
    var raw = JSON.parse(src.textContent);
    var labels = raw.finrepro && raw.finrepro.labels;
    var opt = prepare(raw, el.clientWidth);
    var left = opt.grid && typeof opt.grid.left === "number" ? opt.grid.left : null;
    chart.setOption(opt);
    if (labels) axisTips(chart, el, labels);
    if (left !== null) fitLeft(chart, left);
    drawn.push({ chart: chart, left: left });
  });
  window.addEventListener("resize", function () {
    drawn.forEach(function (d) {
      if (d.left !== null) d.chart.setOption({ grid: { left: d.left } });
      d.chart.resize();
      if (d.left !== null) fitLeft(d.chart, d.left);
    });
  });
})();
