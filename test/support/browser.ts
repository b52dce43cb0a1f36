// A real Chromium (Debian's /usr/bin/chromium) driven by playwright-core, for tests that act
// as a person would. playwright-core never downloads a browser: the system one must exist.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromiumPath } from './chromium.js';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';

export const CHROMIUM_PATH = chromiumPath();

export const VIEWPORTS = {
  phone: { width: 390, height: 844 },
  desktop: { width: 1280, height: 800 },
} as const;

export type ViewportName = keyof typeof VIEWPORTS;

export async function launchBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}: apt-get install -y chromium (or set PAYGATE_TEST_CHROMIUM)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    timeout: 30_000,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface OpenedPage {
  readonly context: BrowserContext;
  readonly page: Page;
  close(): Promise<void>;
}

/**
 * A fresh context (no shared cookies or cache) with one page at a phone or desktop width.
 * Waits are bounded: nothing in a test may hang for the whole test time-out.
 */
export async function newPage(
  browser: Browser,
  viewport: ViewportName = 'desktop',
  options: BrowserContextOptions = {},
): Promise<OpenedPage> {
  const context = await browser.newContext({
    viewport: VIEWPORTS[viewport],
    ...(viewport === 'phone' ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
    ...options,
  });
  context.setDefaultTimeout(10_000);
  context.setDefaultNavigationTimeout(15_000);
  const page = await context.newPage();
  return { context, page, close: () => context.close() };
}

/**
 * Where browser tests save screenshots: docs/screenshots when refreshing them on purpose
 * (`npm run screenshots`), otherwise a scratch folder, so a test run leaves the tree unchanged.
 */
export const SCREENSHOT_DIR =
  process.env.PAYGATE_UPDATE_SCREENSHOTS === '1'
    ? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/screenshots')
    : path.join(os.tmpdir(), 'paygate-screenshots');
