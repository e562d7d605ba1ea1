import type Redis from 'ioredis';

/**
 * Listens to a Redis channel on a connection of its own (a subscribed connection takes no other
 * commands) that queues the subscription until Redis is reachable and renews it after every
 * reconnect. `onFailure` hears of a subscription that could not be made; `onResubscribed`, of a
 * subscription renewed after the connection was lost (messages published meanwhile never came).
 * Disconnect the returned connection to stop.
 */
export function subscribeToChannel(
  client: Redis,
  channel: string,
  onMessage: (message: string) => void,
  onFailure: (error: Error) => void,
  onResubscribed: () => void = () => undefined,
): Redis {
  const subscriber = client.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null });
  subscriber.on('error', () => undefined);
  subscriber.on('message', (_channel: string, message: string) => onMessage(message));
  let subscribed = false;
  subscriber.on('ready', () => {
    if (!subscribed) return;
    // Once the subscription is in place again: what was missed can then be read back.
    subscriber.subscribe(channel).then(onResubscribed, onFailure);
  });
  subscriber.subscribe(channel).then(() => (subscribed = true), onFailure);
  return subscriber;
}
