// The diagnosis view (#/diagnosis): the report of `sonde diagnose`
// (/api/diagnosis, docs/diagnose/report.md) for someone who is not a
// performance expert: what was found and where to look first, then the
// problem hierarchy as a collapsible tree, each node with its evidence and
// the charts drawn from the numbers the report carries.
// Same rule as app.js: every string from the report becomes text (el()).
'use strict';

const DIAG_STATUS_WORDS = {
  detected: 'detected', not_detected: 'not detected', skipped: 'skipped', not_evaluated: 'not evaluated',
};
const DIAG_STATUS_MEANING = {
  detected: 'the problem is there',
  not_detected: 'checked, and it is not there',
  skipped: 'not examined, because the problem above it was not found',
  not_evaluated: 'could not be checked: data was missing',
};

// How sure, in words, from the p-value (as report.html says it).
function certaintyWords(p) {
  if (typeof p !== 'number') return 'no test statistic';
  if (p < 0.001) return 'very sure (p < 0.001)';
  if (p < 0.01) return 'sure (p < 0.01)';
  if (p < 0.05) return 'fairly sure (p < 0.05)';
  return `not significant (p = ${p.toPrecision(2)})`;
}

// Evidence rows also record what was checked and found fine.
function supportsFinding(e) {
  const v = e.values || {};
  return !['found', 'violated', 'significant'].some((k) => v[k] === false);
}

function statusBadge(status) {
  return el('span', { class: `status-badge ${status}`, title: DIAG_STATUS_MEANING[status] }, DIAG_STATUS_WORDS[status] || status);
}

function walkNodes(node, visit, depth = 0) {
  visit(node, depth);
  for (const c of node.children) walkNodes(c, visit, depth + 1);
}

// ---- charts: the report's series, as report_html.cpp draws them

const diagNum = (v) => finiteOr(v, NaN);
const diagArr = (v) => (Array.isArray(v) ? v : []);
const diagStr = (v) => (typeof v === 'string' ? v : '');

