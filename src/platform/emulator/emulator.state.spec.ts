import { DEMO_IDS, DEMO_SEED } from 'src/platform/emulator/demo.seed';
import { MAX_PENDING_CODES } from 'src/platform/emulator/emulator-oauth2';
import { EmulatorState } from 'src/platform/emulator/emulator.state';

const REDIRECT = 'http://localhost:3000/docs/oauth2-redirect.html';

function state(): { state: EmulatorState; advance: (ms: number) => void } {
  let time = 1_000_000;
  return {
    state: new EmulatorState(structuredClone(DEMO_SEED), () => time),
    advance: (ms) => (time += ms),
  };
}

describe('EmulatorState authorization codes', () => {
  it('keeps at most MAX_PENDING_CODES, dropping the oldest first', () => {
    const { state: s } = state();
    const codes = Array.from({ length: MAX_PENDING_CODES + 5 }, () =>
      s.issueCode(DEMO_IDS.demoUser, ['identify', 'guilds'], REDIRECT),
    );
    expect(s.pendingCodes).toBe(MAX_PENDING_CODES);
    expect(s.redeemCode(codes[0], REDIRECT)).toEqual({ refused: 'Invalid "code" in request.' });
    expect(s.redeemCode(codes[4], REDIRECT)).toEqual({ refused: 'Invalid "code" in request.' });
    expect(s.redeemCode(codes[5], REDIRECT)).toMatchObject({ userId: DEMO_IDS.demoUser });
    expect(s.redeemCode(codes.at(-1) ?? '', REDIRECT)).toMatchObject({ userId: DEMO_IDS.demoUser });
  });

  it('forgets expired codes as new ones are issued', () => {
    const { state: s, advance } = state();
    for (let i = 0; i < 100; i++) s.issueCode(DEMO_IDS.demoUser, ['identify'], REDIRECT);
    expect(s.pendingCodes).toBe(100);
    advance(11 * 60_000);
    const fresh = s.issueCode(DEMO_IDS.demoUser, ['identify'], REDIRECT);
    expect(s.pendingCodes).toBe(1);
    expect(s.redeemCode(fresh, REDIRECT)).toMatchObject({ userId: DEMO_IDS.demoUser });
  });
});
