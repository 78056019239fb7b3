// The sonde web UI: plain JavaScript over the JSON API (/api/...).
// Safety rule: every string that comes from a trace (operation names, hosts,
// exception causes) reaches the page as a text node or an attribute value,
// never as markup. Nothing in this file parses a string as HTML; el() below
// is the only way elements are made.
// About 600 lines: the helpers every view uses (el(), api(), formatting,
// routing) and the trace search, one trace, operations and graph views
// built on them; the charts, live, contexts, reduced and diagnosis views
// are in files of their own.
'use strict';

// ---------------------------------------------------------------- helpers

const SVG_NS = 'http://www.w3.org/2000/svg';

// el('div', {class: 'x', onclick: f}, 'text', child, ...): strings become text nodes.
function el(tag, attrs, ...children) {
  const node = tag.startsWith('svg:')
    ? document.createElementNS(SVG_NS, tag.slice(4))
    : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    // Through the CSSOM: the Content-Security-Policy blocks style attributes.
    else if (key === 'style') node.style.cssText = value;
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function formatDuration(ns) {
  if (ns === null || ns === undefined || Number.isNaN(ns)) return '–';
  const abs = Math.abs(ns);
  if (abs < 1e3) return `${Math.round(ns)} ns`;
  if (abs < 1e6) return `${(ns / 1e3).toPrecision(3)} µs`;
  if (abs < 1e9) return `${(ns / 1e6).toPrecision(3)} ms`;
  return `${(ns / 1e9).toPrecision(3)} s`;
}

// "250us", "12ms", "1.5s", "800ns", or a plain number of milliseconds -> ns.
function parseDuration(text) {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ns|us|µs|ms|s)?\s*$/.exec(text);
  if (!m) return null;
  const unit = { ns: 1, us: 1e3, 'µs': 1e3, ms: 1e6, s: 1e9 }[m[2] || 'ms'];
  return Math.round(parseFloat(m[1]) * unit);
}

function formatTime(ns) {
  if (!ns) return '–';
  const d = new Date(ns / 1e6);
  const pad = (n, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

// ns since the epoch <-> the value of an <input type="datetime-local" step="0.001">.
function toLocalInput(ns) {
  const d = new Date(ns / 1e6 - new Date(ns / 1e6).getTimezoneOffset() * 60000);
  return d.toISOString().slice(0, 23);
}
function fromLocalInput(text) {
  const ms = new Date(text).getTime();
  return Number.isNaN(ms) ? null : BigInt(ms) * 1000000n;
}

// A stable pleasant colour per component, so the same class looks the same everywhere.
function colorFor(text) {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) >>> 0;
  return `hsl(${h % 360}, 55%, 62%)`;
}

// Where a name's qualified part begins (after a return type or Java's
// modifiers), its scope separators ("::" or "." outside brackets) and its
// parameter list: src/format/function_name.hpp does the same in C++.
function splitOperation(op) {
  const seps = [];
  let depth = 0, begin = 0, params = -1;
  for (let i = 0; i < op.length; i++) {
    if (op.startsWith('(anonymous namespace)', i)) { i += 20; continue; }
    if (depth === 0 && op.startsWith('decltype', i) && (i === 0 || op[i - 1] === ' ')) {
      // A return type's "decltype (…)": its parentheses are no parameter list.
      let j = i + 8;
      while (op[j] === ' ') j++;
      if (op[j] === '(') {
        for (let parens = 0; j < op.length; j++) {
          if (op[j] === '(') parens++;
          if (op[j] === ')' && --parens === 0) break;
        }
        i = j;
        continue;
      }
    }
    if (op.startsWith('operator', i) && (i === 0 || op[i - 1] === ':' || op[i - 1] === ' ')) {
      i += 8;
      if (op.startsWith('()', i)) i++;
      while (i + 1 < op.length && op[i + 1] !== '(') i++;
      continue;
    }
    const c = op[i];
    if (c === '<' || c === '[' || c === '{') depth++;
    else if (c === '>' || c === ']' || c === '}') depth--;
    else if (c === '(') { if (depth === 0) { params = i; break; } depth++; }
    else if (c === ')') depth--;
    else if (depth === 0 && c === ' ') { begin = i + 1; seps.length = 0; }
    else if (depth === 0 && c === ':' && op[i + 1] === ':') { seps.push([i, 2]); i++; }
    else if (depth === 0 && c === '.') seps.push([i, 1]);
  }
  return { begin, seps, params };
}

// The name and its owner, as its language writes them; the full name stays
// in the tooltip. "public int a.b.C.op(int)" -> "C.op(..)",
// "shapes::Circle::area() const" -> "Circle::area()", "main" -> "main".
function shortOperation(op) {
  if (!op) return '(none)';
  const { begin, seps, params } = splitOperation(op);
  // No parameters and no scope: a manual probe's own words ("GET /items"), a C
  // function or its compiler clone ("parse.constprop.0", whose dots separate no scope).
  if (params < 0 && !op.includes('::')) return op;
  const end = params >= 0 ? params : op.length;
  const from = seps.length >= 2 ? seps[seps.length - 2][0] + seps[seps.length - 2][1] : begin;
  const short = op.slice(from, end);
  if (params < 0) return short;
  const close = op.lastIndexOf(')');
  return `${short}(${close > params + 1 ? '..' : ''})`;
}

class ApiError extends Error {}

async function api(path, params) {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== '' && v !== undefined && v !== null) query.set(k, String(v));
  }
  const url = query.toString() ? `${path}?${query}` : path;
  const response = await fetch(url, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
  const body = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw new ApiError(body.error || `HTTP ${response.status}`);
  return body;
}

