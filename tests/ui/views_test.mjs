// The Diagnosis and Live views of `sonde serve` in the browser (called by
// ui_test.mjs). One directory serves both: a running `sonde collect --out
// DIR` (Live) with DIR/diagnosis/report.json written by `sonde diagnose`
// from experiment data generated here (Diagnosis, picked up without a flag).
//   - Diagnosis: counts, tree, badges, a detected node's evidence and charts
//     against /api/diagnosis; a service name full of markup renders as text.
//   - Live: two monitored workloads (`sonde run --to`) stream to the
//     collector while the tab is open; each client's received count reaches
//     the number the workload's arguments give; a new trace opens; polling
//     stops when the view is left.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { runProcess, startCollector } from './processes.mjs';

const T0 = 1700000000000000000n;
const MS = 1000000n;
export const HOSTILE_SERVICE = 'GET /<script>window.__pwned=9</script> "q" \'s\' & <b>bold</b>';

function csvCell(s) {
  return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

// experiments/<id>/{experiment.json,requests.csv} as docs/diagnose/experiment-data.md
// describes; response time rt(i, service) ms plus seeded noise (+-noise ms).
function writeExperiment(root, s, seed) {
  const dir = path.join(root, 'experiments', s.id);
  mkdirSync(dir, { recursive: true });
  let x = seed >>> 0;
  const rand = () => { x = (Math.imul(x, 1664525) + 1013904223) >>> 0; return x / 4294967296; };
  const lines = ['start_ns,end_ns,user,service,status'];
  for (let i = 0; i < s.requests; i++) {
    for (const service of s.services) {
      const start = T0 + BigInt(i) * 20n * MS;
      const rt = Math.max(0.1, s.rt(i, service) + (rand() * 2 - 1) * s.noise);
      lines.push(`${start},${start + BigInt(Math.round(rt * 1e6))},${i % s.users},${csvCell(service)},200`);
    }
  }
  writeFileSync(path.join(dir, 'requests.csv'), lines.join('\n') + '\n');
  writeFileSync(path.join(dir, 'experiment.json'), JSON.stringify({
    id: s.id, kind: s.kind, series: s.series || '', users: s.users, step: s.step || 0,
    start_ns: Number(T0), end_ns: Number(T0 + BigInt(s.requests) * 20n * MS + 10000n * MS),
    probes: ['response_time'], requests: s.requests * s.services.length, errors: 0, status: 'complete', reason: '',
    ...(s.otherCpuShare === undefined ? {} : { cpu_accounting: { capacity_core_s: 20, other_share: s.otherCpuShare } }),
  }));
}

// A load test at 50 users where both services miss 1 s at P99, and a scaling
// series growing from 100 ms to 2 s: Performance Problem and Traffic Jam are found.
function writeExperimentData(root) {
  // Other processes took half the CPUs during the load test: the report warns.
  writeExperiment(root, { id: 'load-u50', kind: 'load', users: 50, requests: 600, services: ['GET /product', HOSTILE_SERVICE],
    rt: (i, s) => (s === HOSTILE_SERVICE ? 3000 : 2000), noise: 50, otherCpuShare: 0.5 }, 42);
  [100, 300, 700, 1200, 2000].forEach((v, k) => writeExperiment(root, { id: `scaling-s${k}`, kind: 'scaling', series: 'scaling',
    step: k, users: [1, 13, 25, 37, 50][k], requests: 300, services: ['GET /product'], rt: () => v, noise: v * 0.05 }, 100 + k));
}



async function checkDiagnosis(page, url, check, shot, apiJson) {
  const report = await apiJson(url, '/api/diagnosis');
  await page.click('.tabs a[data-view=diagnosis]');
  await page.waitForSelector('#diagnosis-tree .diag-node');
  const nodes = [];
  const walk = (n) => { nodes.push(n); n.children.forEach(walk); };
  walk(report.root);
  const total = Object.values(report.counts).reduce((a, b) => a + b, 0);
  check(nodes.length === total && total === 15, `the default hierarchy's 15 nodes are counted (${nodes.length}, counts ${total})`);
  for (const status of Object.keys(report.counts)) {
    const shown = await page.textContent(`#diag-counts [data-status=${status}] .stat-value`);
    check(shown === String(report.counts[status]), `summary count "${status}" is ${report.counts[status]} (shown ${shown})`);
  }
  const warning = await page.textContent('#diag-warnings');
  check(report.warnings.length === 1 && warning === report.warnings[0] && warning.includes('(load-u50 50%)'),
    `the busy machine during load-u50 is a warning above the findings (${warning})`);
  const detected = nodes.filter((n) => n.status === 'detected');
  check(await page.locator('#diag-findings li').count() === detected.length, `the summary lists the ${detected.length} detected problems`);
  check(await page.locator('#diagnosis-tree .diag-node').count() === nodes.length, 'the tree has a node per report node');
  const badges = await page.locator('#diagnosis-tree .diag-node').evaluateAll((els) => els.map((e) => [e.dataset.id, e.dataset.status, e.querySelector(':scope > .diag-head .status-badge').textContent]));
  check(JSON.stringify(badges) === JSON.stringify(nodes.map((n) => [n.id, n.status, n.status.replace('_', ' ')])), 'every node carries its status badge, in report order');
  check(!detected.some((n) => n.id === 'the_ramp') && nodes.find((n) => n.id === 'the_ramp').status === 'not_evaluated', 'The Ramp is not evaluated (no ramp series)');
  const rampReason = await page.textContent('.diag-node[data-id=the_ramp] > .diag-head .diag-reason');
  check(rampReason === nodes.find((n) => n.id === 'the_ramp').reason, `a not-evaluated node shows its reason (${rampReason})`);

  // A detected node: evidence rows and the scaling chart with its confidence intervals.
  const jam = nodes.find((n) => n.id === 'traffic_jam');
  check(jam.status === 'detected', 'Traffic Jam is detected in the planted scaling series');
  const jamNode = page.locator('.diag-node[data-id=traffic_jam]');
  const jamBody = jamNode.locator(':scope > .diag-body');
  check(await jamBody.isVisible(), "a detected node's evidence is open");
  check(await jamBody.locator('table.evidence tbody tr').count() === jam.evidence.length, `its evidence table has the ${jam.evidence.length} rows of the report`);
  const firstRow = await jamBody.locator('table.evidence tbody tr').first().locator('td').allTextContents();
  check(firstRow[0] === jam.evidence[0].location && firstRow[1] === jam.evidence[0].detail, 'evidence row: where and finding as reported');
  check(firstRow[2].startsWith('very sure'), `p-value in words (${firstRow[2]})`);
  const points = jam.charts.scaling[0].points.length;
  check(await jamBody.locator('svg[data-kind=scaling] .error-bar').count() === points, `response time vs users chart has a confidence interval per load step (${points})`);
  const root = page.locator('.diag-node[data-id=performance_problem]');
  const cdfs = report.root.charts.cdf.length;
  check(await root.locator(':scope > .diag-body svg[data-kind=cdf]').count() === cdfs, `a CDF chart per service against the requirement (${cdfs})`);
  check(!(await page.textContent('main')).includes('[object '), 'every part of the page is text or an element, none an unrendered object');
  await shot(page, 'diagnosis.png');

  // Collapse and expand the hierarchy under the root.
  await root.locator(':scope > .diag-head button.toggle').click();
  check(await page.locator('#diagnosis-tree .diag-node:visible').count() === 1, 'collapsing the root hides the hierarchy below it');
  await root.locator(':scope > .diag-head button.toggle').click();
  check(await page.locator('#diagnosis-tree .diag-node:visible').count() === nodes.length, 'expanding shows it again');
  // An evidence panel opens on demand.
  const hiccups = page.locator('.diag-node[data-id=application_hiccups]');
  check(!(await hiccups.locator(':scope > .diag-body').isVisible()), 'a node that was not detected starts closed');
  await hiccups.locator(':scope > .diag-head button.diag-details').click();
  check(await hiccups.locator(':scope > .diag-body svg[data-kind=hiccup_timeline]').count() > 0, 'opening it shows its hiccup timeline');

  // The hostile service name: text in the evidence table and in chart titles, no markup.
  const wheres = await page.locator('#diagnosis-tree td.where').allTextContents();
  check(wheres.includes(HOSTILE_SERVICE), 'a service name full of markup is shown verbatim as text');
  const titles = await page.locator('#diagnosis-tree .chart-title').allTextContents();
  check(titles.some((t) => t.includes(HOSTILE_SERVICE)), 'and verbatim in a chart title');
  const injected = await page.evaluate(() => ({
    pwned: window.__pwned ?? null,
    bold: document.querySelectorAll('#diagnosis-tree td b, #diagnosis-tree svg b, #diag-findings code b').length,
  }));
  check(injected.pwned === null && injected.bold === 0, 'no script ran and no element was injected');
  await shot(page, 'diagnosis-hostile-opened.png');
}

async function checkLive(page, url, check, shot, apiJson, sonde, workload, collectorPort) {
  const threads = 2, iterations = 20000, depth = 2;
  // Per program (workload.cpp, "throw"): 2 traces per iteration and thread plus
  // one failing call per thread, a before and an after event per call, and one
  // KiekerMetadataRecord.
  const traces = threads * (2 * iterations + 1);
  const calls = threads * iterations * (depth + 2) + threads;
  const records = traces + 2 * calls + 1;
  const liveRequests = [];
  page.on('request', (r) => { if (r.url().includes('/api/live')) liveRequests.push(r.url()); });
  await page.click('.tabs a[data-view=live]');
  await page.waitForSelector('#live-totals');
  check(await page.locator('#live-clients tbody tr').count() === 0, 'no clients before the workloads start');
  await page.evaluate(() => { document.getElementById('live-clients').dataset.mark = 'before'; });
  const runs = [0, 1].map(() => runProcess(sonde, ['run', '--to', `127.0.0.1:${collectorPort}`, '--set', 'summary=false', '--no-preload', '--',
    workload, String(threads), String(iterations), String(depth), 'throw']));
  const text = records.toLocaleString('en');
  await page.waitForFunction((want) => {
    const cells = [...document.querySelectorAll('#live-clients tbody tr td.received')].map((td) => td.textContent);
    return cells.length === 2 && cells.every((c) => c === want);
  }, text, { timeout: 90000 });
  check(true, `both clients reach ${text} received records in the table`);
  const results = await Promise.all(runs);
  check(results.every((r) => r.code === 0), `the monitored workloads exit 0 (${results.map((r) => r.err).join(' ')})`);
  const data = await apiJson(url, '/api/live?limit=0');
  check(data.clients.length === 2 && data.clients.every((c) => c.received === records && c.stored === records && c.rejected === 0),
    `API: each client received and stored ${records} records`);
  check(data.totals.traces + data.totals.invalid_traces === 2 * traces, `API: ${2 * traces} traces stored`);
  await page.waitForFunction(() => document.querySelectorAll('#live-stream tbody tr').length > 0);
  check(await page.locator('#live-chart polyline').count() === 1, 'the throughput chart is drawn');
  check((await page.textContent('#live-stream-count')).includes('since this page opened'), 'the stream counts the traces since the page opened');
  // The store changed all along (new generations): the view kept its state
  // instead of being redrawn from scratch (which would start again at after=0).
  check(await page.evaluate(() => document.getElementById('live-clients').dataset.mark === 'before'), 'the live view is not redrawn when the store changes');
  // A hidden browser tab stops the polls; showing it again resumes them.
  const setHidden = (hidden) => page.evaluate((h) => {
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => h });
    document.dispatchEvent(new Event('visibilitychange'));
  }, hidden);
  await setHidden(true);
  await page.waitForTimeout(500);  // a poll already on the wire may still be sent
  const whileHidden = liveRequests.length;
  await page.waitForTimeout(4000);
  check(liveRequests.length === whileHidden, `no polls while the browser tab is hidden (${liveRequests.length - whileHidden})`);
  const resumed = page.waitForRequest((r) => r.url().includes('/api/live'), { timeout: 10000 });
  await setHidden(false);
  check(Boolean(await resumed.catch(() => null)), 'polling resumes when the tab is visible again');
  const head = await page.textContent('main section:first-child');
  check(!head.includes('null') && !head.includes('undefined'), 'the live header shows no missing values');
  await shot(page, 'live.png');

  const id = await page.getAttribute('#live-stream tbody tr:first-child', 'data-trace-id');
  await page.click('#live-stream tbody tr:first-child td.op a');
  await page.waitForSelector('#timeline');
  check((await page.textContent('.stats')).includes(id), `a streamed trace opens (${id})`);
  const before = liveRequests.length;
  await page.waitForTimeout(4000);
  check(liveRequests.length === before, `no /api/live polls after leaving the view (${liveRequests.length - before})`);
}

