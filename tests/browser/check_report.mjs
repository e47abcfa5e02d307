// Opens a toolgauge report.html (or improve.html) in headless Chromium (Debian's package) and prints what
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
      // improve.html: the wording diffs' inserted and deleted words.
      inserted: [...q("ins")].map((e) => e.textContent),
      deleted: [...q("del")].map((e) => e.textContent),
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

  // Reports with loop trials: the stop-reason table, the tokens-per-round charts, and what
  // each opened transcript shows (round blocks, injected errors, approval answers, calls a
  // limit left unexecuted, the stop line).
  out.loops = await page.evaluate(() => {
    if (!document.getElementById("loops")) return null;
    const num = (td) => Number(td.textContent.trim());
    const stops = [...document.querySelectorAll("#stops tr")].slice(1).map((tr) => {
      const c = tr.cells;
      return {
        cell: c[0].textContent.trim(),
        trials: num(c[1]), answered: num(c[2]), max_rounds: num(c[3]),
        max_tool_calls: num(c[4]), repeated_call: num(c[5]), error: num(c[6]),
      };
    });
    const charts = [...document.querySelectorAll("#loops figure.tokens")].map((f) => ({
      cell: f.querySelector("figcaption").textContent.trim(),
      rounds: [...f.querySelectorAll("svg g.pt")].map((g) => Number(g.getAttribute("data-round"))),
    }));
    const trials = [...document.querySelectorAll("#trials tr.trow")].map((row) => {
      const tx = row.nextElementSibling && row.nextElementSibling.classList.contains("txrow") ? row.nextElementSibling : null;
      const all = (s) => (tx ? [...tx.querySelectorAll(s)] : []);
      return {
        case: row.cells[0].textContent.trim(),
        cell: row.cells[2].textContent.trim(),
        repeat: Number(row.cells[3].textContent.trim()),
        round_blocks: all("details.round").length,
        rounds_open: all("details.round[open]").length,
        injected: all(".badge.injected").length,
        approvals: all(".badge.approved, .badge.denied").map((b) => b.textContent),
        not_executed: all(".badge.skipped").length,
        stop: all("p.stop").map((p) => p.textContent).join(""),
        // The rounds a failure reason points at (marked, with the reason inside), the
        // round headers (start and times), and the checks as sentences.
        flagged: all("details.round.flagged").map((d) => Number(d.getAttribute("data-round"))),
        pins: all("details.round .pin").map((p) => p.textContent),
        heads: all("details.round > summary").map((h) => h.textContent),
        checks: all("ul.checks li").map((li) => li.textContent),
      };
    });
    return { stops, charts, trials };
  });

  // Filter to failed trials, then sort by the verdict column (pages with a trial table:
  // report.html; improve.html has none).
  if (await page.locator("#f-verdict").count()) {
    await page.selectOption("#f-verdict", "fail");
    out.filtered = await page.evaluate(() => ({
      visible: [...document.querySelectorAll("#trials tr.trow")].filter((r) => !r.hidden && r.style.display !== "none").length,
      count_text: document.querySelector("#f-count")?.textContent ?? "",
    }));
    await page.selectOption("#f-verdict", "");
    await page.locator("#trials thead th").first().click();
    out.sorted = await page.locator("#trials thead th[aria-sort]").count();
  }

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
