// session.mjs - the live page of tqmon daemon (tests/scripts/session_page.sh
// runs the daemon with --host --serve 0 and a sleep process): in Debian's
// chromium through playwright-core, the page lists the queries, adds one
// through its form (a histogram of 4 buckets), draws its histogram as it
// folds, shows the compiler's message for a query that does not compile,
// removes the query with its button, and shows from when each answer
// covers (a query added after one of persistent collection: from before
// its addition).  The API refuses a request
// without the page's token.
//
//   node tests/browser/session.mjs URL PID OUTDIR CHROMIUM
import { chromium } from "playwright-core";
import { check, failed } from "./lib.mjs";

const [url, pid, out, exe] = process.argv.slice(2);
const base = url.slice(0, url.indexOf("?"));
check((await fetch(base + "api/queries")).status === 403, "the API refuses a request without the token");
check((await fetch(base + "api/add?name=X", { method: "POST", body: "x" })).status === 403,
      "an add without the token (what a page of another origin could send) is refused");

const browser = await chromium.launch({
  executablePath: exe || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const errors = [], requests = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error" && !m.text().includes("400")) errors.push(m.text()); });
  page.on("request", (r) => { if (!r.url().startsWith(base)) requests.push(r.url()); });
  await page.goto(url);
  await page.waitForFunction(() => window.tqmonSession && window.tqmonSession.polls > 0, null, { timeout: 60000 });
  check(await page.locator("#queries tbody tr").count() === 0, "no query at first");

  // a query that does not compile: the compiler's message on the page
  await page.fill("#name", "Broken");
  await page.fill("#text", 'range of S is ProcessState\nretrieve (S.Nope) where S.Process = "' + pid + '"');
  await page.click("#addbtn");
  await page.waitForFunction(() => document.getElementById("msg").textContent.includes("error"), null, { timeout: 60000 });
  const m = await page.textContent("#msg");
  check(m.includes("(page):2:11: error: S (relation ProcessState) has no attribute 'Nope'") && m.includes("^"),
        "a query that does not compile: the compiler's message with its place and caret");

  // add one with a histogram through the form
  await page.fill("#name", "Hp");
  await page.fill("#hattr", "Threads");
  await page.fill("#hbuckets", "4");
  await page.fill("#text", 'range of S is ProcessState\nretrieve (S.Threads) where S.Process = "' + pid + '"');
  await page.click("#addbtn");
  await page.waitForSelector("#q-Hp", { timeout: 60000 });
  check(await page.textContent("#msg") === "", "the message is cleared once a query is added");
  check((await page.textContent("#enabled")).includes("ProcessState " + pid), "the page shows ProcessState enabled on the process");
  // its histogram folds: drawn again with the doubled width
  await page.waitForFunction(() => { const d = window.tqmonSession.drawn.Hp; return d && d.folds >= 1 && d.bars > 0; },
                             null, { timeout: 90000 });
  const d = await page.evaluate(() => window.tqmonSession.drawn.Hp);
  check(d.width === 1e9 * 2 ** d.folds, "the histogram is drawn with its width doubled at each fold (" + d.folds + " folds)");
  const painted = await page.evaluate(() => {
    const cv = document.querySelector("#h-Hp canvas"), g = cv.getContext("2d");
    const px = g.getImageData(0, 0, cv.width, cv.height).data;
    let blue = 0;
    for (let i = 0; i < px.length; i += 4) if (px[i + 2] > 150 && px[i] < 100) blue++;
    return blue;
  });
  check(painted > 100, "its bars are painted on the canvas (" + painted + " pixels)");
  await page.screenshot({ path: out + "/session.png" });

  // remove it with its button
  await page.click("#q-Hp button.rm");
  await page.waitForFunction(() => !document.getElementById("q-Hp") && !document.getElementById("h-Hp"), null, { timeout: 60000 });
  check(true, "the remove button removes the query and its histogram");

  // from when each answer covers: a query of persistent collection keeps
  // the records; one added later on the same relation begins before its
  // addition, and the page says so (the daemon's own figures beside it)
  const same = 'range of S is ProcessState\nretrieve (S.Threads) where S.Process = "' + pid + '"';
  await page.fill("#hattr", "");
  await page.check("#pcoll");
  await page.fill("#name", "Keep");
  await page.fill("#text", same);
  await page.click("#addbtn");
  await page.waitForSelector("#q-Keep", { timeout: 60000 });
  const keepCov = await page.textContent("#q-Keep .covers");
  check(keepCov.startsWith("from its addition, 20"), "a first query's answer covers from its addition (" + keepCov + ")");
  // records kept: Keep has answered at least two snapshots
  await page.waitForFunction(() => window.tqmonSession.queries.some((q) => q.name === "Keep" && q.rows >= 2), null,
                             { timeout: 60000 });
  await page.uncheck("#pcoll");
  await page.fill("#name", "Late");
  await page.click("#addbtn");
  await page.waitForSelector("#q-Late", { timeout: 60000 });
  const lateCov = await page.textContent("#q-Late .covers");
  const qs = await page.evaluate(() => window.tqmonSession.queries);
  const late = qs.find((q) => q.name === "Late"), keep = qs.find((q) => q.name === "Keep");
  check(late && keep && late.covers_from < late.added && late.covers_from >= keep.covers_from,
        "a query added later covers from before its addition (" + (late && (late.added - late.covers_from) / 1e9) + " s)");
  check(/^from 20\d\d-\d\d-\d\d \d\d:\d\d:\d\d\.\d, \d+\.\d s before its addition \(records kept by persistent collection\)$/.test(lateCov),
        "the page says the late query's answer covers from before its addition (" + lateCov + ")");
  for (const n of ["Late", "Keep"]) {
    await page.click("#q-" + n + " button.rm");
    await page.waitForFunction((n) => !document.getElementById("q-" + n), n, { timeout: 60000 });
  }
  await page.waitForFunction(() => document.getElementById("enabled").textContent.startsWith("enabled now: 0 "), null, { timeout: 60000 });
  check(true, "nothing is enabled any more");
  check(errors.length === 0, "no script error (" + errors.join("; ") + ")");
  check(requests.length === 0, "the page asks nothing of another origin (" + requests.join(" ") + ")");
} finally {
  await browser.close();
}
process.exit(failed() ? 1 : 0);