const main = () => document.getElementById('main');

function show(...nodes) {
  main().replaceChildren(...nodes);
}

function errorBox(message) {
  return el('div', { class: 'error', role: 'alert' }, message);
}

function toast(message) {
  const t = document.getElementById('toast');
  t.textContent = message;
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, 2500);
}

// ---------------------------------------------------------------- state & routing

const state = { info: null, generation: null, search: {} };

// Views defined in other files (contexts.js, …): name -> (parts, params) => render.
const sondeViews = {};
// Views that keep themselves current (live.js) or whose data is not the
// trace store's (diagnosis.js): a new store generation does not redraw them.
const sondeSteadyViews = new Set();

function currentView() {
  return (location.hash || '#/traces').slice(1).split('?')[0].split('/').filter(Boolean)[0] || 'traces';
}

function route() {
  const hash = location.hash || '#/traces';
  const [path, query] = hash.slice(1).split('?');
  const params = Object.fromEntries(new URLSearchParams(query || ''));
  const parts = path.split('/').filter(Boolean);
  const view = parts[0] || 'traces';
  for (const a of document.querySelectorAll('.tabs a')) {
    a.classList.toggle('active', a.dataset.view === view || (view === 'trace' && a.dataset.view === 'traces'));
  }
  if (view === 'trace' && parts[1]) return renderTrace(decodeURIComponent(parts[1]), params);
  if (view === 'operations') return renderOperations();
  if (view === 'graph') return renderGraph();
  if (Object.hasOwn(sondeViews, view)) return sondeViews[view](parts, params);
  return renderTraces(params);
}

// ---------------------------------------------------------------- trace search

const searchFields = ['operation', 'host', 'min', 'max', 'from', 'to', 'status', 'order', 'offset'];

