// A browser for the Rust tests and the bench: Debian's Chromium, driven by playwright-core.
// Reads one JSON command per line on stdin, answers one JSON line on stdout:
//   {"cmd": "goto", "url": "..."}                     -> {"ok": true}
//   {"cmd": "eval", "expr": "js expression"}           -> {"ok": true, "value": ...}
//   {"cmd": "wait", "expr": "js expression", "timeout_ms": 5000}
//                                                       -> {"ok": true, "value": ..., "waited_ms": n}
//   {"cmd": "click", "selector": "css"}                -> {"ok": true}
//   {"cmd": "fill", "selector": "css", "value": "..."}  -> {"ok": true}
//   {"cmd": "screenshot", "path": "file.png"}           -> {"ok": true}
//   {"cmd": "dialog", "answer": "text"}                 (answers the next prompt())
//   {"cmd": "tap", "selector": "css"}                  -> {"ok": true} (a touch, on a device)
//   {"cmd": "viewport", "width": 360, "height": 740}   -> {"ok": true}
//   {"cmd": "init", "script": "js"}                    (runs in every page before its own)
// Errors answer {"ok": false, "error": "..."}; the page's console errors go to stderr.
// With DEVICE set (e.g. "Pixel 7"), the page is that device's: playwright's descriptor
// (viewport, touch, mobile user agent and scale).
import { chromium, devices } from "playwright-core";
import readline from "node:readline";

const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const browser = await chromium.launch({
  executablePath,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const device = process.env.DEVICE ? devices[process.env.DEVICE] : null;
if (process.env.DEVICE && !device) throw new Error("no device descriptor " + process.env.DEVICE);
// The tests' probes are strings evaluated in the page, which the hub's Content Security
// Policy forbids (no eval); the pages themselves need no exemption (bad_input.rs checks
// they hold no inline script, style or handler).
const context = await browser.newContext({
  ...(device ?? { viewport: { width: 1600, height: 1000 } }),
  bypassCSP: true,
});
const page = await context.newPage();
let dialogAnswer = null;
page.on("dialog", (d) => (d.type() === "prompt" ? d.accept(dialogAnswer ?? "") : d.accept()));
page.on("console", (m) => { if (m.type() === "error") process.stderr.write("page: " + m.text() + "\n"); });
page.on("pageerror", (e) => process.stderr.write("page error: " + e.message + "\n"));

async function run(c) {
  switch (c.cmd) {
    case "goto": await page.goto(c.url, { waitUntil: "domcontentloaded" }); return null;
    case "eval": return await page.evaluate(c.expr);
    case "wait": {
      const t0 = Date.now();
      const handle = await page.waitForFunction(c.expr, null, { timeout: c.timeout_ms ?? 5000, polling: 20 });
      return { value: await handle.jsonValue(), waited_ms: Date.now() - t0 };
    }
    case "click": await page.click(c.selector); return null;
    case "fill": await page.fill(c.selector, c.value); return null;
    case "screenshot": await page.screenshot({ path: c.path, fullPage: !!c.full_page }); return null;
    case "dialog": dialogAnswer = c.answer; return null;
    case "tap": await page.tap(c.selector); return null;
    case "viewport": await page.setViewportSize({ width: c.width, height: c.height }); return null;
    case "init": await page.addInitScript(c.script); return null;
    default: throw new Error("unknown command " + c.cmd);
  }
}

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  let answer;
  try {
    const value = await run(JSON.parse(line));
    answer = { ok: true, value: value ?? null };
  } catch (e) {
    answer = { ok: false, error: String(e && e.message ? e.message : e) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
await browser.close();
