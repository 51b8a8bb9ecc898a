#!/usr/bin/env node
// Loads a trace file into Chromium's own trace viewer, the DevTools performance panel (chrome://tracing is no longer
// in Chromium), with the panel's trace engine as its Load button runs it, and checks that the viewer took all of
// it: every complete event a slice on its process and thread, nested as the flame chart draws them, every message's
// flow bound at its three ends (encode, wire, decode), and no warning from the engine.
//
//   node tools/trace-viewer-check.mjs TRACE.json [--chromium PATH]
//
// Prints one JSON object (what the file holds, what the viewer made of it, the problems) and exits 0 when they agree,
// 1 when they do not, 2 when it could not ask (no Chromium, or no trace engine in it). Needs Node 20 and a Chromium
// (Debian's `chromium` package); it drives the browser through the DevTools protocol on a pipe, so it opens no port
// and needs no display.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function usage(message) {
  process.stderr.write(`trace-viewer-check: ${message}\n` +
    'usage: node tools/trace-viewer-check.mjs TRACE.json [--chromium PATH]\n');
  process.exit(2);
}

const args = process.argv.slice(2);
let tracePath, chromium;
for (let i = 0; i < args.length; ++i) {
  if (args[i] === '--chromium') {
    chromium = args[++i];
    if (!chromium) usage('--chromium needs the browser\'s path');
  } else if (args[i].startsWith('--')) usage(`unknown option '${args[i]}'`);
  else if (!tracePath) tracePath = args[i];
  else usage(`one trace at a time ('${args[i]}' is a second)`);
}
if (!tracePath) usage('which trace? give its path');
chromium = chromium ?? ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome']
  .find((p) => existsSync(p));
if (!chromium || !existsSync(chromium))
  usage('no Chromium found: install Debian\'s `chromium` package, or name one with --chromium PATH');

let text;
try {
  text = readFileSync(tracePath, 'utf8');
} catch (e) {
  usage(`cannot read '${tracePath}': ${e.message}`);
}

// What the file holds, counted the way the viewer should count it.
let trace;
try {
  trace = JSON.parse(text);
} catch (e) {
  console.log(JSON.stringify({ file: tracePath, ok: false, problems: [`not JSON: ${e.message}`] }));
  process.exit(1);
}
const events = Array.isArray(trace) ? trace : trace.traceEvents ?? [];
const pids = new Set(), flowIds = new Set();
let slices = 0;
for (const e of events) {
  if (e.ph === 'M') continue;
  if (e.ph === 'X') ++slices, pids.add(e.pid);
  if (e.ph === 's') flowIds.add(`${e.cat}/${e.name}/${e.id}`);
}
const expected = { processes: pids.size, slices, flows: flowIds.size };

// The browser, on a pipe: commands go in on fd 3, answers come out on fd 4, each a JSON text ended by a NUL.
const profile = mkdtempSync(join(tmpdir(), 'trace-viewer-check-'));
const browser = spawn(chromium, ['--headless', '--remote-debugging-pipe', '--no-sandbox', '--disable-gpu',
  '--no-first-run', '--no-default-browser-check', `--user-data-dir=${profile}`, '--window-size=1600,900',
  'about:blank'], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], detached: true });