function searchToApi(s) {
  const p = { limit: 50, order: s.order || 'start', offset: s.offset || 0 };
  if (s.operation) p.operation = s.operation;
  if (s.host) p.host = s.host;
  if (s.min) {
    const v = parseDuration(s.min);
    if (v === null) throw new ApiError(`Minimum duration: cannot read "${s.min}" (try 5ms, 250us, 1.5s)`);
    p.min_ns = v;
  }
  if (s.max) {
    const v = parseDuration(s.max);
    if (v === null) throw new ApiError(`Maximum duration: cannot read "${s.max}" (try 5ms, 250us, 1.5s)`);
    p.max_ns = v;
  }
  if (s.from) {
    const v = fromLocalInput(s.from);
    if (v === null) throw new ApiError('From: not a date and time');
    p.from = v;
  }
  if (s.to) {
    const v = fromLocalInput(s.to);
    if (v === null) throw new ApiError('To: not a date and time');
    p.to = v + 999999n;  // the whole last millisecond
  }
  if (s.status === 'failed') p.failed = 'true';
  if (s.status === 'invalid') p.invalid = 'only';
  if (s.status === 'all') p.invalid = 'include';
  return p;
}

function searchForm(s) {
  const hosts = (state.info && state.info.hosts) || [];
  const input = (name, label, attrs) => el('label', { class: 'field' }, el('span', {}, label),
    el('input', { name, value: s[name] || '', ...attrs }));
  const select = (name, label, options) => el('label', { class: 'field' }, el('span', {}, label),
    el('select', { name }, options.map(([value, text]) =>
      el('option', { value, selected: (s[name] || '') === value }, text))));
  const form = el('form', { class: 'search', id: 'search-form', onsubmit: (ev) => {
    ev.preventDefault();
    const data = Object.fromEntries(new FormData(form));
    data.offset = 0;
    navigateSearch(data);
  } },
  input('operation', 'Operation contains', { placeholder: 'e.g. searchBook', type: 'search', class: 'wide' }),
  select('host', 'Host', [['', 'any host'], ...hosts.map((h) => [h, h])]),
  input('min', 'Min duration', { placeholder: '0', size: 7 }),
  input('max', 'Max duration', { placeholder: '∞', size: 7 }),
  input('from', 'From', { type: 'datetime-local', step: '0.001' }),
  input('to', 'To', { type: 'datetime-local', step: '0.001' }),
  select('status', 'Status', [['', 'valid traces'], ['failed', 'with failures'], ['invalid', 'invalid only'], ['all', 'valid + invalid']]),
  select('order', 'Order', [['start', 'earliest first'], ['duration', 'longest first']]),
  el('div', { class: 'actions' },
    el('button', { type: 'submit', class: 'primary' }, 'Search'),
    el('button', { type: 'button', onclick: () => navigateSearch({}) }, 'Reset')));
  return form;
}

function navigateSearch(s) {
  const q = new URLSearchParams();
  for (const k of searchFields) if (s[k]) q.set(k, s[k]);
  const hash = `#/traces${q.toString() ? '?' + q : ''}`;
  if (location.hash === hash) route(); else location.hash = hash;
}

