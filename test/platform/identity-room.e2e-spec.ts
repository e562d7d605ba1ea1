import { DEMO_IDS } from 'src/platform/emulator/demo.seed';
import { requestContext } from 'src/common/http/request-context';
import { BucketQueues, DEFAULT_BUCKET_QUEUE_LIMITS } from 'src/platform/bucket-queue';
import { IdentityLimiter } from 'src/platform/identity-limiter';
import { LocalIdentityWindows, type WindowPlace } from 'src/platform/identity-window';
import { CLIENT_IDENTITY } from 'src/platform/platform-http';
import { eventually } from 'test/support/eventually';
import { clientFor, DEMO_REDIRECT, useEmulator } from 'test/support/platform';

const TOKEN_ROUTE = 'POST /oauth2/token';

/** Runs `work` as a request from `ip`, so its platform calls are charged to that address. */
function from<T>(ip: string, work: () => Promise<T>): Promise<T> {
  return requestContext.run({ requestId: `from ${ip}`, ip }, work);
}

/**
 * A call takes its identity's room before its turn in its bucket (docs/request-costs.md, "Shared
 * platform identities"): while the fleet's window is full, a call waiting for room holds no turn
 * that a call of a lighter caller needs, so the room that comes goes to the caller who asked least.
 */
describe("calls waiting for a shared identity's room", () => {
  const emulator = useEmulator();

  it('hold no bucket turn: a login asking after ten made-up codes of one address reaches the platform first', async () => {
    // Other instances' exchanges fill the fleet's window of the token endpoint, still under way.
    const windows = new LocalIdentityWindows();
    const elsewhere: WindowPlace[] = [];
    for (let i = 0; i < CLIENT_IDENTITY.perSecond; i++) {
      const taken = await windows.take(CLIENT_IDENTITY, 'ip:elsewhere', CLIENT_IDENTITY.perSecond);
      if (!taken.admitted) throw new Error('the window refused a place before it was full');
      elsewhere.push(taken.place);
    }
    const identities = new IdentityLimiter({ maxWaitMs: 2_000, fleet: windows });
    const queues = new BucketQueues(
      { ...DEFAULT_BUCKET_QUEUE_LIMITS, maxWaitMs: 2_000 },
      undefined,
      undefined,
      undefined,
      (identity, caller) => identities.othersWaiting(identity, caller),
    );
    const client = clientFor(emulator(), { identities, queues });
    const since = emulator().requests.length;
    const waitingCalls = (): Promise<number> =>
      Promise.resolve(identities.waiting + queues.stats().waiting);

    const madeUp = Array.from({ length: 10 }, (_, i) =>
      from('203.0.113.1', () => client.exchangeCode(`made-up-${i}`, DEMO_REDIRECT)).then(
        () => 'granted',
        (error: Error) => error.name,
      ),
    );
    expect(await eventually(waitingCalls, (waiting) => waiting === 10)).toBe(10);
    const code = emulator().issueCode({ userId: DEMO_IDS.carol, redirectUri: DEMO_REDIRECT });
    const login = from('198.51.100.20', () => client.exchangeCode(code, DEMO_REDIRECT));
    expect(await eventually(waitingCalls, (waiting) => waiting === 11)).toBe(11);
    // The other instances' exchanges are answered: room comes a window later.
    for (const place of elsewhere) place.done();

    await expect(login).resolves.toMatchObject({ token_type: 'Bearer' });
    const outcomes = await Promise.all(madeUp);
    expect(outcomes.every((outcome) => outcome !== 'granted')).toBe(true);
    const exchanges = emulator()
      .requests.slice(since)
      .filter((request) => request.route === TOKEN_ROUTE);
    // The login went first; the made-up codes that got room after it were refused by the platform.
    expect(exchanges[0]).toMatchObject({ status: 200 });
    expect(exchanges.slice(1).map((request) => request.status)).toEqual(
      Array<number>(exchanges.length - 1).fill(400),
    );
  });
});
