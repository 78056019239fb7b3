// The reduced-traces view (#/reduced, #/reduced/ID) of a store written by
// `sonde collect --reduce` (/api/reduced): one row per shape, window and
// connection with how many traces it stands for, and on click its call
// tree with per-position mean times (the call tree of app.js).
// Same rule as app.js: operation names and hosts only ever become text (el()).
'use strict';

const REDUCED_PAGE = 50;
const REDUCED_FIELDS = ['operation', 'host', 'min_count', 'order', 'offset'];

function reducedNavigate(s) {
  const q = new URLSearchParams();
  for (const k of REDUCED_FIELDS) if (s[k]) q.set(k, s[k]);
  const hash = `#/reduced${q.toString() ? '?' + q : ''}`;
  if (location.hash === hash) route(); else location.hash = hash;
}

function reducedForm(s) {
  const hosts = (state.info && state.info.hosts) || [];
  const field = (label, control) => el('label', { class: 'field' }, el('span', {}, label), control);
  const form = el('form', { class: 'search', id: 'reduced-form' },
    field('Root operation contains', el('input', { name: 'operation', type: 'search', class: 'wide', value: s.operation || '' })),
    field('Host', el('select', { name: 'host' }, [['', 'any host'], ...hosts.map((h) => [h, h])].map(([v, t]) =>
      el('option', { value: v, selected: (s.host || '') === v }, t)))),
    field('Min traces', el('input', { name: 'min_count', inputmode: 'numeric', size: 7, placeholder: '0', value: s.min_count || '' })),
    field('Order', el('select', { name: 'order' }, [['count', 'most traces first'], ['start', 'earliest first']].map(([v, t]) =>
      el('option', { value: v, selected: (s.order || 'count') === v }, t)))),
    el('div', { class: 'actions' },
      el('button', { type: 'submit', class: 'primary' }, 'Search'),
      el('button', { type: 'button', onclick: () => reducedNavigate({}) }, 'Reset')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    reducedNavigate({ ...Object.fromEntries(new FormData(form)), offset: 0 });
  });
  return form;
}

// What the search view says on a reduced store, so an empty search does not mislead.
function reducedNote() {
  const i = state.info;
  if (!i || !i.reduced) return null;
  return el('p', { class: 'note', id: 'reduced-note' },
    `This store holds reduced traces (sonde collect --reduce): ${i.reduced_from_traces.toLocaleString('en')} valid traces ` +
    `were merged into ${i.reduced_traces.toLocaleString('en')} reduced traces and are not listed here; ` +
    'this search finds only the traces stored one by one (invalid ones). ',
    el('a', { href: '#/reduced' }, 'Open the reduced traces'));
}