// Duration against start time for (up to) the first 1000 matching traces: outliers stand out.
function scatterPlot(traces, matched, estimated) {
  const width = 1000, height = 170, left = 64, right = 12, top = 10, bottom = 24;
  const t0 = Math.min(...traces.map((t) => t.start_ns));
  const t1 = Math.max(...traces.map((t) => t.start_ns));
  const dmax = Math.max(1, ...traces.map((t) => t.duration_ns));
  const x = (ns) => left + (width - left - right) * (t1 > t0 ? (ns - t0) / (t1 - t0) : 0.5);
  const y = (d) => height - bottom - (height - top - bottom) * Math.sqrt(d / dmax);
  const svg = el('svg:svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart scatter', id: 'scatter', role: 'img', 'aria-label': 'Trace durations over time' });
  for (const f of [0, 0.25, 1]) {
    svg.append(el('svg:line', { x1: left, x2: width - right, y1: y(f * dmax), y2: y(f * dmax), class: 'gridline' }),
      el('svg:text', { x: left - 6, y: y(f * dmax) + 4, class: 'axis', 'text-anchor': 'end' }, formatDuration(f * dmax)));
  }
  svg.append(el('svg:text', { x: left, y: height - 6, class: 'axis' }, formatTime(t0)),
    el('svg:text', { x: width - right, y: height - 6, class: 'axis', 'text-anchor': 'end' }, formatTime(t1)));
  for (const t of traces) {
    const dot = el('svg:circle', { cx: x(t.start_ns).toFixed(1), cy: y(t.duration_ns).toFixed(1), r: 3.2,
      class: t.failed_executions ? 'dot failed' : (t.valid ? 'dot' : 'dot invalid') },
    el('svg:title', {}, `${shortOperation(t.root_operation)} · ${formatDuration(t.duration_ns)} · ${formatTime(t.start_ns)}`));
    dot.addEventListener('click', () => { location.hash = `#/trace/${encodeURIComponent(t.trace_id)}`; });
    svg.append(dot);
  }
  return el('figure', { class: 'chart-figure' }, svg,
    el('figcaption', { class: 'legend' }, `Duration over start time of ${traces.length < matched ? `the first ${traces.length} of ` : ''}${estimated ? 'about ' : ''}${matched} matching traces (square-root scale); click a dot to open the trace.`));
}

async function renderTraces(s) {
  state.search = s;
  const results = el('section', { class: 'card results', 'aria-busy': 'true' }, el('p', { class: 'muted' }, 'Searching…'));
  const plot = el('div', { class: 'plot' });
  show(el('section', { class: 'card' }, el('h1', {}, 'Traces'), reducedNote(), searchForm(s), plot), results);
  let data;
  try {
    const query = searchToApi(s);
    data = await api('/api/traces', query);
    if (data.matched > 1) {
      const overview = await api('/api/traces', { ...query, order: 'start', offset: 0, limit: 1000 });
      plot.replaceChildren(scatterPlot(overview.traces, overview.matched, overview.matched_estimated));
    }
  } catch (e) {
    results.replaceChildren(errorBox(e.message));
    return;
  }
  results.removeAttribute('aria-busy');
  const offset = Number(s.offset || 0);
  const longest = Math.max(1, ...data.traces.map((t) => t.duration_ns));
  const rows = data.traces.map((t) => {
    const href = `#/trace/${encodeURIComponent(t.trace_id)}`;
    return el('tr', { class: t.valid ? '' : 'invalid', 'data-trace-id': t.trace_id },
      el('td', { class: 'mono' }, el('a', { href }, String(t.trace_id))),
      el('td', { class: 'nowrap' }, formatTime(t.start_ns)),
      el('td', { class: 'num' },
        el('div', { class: 'duration-cell' },
          el('span', { class: 'bar-track' }, el('span', { class: 'bar', style: `width:${Math.max(2, 100 * t.duration_ns / longest).toFixed(1)}%` })),
          el('span', {}, formatDuration(t.duration_ns)))),
      el('td', { class: 'num opt' }, String(t.executions)),
      el('td', { class: 'num opt' }, t.failed_executions ? el('span', { class: 'badge bad' }, String(t.failed_executions)) : '0'),
      el('td', { class: 'opt host' }, t.host),
      el('td', { class: 'op', title: t.root_operation },
        el('a', { href }, shortOperation(t.root_operation)),
        t.valid ? null : el('span', { class: 'badge warn', title: t.problem || '' }, 'invalid')));
  });
  const pager = el('div', { class: 'pager' },
    el('span', { class: 'muted', id: 'match-count' },
      data.matched === 0 ? 'No trace matches.' :
        `${offset + 1}–${offset + data.traces.length} of ${data.matched_estimated ? 'about ' : ''}${data.matched} matching traces`),
    el('button', { disabled: offset === 0, onclick: () => navigateSearch({ ...s, offset: Math.max(0, offset - 50) }) }, '‹ Previous'),
    el('button', { disabled: offset + data.traces.length >= data.matched, onclick: () => navigateSearch({ ...s, offset: offset + 50 }) }, 'Next ›'));
  results.replaceChildren(pager,
    el('div', { class: 'table-wrap' },
      el('table', { class: 'grid', id: 'trace-table' },
        el('thead', {}, el('tr', {}, ['Trace id', 'Start', 'Duration', 'Calls', 'Failed', 'Host', 'Root operation'].map((h, i) => el('th', { class: i >= 3 && i <= 5 ? 'opt' : '' }, h)))),
        el('tbody', {}, rows))));
}

