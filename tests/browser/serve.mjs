// serve.mjs - the live page of `tqmon serve` (tests/scripts/serve.sh runs
// it while tqmon replays the paper's example slowly, --display pace=S):
//  1. over plain HTTP: the page, the event stream (steps arrive while the
//     run goes on, then "end"), /model.json, 404 for anything else;
//  2. in chromium (when playwright-core and chromium are there): the page
//     follows the run live, then shows P2 flashing at 2:54:20.
//
//   node tests/browser/serve.mjs http - OUTDIR
//   node tests/browser/serve.mjs browser - OUTDIR CHROMIUM
// Node (and in browser mode chromium) starts first: the script then
// creates OUTDIR/http.ready (OUTDIR/browser.ready), and serve.sh starts
// the server only then and writes its URL to OUTDIR/url.  However slowly
// node or chromium starts, the run it must see live has not begun before
// it is there to see it (node started after the server once took longer
// than the 2.6 s run on a busy machine, and saw every step at once).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
const [mode, urlArg, out, exe] = process.argv.slice(2);
let url = urlArg;
let failed = 0;
function check(ok, what) {
  console.log((ok ? "ok   " : "FAIL ") + what);
  if (!ok) failed++;
}

// OUTDIR/url, once serve.sh has written it (at most 120 s)
async function urlFile() {
  const t0 = Date.now();
  while (!existsSync(`${out}/url`) && Date.now() - t0 < 120000) await new Promise((r) => setTimeout(r, 20));
  return readFileSync(`${out}/url`, "utf8").trim();
}

// 1. HTTP
if (mode === "http") {
writeFileSync(`${out}/http.ready`, "");
url = await urlFile();
const page = await (await fetch(url)).text();
check(page.includes('"live":true') && page.includes("tqmon-model"), "GET / serves the live page with its model");
check((await fetch(url + "nothing-here")).status === 404, "an unknown path is 404");
const seen = [];
let ended = false, firstAt = 0, lastAt = 0;
{
  const res = await fetch(url + "events?from=0");
  check(res.headers.get("content-type").startsWith("text/event-stream"), "/events is a server-sent event stream");
  const reader = res.body.getReader(), dec = new TextDecoder();
  let buf = "";
  const t0 = Date.now();
  while (!ended && Date.now() - t0 < 120000) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const ev = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (ev.startsWith("event: end")) ended = true;
      else if (ev.startsWith("event: step")) {
        seen.push(JSON.parse(ev.slice(ev.indexOf("data: ") + 6)));
        if (seen.length === 1) firstAt = Date.now();
        lastAt = Date.now();
      }
    }
  }
}
check(ended, "the stream ends with an end event when the run is over");
check(seen.length > 100 && seen.every((s, k) => s.i === k + 1), "every step arrives once, in order (" + seen.length + ")");
check(lastAt - firstAt > 500, "steps arrive over time while the run goes on (" + (lastAt - firstAt) + " ms)");
const model = await (await fetch(url + "model.json")).json();
check(model.steps.length === seen.length && model.header.bands.length >= 7, "/model.json has every step and the bands");
}

// 2. the browser, on another run of the same replay
if (mode === "browser") {
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({ executablePath: exe, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  try {
    const p = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const errors = [];
    p.on("pageerror", (e) => errors.push(String(e)));
    writeFileSync(`${out}/browser.ready`, "");
    const t0 = Date.now();
    url = await urlFile();
    await p.goto(url);
    await p.waitForFunction(() => window.tqmon && window.tqmon.ready, null, { timeout: 120000 });
    const n0 = await p.evaluate(() => window.tqmon.steps());
    const endedEarly = await p.evaluate(() => document.getElementById("live").textContent === "run ended");
    check(!endedEarly, `the page is ready while the run goes on (${Date.now() - t0} ms after the server started, ${n0} steps)`);
    if (!endedEarly) await p.waitForFunction((n) => window.tqmon.steps() > n + 20, n0, { timeout: 60000 });
    const n1 = await p.evaluate(() => window.tqmon.steps());
    check(n1 > n0 + 20, `the open page receives new steps while the run goes on (${n0} -> ${n1})`);
    check(await p.evaluate(() => window.tqmon.step() === window.tqmon.steps() - 1), "the page follows the newest step");
    await p.screenshot({ path: `${out}/live-running.png` });
    await p.waitForFunction(() => document.getElementById("live").textContent === "run ended", null, { timeout: 120000 });
    await p.evaluate(() => window.tqmon.seek("2:54:20"));
    const fl = await p.evaluate(() => [...document.querySelectorAll("#svg g.flash")].map((g) => g.dataset.target));
    check(fl.length === 1 && fl[0] === "Process[P2]", "live page at 2:54:20: P2 flashes " + JSON.stringify(fl));
    await p.screenshot({ path: `${out}/live-2_54_20.png` });
    check(errors.length === 0, "no script errors " + JSON.stringify(errors));
  } finally {
    await browser.close();
  }
}
console.log(failed ? `${failed} checks failed` : "all checks passed");
process.exit(failed ? 1 : 0);
