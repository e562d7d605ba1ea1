import { DEMO_DEFAULTS } from 'src/config/demo-defaults';
import { useTestApp } from 'test/support/test-app';

describe('GET /config', () => {
  describe('in demo mode', () => {
    const t = useTestApp();

    it('serves the demo values without authentication', async () => {
      const res = await t().http().get('/config').expect(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({
        client_id: DEMO_DEFAULTS.clientId,
        main_server: DEMO_DEFAULTS.mainServer,
        support_server_invite: DEMO_DEFAULTS.supportServerInvite,
      });
    });

    it('ignores a query string and any Authorization header', async () => {
      const res = await t().http().get('/config?x=1').set('Authorization', 'garbage').expect(200);
      expect(res.body.client_id).toBe(DEMO_DEFAULTS.clientId);
    });
  });

  describe('configured through the environment', () => {
    const t = useTestApp({
      env: {
        DISCORD_CLIENT_ID: '849331145862283275',
        DISCORD_CLIENT_SECRET: 'secret-value',
        MAIN_SERVER: '1064135068928454766',
        SUPPORT_SERVER_INVITE: 'https://discord.gg/u78NFAXm',
      },
    });

    it('serves the configured values and never the secret', async () => {
      const res = await t().http().get('/config').expect(200);
      expect(res.body).toEqual({
        client_id: '849331145862283275',
        main_server: '1064135068928454766',
        support_server_invite: 'https://discord.gg/u78NFAXm',
      });
      expect(res.text).not.toContain('secret-value');
    });
  });
});