let browserLog = '';
browser.stderr.on('data', (d) => { browserLog = (browserLog + d).slice(-4000); });
const pending = new Map();
let nextId = 0, inbox = '';
browser.stdio[4].on('data', (chunk) => {
  inbox += chunk;
  let end;
  while ((end = inbox.indexOf('\0')) >= 0) {
    const message = JSON.parse(inbox.slice(0, end));
    inbox = inbox.slice(end + 1);
    const waiter = pending.get(message.id);
    if (waiter) {
      pending.delete(message.id);
      message.error ? waiter.reject(new Error(message.error.message)) : waiter.resolve(message.result);
    }
  }
});
function send(method, params = {}, sessionId) {
  const id = ++nextId;
  browser.stdio[3].write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + '\0');
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
let finishing = false;
function finish(code, report) {
  if (finishing) return;
  finishing = true;
  console.log(JSON.stringify(report, null, 1));
  // The browser's whole process group (renderer and GPU processes too), then its profile once nothing writes there.
  const done = () => {
    try {
      rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    } catch {
      // a leftover temporary folder is not a failed check
    }
    process.exit(code);
  };
  if (browser.exitCode !== null || browser.signalCode !== null) return done();
  browser.once('exit', done);
  try {
    process.kill(-browser.pid, 'SIGKILL');
  } catch {
    browser.kill('SIGKILL');
  }
  setTimeout(done, 5000);
}
const deadline = setTimeout(() => finish(2, {
  file: tracePath, ok: false, problems: ['Chromium did not answer within 120 s'], browser: browserLog,
}), 120000);
browser.on('exit', (code) => {
  if (pending.size) finish(2, { file: tracePath, ok: false, problems: [`Chromium exited (${code})`],
    browser: browserLog });
});

async function evaluate(session, expression) {
  const r = await send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true }, session);
  if (r.exceptionDetails)
    throw new Error(r.exceptionDetails.exception?.description ?? r.exceptionDetails.text);
  return r.result.value;
}

try {
  const version = await send('Browser.getVersion');
  const { targetId } = await send('Target.createTarget', { url: 'devtools://devtools/bundled/trace_app.html' });
  const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
  // The performance panel's own trace engine, as its Load button runs it on a file's events.
  const seen = await evaluate(sessionId, `(async () => {
    let Trace;
    for (let i = 0; i < 100 && !Trace; ++i) {
      try {
        Trace = await import('devtools://devtools/bundled/models/trace/trace.js');
      } catch (e) {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    if (!Trace) return { problems: ['this Chromium has no DevTools trace engine to load the file with'] };
    const text = ${JSON.stringify(text)};
    const parsed = JSON.parse(text);
    const events = Array.isArray(parsed) ? parsed : parsed.traceEvents;
    const model = Trace.TraceModel.Model.createWithAllHandlers();
    await model.parse(events, { metadata: {}, isFreshRecording: false });
    const data = model.parsedTrace(0).data;
    let slices = 0, threads = 0, misnested = 0;
    const processes = [];
    for (const [pid, p] of data.Renderer.processes) {
      processes.push(pid);
      for (const [tid, t] of p.threads) {
        ++threads;
        const complete = t.entries.filter((e) => e.ph === 'X');
        slices += complete.length;
        // What the flame chart draws: a thread's slices nested, none running past the one it starts in.
        const open = [];
        for (const e of [...complete].sort((a, b) => a.ts - b.ts || b.dur - a.dur)) {
          while (open.length && open[open.length - 1] <= e.ts) open.pop();
          if (open.length && e.ts + e.dur > open[open.length - 1]) ++misnested;
          open.push(e.ts + e.dur);
        }
      }
    }
    const flows = data.Flows.flows;
    return {
      processes: processes.length,
      threads,
      slices,
      flows: flows.length,
      flowsUnbound: flows.filter((f) => f.length < 3).length,
      misnested,
      warnings: [...data.Warnings.perWarning.keys()],
    };
  })()`);
  const problems = [...(seen.problems ?? []), ...(seen.warnings ?? []).map((w) => `the trace engine warned: ${w}`)];
  if (seen.misnested) problems.push(`${seen.misnested} slices run past the slice they start in`);
  if (seen.flowsUnbound) problems.push(`${seen.flowsUnbound} flows lost an end (no slice of theirs where it is)`);
  for (const key of ['processes', 'slices', 'flows'])
    if (seen[key] !== undefined && seen[key] !== expected[key])
      problems.push(`${key}: the file holds ${expected[key]}, the viewer made ${seen[key]}`);
  clearTimeout(deadline);
  finish(problems.length ? 1 : 0, { file: tracePath, viewer: 'the DevTools performance panel\'s trace engine',
    browser: version.product, ok: problems.length === 0, expected, seen, problems });
} catch (e) {
  finish(2, { file: tracePath, ok: false, problems: [e.message], browser: browserLog });
}
