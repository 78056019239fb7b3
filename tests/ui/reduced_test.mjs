// The Reduced traces view of `sonde serve` in the browser (called by
// ui_test.mjs), on the directory of a running `sonde collect --reduce 1s`:
// a monitored workload (`sonde run --to`) and a Kieker TCP stream whose
// operation names and host are markup (sent from here) are reduced; the
// tab shows, the search view says how many traces were reduced, the counts
// of the listed shapes add up to the traces both produced (derived from
// their parameters), and the hostile names render as text in the list and
// in the call tree.
import { mkdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import { runProcess, startCollector } from './processes.mjs';

const REDUCED_HOSTILE_OP = 'evil.<img src=x onerror="window.__pwned=7" id="reduced-injected">.run("q" \'s\' & <b>b</b>)';
const REDUCED_HOSTILE_CHILD = 'evil.<script>window.__pwned=8</script>.child()';
const REDUCED_HOSTILE_HOST = '<svg onload="window.__pwned=9" id="reduced-svg"></svg>';



// A Kieker TCP stream (src/format/kieker_tcp.hpp): a string registry frame
// (-1, id, length, UTF-8 bytes) before a string's first use; a record is its
// class's string id, the logging timestamp and its fields, big-endian,
// strings as registry ids. `traces` traces of one shape: a root calling one child.
function hostileKiekerStream(traces) {
  const chunks = [];
  const ids = new Map();
  const int32 = (v) => { const b = Buffer.alloc(4); b.writeInt32BE(v); return b; };
  const int64 = (v) => { const b = Buffer.alloc(8); b.writeBigInt64BE(BigInt(v)); return b; };
  const str = (s) => {
    if (!ids.has(s)) {
      const bytes = Buffer.from(s, 'utf8');
      ids.set(s, ids.size);
      chunks.push(int32(-1), int32(ids.get(s)), int32(bytes.length), bytes);
    }
    return int32(ids.get(s));
  };
  const record = (cls, ts, fields) => {
    const parts = [str(cls), int64(ts), ...fields.map(([type, v]) => (type === 's' ? str(v) : type === 'i' ? int32(v) : int64(v)))];
    chunks.push(Buffer.concat(parts));
  };
  const flow = 'kieker.common.record.flow.trace.';
  const event = (kind, ts, trace, order, op) => record(`${flow}operation.${kind}OperationEvent`, ts,
    [['l', ts], ['l', trace], ['i', order], ['s', op], ['s', 'evil.Klass']]);
  const t0 = 1700000000000000000n;
  for (let k = 0; k < traces; k++) {
    const id = 9000 + k;
    const start = t0 + BigInt(k) * 1000000n;  // 1 ms apart: one 1-s window
    record(`${flow}TraceMetadata`, start, [['l', id], ['l', 1], ['s', '<sess>'], ['s', REDUCED_HOSTILE_HOST], ['l', id], ['i', -1]]);
    event('Before', start, id, 0, REDUCED_HOSTILE_OP);
    event('Before', start + 10000n, id, 1, REDUCED_HOSTILE_CHILD);
    event('After', start + 40000n + BigInt(k) * 1000n, id, 2, REDUCED_HOSTILE_CHILD);
    event('After', start + 100000n, id, 3, REDUCED_HOSTILE_OP);
  }
  return Buffer.concat(chunks);
}

function sendStream(port, bytes) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => socket.end(bytes));
    socket.on('error', reject);
    socket.on('close', () => resolve());
  });
}

// Sums the Traces column over every page of the reduced table.
async function reducedTableTotal(page) {
  let total = 0;
  let rows = 0;
  for (;;) {
    const counts = await page.locator('#reduced-table tbody td.count').allTextContents();
    total += counts.reduce((n, c) => n + Number(c), 0);
    rows += counts.length;
    const next = page.locator('.pager button', { hasText: 'Next' });
    if (await next.isDisabled()) return { total, rows };
    const before = await page.textContent('#reduced-count');
    await next.click();
    await page.waitForFunction((b) => document.getElementById('reduced-count')?.textContent !== b, before);
  }
}

