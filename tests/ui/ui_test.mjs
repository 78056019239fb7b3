// End-to-end test of `sonde serve` in a real browser: Debian's Chromium,
// headless, driven by playwright-core.
//   node ui_test.mjs SONDE_BINARY BOOKSTORE_LOG_DIR ARTIFACT_DIR TEST_WORKLOAD EXAMPLE_AUTOINST
// Starts `sonde serve` on a free loopback port (--listen 127.0.0.1:0), then
//   1. on the Kieker bookstore log: searches traces, opens one, checks its
//      call tree against the API, opens operations and the dependency graph;
//   2. on a hostile log (markup, quotes, very long strings in operation
//      names, host and exception cause): everything renders as text and no
//      script runs (no dialog, no injected element);
//   3. on a running collector's directory with a diagnosis report inside:
//      the Diagnosis and Live views (views_test.mjs);
//   4. on a reducing collector's directory: the Reduced traces view
//      (reduced_test.mjs);
//   5. on a log of a C++ program: operations named as C++ writes them
//      (cpp_names_test.mjs).
// Screenshots land in ARTIFACT_DIR. Exit 0 pass, 1 fail, 77 skipped
// (no Chromium or no playwright-core: run scripts/install-deps.sh).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { testCppNames } from './cpp_names_test.mjs';
import { testReducedView } from './reduced_test.mjs';
import { testDiagnosisAndLive } from './views_test.mjs';

const SKIP = 77;
const CHROMIUM = process.env.SONDE_CHROMIUM || '/usr/bin/chromium';
const [sonde, bookstoreLog, artifacts, workload, autoinst] = process.argv.slice(2);
if (!sonde || !bookstoreLog || !artifacts || !workload || !autoinst) {
  console.error('usage: node ui_test.mjs SONDE_BINARY BOOKSTORE_LOG_DIR ARTIFACT_DIR TEST_WORKLOAD EXAMPLE_AUTOINST');
  process.exit(2);
}
if (!existsSync(CHROMIUM)) {
  console.log(`SKIP: no Chromium at ${CHROMIUM} (apt-get install chromium, or run scripts/install-deps.sh)`);
  process.exit(SKIP);
}
let chromium;
try {
  ({ chromium } = await import('playwright-core'));
} catch {
  console.log('SKIP: playwright-core is not installed (cd tests/ui && npm ci, or run scripts/install-deps.sh)');
  process.exit(SKIP);
}
mkdirSync(artifacts, { recursive: true });

let failures = 0;
function check(condition, message) {
  if (condition) {
    console.log(`  ok: ${message}`);
  } else {
    console.log(`  FAIL: ${message}`);
    failures++;
  }
}

// Runs `sonde serve LOG` on a free port; resolves to {url, stop}.
function startServer(log) {
  return new Promise((resolve, reject) => {
    const child = spawn(sonde, ['serve', log, '--listen', '127.0.0.1:0', '--refresh', '0'],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`sonde serve did not start: ${err}`)); }, 30000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: `http://127.0.0.1:${m[1]}/`,
          stop: () => new Promise((done) => { child.once('exit', (code) => done(code)); child.kill('SIGTERM'); }),
        });
      }
    });
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`sonde serve exited with ${code}: ${err}`)); });
  });
}

async function apiJson(base, pathAndQuery) {
  const r = await fetch(new URL(pathAndQuery, base));
  return r.json();
}

// A Kieker filesystem log whose strings try to become markup or script.
function writeHostileLog(dir) {
  mkdirSync(dir, { recursive: true });
  const long = 'L'.repeat(6000);
  const op1 = `public void evil.<script>window.__pwned=1</script>Klass.run("quoted" 'single' & <b>)`;
  const op2 = `<img src=x onerror="window.__pwned=2" id="injected-img">.call()`;
  const op3 = `long.Name${long}.op()`;
  const host = `<svg onload="window.__pwned=3" id="injected-svg"></svg>`;
  const cause = `java.lang.Error: <script>alert("x")</script> "' ${'C'.repeat(3000)}`;
  const map = [
    '$0=kieker.common.record.flow.trace.TraceMetadata',
    '$1=kieker.common.record.flow.trace.operation.BeforeOperationEvent',
    '$2=kieker.common.record.flow.trace.operation.AfterOperationEvent',
    '$3=kieker.common.record.flow.trace.operation.AfterOperationFailedEvent',
  ].join('\n') + '\n';
  const t0 = 1700000000000000000n;
  const t = (us) => String(t0 + BigInt(us) * 1000n);
  const lines = [];
  for (let i = 0; i < 3; i++) {
    const id = 42 + i;
    const base = i * 1000;
    lines.push(`$0;${t(base)};${id};1;<sess>;${host};${id};-1`,
      `$1;${t(base)};${t(base)};${id};0;${op1};evil.<script>Klass`,
      `$1;${t(base + 10)};${t(base + 10)};${id};1;${op2};<img src=x>`,
      `$3;${t(base + 50)};${t(base + 50)};${id};2;${op2};<img src=x>;${cause}`,
      `$1;${t(base + 60)};${t(base + 60)};${id};3;${op3};long.Name`,
      `$2;${t(base + 90)};${t(base + 90)};${id};4;${op3};long.Name`,
      `$2;${t(base + 100)};${t(base + 100)};${id};5;${op1};evil.<script>Klass`);
  }
  writeFileSync(path.join(dir, 'kieker.map'), map);
  writeFileSync(path.join(dir, 'kieker-20231114-000000000-UTC-hostile.dat'), lines.join('\n') + '\n');
  return { op1, op2, op3, host, cause };
}

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const shot = (page, name) => page.screenshot({ path: path.join(artifacts, name), fullPage: true });

