// Child processes shared by the browser tests: a command run to its end,
// and a `sonde collect` on a free loopback port.
import { spawn } from 'node:child_process';

// Runs `command args`; resolves to {code, err} (its stderr) when it exits.
export function runProcess(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', (code) => resolve({ code, err }));
  });
}

// `sonde collect [extra...] --listen 127.0.0.1:0 --out DIR`; resolves to
// {port, stop} once it listens (stop sends SIGTERM and resolves to the exit code).
export function startCollector(sonde, dir, extra = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(sonde, ['collect', ...extra, '--listen', '127.0.0.1:0', '--out', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`sonde collect did not start: ${err}`)); }, 30000);
    child.stderr.on('data', (d) => {
      err += d;
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ port: Number(m[1]), stop: () => new Promise((done) => { child.once('exit', (code) => done(code)); child.kill('SIGTERM'); }) });
      }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`sonde collect exited with ${code}: ${err}`)); });
  });
}
