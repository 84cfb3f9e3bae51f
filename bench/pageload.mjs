// pageload.mjs - how long a display page takes to open in chromium: from
// navigation start until the page has drawn its first step and its
// timeline (window.tqmon.ready), then a seek to the middle of the run.
//   node bench/pageload.mjs PAGE.html [CHROMIUM]
// Prints "key value" lines (read by bench/run.sh).  Best of 3 loads.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
const require = createRequire(pathToFileURL(process.cwd() + "/tests/browser/package.json"));
const { chromium } = require("playwright-core");
const [page_, exe] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: exe || "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
let best = Infinity, seek = Infinity, steps = 0, bars = 0;
for (let i = 0; i < 3; i++) {
  const p = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  await p.goto(pathToFileURL(page_).href, { waitUntil: "load" });
  await p.waitForFunction(() => window.tqmon && window.tqmon.ready);
  const r = await p.evaluate(() => {
    const nav = performance.getEntriesByType("navigation")[0];
    const t0 = performance.now();
    const mid = window.tqmon.steps() >> 1;
    window.tqmon.stepBy(mid);
    return { open: nav.loadEventEnd, seek: performance.now() - t0, steps: window.tqmon.steps(), bars: window.tqmon.bars() };
  });
  best = Math.min(best, r.open);
  seek = Math.min(seek, r.seek);
  steps = r.steps;
  bars = r.bars;
  await p.close();
}
await browser.close();
console.log("page.open_ms " + best.toFixed(0));
console.log("page.seek_ms " + seek.toFixed(0));
console.log("page.steps " + steps);
console.log("page.bars " + bars);
