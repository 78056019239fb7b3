// The web UI names a C++ program's operations as C++ users write them
// (src/format/operation_name.hpp, web/app.js shortOperation): a log of
// example_autoinst (examples/autoinst: a static function, an anonymous
// namespace, classes of a shared library, std::unique_ptr parameters)
// made with `sonde run`, served with `sonde serve`.
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';

import { runProcess } from './processes.mjs';

// Kieker's form of the same names, or the library's spelled-out types.
const NOT_CPP = ['shapes.make', 'example_autoinst.', 'Inventory.add', 'std.', '__cxx11', 'std::default_delete'];

export async function testCppNames({ browser, sonde, autoinst, artifacts, check, shot, startServer }) {
  const dir = path.join(artifacts, 'cpp-names-log');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const ran = await runProcess(sonde, ['run', '--out', dir, '--set', 'summary=false', '--', autoinst]);
  check(ran.code === 0, `example_autoinst runs under sonde run (${ran.err})`);
  const server = await startServer(dir);
  const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    await page.goto(server.url);
    await page.waitForSelector('#trace-table tbody tr');
    const row = await page.textContent('#trace-table tbody tr:first-child');
    check(row.includes('main'), `the trace list names the root main (${row.trim()})`);

    await page.click('#trace-table tbody tr:first-child td:first-child a');
    await page.waitForSelector('#timeline');
    const bars = await page.locator('#timeline .wf-row:not(.wf-axis) .wf-name').allTextContents();
    for (const name of ['main', 'scale(..)', 'shapes::make(..)', 'Inventory::add(..)', 'Circle::area()',
      '(anonymous namespace)::report(..)', 'shapes::total_area(..)']) {
      check(bars.includes(name), `the timeline shows ${name}`);
    }
    const titles = await page.locator('#timeline .wf-row:not(.wf-axis)').evaluateAll((rs) => rs.map((r) => r.title));
    check(titles.includes('shapes::total_area(std::vector<std::unique_ptr<shapes::Shape>> const&)'),
      'the full name in the tooltip reads as the code declares it');
    await shot(page, 'cpp-names-timeline.png');

    await page.click('#tab-tree');
    await page.waitForSelector('#call-tree');
    const components = await page.locator('#call-tree tbody td.comp').allTextContents();
    check(components.includes('shapes::Circle') && components.includes('example_autoinst'),
      `the component column holds a member's class and a free function's module (${[...new Set(components)].join(', ')})`);

    await page.click('.tabs a[data-view=operations]');
    await page.waitForSelector('#ops-chart');
    const ops = await page.textContent('#ops-table');
    check(ops.includes('shapes::make(..)') && ops.includes('Inventory::add(..)'), 'the operations table names C++ operations');
    await shot(page, 'cpp-names-operations.png');
    const text = await page.evaluate(() => document.body.innerText + [...document.querySelectorAll('[title]')].map((e) => e.title).join('\n'));
    const kieker = NOT_CPP.filter((s) => text.includes(s));
    check(kieker.length === 0, `no name in Kieker's form or with spelled-out library types (${kieker.join(', ')})`);
    check(errors.length === 0, `no script errors (${errors.join('; ')})`);
  } finally {
    await page.close();
    check(await server.stop() === 0, 'sonde serve exits 0 on SIGTERM');
  }
}
