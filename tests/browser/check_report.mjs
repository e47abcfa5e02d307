// Opens a toolgauge report.html in headless Chromium (Debian's package) and prints what
// the page did as one JSON object on stdout; tests/integration/browser.rs asserts on it.
//
//   node check_report.mjs REPORT_HTML OUT_DIR
//
// It records console errors, uncaught exceptions, dialogs (alert/confirm/prompt) and
// every request other than the page itself (all of them are aborted, so a page that
// needs the network shows up broken as well as listed). Then it reads the charts and the
// trial table, opens every trial's transcript (they are built lazily on first open), tries
// the verdict filter and a column sort, and takes a full-page screenshot into OUT_DIR.
import { chromium } from "playwright-core";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [reportPath, outDir] = process.argv.slice(2);
if (!reportPath || !outDir) {
  console.error("usage: node check_report.mjs REPORT_HTML OUT_DIR");
  process.exit(2);
}
const pageUrl = pathToFileURL(path.resolve(reportPath)).href;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  // The machine's network is closed: without these flags Chromium keeps trying to reach
  // its own services at start-up.
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});

const out = {
  console_errors: [],
  page_errors: [],
  dialogs: [],
  requests: [],
};

try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (url === pageUrl) return route.continue();
    out.requests.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") out.console_errors.push(`${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => out.page_errors.push(String(e)));
  page.on("dialog", async (d) => {
    out.dialogs.push(`${d.type()}: ${d.message()}`);
    await d.dismiss();
  });
  // Requests the router does not see (e.g. file:// subresources) still fire this event.
  page.on("request", (r) => {
    if (r.url() !== pageUrl && !out.requests.includes(r.url())) out.requests.push(r.url());
  });

  await page.goto(pageUrl, { waitUntil: "load" });
  out.title = await page.title();

  out.page = await page.evaluate(() => {
    const q = (s) => document.querySelectorAll(s);
    const svgs = [...q("svg")];
    return {
      sections: [...q("section[id]")].map((s) => s.id),
      svg_charts: svgs.length,
      svg_marks: svgs.reduce((n, s) => n + s.querySelectorAll("rect, line, circle, path").length, 0),
      trial_rows: q("#trials tr.trow").length,
      confusion_cells: q("#confusion td").length,
      flip_rows: q("#flips tbody tr").length,
      scripts: q("script").length,
      images: q("img, iframe, object, embed").length,
      body_text: document.body.innerText,
    };
  });

  // Open every transcript (lazily built on first toggle).
  const rows = await page.locator("#trials tr.trow").count();
  for (let i = 0; i < rows; i++) {
    await page.locator("#trials tr.trow").nth(i).locator("summary").click();
  }
  out.transcripts = await page.evaluate(() => {
    const rows = [...document.querySelectorAll("#trials tr.trow")];
    return {
      open: rows.filter((r) => r.querySelector("details")?.open).length,
      // What the page shows once every transcript is open.
      text: document.body.innerText,
      images: document.querySelectorAll("img, iframe, object, embed").length,
      scripts: document.querySelectorAll("script").length,
    };
  });

  // Filter to failed trials, then sort by the verdict column.
  await page.selectOption("#f-verdict", "fail");
  out.filtered = await page.evaluate(() => ({
    visible: [...document.querySelectorAll("#trials tr.trow")].filter((r) => !r.hidden && r.style.display !== "none").length,
    count_text: document.querySelector("#f-count")?.textContent ?? "",
  }));
  await page.selectOption("#f-verdict", "");
  await page.locator("#trials thead th").first().click();
  out.sorted = await page.locator("#trials thead th[aria-sort]").count();

  out.title_after = await page.title();
  out.pwned = await page.evaluate(() => typeof window.pwned !== "undefined");
  out.screenshot = path.join(outDir, "report.png");
  await page.screenshot({ path: out.screenshot, fullPage: true });
} catch (e) {
  out.failure = String(e && e.stack ? e.stack : e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
