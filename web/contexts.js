// The calling-context view (#/contexts): how much of each operation's
// response-time spread its callers, stacks and traces explain, and the
// calling-context tree of the timing model (/api/context, /api/context/tree).
// Same rule as app.js: strings from the log only ever become text (el()).
'use strict';

const CONTEXT_LEVELS = ['operation', 'caller', 'stack', 'trace', 'model'];
const CONTEXT_MODEL_FIELDS = ['min_observations', 'similarity', 'max_leaves'];

function percentText(p) {
  return `${Number(p).toFixed(1)} %`;
}

// A horizontal bar per level: σ reduction against the operation level.
function reductionChart(levels) {
  const rowH = 30, labelW = 110, width = 640, plotW = width - labelW - 70;
  const height = 24 + levels.length * rowH;
  const svg = el('svg:svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', id: 'context-chart', 'aria-label': 'σ reduction per context level' });
  for (const f of [0, 25, 50, 75, 100]) {
    const gx = labelW + plotW * f / 100;
    svg.append(el('svg:line', { x1: gx, x2: gx, y1: 16, y2: height - 4, class: 'gridline' }),
      el('svg:text', { x: gx, y: 11, class: 'axis', 'text-anchor': 'middle' }, `${f} %`));
  }
  levels.forEach((l, i) => {
    const y = 20 + i * rowH;
    const w = plotW * Math.max(0, Math.min(100, l.sd_reduction_percent)) / 100;
    svg.append(
      el('svg:text', { x: labelW - 8, y: y + 14, class: 'label', 'text-anchor': 'end' }, l.level),
      el('svg:rect', { x: labelW, y: y + 3, width: Math.max(1, w), height: 16, rx: 3, class: l.level === 'model' ? 'bar-model' : 'bar-level' }),
      el('svg:text', { x: labelW + w + 6, y: y + 15, class: 'axis' }, percentText(l.sd_reduction_percent)));
  });
  return el('figure', { class: 'chart-figure' }, svg,
    el('figcaption', { class: 'muted' }, 'Share of the response-time spread (execution-weighted σ) that each context level explains, against the operation alone.'));
}

function contextModelForm(params) {
  const field = (name, label, hint) => el('label', { class: 'field' }, el('span', {}, label),
    el('input', { name, value: params[name] || '', placeholder: hint, inputmode: 'decimal', size: 9 }));
  const form = el('form', { class: 'search', id: 'context-form' },
    field('min_observations', 'Min observations', '30'),
    field('similarity', 'Merge distance', '0.5'),
    field('max_leaves', 'Max contexts', '0 = no limit'),
    el('div', { class: 'actions' }, el('button', { type: 'submit', class: 'primary' }, 'Rebuild model')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    for (const name of CONTEXT_MODEL_FIELDS) {
      const v = form.elements[name].value.trim();
      if (v) q.set(name, v);
    }
    const hash = `#/contexts${q.toString() ? '?' + q : ''}`;
    if (location.hash === hash) route(); else location.hash = hash;
  });
  return form;
}

function levelTable(levels) {
  return el('div', { class: 'table-wrap' },
    el('table', { class: 'grid', id: 'context-levels' },
      el('thead', {}, el('tr', {}, ['Level', 'Contexts', 'Executions / context', 'Weighted σ', 'σ reduction', 'In bimodal contexts'].map((h) => el('th', {}, h)))),
      el('tbody', {}, levels.map((l) => el('tr', { class: l.level === 'model' ? 'emph' : '' },
        el('td', {}, l.level),
        el('td', { class: 'num' }, String(l.contexts)),
        el('td', { class: 'num' }, Number(l.observations_per_context).toFixed(1)),
        el('td', { class: 'num' }, formatDuration(l.weighted_sd_ns)),
        el('td', { class: 'num' }, el('div', { class: 'pct' },
          el('span', { class: 'bar-track' }, el('span', { class: 'bar', style: `width:${Math.max(0, Math.min(100, l.sd_reduction_percent)).toFixed(1)}%` })),
          el('span', {}, percentText(l.sd_reduction_percent)))),
        el('td', { class: 'num' }, percentText(l.bimodal_percent)))))));
}