// ---------------------------------------------------------------- one trace

// Children lists from eoi/ess order: a call's parent is the last open call one level up.
function buildTree(calls) {
  const nodes = calls.map((c) => ({ call: c, children: [] }));
  const roots = [];
  const stack = [];
  for (const n of nodes) {
    while (stack.length && stack[stack.length - 1].call.ess >= n.call.ess) stack.pop();
    if (stack.length) stack[stack.length - 1].children.push(n); else roots.push(n);
    stack.push(n);
  }
  return roots;
}

function timeline(trace) {
  const start = trace.start_ns;
  const total = Math.max(1, trace.duration_ns);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) =>
    el('span', { class: 'tick', style: `left:${f * 100}%` }, formatDuration(f * total)));
  const rows = trace.calls.map((c) => {
    const end = c.tout_ns >= 0 ? c.tout_ns : trace.start_ns + trace.duration_ns;
    const left = 100 * (c.tin_ns - start) / total;
    const width = Math.max(0.3, 100 * (end - c.tin_ns) / total);
    const label = shortOperation(c.operation);
    return el('div', { class: 'wf-row' + (c.failed ? ' failed' : ''), title: c.operation },
      el('div', { class: 'wf-name', style: `padding-left:${0.4 + c.ess * 0.9}rem` }, label),
      el('div', { class: 'wf-track' },
        el('div', { class: 'wf-bar', style: `left:${left.toFixed(3)}%;width:${width.toFixed(3)}%;background:${colorFor(c.component || c.operation)}` }),
        // The label goes inside a wide bar, after a narrow one, or before one that ends near the right edge.
        width >= 25
          ? el('span', { class: 'wf-time inside', style: `left:${left.toFixed(3)}%` }, formatDuration(c.inclusive_ns))
          : left + width <= 82
          ? el('span', { class: 'wf-time', style: `left:${(left + width).toFixed(3)}%` }, formatDuration(c.inclusive_ns))
          : el('span', { class: 'wf-time before', style: `right:${(100 - left).toFixed(3)}%` }, formatDuration(c.inclusive_ns))));
  });
  return el('div', { class: 'waterfall', id: 'timeline' },
    el('div', { class: 'wf-row wf-axis' }, el('div', { class: 'wf-name muted' }, 'Operation'), el('div', { class: 'wf-track' }, ticks)),
    rows);
}

const callTreeHeaders = ['Operation', 'Inclusive', 'Exclusive', '% of trace', 'Component', 'Host', 'Failure'];

