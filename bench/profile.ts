import { relative, sep } from 'node:path';

/** The parts of a V8 CPU profile (`Profiler.stop`'s answer) that the summary reads. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
}

export interface ProfileSummary {
  /** Self time by frame, largest first: `function (file:line)` and its share of all samples. */
  frames: { frame: string; share: number }[];
  /** Self time by origin: a package under node_modules, the service's own code, Node's internals. */
  origins: { origin: string; share: number }[];
}

export function summariseProfile(profile: CpuProfile, root: string, top: number): ProfileSummary {
  const byNode = new Map<number, number>();
  for (const id of profile.samples) byNode.set(id, (byNode.get(id) ?? 0) + 1);
  const total = profile.samples.length || 1;
  const frames = new Map<string, number>();
  const origins = new Map<string, number>();
  for (const node of profile.nodes) {
    const samples = byNode.get(node.id) ?? 0;
    if (samples === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url ? `${shortPath(url, root)}:${lineNumber + 1}` : '';
    const frame = `${functionName || '(anonymous)'}${where ? ` (${where})` : ''}`;
    frames.set(frame, (frames.get(frame) ?? 0) + samples);
    const origin = originOf(url, root, functionName);
    origins.set(origin, (origins.get(origin) ?? 0) + samples);
  }
  const ranked = (counts: Map<string, number>): [string, number][] =>
    [...counts.entries()].sort((a, b) => b[1] - a[1]);
  return {
    frames: ranked(frames)
      .slice(0, top)
      .map(([frame, samples]) => ({ frame, share: samples / total })),
    origins: ranked(origins)
      .slice(0, 10)
      .map(([origin, samples]) => ({ origin, share: samples / total })),
  };
}

function shortPath(url: string, root: string): string {
  const path = url.replace(/^file:\/\//, '');
  const modules = path.lastIndexOf(`node_modules${sep}`);
  if (modules >= 0) return path.slice(modules + 'node_modules/'.length);
  return path.startsWith(root) ? relative(root, path) : path;
}

function originOf(url: string, root: string, functionName: string): string {
  if (!url) {
    // V8's pseudo-frames: garbage collection, idle time, native code without a script.
    return functionName.startsWith('(') ? functionName : '(native)';
  }
  if (url.startsWith('node:')) return 'node internals';
  const path = shortPath(url, root);
  if (path.startsWith('dist/src/')) return 'service (dist/src)';
  if (path === url.replace(/^file:\/\//, '')) return 'other';
  const [scope, name] = path.split('/');
  return scope.startsWith('@') ? `${scope}/${name}` : scope;
}

/** The summary as Markdown: the origins in one line, then the top frames as a table. */
export function profileMarkdown(title: string, summary: ProfileSummary): string {
  const percent = (share: number): string => `${(share * 100).toFixed(1)}%`;
  const origins = summary.origins.map((o) => `${o.origin} ${percent(o.share)}`).join(', ');
  const rows = summary.frames.map((f) => `| ${percent(f.share)} | \`${f.frame}\` |`);
  return [
    `#### ${title}`,
    '',
    `Self time by origin: ${origins}.`,
    '',
    '| self | frame |',
    '|---|---|',
    ...rows,
  ].join('\n');
}

/**
 * Records a CPU profile of a running service (started with `--inspect-port=<port>`) while `work`
 * runs, so boot and warm-up stay out of it.
 */
export async function profileWhile(
  pid: number,
  inspectorPort: number,
  work: () => Promise<void>,
): Promise<CpuProfile> {
  const inspector = await openInspector(pid, inspectorPort);
  try {
    await inspector.send('Profiler.enable');
    await inspector.send('Profiler.setSamplingInterval', { interval: 200 });
    await inspector.send('Profiler.start');
    await work();
    const { profile } = (await inspector.send('Profiler.stop')) as { profile: CpuProfile };
    await inspector.send('Profiler.disable');
    return profile;
  } finally {
    inspector.close();
  }
}

/** The V8 heap of a running service, in MiB: what it has reserved and what is in use. */
export interface HeapUsage {
  totalMb: number;
  usedMb: number;
}

/**
 * The service's V8 heap (`process.memoryUsage()`), read through its inspector. Opening the
 * inspector costs the process memory of its own, so read it after the resident memory.
 */
export async function heapUsage(pid: number, inspectorPort: number): Promise<HeapUsage> {
  const inspector = await openInspector(pid, inspectorPort);
  try {
    const { result } = (await inspector.send('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
    })) as { result: { value: string } };
    const usage = JSON.parse(result.value) as NodeJS.MemoryUsage;
    const mb = (bytes: number): number => Math.round(bytes / 2 ** 20);
    return { totalMb: mb(usage.heapTotal), usedMb: mb(usage.heapUsed) };
  } finally {
    inspector.close();
  }
}

interface InspectorSession {
  send(method: string, params?: object): Promise<unknown>;
  close(): void;
}

/** Turns a running service's inspector on (SIGUSR1) and opens a session with it. */
async function openInspector(pid: number, inspectorPort: number): Promise<InspectorSession> {
  process.kill(pid, 'SIGUSR1');
  const target = await inspectorTarget(inspectorPort);
  const socket = new WebSocket(target);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  let nextId = 1;
  const pending = new Map<number, (result: unknown) => void>();
  socket.addEventListener('message', (event: { data: string }) => {
    const message = JSON.parse(event.data) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  });
  return {
    send: (method, params = {}) =>
      new Promise((resolve) => {
        const id = nextId++;
        pending.set(id, resolve);
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}

async function inspectorTarget(port: number): Promise<string> {
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
        webSocketDebuggerUrl: string;
      }[];
      if (targets[0]) return targets[0].webSocketDebuggerUrl;
    } catch {
      // the inspector is not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no inspector answered on port ${port}`);
}