function diagnosisCharts(charts, nodeId) {
  const out = [];
  const add = (kind, i, spec) => out.push(lineChart({ ...spec, kind, id: `chart-${nodeId}-${kind}-${i}` }));
  diagArr(charts.cdf).forEach((s, i) => {
    const pts = diagArr(s.points).filter(Array.isArray);
    add('cdf', i, {
      title: `Response times of ${diagStr(s.service)} (share of requests finished within)`, xLabel: 'response time [ms]', yLabel: 'share of requests',
      series: [{ name: 'measured', x: pts.map((p) => diagNum(p[0])), y: pts.map((p) => diagNum(p[1])) }],
      vlines: [{ value: diagNum(s.threshold_ms), label: 'requirement' }],
      hlines: [{ value: diagNum(s.percentile), label: `P${Number((diagNum(s.percentile) * 100).toPrecision(3))}` }],
    });
  });
  diagArr(charts.hiccup_timeline).forEach((s, i) => {
    const b = diagArr(s.buckets).filter(Array.isArray);
    if (!b.length) return;
    const t0 = diagNum(b[0][0]);
    add('hiccup_timeline', i, {
      title: `Hiccup timeline of ${diagStr(s.service)}`, xLabel: 'time [s]', yLabel: 'percentile per time bucket [ms]',
      series: [{ name: 'per bucket', x: b.map((p) => (diagNum(p[0]) - t0) / 1e9), y: b.map((p) => diagNum(p[2])) }],
      hlines: [{ value: diagNum(s.threshold_ms), label: 'requirement' }],
      shaded: diagArr(s.hiccups).map((h) => [(diagNum(h.start_ns) - t0) / 1e9, (diagNum(h.end_ns) - t0) / 1e9]).filter(([a, z]) => Number.isFinite(a) && Number.isFinite(z)),
    });
  });
  diagArr(charts.scaling).forEach((s, i) => {
    const p = diagArr(s.points);
    add('scaling', i, {
      title: `Response time vs users: ${diagStr(s.service)}`, xLabel: 'users', yLabel: 'response time [ms]',
      series: [
        { name: 'mean (95% confidence interval)', x: p.map((q) => diagNum(q.users)), y: p.map((q) => diagNum(q.mean)), low: p.map((q) => diagNum(q.low)), high: p.map((q) => diagNum(q.high)) },
        { name: 'percentile', x: p.map((q) => diagNum(q.users)), y: p.map((q) => diagNum(q.percentile)), dashed: true }],
      hlines: [{ value: diagNum(s.threshold_ms), label: 'requirement' }],
    });
  });
  diagArr(charts.queueing).forEach((s, i) => {
    const p = diagArr(s.points);
    add('queueing', i, {
      title: `Measured vs explainable by CPU queueing: ${diagStr(s.service)}`, xLabel: 'users', yLabel: 'mean response time [ms]',
      series: [{ name: 'measured', x: p.map((q) => diagNum(q.users)), y: p.map((q) => diagNum(q.measured)) },
        { name: 'queueing threshold', x: p.map((q) => diagNum(q.users)), y: p.map((q) => diagNum(q.threshold)), dashed: true }],
    });
  });
  diagArr(charts.ramp).forEach((s, i) => {
    const w = diagArr(s.windows).filter(Array.isArray);
    add('ramp', i, {
      title: `Response time per time window: ${diagStr(s.service)}`, xLabel: 'window', yLabel: 'mean response time [ms]',
      series: [{ name: 'mean (95% confidence interval)', x: w.map((q) => diagNum(q[0])), y: w.map((q) => diagNum(q[1])), low: w.map((q) => diagNum(q[2])), high: w.map((q) => diagNum(q[3])) }],
    });
  });
  if (diagArr(charts.growth).length) {
    add('growth', 0, {
      title: 'Waiting/database time vs users', xLabel: 'users', yLabel: 'mean [ms]',
      series: diagArr(charts.growth).map((s) => {
        const p = diagArr(s.points).filter(Array.isArray);
        return { name: diagStr(s.key), x: p.map((q) => diagNum(q[0])), y: p.map((q) => diagNum(q[1])), dashed: s.found === false };
      }),
    });
  }
  const cpu = diagArr(charts.database_cpu);
  if (cpu.length) {
    add('database_cpu', 0, {
      title: 'Database CPU vs users (Database Congestion)', xLabel: 'users', yLabel: 'utilization [%]',
      series: [{ name: 'database (estimated)', x: cpu.map((q) => diagNum(q.users)), y: cpu.map((q) => 100 * diagNum(q.database_cpu)) },
        { name: 'whole CPU (measured)', x: cpu.map((q) => diagNum(q.users)), y: cpu.map((q) => 100 * diagNum(q.cpu)), dashed: true }],
      hlines: [{ value: 100 * diagNum(cpu[0].threshold), label: 'saturation' }],
    });
  }
  // Time Outside the Application: inside vs outside per service found.
  diagArr(charts.time_split).filter((s) => s && s.found === true).forEach((s, i) => {
    const p = diagArr(s.points);
    add('time_split', i, {
      title: `Inside vs outside the application: ${diagStr(s.service)}`, xLabel: 'users', yLabel: 'mean per request [ms]',
      series: [{ name: 'inside the application', x: p.map((q) => diagNum(q.users)), y: p.map((q) => diagNum(q.inside_ms)) },
        { name: 'outside (transport, queues, client)', x: p.map((q) => diagNum(q.users)), y: p.map((q) => diagNum(q.outside_ms)), dashed: true }],
    });
  });
  const msgs = diagArr(charts.message_throughput).filter(Array.isArray);
  if (msgs.length) {
    add('message_throughput', 0, {
      title: 'Message throughput vs users', xLabel: 'users', yLabel: 'messages/s',
      series: [{ name: 'messages/s', x: msgs.map((q) => diagNum(q[0])), y: msgs.map((q) => diagNum(q[1])) }],
    });
  }
  return out;
}

// ---- the page

function evidenceTable(evidence) {
  return el('div', { class: 'table-wrap' }, el('table', { class: 'grid evidence' },
    el('thead', {}, el('tr', {}, ['Where', 'Finding', 'How sure', 'Test', 'Effect size', 'Data'].map((h) => el('th', {}, h)))),
    el('tbody', {}, evidence.map((e) => el('tr', { class: supportsFinding(e) ? '' : 'fine', title: supportsFinding(e) ? null : 'checked and found within limits' },
      el('td', { class: 'mono where' }, e.location),
      el('td', { class: 'finding' }, e.detail),
      el('td', { class: 'nowrap', title: typeof e.p_value === 'number' ? `p = ${e.p_value}` : null }, certaintyWords(e.p_value)),
      el('td', {}, e.test),
      el('td', { class: 'nowrap' }, typeof e.effect_size === 'number' ? Number(e.effect_size.toPrecision(3)).toString() : '–',
        e.effect ? el('small', { class: 'muted' }, ` ${e.effect}`) : null),
      el('td', { class: 'small muted' }, e.data))))));
}