function callTree(trace, headers = callTreeHeaders) {
  const total = Math.max(1, trace.duration_ns);
  const body = el('tbody');
  const addRows = (node, depth, parentRow) => {
    const c = node.call;
    const toggle = node.children.length
      ? el('button', { class: 'toggle', 'aria-expanded': 'true', 'aria-label': 'collapse' }, '▾')
      : el('span', { class: 'toggle-space' });
    const row = el('tr', { class: c.failed ? 'failed' : '', 'data-depth': depth, 'data-eoi': c.eoi },
      el('td', { class: 'op', title: c.operation },
        el('div', { class: 'tree-cell', style: `padding-left:${depth * 1.1}rem` }, toggle,
          el('span', { class: 'swatch', style: `background:${colorFor(c.component || c.operation)}` }),
          el('span', { class: 'op-name' }, shortOperation(c.operation)))),
      el('td', { class: 'num' }, formatDuration(c.inclusive_ns)),
      el('td', { class: 'num' }, formatDuration(c.exclusive_ns)),
      el('td', { class: 'num' },
        el('div', { class: 'pct' }, el('span', { class: 'bar-track' }, el('span', { class: 'bar', style: `width:${(100 * c.inclusive_ns / total).toFixed(1)}%` })),
          el('span', {}, `${(100 * c.inclusive_ns / total).toFixed(1)}%`))),
      el('td', { class: 'comp', title: c.component }, c.component),
      el('td', {}, c.host),
      el('td', { class: 'cause' }, c.failed ? el('div', { class: 'clamp', title: c.cause || '' }, c.cause || 'failed') : ''));
    row.descendants = [];
    body.append(row);
    if (parentRow) parentRow.descendants.push(row);
    for (const child of node.children) {
      const before = body.children.length;
      addRows(child, depth + 1, row);
      for (let i = before + 1; i < body.children.length; i++) row.descendants.push(body.children[i]);
    }
    if (node.children.length) {
      toggle.addEventListener('click', () => {
        const open = toggle.getAttribute('aria-expanded') === 'true';
        toggle.setAttribute('aria-expanded', String(!open));
        toggle.setAttribute('aria-label', open ? 'expand' : 'collapse');
        toggle.textContent = open ? '▸' : '▾';
        for (const r of row.descendants) r.hidden = open;
      });
    }
  };
  for (const root of buildTree(trace.calls)) addRows(root, 0, null);
  return el('div', { class: 'table-wrap' },
    el('table', { class: 'grid tree', id: 'call-tree' },
      el('thead', {}, el('tr', {}, headers.map((h) => el('th', {}, h)))),
      body));
}

async function renderTrace(id, params) {
  show(el('p', { class: 'muted' }, 'Loading trace…'));
  let data;
  try {
    data = await api(`/api/traces/${encodeURIComponent(id)}`);
  } catch (e) {
    show(el('a', { href: '#/traces', class: 'back' }, '‹ Back to the search'), errorBox(e.message));
    return;
  }
  const which = Math.min(Number(params.n || 0), data.traces.length - 1);
  const trace = data.traces[which];
  const tab = params.tab === 'tree' ? 'tree' : 'timeline';
  const base = `#/trace/${encodeURIComponent(id)}?n=${which}`;
  const stat = (label, value) => el('div', { class: 'stat' }, el('span', { class: 'stat-label' }, label), el('span', { class: 'stat-value' }, value));
  const back = new URLSearchParams(Object.entries(state.search || {}).filter(([, v]) => v)).toString();
  show(
    el('a', { href: `#/traces${back ? '?' + back : ''}`, class: 'back' }, '‹ Back to the search'),
    el('section', { class: 'card' },
      el('h1', { class: 'trace-title', title: trace.root_operation }, shortOperation(trace.root_operation)),
      el('p', { class: 'muted mono full-op' }, trace.root_operation),
      data.traces.length > 1 ? el('p', { class: 'note' }, `${data.traces.length} traces share id ${id} (different processes): `,
        data.traces.map((t, i) => el('a', { href: `#/trace/${encodeURIComponent(id)}?n=${i}`, class: i === which ? 'current' : '' }, `#${i + 1} `))) : null,
      el('div', { class: 'stats' },
        stat('Trace id', String(trace.trace_id)),
        stat('Start', formatTime(trace.start_ns)),
        stat('Duration', formatDuration(trace.duration_ns)),
        stat('Calls', String(trace.executions)),
        stat('Failed', String(trace.failed_executions)),
        stat('Host', trace.host || '–'),
        stat('Thread', trace.thread_id >= 0 ? String(trace.thread_id) : '–')),
      trace.valid ? null : errorBox(`Invalid trace: ${trace.problem || 'unknown reason'}`)),
    el('section', { class: 'card' },
      el('nav', { class: 'subtabs' },
        el('a', { href: `${base}&tab=timeline`, class: tab === 'timeline' ? 'active' : '', id: 'tab-timeline' }, 'Timeline'),
        el('a', { href: `${base}&tab=tree`, class: tab === 'tree' ? 'active' : '', id: 'tab-tree' }, 'Call tree')),
      tab === 'tree' ? callTree(trace) : timeline(trace)));
}

