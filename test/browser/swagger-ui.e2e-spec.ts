import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
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
  const violations: string[] = [];

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
    // The page runs under the docs' content security policy: anything it blocks is a defect.
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
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

  /** The JSON of the newest answer shown under an operation. */
  async function answerOf(block: ReturnType<Page['locator']>): Promise<Record<string, unknown>> {
    const body = block.locator('.live-responses-table .response-col_description .microlight');
    await body.first().waitFor();
    return JSON.parse((await body.first().textContent()) ?? '') as Record<string, unknown>;
  }

  async function statusOf(block: ReturnType<Page['locator']>): Promise<string> {
    const status = block.locator('.live-responses-table tr.response .response-col_status').first();
    await status.waitFor();
    return (await status.textContent()) ?? '';
  }

  async function execute(block: ReturnType<Page['locator']>, body?: object): Promise<void> {
    // Clear the previous answer first, so that the one read next is this request's.
    const clear = block.locator('.btn-clear');
    if (await clear.count()) {
      await clear.first().click();
      await block.locator('.live-responses-table').waitFor({ state: 'detached' });
    }
    if (body) await block.locator('textarea.body-param__text').fill(JSON.stringify(body));
    await block.locator('.execute').click();
    await block.locator('.live-responses-table').waitFor();
  }

  /** Steps 1 to 3 of the demo in `page`: a code, the prefilled login with it, Authorize. */
  async function logInOnPage(): Promise<string> {
    await page.goto(`${baseUrl}/docs`);
    await page.locator('.opblock').first().waitFor();
    const codeOp = await operation('demo', 'DemoController_issueCode');
    await execute(codeOp);
    const issued = await answerOf(codeOp);
    const loginOp = await operation('auth', 'OAuth2Controller_create');
    const prefilled = JSON.parse(
      await loginOp.locator('textarea.body-param__text').inputValue(),
    ) as Record<string, unknown>;
    await execute(loginOp, { ...prefilled, code: issued.code });
    expect(await statusOf(loginOp)).toContain('200');
    const token = (await answerOf(loginOp)).token as string;
    await authorize('UserAuth', token);
    return token;
  }

  async function authorize(scheme: 'UserAuth' | 'PublicAuth', token: string): Promise<void> {
    await page.locator('.btn.authorize').first().click();
    const form = page.locator('.modal-ux .auth-container').filter({ hasText: scheme });
    await form.locator('input').fill(token);
    await form.locator('button.authorize').click();
    await page.locator('.modal-ux .btn-done').first().click();
  }

  it('executes every prefilled body of the demo as it is, in order: a settings View, an API token, a shard report', async () => {
    // A page of its own, so that no authorization is left from another test.
    const shared = page;
    const context = await browser.newContext();
    page = await context.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    try {
      await logInOnPage();
      // The settings operation's prefilled body (a View), in the guild its path comes with.
      const settings = await operation('settings', 'SettingsController_execute');
      await execute(settings);
      expect(await statusOf(settings)).toContain('200');
      expect(await answerOf(settings)).toMatchObject({ type: 'Ok' });

      // An API token from the prefilled body: one the internal routes take (no scope).
      const create = await operation('sessions', 'SessionsController_create');
      await execute(create);
      expect(await statusOf(create)).toContain('201');
      const apiToken = (await answerOf(create)).token as string;
      expect(apiToken).toMatch(/^ara_/);

      // With it as PublicAuth, the prefilled shard report (shard 0), then the stats show it.
      await authorize('PublicAuth', apiToken);
      const report = await operation('stats', 'StatsController_report');
      await execute(report);
      expect(await statusOf(report)).toContain('200');
      const stats = await operation('stats', 'StatsController_botStats');
      await execute(stats);
      expect(await statusOf(stats)).toContain('200');
      expect(await answerOf(stats)).toMatchObject({ shard_conns: { '0': expect.any(Object) } });
      expect(violations).toEqual([]);
    } finally {
      await page.screenshot({ path: join(ARTIFACTS, 'swagger-ui-prefilled.png'), fullPage: true });
      await context.close();
      page = shared;
    }
  });

  // The README's demo steps, exactly, in the browser.
  it("runs the README's demo steps from the page, as the default demo login", async () => {
    // The root leads to the docs.
    await page.goto(`${baseUrl}/`);
    await page.locator('.opblock').first().waitFor();
    expect(new URL(page.url()).pathname).toBe('/docs');

    // 1. A code from the demo's consent screen.
    const codeOp = await operation('demo', 'DemoController_issueCode');
    await execute(codeOp);
    expect(await statusOf(codeOp)).toContain('200');
    const issued = await answerOf(codeOp);
    expect(issued.user_id).toBe(DEMO_IDS.alice);

    // The demo is the first section of the page.
    await expect(page.locator('.opblock-tag').first().getAttribute('data-tag')).resolves.toBe(
      'demo',
    );

    // 2. Exchanged for a login session: the prefilled body, with only the code replaced.
    const loginOp = await operation('auth', 'OAuth2Controller_create');
    const prefilled = JSON.parse(
      await loginOp.locator('textarea.body-param__text').inputValue(),
    ) as Record<string, unknown>;
    expect(prefilled.code).toEqual(expect.stringContaining('GET /demo/oauth2-code'));
    await execute(loginOp, { ...prefilled, code: issued.code });
    expect(await statusOf(loginOp)).toContain('200');
    const token = (await answerOf(loginOp)).token as string;
    expect(token).toMatch(/^arl_/);

    // 3. Authorize (UserAuth: sent as Bearer), then GET /sessions/@me.
    await page.locator('.btn.authorize').first().click();
    const userAuth = page.locator('.modal-ux .auth-container').filter({ hasText: 'UserAuth' });
    await userAuth.locator('input').fill(token);
    await userAuth.locator('button.authorize').click();
    await page.locator('.modal-ux .btn-done').first().click();
    const me = await operation('sessions', 'SessionsController_current');
    await execute(me);
    expect(await statusOf(me)).toContain('200');
    expect((await answerOf(me)).user_id).toBe(DEMO_IDS.alice);

    // 4. A settings Create, then a View, in Demo Community: its id comes filled in.
    const settings = await operation('settings', 'SettingsController_execute');
    await expect(settings.locator('input[placeholder="guild_id"]').inputValue()).resolves.toBe(
      DEMO_IDS.community,
    );
    const helper = '1100000000000000104';
    await execute(settings, {
      setting: 'guildroles',
      operation: 'Create',
      fields: { role_id: helper, perms: ['guildroles.view'], index: 1 },
    });
    expect(await statusOf(settings)).toContain('200');
    expect(await answerOf(settings)).toMatchObject({
      type: 'Ok',
      data: { role_id: helper, perms: ['guildroles.view'], index: 1, created_by: DEMO_IDS.alice },
    });
    await execute(settings, { setting: 'guildroles', operation: 'View', fields: {} });
    expect(await statusOf(settings)).toContain('200');
    expect(await answerOf(settings)).toMatchObject({
      type: 'Ok',
      data: [expect.objectContaining({ role_id: helper, perms: ['guildroles.view'] })],
    });

    // All of it under the docs' policy, which blocked nothing the page needs.
    const docs = await page.goto(`${baseUrl}/docs`);
    expect(await docs?.headerValue('content-security-policy')).toContain("script-src 'self'");
    expect(violations).toEqual([]);
  });
});
