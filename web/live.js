// The live view (#/live) of a directory a `sonde collect` is writing
// (/api/live): per-client counts with records/s between polls, a rolling
// throughput chart, and the traces stored since the last poll (click one to
// open it). Polls every LIVE_PERIOD_MS, only while this view is shown and
// the browser tab is visible.
// Same rule as app.js: peers, errors and operation names become text (el()).
'use strict';

const LIVE_PERIOD_MS = 1500;
const LIVE_HISTORY = 80;   // points of the throughput chart
const LIVE_STREAM = 100;   // traces kept in the stream

const live = { session: 0, timer: null, paused: false };

function liveShown() {
  return currentView() === 'live';
}

function rateText(r) {
  return r === null ? '–' : r >= 100 ? Math.round(r).toLocaleString('en') : r.toFixed(1);
}

function liveClientRows(s, data, now) {
  return data.clients.map((c) => {
    const before = s.previous.get(c.id);
    const rate = before && now > before.at ? (c.received - before.received) / ((now - before.at) / 1000) : null;
    s.previous.set(c.id, { received: c.received, at: now });
    return el('tr', { 'data-client-id': c.id, class: c.error ? 'failed' : '' },
      el('td', { class: 'num' }, String(c.id)),
      el('td', { class: 'mono' }, c.peer),
      el('td', {}, el('span', { class: `badge ${c.open ? 'open' : 'closed'}` }, c.open ? 'open' : 'closed')),
      el('td', { class: 'num received' }, c.received.toLocaleString('en')),
      el('td', { class: 'num' }, c.stored.toLocaleString('en')),
      el('td', { class: 'num' }, c.rejected ? el('span', { class: 'badge bad' }, String(c.rejected)) : '0'),
      el('td', { class: 'num' }, String(c.undecoded_bytes)),
      el('td', { class: 'num' }, (c.traces + c.invalid_traces).toLocaleString('en')),
      el('td', { class: 'num rate' }, c.open ? rateText(rate) : '–'),
      el('td', { class: 'cause' }, c.error ? el('div', { class: 'clamp', title: c.error }, c.error) : ''));
  });
}

function liveStreamRow(t) {
  const href = `#/trace/${encodeURIComponent(t.trace_id)}`;
  return el('tr', { class: `fresh${t.valid ? '' : ' invalid'}`, 'data-trace-id': t.trace_id },
    el('td', { class: 'nowrap' }, formatTime(t.start_ns)),
    el('td', { class: 'num' }, formatDuration(t.duration_ns)),
    el('td', { class: 'num' }, String(t.executions)),
    el('td', { class: 'num' }, t.failed_executions ? el('span', { class: 'badge bad' }, String(t.failed_executions)) : '0'),
    el('td', { class: 'num' }, String(t.client)),
    el('td', { class: 'op', title: t.root_operation }, el('a', { href }, shortOperation(t.root_operation)),
      t.valid ? null : el('span', { class: 'badge warn', title: t.problem || '' }, 'invalid')));
}