// ---------------------------------------------------------------- operations

function percentileChart(ops) {
  const top = ops.slice(0, 15);
  const rowH = 26, labelW = 250, width = 900, plotW = width - labelW - 20;
  const max = Math.max(1, ...top.map((o) => o.p99_ns || o.max_ns));
  const x = (v) => labelW + plotW * Math.sqrt(v / max);  // square-root scale: small and large both readable
  const height = 34 + top.length * rowH;
  const svg = el('svg:svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', 'aria-label': 'Response time percentiles per operation', id: 'ops-chart' });
  for (const f of [0, 0.1, 0.25, 0.5, 1]) {
    const gx = x(f * max);
    svg.append(el('svg:line', { x1: gx, x2: gx, y1: 20, y2: height - 6, class: 'gridline' }),
      el('svg:text', { x: gx, y: 12, class: 'axis', 'text-anchor': 'middle' }, formatDuration(f * max)));
  }
  top.forEach((o, i) => {
    const y = 26 + i * rowH;
    svg.append(
      el('svg:text', { x: labelW - 8, y: y + 12, class: 'label', 'text-anchor': 'end' }, shortOperation(o.operation).slice(0, 38),
        el('svg:title', {}, o.operation)),
      el('svg:rect', { x: x(o.min_ns), y: y + 7, width: Math.max(1, x(o.max_ns) - x(o.min_ns)), height: 4, class: 'range', rx: 2 }),
      el('svg:rect', { x: x(o.p50_ns), y: y + 2, width: Math.max(2, x(o.p90_ns) - x(o.p50_ns)), height: 14, class: 'iqr', rx: 3 }),
      el('svg:line', { x1: x(o.p50_ns), x2: x(o.p50_ns), y1: y, y2: y + 18, class: 'median' }),
      el('svg:circle', { cx: x(o.p99_ns), cy: y + 9, r: 3.5, class: 'p99' },
        el('svg:title', {}, `p99 ${formatDuration(o.p99_ns)}`)));
  });
  return el('figure', { class: 'chart-figure' }, svg,
    el('figcaption', { class: 'legend' },
      el('span', { class: 'key range' }), 'min–max ',
      el('span', { class: 'key iqr' }), 'median–p90 ',
      el('span', { class: 'key p99' }), 'p99 ',
      el('span', { class: 'muted' }, ` · top ${top.length} by total time, square-root scale`)));
}

async function renderOperations() {
  show(el('p', { class: 'muted' }, 'Loading operations…'));
  let data;
  try {
    data = await api('/api/operations');
  } catch (e) {
    show(errorBox(e.message));
    return;
  }
  const ops = data.operations;
  const rows = ops.map((o) => el('tr', {},
    el('td', { class: 'op', title: o.operation },
      el('a', { href: `#/traces?operation=${encodeURIComponent(o.operation)}` }, shortOperation(o.operation))),
    el('td', { class: 'num' }, String(o.count)),
    el('td', { class: 'num' }, o.failed ? el('span', { class: 'badge bad' }, String(o.failed)) : '0'),
    ...['mean_ns', 'min_ns', 'p50_ns', 'p90_ns', 'p95_ns', 'p99_ns', 'max_ns'].map((k) => el('td', { class: 'num' }, formatDuration(o[k])))));
  show(
    el('section', { class: 'card' }, el('h1', {}, 'Operations'),
      el('p', { class: 'muted' }, `${ops.length} operations, inclusive response times over valid traces.`),
      ops.length ? percentileChart(ops) : null),
    el('section', { class: 'card' },
      el('div', { class: 'table-wrap' },
        el('table', { class: 'grid', id: 'ops-table' },
          el('thead', {}, el('tr', {}, ['Operation', 'Count', 'Failed', 'Mean', 'Min', 'p50', 'p90', 'p95', 'p99', 'Max'].map((h) => el('th', {}, h)))),
          el('tbody', {}, rows)))));
}

