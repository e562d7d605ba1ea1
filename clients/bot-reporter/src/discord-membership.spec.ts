import { Client, GatewayDispatchEvents, GatewayIntentBits } from 'discord.js';
import type { MembershipReporter } from 'clients/bot-reporter/src';
import { reportMembership } from 'clients/bot-reporter/src/discord-membership';

type Call = [string, ...unknown[]];

/** A reporter that records what the bot tells it. */
function recordingReporter(calls: Call[]): MembershipReporter {
  const record =
    (name: string) =>
    (...args: unknown[]): void => {
      calls.push([name, ...args]);
    };
  return {
    snapshot: (...args: unknown[]) => {
      calls.push(['snapshot', ...args]);
      return Promise.resolve(null);
    },
    joined: record('joined'),
    left: record('left'),
    disconnected: record('disconnected'),
    resumed: record('resumed'),
    pending: () => 0,
    status: () => Promise.reject(new Error('not used')),
    flush: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}

/**
 * The discord.js wiring, fed the gateway's dispatches as a shard would deliver them: what the
 * service hears of a READY, a join, an outage and a removal.
 */
describe('reportMembership', () => {
  const client = new Client({ intents: [GatewayIntentBits.Guilds] });
  const calls: Call[] = [];
  const detach = reportMembership(client, recordingReporter(calls));
  afterAll(async () => {
    detach();
    await client.destroy();
  });

  it('sends READY as the shard snapshot, unavailable guilds included', () => {
    client.ws.emit(
      GatewayDispatchEvents.Ready,
      {
        guilds: [
          { id: '10', unavailable: true },
          { id: '20', unavailable: true },
        ],
        shard: [1, 2],
      },
      1,
    );
    expect(calls).toHaveLength(1);
    const [name, shardId, shardCount, ids, at] = calls[0];
    expect([name, shardId, shardCount, [...(ids as Set<string>)]]).toEqual([
      'snapshot',
      1,
      2,
      ['10', '20'],
    ]);
    expect(at).toBeInstanceOf(Date);
  });

  it('reports a guild READY did not list as a join, and not one it listed', () => {
    calls.length = 0;
    client.ws.emit(GatewayDispatchEvents.GuildCreate, { id: '10' }, 1);
    client.ws.emit(GatewayDispatchEvents.GuildCreate, { id: '30' }, 1);
    expect(calls).toEqual([['joined', 1, '30']]);
  });

  it('never reports an outage as a leave, and reports a removal', () => {
    calls.length = 0;
    client.ws.emit(GatewayDispatchEvents.GuildDelete, { id: '20', unavailable: true }, 1);
    expect(calls).toEqual([]);
    client.ws.emit(GatewayDispatchEvents.GuildDelete, { id: '20' }, 1);
    expect(calls).toEqual([['left', 1, '20']]);
  });
});