export async function testReducedView({ browser, sonde, workload, artifacts, check, shot, startServer, apiJson }) {
  const dir = path.join(artifacts, 'reduced-store');
  rmSync(dir, { recursive: true, force: true });  // a reduced index is never appended to
  mkdirSync(dir, { recursive: true });
  const collector = await startCollector(sonde, dir, ['--reduce', '1s']);
  // workload.cpp "throw": 2 traces per iteration and thread plus one failing call per thread.
  const threads = 2, iterations = 300, depth = 2, hostileTraces = 5;
  const expected = threads * (2 * iterations + 1) + hostileTraces;
  let server = null;
  const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  const errors = [];
  const dialogs = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  try {
    const ran = await runProcess(sonde, ['run', '--to', `127.0.0.1:${collector.port}`, '--set', 'summary=false', '--no-preload', '--',
      workload, String(threads), String(iterations), String(depth), 'throw']);
    check(ran.code === 0, `the monitored workload exits 0 (${ran.err})`);
    await sendStream(collector.port, hostileKiekerStream(hostileTraces));
    server = await startServer(dir);
    let info = null;
    for (let i = 0; i < 600; i++) {  // the collector commits every 0.5 s: wait for the state, not a time
      info = await apiJson(server.url, '/api/info');
      if (info.reduced_from_traces + info.invalid_traces >= expected) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    check(info.reduced === true && info.reduced_from_traces === expected && info.invalid_traces === 0,
      `API: the reduced traces stand for the ${expected} traces produced (${info.reduced_from_traces}, ${info.invalid_traces} invalid)`);

    await page.goto(server.url);
    await page.waitForSelector('.tabs a[data-view=reduced]:not([hidden])');
    check(true, 'the Reduced traces tab shows for a reduced store');
    await page.waitForSelector('#reduced-note');
    const note = await page.textContent('#reduced-note');
    check(note.includes(`${expected.toLocaleString('en')} valid traces`) && note.includes(`${info.reduced_traces.toLocaleString('en')} reduced traces`),
      `the search view says how many traces were reduced (${note})`);
    await shot(page, 'reduced-search-note.png');

    await page.click('.tabs a[data-view=reduced]');
    await page.waitForSelector('#reduced-table tbody tr');
    const { total, rows } = await reducedTableTotal(page);
    check(rows === info.reduced_traces, `the table lists every reduced trace (${rows} of ${info.reduced_traces})`);
    check(total === expected, `the listed counts add up to the ${expected} traces produced (${total})`);

    // The hostile shape: one row standing for all its traces, names as text.
    await page.goto(`${server.url}#/reduced?operation=${encodeURIComponent('evil.<img')}`);
    await page.waitForSelector('#reduced-table tbody tr');
    const row = page.locator('#reduced-table tbody tr').first();
    check(await page.locator('#reduced-table tbody tr').count() === 1, 'the operation filter finds the hostile shape');
    check(await row.locator('td.op').getAttribute('title') === REDUCED_HOSTILE_OP, 'hostile root operation kept verbatim as the cell title');
    check(await row.locator('td.host').textContent() === REDUCED_HOSTILE_HOST, 'hostile host shown as text');
    check(await row.locator('td.count').textContent() === String(hostileTraces), `the hostile shape stands for its ${hostileTraces} traces`);
    await shot(page, 'reduced-list.png');
    await row.locator('td.op a').click();
    await page.waitForSelector('#call-tree tbody tr');
    check(await page.textContent('.full-op') === REDUCED_HOSTILE_OP, 'hostile root operation shown verbatim in the header');
    const titles = await page.locator('#call-tree td.op').evaluateAll((tds) => tds.map((td) => td.title));
    check(JSON.stringify(titles) === JSON.stringify([REDUCED_HOSTILE_OP, REDUCED_HOSTILE_CHILD]), 'the call tree holds both positions, names verbatim');
    check((await page.textContent('#reduced-stats')).includes(String(hostileTraces)), 'the header counts the traces');
    await shot(page, 'reduced-tree.png');
    const injected = await page.evaluate(() => ({
      pwned: window.__pwned ?? null,
      elements: document.querySelectorAll('#reduced-injected, #reduced-svg, main b, main script').length,
    }));
    check(injected.pwned === null && injected.elements === 0, 'no injected script ran and no element was injected');
    check(dialogs.length === 0, `no dialog opened (${dialogs.join('; ')})`);
    check(errors.length === 0, `no script errors (${errors.join('; ')})`);
  } finally {
    await page.close();
    if (server) check(await server.stop() === 0, 'sonde serve exits 0 on SIGTERM');
    check(await collector.stop() === 0, 'sonde collect exits 0 on SIGTERM');
  }
}
