// paper.mjs - the browser test of the display page for the paper's example
// (tests/scripts/browser.sh runs it): Debian's chromium, driven by
// playwright-core, loads the page tqmon wrote, goes to 2:00:05, 2:51:13 and
// 2:54:20 the way a person would (typing the time, the step buttons) and
// checks what is drawn: which circle is inside which rectangle, which
// pointers exist, what flashes.  Screenshots go to the output folder.
//
//   node tests/browser/paper.mjs PAGE.html OUTDIR [CHROMIUM]
// Exit 0 when every check holds; prints one line per check.

import { check, failed, openPage } from "./lib.mjs";

const [page_, out, exe] = process.argv.slice(2);
const { browser, page, errors, requests } = await openPage(exe, page_, { width: 1280, height: 1000 },
                                                           () => window.tqmon && window.tqmon.ready);
try {
  check(errors.length === 0, "the page loads without script errors " + JSON.stringify(errors));
  check(requests.length === 0, "the page fetches nothing from the network " + JSON.stringify(requests));
  check(await page.locator("#play").isVisible(), "play, pause, step, speed and time controls are there");
  check((await page.locator("#speed option").count()) >= 3 && (await page.locator("#slider").count()) === 1, "speed choices and a time slider");

  // What the page draws now, as geometry read from the SVG itself.
  const drawn = () => page.evaluate(() => {
    const out = [];
    for (const g of document.querySelectorAll("#svg g.obj")) {
      const shape = g.querySelector("circle, ellipse, rect, line, polygon");
      out.push({
        name: g.dataset.name, kind: g.dataset.kind, cls: g.getAttribute("class"), in: g.dataset.in || null,
        target: g.dataset.target || null, ghost: g.classList.contains("ghost"),
        box: shape && shape.getBBox ? (({ x, y, width, height }) => ({ x, y, width, height }))(shape.getBBox()) : null,
        line: g.querySelector("line") ? ["x1", "y1", "x2", "y2"].map((a) => +g.querySelector("line").getAttribute(a)) : null,
        opacity: getComputedStyle(g).animationName,
      });
    }
    return out;
  });
  const byName = (objs, n) => objs.find((o) => o.name === n && !o.ghost);
  const inside = (a, b) => a && b && a.box && b.box && a.box.x >= b.box.x && a.box.y >= b.box.y &&
    a.box.x + a.box.width <= b.box.x + b.box.width && a.box.y + a.box.height <= b.box.y + b.box.height;
  const center = (o) => [o.box.x + o.box.width / 2, o.box.y + o.box.height / 2];
  const near = (pt, o) => { const [cx, cy] = center(o); return Math.hypot(pt[0] - cx, pt[1] - cy) <= Math.max(o.box.width, o.box.height) / 2 + 8; };
  const pointer = (objs, n, from, to) => {
    const p = byName(objs, n), a = byName(objs, from), b = byName(objs, to);
    return !!(p && a && b && p.kind === "arrow" && near([p.line[0], p.line[1]], a) && near([p.line[2], p.line[3]], b));
  };
  const flashing = (objs) => objs.filter((o) => o.kind === "flash").map((o) => o.target);
  const shot = (n) => page.screenshot({ path: `${out}/${n}.png`, fullPage: true });

  // 2:00:05, typed into the time field: P1 runs on A and sends to M3
  await page.fill("#time", "2:00:05");
  await page.press("#time", "Enter");
  check((await page.inputValue("#time")) === "2:00:05", "the time field shows 2:00:05");
  let o = await drawn();
  await shot("paper-2_00_05");
  check(inside(byName(o, "Process[P1]"), byName(o, "Processor[A]")), "2:00:05: circle P1 is inside rectangle A");
  check(byName(o, "Process[P1]").in === "Processor[A]", "2:00:05: P1 is drawn as contained in A");
  check(!inside(byName(o, "Process[P2]"), byName(o, "Processor[A]")) && !inside(byName(o, "Process[P2]"), byName(o, "Processor[B]")),
        "2:00:05: P2 (ready) is in no processor");
  check(pointer(o, "SendMessage[P1,M3]", "Process[P1]", "Mailbox[M3]"), "2:00:05: a pointer from P1 to M3 (SendMessage)");
  check(!o.some((x) => x.name.startsWith("Waiting[") && !x.ghost), "2:00:05: nobody waits");
  check(flashing(o).length === 0, "2:00:05: nothing flashes");
  check((await page.locator("g.clock text").textContent()).includes("2:00:05"), "2:00:05: the clock shows the time");

  // 2:51:13, through the slider's neighbour: seek, then the step buttons
  await page.evaluate(() => window.tqmon.seek("2:51:12"));
  await page.click("#fwd");
  check((await page.inputValue("#time")) === "2:51:13", "the next-step button goes from 2:51:12 to 2:51:13");
  o = await drawn();
  await shot("paper-2_51_13");
  check(inside(byName(o, "Process[P1]"), byName(o, "Processor[B]")), "2:51:13: circle P1 is inside rectangle B");
  check(!inside(byName(o, "Process[P2]"), byName(o, "Processor[A]")) && !inside(byName(o, "Process[P2]"), byName(o, "Processor[B]")),
        "2:51:13: P2 (blocked) is in no processor");
  check(pointer(o, "Waiting[P2,M7]", "Mailbox[M7]", "Process[P2]"), "2:51:13: a pointer from M7 to P2 (Waiting)");
  check(pointer(o, "SendMessage[P1,M7]", "Process[P1]", "Mailbox[M7]"), "2:51:13: a pointer from P1 to M7 (SendMessage)");
  check(flashing(o).length === 0, "2:51:13: nothing flashes yet");

  // 2:54:20: P2 is resumed by P1 and flashes
  await page.fill("#time", "2:54:20");
  await page.press("#time", "Enter");
  o = await drawn();
  await shot("paper-2_54_20");
  const fl = flashing(o);
  check(fl.length === 1 && fl[0] === "Process[P2]", "2:54:20: P2 flashes (ResumedbyP1) " + JSON.stringify(fl));
  const f = o.find((x) => x.kind === "flash");
  check(f && f.cls.includes("flash") && f.opacity === "tqflash", "2:54:20: the flash blinks (CSS animation)");
  check(f && inside(byName(o, "Process[P2]"), f), "2:54:20: the flash ring surrounds P2's circle");
  check(!o.some((x) => x.name.startsWith("Waiting[") && !x.ghost), "2:54:20: the wait of P2 on M7 is over");
  check(o.some((x) => x.name.startsWith("Waiting[P2,M7]") && x.ghost), "2:54:20: the wait fades as a past state (animationtrace)");
  check(!inside(byName(o, "Process[P1]"), byName(o, "Processor[A]")) && !inside(byName(o, "Process[P1]"), byName(o, "Processor[B]")),
        "2:54:20: P1 (done) runs nowhere");

  // one step later the flash is gone; the timeline is drawn
  await page.click("#fwd");
  o = await drawn();
  check(flashing(o).length === 0, "after 2:54:20 the flash is over");
  const tl = await page.evaluate(() => {
    const c = document.getElementById("tl"), d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let ink = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i]) ink++;
    return { w: c.width, h: c.height, ink, bars: window.tqmon.bars() };
  });
  check(tl.bars > 20 && tl.ink > 10000, "the timeline shows the tuples as bars " + JSON.stringify(tl));
  await shot("paper-timeline");

  // play runs the animation forward
  await page.evaluate(() => window.tqmon.seek("1:00:00"));
  await page.selectOption("#speed", "100");
  await page.click("#play");
  await page.waitForTimeout(400);
  await page.click("#play");
  const at = await page.evaluate(() => window.tqmon.step());
  check(at > 5, "play advances the animation (step " + at + "), pause stops it");
  check(errors.length === 0, "no script errors at the end " + JSON.stringify(errors));
} finally {
  await browser.close();
}
console.log(failed() ? `${failed()} checks failed` : "all checks passed");
process.exit(failed() ? 1 : 0);