async function renderReducedList(s) {
  const results = el('section', { class: 'card results', 'aria-busy': 'true' }, el('p', { class: 'muted' }, 'Loading…'));
  const i = state.info || {};
  show(el('section', { class: 'card' }, el('h1', {}, 'Reduced traces'),
    el('p', { class: 'muted', id: 'reduced-summary' },
      `${(i.reduced_traces || 0).toLocaleString('en')} reduced traces stand for ${(i.reduced_from_traces || 0).toLocaleString('en')} traces: ` +
      'traces of one shape (the same calls at the same depths, on one host) starting within one window of one connection.'),
    reducedForm(s)), results);
  const offset = Number(s.offset || 0);
  const query = { limit: REDUCED_PAGE, offset, order: s.order || 'count' };
  for (const k of ['operation', 'host', 'min_count']) if (s[k]) query[k] = s[k];
  let data;
  try {
    data = await api('/api/reduced', query);
  } catch (e) {
    results.replaceChildren(errorBox(e.message));
    return;
  }
  results.removeAttribute('aria-busy');
  const href = (r) => `#/reduced/${encodeURIComponent(r.id)}`;
  const rows = data.reduced.map((r) => el('tr', { 'data-reduced-id': r.id },
    el('td', { class: 'op', title: r.root_operation }, el('a', { href: href(r) }, shortOperation(r.root_operation))),
    el('td', { class: 'host' }, r.host),
    el('td', { class: 'nowrap' }, formatTime(r.first_start_ns)),
    el('td', { class: 'num count' }, String(r.traces)),
    el('td', { class: 'num' }, r.failed_traces ? el('span', { class: 'badge bad' }, String(r.failed_traces)) : '0'),
    el('td', { class: 'num' }, formatDuration(r.min_ns)),
    el('td', { class: 'num' }, formatDuration(r.mean_ns)),
    el('td', { class: 'num' }, formatDuration(r.max_ns))));
  const pageTraces = data.reduced.reduce((n, r) => n + r.traces, 0);
  results.replaceChildren(
    el('div', { class: 'pager' },
      el('span', { class: 'muted', id: 'reduced-count' }, data.matched === 0 ? 'No reduced trace matches.' :
        `${offset + 1}–${offset + data.reduced.length} of ${data.matched} reduced traces (${pageTraces.toLocaleString('en')} traces on this page)`),
      el('button', { disabled: offset === 0, onclick: () => reducedNavigate({ ...s, offset: Math.max(0, offset - REDUCED_PAGE) }) }, '‹ Previous'),
      el('button', { disabled: offset + data.reduced.length >= data.matched, onclick: () => reducedNavigate({ ...s, offset: offset + REDUCED_PAGE }) }, 'Next ›')),
    el('div', { class: 'table-wrap' },
      el('table', { class: 'grid', id: 'reduced-table' },
        el('thead', {}, el('tr', {}, ['Root operation', 'Host', 'Window start', 'Traces', 'Failed', 'Min', 'Mean', 'Max'].map((h) => el('th', {}, h)))),
        el('tbody', {}, rows))));
}

async function renderReducedTrace(id) {
  show(el('p', { class: 'muted' }, 'Loading reduced trace…'));
  const back = el('a', { href: '#/reduced', class: 'back' }, '‹ Back to the reduced traces');
  let r;
  try {
    r = await api(`/api/reduced/${encodeURIComponent(id)}`);
  } catch (e) {
    show(back, errorBox(e.message));
    return;
  }
  const stat = (label, value) => el('div', { class: 'stat' }, el('span', { class: 'stat-label' }, label), el('span', { class: 'stat-value' }, value));
  // The call tree of one trace, fed with the positions' means.
  const tree = {
    duration_ns: r.mean_ns,
    calls: r.calls.map((c) => ({
      eoi: c.eoi, ess: c.ess, operation: c.operation, component: c.component, host: r.host,
      inclusive_ns: c.mean_ns, exclusive_ns: c.mean_exclusive_ns, failed: c.failed > 0,
      cause: `${c.failed} of ${r.traces} calls failed`,
    })),
  };
  show(back,
    el('section', { class: 'card' },
      el('h1', { class: 'trace-title', title: r.root_operation }, shortOperation(r.root_operation)),
      el('p', { class: 'muted mono full-op' }, r.root_operation),
      el('div', { class: 'stats', id: 'reduced-stats' },
        stat('Traces', String(r.traces)),
        stat('Failed traces', String(r.failed_traces)),
        stat('Window', `${formatTime(r.first_start_ns)} – ${formatTime(r.last_start_ns)}`),
        stat('Mean', formatDuration(r.mean_ns)),
        stat('Min', formatDuration(r.min_ns)),
        stat('Max', formatDuration(r.max_ns)),
        stat('Host', r.host || '–'),
        stat('First trace id', String(r.first_trace_id)))),
    el('section', { class: 'card' }, el('h2', {}, 'Call tree (means over the traces)'),
      callTree(tree, ['Operation', 'Mean inclusive', 'Mean exclusive', '% of mean trace', 'Component', 'Host', 'Failures'])));
}

sondeViews.reduced = (parts, params) => (parts[1] ? renderReducedTrace(decodeURIComponent(parts[1])) : renderReducedList(params));