// ---------------------------------------------------------------- dependency graph

async function renderGraph() {
  show(el('p', { class: 'muted' }, 'Loading graph…'));
  let data;
  try {
    data = await api('/api/graph.json');
  } catch (e) {
    show(errorBox(e.message));
    return;
  }
  // The SVG is shown as an image: an <img> never runs scripts, whatever the SVG holds.
  const img = el('img', { src: '/api/graph.svg', alt: 'Operation dependency graph', id: 'graph-img' });
  const holder = el('div', { class: 'graph-holder' }, img);
  img.addEventListener('error', async () => {
    let reason = 'the graph could not be drawn';
    try { await api('/api/graph.svg'); } catch (e) { reason = e.message; }
    holder.replaceChildren(errorBox(reason));
  });
  const name = (id) => data.nodes[id].operation ? shortOperation(data.nodes[id].operation) : 'Entry';
  const edges = [...data.edges].sort((a, b) => b.calls - a.calls).map((e) => el('tr', {},
    el('td', { class: 'op', title: data.nodes[e.caller].operation }, name(e.caller)),
    el('td', { class: 'arrow' }, '→'),
    el('td', { class: 'op', title: data.nodes[e.callee].operation }, name(e.callee)),
    el('td', { class: 'num' }, String(e.calls))));
  show(
    el('section', { class: 'card' }, el('h1', {}, 'Dependency graph'),
      el('p', { class: 'muted' }, `${data.nodes.length - 1} operations, ${data.edges.length} caller → callee edges; edge labels count calls.`),
      holder),
    el('section', { class: 'card' }, el('h2', {}, 'Edges'),
      el('div', { class: 'table-wrap' },
        el('table', { class: 'grid', id: 'edge-table' },
          el('thead', {}, el('tr', {}, ['Caller', '', 'Callee', 'Calls'].map((h) => el('th', {}, h)))),
          el('tbody', {}, edges)))));
}

// ---------------------------------------------------------------- live status

async function poll() {
  const text = document.getElementById('status-text');
  const dot = document.getElementById('live-dot');
  try {
    const info = await api('/api/info');
    const changed = state.generation !== null && info.generation !== state.generation;
    state.info = info;
    state.generation = info.generation;
    dot.className = 'live-dot ok';
    text.textContent = `${info.traces} traces · ${info.hosts.length} host${info.hosts.length === 1 ? '' : 's'}` +
      (info.invalid_traces ? ` · ${info.invalid_traces} invalid` : '') +
      (info.reduced ? ` · ${info.reduced_from_traces} in ${info.reduced_traces} reduced` : '');
    document.querySelector('.tabs a[data-view=reduced]').hidden = !info.reduced;
    if (changed && !sondeSteadyViews.has(currentView())) {
      toast('New data: view refreshed');
      route();
    }
  } catch (e) {
    dot.className = 'live-dot down';
    text.textContent = `server unreachable (${e.message})`;
  }
}

// The other deferred scripts (views, the reduced-traces note) have run by
// DOMContentLoaded, which comes after this script; /api/info may answer first.
const scriptsLoaded = new Promise((resolve) => document.addEventListener('DOMContentLoaded', resolve, { once: true }));

async function start() {
  await poll();
  await scriptsLoaded;
  window.addEventListener('hashchange', route);
  route();
  setInterval(poll, 3000);
}

start();