function diagnosisNode(node) {
  const open = node.status === 'detected';
  const body = el('div', { class: 'diag-body', hidden: !open },
    node.description ? el('p', { class: 'what' }, node.description) : null,
    node.evidence.length ? evidenceTable(node.evidence) : el('p', { class: 'muted small' }, 'No evidence recorded.'),
    el('div', { class: 'diag-charts' }, diagnosisCharts(node.charts, node.id)));
  const children = el('div', { class: 'diag-children' }, node.children.map(diagnosisNode));
  const details = el('button', { class: 'diag-details', 'aria-expanded': String(open) }, open ? 'hide evidence' : 'evidence');
  details.addEventListener('click', () => {
    body.hidden = !body.hidden;
    details.setAttribute('aria-expanded', String(!body.hidden));
    details.textContent = body.hidden ? 'evidence' : 'hide evidence';
  });
  const toggle = node.children.length
    ? el('button', { class: 'toggle', 'aria-expanded': 'true', 'aria-label': 'collapse' }, '▾')
    : el('span', { class: 'toggle-space' });
  if (node.children.length) {
    toggle.addEventListener('click', () => {
      children.hidden = !children.hidden;
      toggle.setAttribute('aria-expanded', String(!children.hidden));
      toggle.setAttribute('aria-label', children.hidden ? 'expand' : 'collapse');
      toggle.textContent = children.hidden ? '▸' : '▾';
    });
  }
  return el('div', { class: `diag-node ${node.status}`, 'data-id': node.id, 'data-status': node.status },
    el('div', { class: 'diag-head' }, toggle, statusBadge(node.status),
      el('span', { class: 'diag-title' }, node.title), details,
      el('span', { class: 'diag-reason' }, node.reason)),
    body, children);
}

function diagnosisSummary(report) {
  const found = [], unchecked = [];
  walkNodes(report.root, (n) => {
    if (n.status === 'detected') found.push(n);
    if (n.status === 'not_evaluated') unchecked.push(n);
  });
  const counts = el('div', { class: 'diag-counts', id: 'diag-counts' },
    Object.keys(DIAG_STATUS_WORDS).map((s) => el('div', { class: `stat count-${s}`, 'data-status': s, title: DIAG_STATUS_MEANING[s] },
      el('span', { class: 'stat-label' }, DIAG_STATUS_WORDS[s]), el('span', { class: 'stat-value' }, String(report.counts[s])))));
  const lookAt = (n) => [...new Set(n.evidence.filter(supportsFinding).map((e) => e.location).filter(Boolean))].slice(0, 3);
  const mostSpecific = found[found.length - 1];
  return el('section', { class: 'card', id: 'diag-summary' }, el('h1', {}, 'Diagnosis'),
    el('p', { class: 'muted' }, `Experiment data `, el('code', {}, report.data), ` · ${report.experiments} experiment(s).`),
    report.complete ? null : errorBox(`The run did not complete: ${report.incomplete_reason}. The results cover only the experiments that finished.`),
    // About the measurement, not a verdict (a busy machine): before the findings they qualify.
    diagArr(report.warnings).length
      ? el('div', { id: 'diag-warnings' }, diagArr(report.warnings).map((w) => el('p', { class: 'note', role: 'note' }, diagStr(w))))
      : null,
    counts,
    found.length
      ? el('p', { class: 'lead' }, `${found.length} problem(s) found. The most specific: `, el('b', {}, mostSpecific.title), ` — ${mostSpecific.reason}.`)
      : el('p', { class: 'lead' }, `No performance problem was detected${unchecked.length ? ' among the checks that could run' : ''}.`),
    found.length ? el('ul', { class: 'diag-findings', id: 'diag-findings' }, found.map((n) => el('li', { 'data-id': n.id },
      el('b', {}, n.title), `: ${n.reason}`,
      lookAt(n).length ? el('span', {}, ' — look at ', lookAt(n).flatMap((l, i) => [i ? ', ' : '', el('code', {}, l)])) : null))) : null,
    unchecked.length ? el('details', { class: 'diag-unchecked' },
      el('summary', {}, `${unchecked.length} check(s) could not run (data missing)`),
      el('ul', {}, unchecked.map((n) => el('li', {}, el('b', {}, n.title), `: ${n.reason}`)))) : null);
}

async function renderDiagnosis() {
  show(el('p', { class: 'muted' }, 'Loading the diagnosis report…'));
  let report;
  try {
    report = await api('/api/diagnosis');
  } catch (e) {
    show(el('section', { class: 'card' }, el('h1', {}, 'Diagnosis'), errorBox(e.message)));
    return;
  }
  show(diagnosisSummary(report),
    el('section', { class: 'card' }, el('h2', {}, 'Problem hierarchy'),
      el('p', { class: 'muted small' }, 'Each problem is examined only when the one above it was detected. ',
        Object.keys(DIAG_STATUS_WORDS).flatMap((s) => [statusBadge(s), ` ${DIAG_STATUS_MEANING[s]}. `])),
      el('div', { class: 'diag-tree', id: 'diagnosis-tree' }, diagnosisNode(report.root))));
}

sondeViews.diagnosis = () => renderDiagnosis();
sondeSteadyViews.add('diagnosis');
// The tab shows only when the server has a report.
api('/api/diagnosis').then(() => { document.querySelector('.tabs a[data-view=diagnosis]').hidden = false; }, () => {});
