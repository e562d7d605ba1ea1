import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { loginAs } from 'test/support/auth';
import { useTestApp } from 'test/support/test-app';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(__dirname, '..', '..', 'test-artifacts');
// CI installs Debian's chromium (.ci/run); a machine without it skips the browser test.
const describeWithChromium = existsSync(CHROMIUM) ? describe : describe.skip;

interface OpenApi {
  paths: Record<string, Record<string, { tags?: string[]; operationId: string }>>;
}

describeWithChromium('Swagger UI at /docs, in a real browser', () => {
  const t = useTestApp();
  let browser: Browser;
  let page: Page;
  let baseUrl: string;

  beforeAll(async () => {
    baseUrl = `http://127.0.0.1:${t().port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    page = await browser.newPage();
  });

  afterAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    await page?.screenshot({ path: join(ARTIFACTS, 'swagger-ui.png'), fullPage: true });
    await browser?.close();
  });

  async function operation(tag: string, operationId: string): Promise<ReturnType<Page['locator']>> {
    const block = page.locator(`#operations-${tag}-${operationId}`);
    await block.locator('.opblock-summary').first().click();
    await block.locator('.try-out__btn').click();
    return block;
  }

  it('lists every tag and every operation of the API', async () => {
    await page.goto(`${baseUrl}/docs`);
    await page.locator('.opblock').first().waitFor();
    const document = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as OpenApi;
    const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));
    const tags = new Set(operations.flatMap((op) => op.tags ?? []));
    for (const tag of tags) {
      await page.locator(`.opblock-tag[data-tag="${tag}"]`).waitFor();
    }
    for (const op of operations) {
      const id = `#operations-${op.tags?.[0] ?? 'default'}-${op.operationId}`;
      expect({ id, count: await page.locator(id).count() }).toEqual({ id, count: 1 });
    }
  });

  it('authorizes with a demo login token and runs requests from the page', async () => {
    const { token } = await loginAs(t(), DEMO_IDS.alice);
    await page.locator('.btn.authorize').first().click();
    const publicAuth = page.locator('.modal-ux .auth-container').filter({ hasText: 'PublicAuth' });
    await publicAuth.locator('input').fill(token);
    await publicAuth.locator('button.authorize').click();
    // Authorized requests below answer 200; without the token they would be 401.
    await page.locator('.modal-ux .btn-done').first().click();

    const me = await operation('sessions', 'SessionsController_current');
    await me.locator('.execute').click();
    await me.locator('.live-responses-table').waitFor();
    const meStatus = me.locator('.live-responses-table tr.response .response-col_status').first();
    await expect(meStatus.textContent()).resolves.toContain('200');
    await expect(
      me.locator('.live-responses-table .microlight').first().textContent(),
    ).resolves.toContain(DEMO_IDS.alice);

    const settings = await operation('settings', 'SettingsController_list');
    await settings.locator('input[placeholder="guild_id"]').fill(DEMO_IDS.community);
    await settings.locator('.execute').click();
    await settings.locator('.live-responses-table').waitFor();
    const settingsStatus = settings
      .locator('.live-responses-table tr.response .response-col_status')
      .first();
    await expect(settingsStatus.textContent()).resolves.toContain('200');
    await expect(
      settings.locator('.live-responses-table .microlight').first().textContent(),
    ).resolves.toContain('guildroles');
  });
});
