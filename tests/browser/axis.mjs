// axis.mjs - times on the page (issue 14.12), in chromium
// (tests/scripts/browser_axis.sh runs it):
//   live      a live run's page: the time axis and the time field in
//             wall-clock dates (UTC), the clock badge shows the date and
//             time and is fully visible (its text inside its badge, the
//             badge inside the picture);
//   recording the paper's example: the axis in offsets (h:mm:ss);
//   beginning a result valid from beginning: the axis spans the finite
//             times (0:00:20 to 0:00:40), not from -292 years, and the
//             first step shows "beginning".
//
//   node tests/browser/axis.mjs KIND PAGE.html OUTDIR [CHROMIUM]
import { check, failed, openPage } from "./lib.mjs";

const [kind, path, out, exe] = process.argv.slice(2);
const { browser, page, errors } = await openPage(exe, path, { width: 1280, height: 1000 },
                                                  () => window.tqmon && window.tqmon.ready);
const axis = () => page.evaluate(() => window.tqmon.axis());
const clockBox = () => page.evaluate(() => {
  const g = document.querySelector("g.clock");
  if (!g) return null;
  const r = g.querySelector("rect").getBBox(), t = g.querySelector("text").getBBox();
  const vb = document.getElementById("svg").viewBox.baseVal;
  return { rect: { x: r.x, y: r.y, w: r.width, h: r.height }, text: { x: t.x, y: t.y, w: t.width, h: t.height },
           view: { w: vb.width, h: vb.height }, label: g.querySelector("text").textContent };
});
const within = (a, b) => a.x >= b.x - 0.5 && a.y >= b.y - 0.5 && a.x + a.w <= b.x + b.w + 0.5 && a.y + a.h <= b.y + b.h + 0.5;
try {
  check(errors.length === 0, kind + ": the page loads without script errors " + JSON.stringify(errors));
  if (kind === "live") {
    await page.evaluate(() => window.tqmon.stepBy(5));
    const a = await axis();
    const date = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,3})?$/, tod = /^\d\d:\d\d:\d\d(\.\d{1,3})?$/;
    check(a.length >= 2, "live: the axis has ticks " + JSON.stringify(a.map((x) => x.label)));
    check(a.length > 0 && date.test(a[0].label), "live: the first tick is a date and time of day: " + (a[0] && a[0].label));
    check(a.every((x) => date.test(x.label) || tod.test(x.label)), "live: every tick is a wall-clock time " + JSON.stringify(a.map((x) => x.label)));
    const year = new Date().getUTCFullYear();
    check(a.length > 0 && Math.abs(+a[0].label.slice(0, 4) - year) <= 1, "live: the date is this year's, not hours since 1970");
    check(date.test(await page.inputValue("#time")), "live: the time field shows a date: " + (await page.inputValue("#time")));
    const c = await clockBox();
    check(c && /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/.test(c.label), "live: the clock shows the date and time: " + (c && c.label));
    check(c && within(c.text, c.rect), "live: the clock's text is inside its badge " + JSON.stringify(c));
    check(c && c.rect.x >= 0 && c.rect.x + c.rect.w <= c.view.w && c.rect.y >= 0, "live: the badge is inside the picture " + JSON.stringify(c));
    // typing a date goes there
    const t = a[0].label.length > 10 ? a[0].label : null;
    if (t) {
      await page.fill("#time", t);
      await page.press("#time", "Enter");
      check((await page.inputValue("#time")).startsWith(t.slice(0, 10)), "live: a date typed into the time field is understood");
    }
  } else if (kind === "recording") {
    await page.evaluate(() => window.tqmon.seek("2:00:05"));
    const a = await axis();
    check(a.length >= 2 && a.every((x) => /^\d+:\d\d:\d\d(\.\d+)?$/.test(x.label)),
          "recording: the axis is in offsets (h:mm:ss) " + JSON.stringify(a.map((x) => x.label)));
    const c = await clockBox();
    check(c && c.label === "2:00:05" && within(c.text, c.rect), "recording: the clock shows 2:00:05 inside its badge " + JSON.stringify(c));
  } else if (kind === "beginning") {
    await page.click("#first");
    check((await page.inputValue("#time")) === "beginning", "beginning: the first step is at beginning: " + (await page.inputValue("#time")));
    const a = await axis();
    const secs = (l) => { const m = /^(\d+):(\d\d):(\d\d)/.exec(l); return m ? +m[1] * 3600 + +m[2] * 60 + +m[3] : NaN; };
    check(a.length >= 3, "beginning: the axis has several ticks " + JSON.stringify(a.map((x) => x.label)));
    check(a.every((x) => secs(x.label) >= 20 && secs(x.label) <= 40),
          "beginning: the axis spans the finite times, 0:00:20 to 0:00:40 " + JSON.stringify(a.map((x) => x.label)));
    const c = await clockBox();
    check(c && c.label === "beginning" && within(c.text, c.rect), "beginning: the clock shows beginning inside its badge " + JSON.stringify(c));
  }
  await page.screenshot({ path: `${out}/axis-${kind}.png`, fullPage: true });
} finally {
  await browser.close();
}
if (failed()) {
  console.log(failed() + " checks failed");
  process.exit(1);
}
console.log("all checks passed");
