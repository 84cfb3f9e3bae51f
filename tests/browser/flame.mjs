// flame.mjs - the browser test of tqmon report's flame graph page
// (tests/scripts/strobe_report.sh runs it): Debian's chromium, driven by
// playwright-core, loads the page, checks that it loads without errors and
// fetches nothing, that each frame's width is its share of the samples (the
// shares the text report gave), and zooms the way a person would: a click on
// a frame makes it as wide as the graph, a click on the root comes back.
//
//   node tests/browser/flame.mjs PAGE.html OUTDIR CHROMIUM SLACK NAME=SHARE...
// (SHARE: a function's percentage of all samples, from the text report: its
// own samples.  A frame also holds the samples of what it called, the
// kernel's frames on top of it: up to SLACK percent more.)
// Exit 0 when every check holds; prints one line per check.

import { check, failed, openPage } from "./lib.mjs";

const [page_, out, exe, slack_, ...expect] = process.argv.slice(2);
const slack = +slack_;
const { browser, page, errors, requests } = await openPage(exe, page_, { width: 1200, height: 500 },
                                                           () => window.flame && window.flame.ready);
try {
  check(errors.length === 0, "the page loads without script errors " + JSON.stringify(errors));
  check(requests.length === 0, "the page fetches nothing from the network " + JSON.stringify(requests));
  const frames = () => page.evaluate(() => Array.from(document.querySelectorAll("#graph .frame")).map((d) => {
    const r = d.getBoundingClientRect();
    return { name: d.dataset.name, samples: +d.dataset.samples, x: r.x, w: r.width, y: r.y, title: d.title };
  }));
  let fs = await frames();
  const root = fs.find((f) => f.name === "all");
  check(root && root.w > 1000, "the root frame spans the graph");
  // a function's share: the sum of its frames' widths (it may sit in several stacks)
  const widthOf = (list, n) => list.filter((f) => f.name === n).reduce((s, f) => s + f.w, 0);
  for (const e of expect) {
    const [name, share] = e.split("=");
    const got = 100 * widthOf(fs, name) / root.w;
    check(got >= +share - 0.5 && got <= +share + slack + 0.5,
          `${name} is ${got.toFixed(2)}% of the width, the report says ${share}% of its own (+ up to ${slack}% called)`);
    const f = fs.find((x) => x.name === name);
    check(f && f.title.includes(name) && /samples, [0-9.]+%/.test(f.title), `${name}'s frame tells its samples and share (${f && f.title})`);
  }
  await page.screenshot({ path: `${out}/flame.png` });
  // zoom into the first expected function: it becomes as wide as the graph
  const first = expect[0].split("=")[0];
  const z0 = widthOf(fs, first);
  await page.locator(`#graph .frame[data-name="${first}"]`).first().click();
  fs = await frames();
  const z = fs.find((f) => f.name === first);
  check(z && Math.abs(z.w - root.w) < 2, `a click on ${first} zooms it to the whole width (${z && z.w} of ${root.w})`);
  check(await page.evaluate(() => window.flame.focus()) === first, "the page says what it is zoomed into");
  await page.screenshot({ path: `${out}/flame-zoom.png` });
  await page.locator('#graph .frame[data-name="all"]').click();
  fs = await frames();
  check(Math.abs(widthOf(fs, first) - z0) < 2, "a click on the root zooms back out");
} finally {
  await browser.close();
}
process.exit(failed() ? 1 : 0);