// Serves DIR of a running collector with DIR/diagnosis/report.json.
export async function testDiagnosisAndLive({ browser, sonde, workload, artifacts, check, shot, startServer, apiJson }) {
  const dir = path.join(artifacts, 'views');
  const data = path.join(dir, 'experiment-data');
  const store = path.join(dir, 'store');
  rmSync(dir, { recursive: true, force: true });  // a store left by an earlier run would be appended to
  mkdirSync(data, { recursive: true });
  writeExperimentData(data);
  const collector = await startCollector(sonde, store);
  const diagnosed = await runProcess(sonde, ['diagnose', '--data', data, '--out', path.join(store, 'diagnosis')]);
  check(diagnosed.code === 0, `sonde diagnose writes the report (${diagnosed.err})`);
  const server = await startServer(store);
  const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  const errors = [];
  const dialogs = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  try {
    await page.goto(server.url);
    await page.waitForSelector('.tabs a[data-view=live]:not([hidden])');
    await page.waitForSelector('.tabs a[data-view=diagnosis]:not([hidden])');
    check(true, 'the Diagnosis and Live tabs show for a collector directory with a report');
    await checkDiagnosis(page, server.url, check, shot, apiJson);
    await checkLive(page, server.url, check, shot, apiJson, sonde, workload, collector.port);
    check(dialogs.length === 0, `no dialog opened (${dialogs.join('; ')})`);
    check(errors.length === 0, `no script errors (${errors.join('; ')})`);
  } finally {
    await page.close();
    check(await server.stop() === 0, 'sonde serve exits 0 on SIGTERM');
    check(await collector.stop() === 0, 'sonde collect exits 0 on SIGTERM');
  }
}