try {
  // ------------------------------------------------------------ bookstore
  console.log('bookstore log');
  let server = await startServer(bookstoreLog);
  const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.goto(server.url);
  await page.waitForSelector('#trace-table tbody tr');
  const info = await apiJson(server.url, '/api/info');
  // The bookstore fixture holds 1635 traces (testdata README).
  check(info.traces === 1635, `API reports the fixture's 1635 traces (got ${info.traces})`);
  check((await page.textContent('#match-count')).includes(`of ${info.traces} matching`), 'search page counts every trace');
  check(await page.locator('#trace-table tbody tr').count() === 50, 'first page lists 50 traces');
  check(await page.locator('#scatter circle.dot').count() === 1000, 'overview plot has a dot for each of the first 1000 traces');
  check((await page.textContent('#status-text')).includes(`${info.traces} traces`), 'status bar shows the trace count');
  // A plain log has no report and no collector: once the probes are answered, those tabs stay hidden.
  await page.waitForLoadState('networkidle');
  check(await page.locator('.tabs a[data-view=diagnosis]').isHidden() && await page.locator('.tabs a[data-view=live]').isHidden(),
    'no Diagnosis or Live tab for a plain log');

  // Search: longest searchBook traces.
  await page.fill('input[name=operation]', 'searchBook');
  await page.selectOption('select[name=order]', 'duration');
  await page.click('button[type=submit]');
  await page.waitForFunction(() => location.hash.includes('operation=searchBook'));
  await page.waitForSelector('#trace-table tbody tr');
  const expected = await apiJson(server.url, '/api/traces?operation=searchBook&order=duration&limit=1');
  check((await page.textContent('#match-count')).includes(`of ${expected.matched} matching`), `search matches ${expected.matched} traces as the API does`);
  const firstId = await page.getAttribute('#trace-table tbody tr:first-child', 'data-trace-id');
  check(firstId === String(expected.traces[0].trace_id), 'longest trace first, as the API orders it');
  await shot(page, 'bookstore-search.png');

  // A bad duration is refused with a message, not sent.
  await page.fill('input[name=min]', 'soon');
  await page.click('button[type=submit]');
  await page.waitForSelector('.error');
  check((await page.textContent('.error')).includes('Minimum duration'), 'unreadable duration gives an error naming the field');
  await page.fill('input[name=min]', '');
  await page.click('button[type=submit]');
  await page.waitForSelector('#trace-table tbody tr');

  // Open the first trace: timeline, then call tree.
  await page.click('#trace-table tbody tr:first-child td:first-child a');
  await page.waitForSelector('#timeline');
  const detail = await apiJson(server.url, `/api/traces/${firstId}`);
  const trace = detail.traces[0];
  check(trace.trace_id === firstId && trace.duration_ns === expected.traces[0].duration_ns, 'the opened trace is the listed one');
  check((await page.textContent('.stats')).includes(firstId), 'trace page shows the full 64-bit id');
  const barWidth = await page.evaluate(() => document.querySelector('#timeline .wf-row:not(.wf-axis) .wf-bar').getBoundingClientRect().width);
  check(barWidth > 300, `the root call's bar spans the timeline (${barWidth}px)`);
  check(await page.locator('#timeline .wf-row:not(.wf-axis)').count() === trace.calls.length, `timeline has one bar per call (${trace.calls.length})`);
  await shot(page, 'bookstore-trace-timeline.png');
  await page.click('#tab-tree');
  await page.waitForSelector('#call-tree');
  const rows = page.locator('#call-tree tbody tr');
  check(await rows.count() === trace.calls.length, 'call tree has one row per call');
  check(await rows.nth(0).getAttribute('data-depth') === '0', 'the root call is at depth 0');
  const rootName = await rows.nth(0).locator('.op-name').textContent();
  check(rootName === 'Bookstore.searchBook()', `root is Bookstore.searchBook() (got ${rootName})`);
  const depths = await rows.evaluateAll((rs) => rs.map((r) => Number(r.dataset.depth)));
  check(JSON.stringify(depths) === JSON.stringify(trace.calls.map((c) => c.ess)), 'tree depths follow the calls\' stack depths');
  const indents = await rows.evaluateAll((rs) => rs.map((r) => parseFloat(getComputedStyle(r.querySelector('.tree-cell')).paddingLeft)));
  check(indents[1] > indents[0], `children are indented (${indents.join(', ')}px)`);
  // Exclusive = inclusive minus the direct children's inclusive times.
  const children = trace.calls.filter((c) => c.ess === 1);
  const rootExclusive = trace.calls[0].inclusive_ns - children.reduce((s, c) => s + c.inclusive_ns, 0);
  check(trace.calls[0].exclusive_ns === rootExclusive, 'API exclusive time of the root = inclusive - children');
  await shot(page, 'bookstore-trace-tree.png');
  await rows.nth(0).locator('button.toggle').click();
  check(await page.locator('#call-tree tbody tr:visible').count() === 1, 'collapsing the root hides its subtree');
  await rows.nth(0).locator('button.toggle').click();
  check(await page.locator('#call-tree tbody tr:visible').count() === trace.calls.length, 'expanding shows it again');

  // Operations.
  await page.click('.tabs a[data-view=operations]');
  await page.waitForSelector('#ops-chart');
  const ops = await apiJson(server.url, '/api/operations');
  check(await page.locator('#ops-table tbody tr').count() === ops.operations.length, `operations table lists the ${ops.operations.length} operations`);
  check(await page.locator('#ops-chart .iqr').count() === Math.min(15, ops.operations.length), 'chart draws a bar per operation');
  await shot(page, 'bookstore-operations.png');

  // Dependency graph.
  await page.click('.tabs a[data-view=graph]');
  await page.waitForSelector('#edge-table');
  await page.waitForFunction(() => { const i = document.getElementById('graph-img'); return i && i.complete && i.naturalWidth > 0; });
  const graph = await apiJson(server.url, '/api/graph.json');
  check(await page.locator('#edge-table tbody tr').count() === graph.edges.length, `edge table lists the ${graph.edges.length} edges`);
  check(await page.evaluate(() => document.getElementById('graph-img').naturalWidth) > 100, 'graph SVG rendered');
  await shot(page, 'bookstore-graph.png');

  // Calling contexts: summary, per-operation table, collapsible tree.
  await page.click('.tabs a[data-view=contexts]');
  await page.waitForSelector('#context-tree tbody tr');
  const ctx = await apiJson(server.url, '/api/context');
  const ctxTree = await apiJson(server.url, '/api/context/tree?max_nodes=600');
  const levelRows = page.locator('#context-levels tbody tr');
  check(await levelRows.count() === 5, 'context summary lists operation, caller, stack, trace and model');
  check((await levelRows.nth(1).locator('td').nth(1).textContent()) === String(ctx.levels[1].contexts), `caller contexts as the API counts them (${ctx.levels[1].contexts})`);
  check(await page.locator('#context-chart rect').count() === 5, 'reduction chart has a bar per level');
  check(await page.locator('#context-ops tbody tr').count() === ctx.operations.length, `per-operation table lists the ${ctx.operations.length} operations`);
  const ctxRows = page.locator('#context-tree tbody tr');
  check(await ctxRows.count() === ctxTree.shown_nodes, `context tree has a row per node the API returns (${ctxTree.shown_nodes})`);
  check(await ctxRows.nth(0).getAttribute('data-depth') === '0', 'the tree starts at its root');
  await shot(page, 'bookstore-contexts.png');
  await ctxRows.nth(0).locator('button.toggle').click();
  check(await page.locator('#context-tree tbody tr:visible').count() === 1, 'collapsing the root hides the tree');
  await ctxRows.nth(0).locator('button.toggle').click();
  check(await page.locator('#context-tree tbody tr:visible').count() === ctxTree.shown_nodes, 'expanding shows it again');
  await page.click('#context-ops tbody tr:first-child td.op a');
  await page.waitForSelector('#context-tree tbody tr:first-child .level-tag.operation');
  check((await page.textContent('#context-tree tbody tr:first-child .op-name')) === ctx.operations[0].operation, 'drilling into an operation shows its own tree');
  await shot(page, 'bookstore-contexts-operation.png');

  // Narrow screens still work.
  await page.setViewportSize({ width: 420, height: 900 });
  await page.click('.tabs a[data-view=traces]');
  await page.waitForSelector('#trace-table tbody tr');
  await shot(page, 'bookstore-search-narrow.png');
  check(pageErrors.length === 0, `no script errors (${pageErrors.join('; ')})`);
  await page.close();
  check(await server.stop() === 0, 'sonde serve exits 0 on SIGTERM');

  // ------------------------------------------------------------ hostile log
  console.log('hostile log');
  const hostile = writeHostileLog(path.join(artifacts, 'hostile-log'));
  // A broken diagnosis report inside the served directory is not served; the API says why.
  const brokenReport = path.join(artifacts, 'hostile-log', 'diagnosis', 'report.json');
  mkdirSync(path.dirname(brokenReport), { recursive: true });
  writeFileSync(brokenReport, '{"format": "sonde-diagnosis/1"}');
  server = await startServer(path.join(artifacts, 'hostile-log'));
  const refused = await fetch(new URL('/api/diagnosis', server.url));
  check(refused.status === 404 && (await refused.json()).error.includes(`${brokenReport}: data: missing`),
    'a broken report beside the log is refused naming the file and the key');
  const evil = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  const dialogs = [];
  evil.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  const evilErrors = [];
  evil.on('pageerror', (e) => evilErrors.push(String(e)));
  await evil.goto(server.url);
  await evil.waitForSelector('#trace-table tbody tr');
  check(await evil.locator('#trace-table tbody tr').count() === 3, 'the three hostile traces are listed');
  await evil.waitForLoadState('networkidle');
  check(await evil.locator('.tabs a[data-view=diagnosis]').isHidden(), 'no Diagnosis tab for a report that was refused');
  check((await evil.textContent('#trace-table')).includes(hostile.host), 'hostile host name shown as text');
  await shot(evil, 'hostile-search.png');
  await evil.click('#trace-table tbody tr:first-child td:first-child a');
  await evil.waitForSelector('#timeline');
  check((await evil.textContent('.full-op')) === hostile.op1, 'hostile root operation shown verbatim as text');
  await evil.click('#tab-tree');
  await evil.waitForSelector('#call-tree');
  check((await evil.locator('#call-tree td.cause').allTextContents()).some((t) => t === hostile.cause), 'hostile exception cause shown verbatim as text');
  check((await evil.textContent('#call-tree')).includes('<script>alert("x")</script>'), 'hostile exception cause shown as text');
  check((await evil.getAttribute('#call-tree tbody tr:nth-child(2) td.op', 'title')) === hostile.op2, 'hostile name intact in the tooltip attribute');
  await shot(evil, 'hostile-trace-tree.png');
  await evil.click('.tabs a[data-view=operations]');
  await evil.waitForSelector('#ops-chart');
  await evil.click('.tabs a[data-view=graph]');
  await evil.waitForSelector('#edge-table');
  await evil.waitForFunction(() => { const i = document.getElementById('graph-img'); return i && i.complete; });
  await shot(evil, 'hostile-graph.png');
  await evil.click('.tabs a[data-view=contexts]');
  await evil.waitForSelector('#context-tree tbody tr');
  check((await evil.locator('#context-tree .op-name').allTextContents()).includes(hostile.op1), 'hostile operation shown verbatim in the context tree');
  await shot(evil, 'hostile-contexts.png');
  const injected = await evil.evaluate(() => ({
    pwned: window.__pwned ?? null,
    elements: document.querySelectorAll('#injected-img, #injected-svg, img[src="x"], b').length,
    scripts: [...document.scripts].map((sc) => sc.getAttribute('src')),
  }));
  check(dialogs.length === 0, `no dialog opened (${dialogs.join('; ')})`);
  check(injected.pwned === null, 'no injected script ran');
  check(injected.elements === 0, 'no injected element exists');
  check(JSON.stringify(injected.scripts) === JSON.stringify(['app.js', 'contexts.js', 'charts.js', 'diagnosis.js', 'live.js', 'reduced.js']), `the only scripts are the UI's own (${injected.scripts.join(', ')})`);
  check(evilErrors.length === 0, `no script errors (${evilErrors.join('; ')})`);
  await evil.close();
  check(await server.stop() === 0, 'sonde serve exits 0 on SIGTERM');

  // ------------------------------------------------------------ diagnosis and live
  console.log('diagnosis report and live collector');
  await testDiagnosisAndLive({ browser, sonde, workload, artifacts, check, shot, startServer, apiJson });

  // ------------------------------------------------------------ reduced traces
  console.log('reduced traces of a collector with --reduce');
  await testReducedView({ browser, sonde, workload, artifacts, check, shot, startServer, apiJson });

  // ------------------------------------------------------------ C++ names
  console.log('a C++ program: operations named as C++ writes them');
  await testCppNames({ browser, sonde, autoinst, artifacts, check, shot, startServer });
} catch (e) {
  console.log(`  FAIL: ${e.stack || e}`);
  failures++;
} finally {
  await browser.close();
}
console.log(failures ? `${failures} check(s) failed; screenshots in ${artifacts}` : `all checks passed; screenshots in ${artifacts}`);
process.exit(failures ? 1 : 0);