function operationTable(ops) {
  const pct = (p) => el('td', { class: 'num' }, percentText(p));
  return el('div', { class: 'table-wrap' },
    el('table', { class: 'grid', id: 'context-ops' },
      el('thead', {}, el('tr', {}, ['Operation', 'Executions', 'σ', 'Callers', 'Stacks', 'Traces', 'Model', 'by caller', 'by stack', 'by trace', 'by model'].map((h) => el('th', {}, h)))),
      el('tbody', {}, ops.map((o) => el('tr', {},
        el('td', { class: 'op', title: o.operation },
          el('a', { href: `#/contexts?${new URLSearchParams({ ...contextModelParams(), operation: o.operation })}` }, shortOperation(o.operation))),
        el('td', { class: 'num' }, String(o.executions)),
        el('td', { class: 'num' }, formatDuration(o.sd_ns)),
        el('td', { class: 'num' }, String(o.caller_contexts)),
        el('td', { class: 'num' }, String(o.stack_contexts)),
        el('td', { class: 'num' }, String(o.trace_contexts)),
        el('td', { class: 'num' }, String(o.model_contexts)),
        pct(o.caller_reduction_percent), pct(o.stack_reduction_percent),
        pct(o.trace_reduction_percent), pct(o.model_reduction_percent))))));
}

// The model parameters of the current page, to carry into links.
function contextModelParams() {
  const [, query] = (location.hash || '').slice(1).split('?');
  const p = Object.fromEntries(new URLSearchParams(query || ''));
  return Object.fromEntries(CONTEXT_MODEL_FIELDS.filter((k) => p[k]).map((k) => [k, p[k]]));
}

// The tree as a table: parents before children (the API's order), each
// row collapsible; linked leaves name the ancestor that models them.
function contextTree(tree) {
  const body = el('tbody');
  const rows = new Map();
  const depthOf = new Map();
  const total = Math.max(1, tree.nodes.length ? tree.nodes[0].n : 1);
  const labelOf = new Map(tree.nodes.map((n) => [n.id, n.label]));
  for (const n of tree.nodes) {
    const depth = depthOf.has(n.parent) ? depthOf.get(n.parent) + 1 : 0;
    depthOf.set(n.id, depth);
    const toggle = n.children
      ? el('button', { class: 'toggle', 'aria-expanded': 'true', 'aria-label': 'collapse' }, '▾')
      : el('span', { class: 'toggle-space' });
    const row = el('tr', { 'data-depth': depth, 'data-id': n.id, class: n.leaf ? 'leaf' : '' },
      el('td', { class: 'op', title: n.label },
        el('div', { class: 'tree-cell', style: `padding-left:${depth * 1.1}rem` }, toggle,
          el('span', { class: `level-tag ${n.level}` }, n.level),
          el('span', { class: 'op-name' }, n.label),
          n.merged_contexts > 1 ? el('span', { class: 'badge warn' }, `${n.merged_contexts} merged`) : null,
          n.linked_to !== undefined ? el('span', { class: 'badge', title: labelOf.get(n.linked_to) || `node ${n.linked_to}` }, 'linked') : null)),
      el('td', { class: 'num' }, String(n.n)),
      el('td', { class: 'num' }, el('div', { class: 'pct' },
        el('span', { class: 'bar-track' }, el('span', { class: 'bar', style: `width:${(100 * n.n / total).toFixed(1)}%` })),
        el('span', {}, `${(100 * n.n / total).toFixed(1)}%`))),
      el('td', { class: 'num' }, n.median_ns !== undefined ? formatDuration(n.median_ns) : '–'),
      el('td', { class: 'num' }, n.iqr_ns !== undefined ? formatDuration(n.iqr_ns) : '–'),
      el('td', { class: 'num' }, n.sd_ns !== undefined ? formatDuration(n.sd_ns) : '–'));
    row.descendants = [];
    row.isOpen = true;
    rows.set(n.id, row);
    for (let p = rows.get(n.parent); p; p = rows.get(p.parentId)) p.descendants.push(row);
    row.parentId = n.parent;
    body.append(row);
    if (n.children) {
      toggle.addEventListener('click', () => {
        row.isOpen = !row.isOpen;
        toggle.setAttribute('aria-expanded', String(row.isOpen));
        toggle.setAttribute('aria-label', row.isOpen ? 'collapse' : 'expand');
        toggle.textContent = row.isOpen ? '▾' : '▸';
        // Descendants come in document order, so each one's parent is already
        // decided; re-opening shows only what the inner toggles leave open.
        for (const r of row.descendants) {
          const parent = rows.get(r.parentId);
          r.hidden = parent.hidden || !parent.isOpen;
        }
      });
    }
  }
  return el('div', { class: 'table-wrap' },
    el('table', { class: 'grid tree', id: 'context-tree' },
      el('thead', {}, el('tr', {}, ['Context', 'Executions', 'Share', 'Median', 'IQR', 'σ'].map((h) => el('th', {}, h)))),
      body));
}