function liveUpdate(s, data) {
  const now = performance.now();
  const stat = (label, value, id) => el('div', { class: 'stat', id }, el('span', { class: 'stat-label' }, label), el('span', { class: 'stat-value' }, value));
  const t = data.totals;
  const rate = s.lastTotal && now > s.lastTotal.at ? (t.received - s.lastTotal.received) / ((now - s.lastTotal.at) / 1000) : null;
  s.lastTotal = { received: t.received, at: now };
  if (rate !== null) s.history.push([now, rate]);
  if (s.history.length > LIVE_HISTORY) s.history.shift();
  // el() drops the null parts (replaceChildren would print them).
  s.parts.head.replaceChildren(el('div', {},
    el('p', { class: 'muted' }, 'Collector listening on ', el('code', {}, data.listen), ', writing ', el('code', {}, data.dir), '.'),
    data.collector_error ? errorBox(`Collector error: ${data.collector_error}`) : null,
    data.index_error ? errorBox(`Reading the index: ${data.index_error}`) : null,
    el('div', { class: 'stats', id: 'live-totals' },
      stat('Clients open', `${data.open_clients} of ${data.clients.length}`, 'live-open'),
      stat('Records received', t.received.toLocaleString('en'), 'live-received'),
      stat('Records/s', rateText(rate), 'live-rate'),
      stat('Stored', t.stored.toLocaleString('en')),
      stat('Rejected', t.rejected.toLocaleString('en')),
      stat('Traces', (t.traces + t.invalid_traces).toLocaleString('en')),
      data.reduce ? stat('Reduced traces', t.reduced_traces.toLocaleString('en')) : null,
      stat('Queued connections', String(data.queued_connections), 'live-queued'),
      data.unserved_connections ? stat('Unserved connections', `${data.unserved_connections} (${data.unserved_bytes} bytes lost)`) : null,
      data.refused_connections ? stat('Refused connections', String(data.refused_connections)) : null),
    data.reduce ? el('p', { class: 'note small' }, 'The collector reduces traces (--reduce): valid traces are stored merged by shape, ' +
      'so the stream below shows only the traces stored one by one (invalid ones).') : null));
  s.parts.clients.replaceChildren(...liveClientRows(s, data, now));
  const t0 = s.history.length ? s.history[0][0] : now;
  s.parts.chart.replaceChildren(lineChart({
    id: 'live-chart', kind: 'throughput', title: 'Records received per second (all clients)', xLabel: 'time [s], 0 = now', yLabel: 'records/s',
    series: [{ name: 'records/s', x: s.history.map(([at]) => (at - now) / 1000), y: s.history.map(([, r]) => r) }],
    shaded: [], hlines: [], vlines: s.history.length ? [] : [{ value: (t0 - now) / 1000, label: 'waiting for a second poll' }],
  }));
  for (const tr of s.parts.stream.querySelectorAll('tr.fresh')) tr.classList.remove('fresh');
  // Newest first: the answer is newest first, and it goes on top.
  s.parts.stream.prepend(...data.traces.map(liveStreamRow));
  while (s.parts.stream.children.length > LIVE_STREAM) s.parts.stream.lastChild.remove();
  s.newTraces += s.cursor === null ? 0 : data.new_traces;
  s.cursor = data.cursor;
  s.parts.streamCount.textContent = `${s.newTraces.toLocaleString('en')} trace(s) stored since this page opened` +
    (data.new_traces > data.traces.length ? ` (the last poll brought ${data.new_traces}; the newest ${data.traces.length} are listed)` : '');
}

async function liveTick(session) {
  if (session !== live.session || !liveShown()) return;  // left the view: stop
  if (document.hidden) {
    live.paused = true;  // resumed by visibilitychange
    return;
  }
  const s = live.state;
  try {
    const data = await api('/api/live', { after: s.cursor === null ? 0 : s.cursor, limit: 50 });
    if (session !== live.session) return;
    liveUpdate(s, data);
    s.parts.error.replaceChildren();
  } catch (e) {
    s.parts.error.replaceChildren(errorBox(e.message));
  }
  if (session === live.session && liveShown()) live.timer = setTimeout(() => liveTick(session), LIVE_PERIOD_MS);
}

document.addEventListener('visibilitychange', () => {
  if (!document.hidden && live.paused && liveShown()) {
    live.paused = false;
    liveTick(live.session);
  }
});

function renderLive() {
  clearTimeout(live.timer);
  live.session++;
  live.paused = false;
  const parts = {
    head: el('div'), error: el('div'), chart: el('div', { class: 'live-chart' }),
    clients: el('tbody'), stream: el('tbody'), streamCount: el('p', { class: 'muted small', id: 'live-stream-count' }),
  };
  live.state = { parts, cursor: null, previous: new Map(), history: [], lastTotal: null, newTraces: 0 };
  show(
    el('section', { class: 'card' }, el('h1', {}, 'Live collection'), parts.error, parts.head, parts.chart),
    el('section', { class: 'card' }, el('h2', {}, 'Clients'),
      el('div', { class: 'table-wrap' }, el('table', { class: 'grid', id: 'live-clients' },
        el('thead', {}, el('tr', {}, ['Client', 'Peer', 'State', 'Received', 'Stored', 'Rejected', 'Undecoded bytes', 'Traces', 'Records/s', 'Error'].map((h) => el('th', {}, h)))),
        parts.clients))),
    el('section', { class: 'card' }, el('h2', {}, 'New traces'), parts.streamCount,
      el('div', { class: 'table-wrap stream-wrap' }, el('table', { class: 'grid', id: 'live-stream' },
        el('thead', {}, el('tr', {}, ['Start', 'Duration', 'Calls', 'Failed', 'Client', 'Root operation'].map((h) => el('th', {}, h)))),
        parts.stream))));
  liveTick(live.session);
}

sondeViews.live = () => renderLive();
sondeSteadyViews.add('live');
// The tab shows only when the server is on a collector's directory.
api('/api/live', { limit: 0 }).then(() => { document.querySelector('.tabs a[data-view=live]').hidden = false; }, () => {});
