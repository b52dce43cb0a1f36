// Helpers for the cashier's Chromium tests: the browser, screenshots of a page at both widths,
// and what the customer reads.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchBrowser, newPage, type ViewportName } from './browser.js';
import type { StoreKind } from './stores.js';

export { SCREENSHOT_DIR } from './browser.js';
import { SCREENSHOT_DIR } from './browser.js';

/** One Chromium for the test file, launched before its tests and closed after them; `launched` hands it to the file. */
export function withChromium(launched: (browser: Browser) => void): void {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
    launched(browser);
  });
  afterAll(async () => {
    await browser?.close();
  });
}

/** What the customer reads on the page (the visible text of <main>). */
export function visibleText(page: Page): Promise<string> {
  return page.locator('main').innerText();
}

/**
 * Saves docs/screenshots/cashier-<name>-phone.png and -desktop.png from the SQLite run only (shootPage).
 * The page's HTML is self-contained (inline style, no script, no images), so it is rendered
 * again as it is in a fresh phone and desktop context: the same page at both widths, whatever
 * context the flow ran in.
 */
export async function shoot(browser: Browser, page: Page, kind: StoreKind, name: string): Promise<void> {
  await shootPage(browser, page, kind, `cashier-${name}`);
}

/** docs/screenshots/<stem>-phone.png and -desktop.png of the page as it is now (SQLite run only), for any self-contained page. */
export async function shootPage(browser: Browser, page: Page, kind: StoreKind, stem: string): Promise<void> {
  if (kind !== 'sqlite') return;
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const content = await page.content();
  for (const viewport of ['phone', 'desktop'] as ViewportName[]) {
    const shot = await newPage(browser, viewport, { javaScriptEnabled: false });
    try {
      await shot.page.setContent(content, { waitUntil: 'load' });
      const file = path.join(SCREENSHOT_DIR, `${stem}-${viewport}.png`);
      await shot.page.screenshot({ path: file, fullPage: true });
      // No sideways scrolling at either width.
      const overflow = await shot.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      if (overflow > 0) throw new Error(`${stem} overflows the ${viewport} width by ${overflow} px`);
    } finally {
      await shot.close();
    }
  }
}

/** Buttons must be large enough to tap (44 px) and inside the page width. */
export async function checkTapTargets(page: Page): Promise<void> {
  const width = page.viewportSize()!.width;
  for (const button of await page.locator('button, a.button').all()) {
    if (!(await button.isVisible())) continue;
    const box = (await button.boundingBox())!;
    if (box.height < 44) throw new Error(`button "${await button.innerText()}" is ${box.height} px high`);
    if (box.x < 0 || box.x + box.width > width + 0.5) throw new Error(`button "${await button.innerText()}" leaves the page`);
  }
}