async function renderContexts(params) {
  show(el('p', { class: 'muted' }, 'Building the calling-context model…'));
  const model = Object.fromEntries(CONTEXT_MODEL_FIELDS.filter((k) => params[k]).map((k) => [k, params[k]]));
  let summary, tree;
  try {
    [summary, tree] = await Promise.all([
      api('/api/context', model),
      api('/api/context/tree', { ...model, max_nodes: 600, operation: params.operation }),
    ]);
  } catch (e) {
    show(el('section', { class: 'card' }, el('h1', {}, 'Calling contexts'), contextModelForm(params), errorBox(e.message)));
    return;
  }
  const log = summary.log;
  const m = summary.model;
  const omitted = tree.omitted_by_size + tree.omitted_by_depth;
  show(
    el('section', { class: 'card' }, el('h1', {}, 'Calling contexts'),
      el('p', { class: 'muted' }, `${log.executions} executions of ${log.operations} operations in ${log.traces} traces ` +
        `(${log.shapes} distinct call trees${log.skipped_traces ? `, ${log.skipped_traces} traces skipped` : ''}). ` +
        'An operation\'s executions are split by caller, by whole stack and by position in the trace; ' +
        'the model shrinks that tree to the contexts that really differ.'),
      log.errors.length ? errorBox(`Reading the log: ${log.errors.join('; ')}`) : null,
      contextModelForm(params),
      el('div', { class: 'two-col' }, levelTable(summary.levels), reductionChart(summary.levels)),
      el('p', { class: 'muted small', id: 'model-operators' }, `Model: min ${m.min_observations} observations, merge distance ${m.similarity}, ` +
        `max contexts ${m.max_leaves || 'unlimited'}; the operators removed ${m.removed}, linked ${m.linked} and merged ${m.merged} contexts.`)),
    el('section', { class: 'card' }, el('h2', {}, 'Per operation'),
      el('p', { class: 'muted small' }, 'Context counts per level, and how much of the operation\'s own σ each level explains. Click an operation for its tree.'),
      operationTable(summary.operations)),
    el('section', { class: 'card' },
      el('h2', {}, tree.operation ? `Context tree of ${shortOperation(tree.operation)}` : 'Context tree'),
      tree.operation ? el('p', { class: 'muted mono full-op' }, tree.operation,
        ' · ', el('a', { href: `#/contexts?${new URLSearchParams(contextModelParams())}` }, 'whole tree')) : null,
      el('p', { class: 'muted small', id: 'tree-count' }, `${tree.shown_nodes} of ${tree.total_nodes} nodes` +
        (omitted ? ` (largest first; ${omitted} smaller ones left out)` : '') + '. Leaves are the model\'s contexts; a linked leaf is modelled by an ancestor.'),
      contextTree(tree)));
}

sondeViews.contexts = (parts, params) => renderContexts(params);
