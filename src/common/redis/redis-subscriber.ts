import type Redis from 'ioredis';

/**
 * Listens to a Redis channel on a connection of its own (a subscribed connection takes no other
 * commands) that queues the subscription until Redis is reachable and renews it after every
 * reconnect. `onFailure` hears of a subscription that could not be made. Disconnect the returned
 * connection to stop.
 */
export function subscribeToChannel(
  client: Redis,
  channel: string,
  onMessage: (message: string) => void,
  onFailure: (error: Error) => void,
): Redis {
  const subscriber = client.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null });
  subscriber.on('error', () => undefined);
  subscriber.on('message', (_channel: string, message: string) => onMessage(message));
  subscriber.subscribe(channel).catch(onFailure);
  return subscriber;
}
