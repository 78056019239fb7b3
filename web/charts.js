// A small SVG line chart for the diagnosis and live views: series of
// points with optional error bars, dashed series, horizontal and vertical
// reference lines and shaded x-ranges (the same vocabulary as the charts
// of report.html, src/diagnose/report_svg.cpp). Labels come from reports and
// collectors, so they only ever become text (el()).
'use strict';

// Finite numbers only: anything else in a report is left out of a chart.
function finiteOr(v, fallback) {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}

// About `count` round tick values covering [lo, hi].
function niceTicks(lo, hi, count) {
  const span = hi - lo || 1;
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) || raw;
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

function tickText(v) {
  const a = Math.abs(v);
  if (a >= 1e6 || (a > 0 && a < 1e-3)) return v.toExponential(1);
  return String(Number(v.toPrecision(4)));
}

// spec: {title, xLabel, yLabel, id, kind, series: [{name, x, y, low, high, dashed}],
//        hlines: [{value, label}], vlines: [{value, label}], shaded: [[x0, x1]], yFrom0}
function lineChart(spec) {
  const width = 620, height = 280, left = 64, right = 16, top = 30, bottom = 44;
  const pw = width - left - right, ph = height - top - bottom;
  const xs = [], ys = [];
  for (const s of spec.series) {
    s.x.forEach((x, i) => {
      if (Number.isFinite(x) && Number.isFinite(s.y[i])) { xs.push(x); ys.push(s.y[i]); }
      if (s.high && Number.isFinite(s.high[i])) ys.push(s.high[i]);
    });
  }
  for (const l of spec.hlines || []) if (Number.isFinite(l.value)) ys.push(l.value);
  for (const l of spec.vlines || []) if (Number.isFinite(l.value)) xs.push(l.value);
  for (const [a, b] of spec.shaded || []) xs.push(a, b);
  let x0 = xs.length ? Math.min(...xs) : 0, x1 = xs.length ? Math.max(...xs) : 1;
  let y0 = spec.yFrom0 === false && ys.length ? Math.min(...ys) : Math.min(0, ...ys), y1 = ys.length ? Math.max(...ys) : 1;
  if (x1 <= x0) x1 = x0 + 1;
  if (y1 <= y0) y1 = y0 + 1;
  y1 += (y1 - y0) * 0.08;
  const px = (v) => left + (v - x0) / (x1 - x0) * pw;
  const py = (v) => top + ph - (v - y0) / (y1 - y0) * ph;
  const f = (v) => v.toFixed(1);
  const svg = el('svg:svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart line-chart', role: 'img', id: spec.id, 'data-kind': spec.kind, 'aria-label': spec.title });
  svg.append(el('svg:text', { x: left, y: 16, class: 'chart-title' }, spec.title));
  for (const [a, b] of spec.shaded || []) {
    svg.append(el('svg:rect', { x: f(px(a)), y: top, width: f(Math.max(1, px(b) - px(a))), height: ph, class: 'shade' }));
  }
  for (const t of niceTicks(y0, y1, 4)) {
    svg.append(el('svg:line', { x1: left, x2: left + pw, y1: f(py(t)), y2: f(py(t)), class: 'gridline' }),
      el('svg:text', { x: left - 6, y: f(py(t) + 4), class: 'axis', 'text-anchor': 'end' }, tickText(t)));
  }
  for (const t of niceTicks(x0, x1, 5)) {
    svg.append(el('svg:text', { x: f(px(t)), y: top + ph + 15, class: 'axis', 'text-anchor': 'middle' }, tickText(t)));
  }
  svg.append(el('svg:rect', { x: left, y: top, width: pw, height: ph, class: 'frame' }),
    el('svg:text', { x: left + pw / 2, y: height - 6, class: 'axis', 'text-anchor': 'middle' }, spec.xLabel),
    el('svg:text', { x: 14, y: top + ph / 2, class: 'axis', 'text-anchor': 'middle', transform: `rotate(-90 14 ${top + ph / 2})` }, spec.yLabel));
  for (const l of spec.hlines || []) {
    if (!Number.isFinite(l.value)) continue;
    svg.append(el('svg:line', { x1: left, x2: left + pw, y1: f(py(l.value)), y2: f(py(l.value)), class: 'ref-line' }),
      el('svg:text', { x: left + pw - 4, y: f(py(l.value) - 4), class: 'ref-label', 'text-anchor': 'end' }, l.label));
  }
  for (const l of spec.vlines || []) {
    if (!Number.isFinite(l.value)) continue;
    svg.append(el('svg:line', { x1: f(px(l.value)), x2: f(px(l.value)), y1: top, y2: top + ph, class: 'ref-line' }),
      el('svg:text', { x: f(px(l.value) + 4), y: top + 12, class: 'ref-label' }, l.label));
  }
  spec.series.forEach((s, i) => {
    const cls = `series series-${i % 6}`;
    const points = s.x.map((x, k) => [x, s.y[k]]).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    svg.append(el('svg:polyline', { points: points.map(([x, y]) => `${f(px(x))},${f(py(y))}`).join(' '), class: cls + (s.dashed ? ' dashed' : '') }));
    if (s.low && s.high) {
      s.x.forEach((x, k) => {
        if (!Number.isFinite(x) || !Number.isFinite(s.low[k]) || !Number.isFinite(s.high[k])) return;
        svg.append(el('svg:line', { x1: f(px(x)), x2: f(px(x)), y1: f(py(s.low[k])), y2: f(py(s.high[k])), class: `${cls} error-bar` }));
      });
    }
    if (points.length <= 30) {
      for (const [x, y] of points) svg.append(el('svg:circle', { cx: f(px(x)), cy: f(py(y)), r: 2.6, class: `${cls} marker` }, el('svg:title', {}, `${s.name}: ${tickText(y)} at ${tickText(x)}`)));
    }
  });
  const legend = el('figcaption', { class: 'legend' }, spec.series.map((s, i) =>
    el('span', { class: 'legend-item' }, el('span', { class: `key series-key series-${i % 6}${s.dashed ? ' dashed' : ''}` }), s.name)));
  return el('figure', { class: 'chart-figure line-figure' }, svg, legend);
}
