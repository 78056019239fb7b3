// The diagnosis view (#/diagnosis): the report of `sonde diagnose`
// (/api/diagnosis, docs/diagnose/report.md) for someone who is not a
// performance expert: what was found and where to look first, then the
// problem hierarchy as a collapsible tree, each node with its evidence and
// the charts the server computed for it with report.html's code.
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

function statusBadge(status) {
  return el('span', { class: `status-badge ${status}`, title: DIAG_STATUS_MEANING[status] }, DIAG_STATUS_WORDS[status] || status);
}

function walkNodes(node, visit, depth = 0) {
  visit(node, depth);
  for (const c of node.children) walkNodes(c, visit, depth + 1);
}

// ---- charts: the plots the server adds to each node, computed by the code
// report.html is drawn with (src/diagnose/report_view.cpp): titles, axes and
// series are decided there, this only draws them.

const diagArr = (v) => (Array.isArray(v) ? v : []);
const diagStr = (v) => (typeof v === 'string' ? v : '');
const diagNums = (v) => diagArr(v).map((x) => finiteOr(x, NaN));
const diagLines = (v) => diagArr(v).map((l) => ({ value: finiteOr(l && l.value, NaN), label: diagStr(l && l.label) }));

function diagnosisCharts(plots, nodeId) {
  const perKind = {};
  return diagArr(plots).filter((p) => p && typeof p === 'object').map((p) => {
    const kind = diagStr(p.kind);
    perKind[kind] = (perKind[kind] ?? -1) + 1;
    return lineChart({
      kind, id: `chart-${nodeId}-${kind}-${perKind[kind]}`,
      title: diagStr(p.title), xLabel: diagStr(p.x_label), yLabel: diagStr(p.y_label),
      series: diagArr(p.series).filter((q) => q && typeof q === 'object').map((q) => ({
        name: diagStr(q.name), x: diagNums(q.x), y: diagNums(q.y), dashed: q.dashed === true,
        low: diagArr(q.low).length ? diagNums(q.low) : null, high: diagArr(q.high).length ? diagNums(q.high) : null })),
      hlines: diagLines(p.hlines), vlines: diagLines(p.vlines),
      shaded: diagArr(p.shaded).filter((r) => Array.isArray(r)).map(([a, z]) => [finiteOr(a, NaN), finiteOr(z, NaN)])
        .filter(([a, z]) => Number.isFinite(a) && Number.isFinite(z)),
    });
  });
}

// A row that records a check found within limits (the server says which).
const supportsFinding = (e) => e.supports_finding !== false;

// ---- the page

function evidenceTable(evidence) {
  return el('div', { class: 'table-wrap' }, el('table', { class: 'grid evidence' },
    el('thead', {}, el('tr', {}, ['Where', 'Finding', 'How sure', 'Test', 'Effect size', 'Data'].map((h) => el('th', {}, h)))),
    el('tbody', {}, evidence.map((e) => el('tr', { class: supportsFinding(e) ? '' : 'fine', title: supportsFinding(e) ? null : 'checked and found within limits' },
      el('td', { class: 'mono where' }, e.location),
      el('td', { class: 'finding' }, e.detail),
      el('td', { class: 'nowrap', title: typeof e.p_value === 'number' ? `p = ${e.p_value}` : null }, diagStr(e.certainty)),
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
    el('div', { class: 'diag-charts' }, diagnosisCharts(node.plots, node.id)));
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
  const lookAt = (n) => diagArr(n.look_at).map(diagStr).filter(Boolean);
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
