import { createServer } from 'node:http';

/**
 * The bare `node:http` baseline: answers every request with the JSON body it is given, as fast as
 * Node can. Run as a child process by the benchmark runner: `node baseline-server.js <port> <json>`.
 */
const [port, body] = process.argv.slice(2);
const payload = Buffer.from(body ?? '{}');
createServer((_request, response) => {
  response.writeHead(200, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': payload.length,
  });
  response.end(payload);
}).listen(Number(port), '127.0.0.1', () => process.send?.('ready'));
