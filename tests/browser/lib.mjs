// lib.mjs - what the browser tests share: a check that prints one line and
// counts failures, and a page of Debian's chromium (through playwright-core)
// that records script errors and every request off the file (a page must
// fetch nothing from the network).
import { chromium } from "playwright-core";
import { pathToFileURL } from "node:url";

let failedChecks = 0;
export function check(ok, what) {
  console.log((ok ? "ok   " : "FAIL ") + what);
  if (!ok) failedChecks++;
}
export function failed() {
  return failedChecks;
}

// Opens file `path` in a new chromium (executable exe) with the viewport
// given; returns { browser, page, errors, requests } once `ready` (a
// function evaluated in the page) holds.
export async function openPage(exe, path, viewport, ready) {
  const browser = await chromium.launch({
    executablePath: exe || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const page = await browser.newPage({ viewport });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  const requests = [];
  page.on("request", (r) => { if (!r.url().startsWith("file:") && !r.url().startsWith("data:")) requests.push(r.url()); });
  await page.goto(pathToFileURL(path).href);
  await page.waitForFunction(ready);
  return { browser, page, errors, requests };
}
