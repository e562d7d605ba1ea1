import { readFileSync } from 'node:fs';

/**
 * A process's resident memory in MiB, split into the pages of mapped files (the Node.js binary
 * and shared libraries: code and read-only data, shared with any other process running them) and
 * the process's own (the JavaScript heap, malloc, stacks). All 0 when unreadable.
 */
export interface ResidentMemory {
  rssMb: number;
  fileMb: number;
  anonMb: number;
}

export function residentMemory(pid: number | 'self' | undefined): ResidentMemory {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return {
      rssMb: statusMb(status, 'VmRSS'),
      fileMb: statusMb(status, 'RssFile'),
      anonMb: statusMb(status, 'RssAnon'),
    };
  } catch {
    return { rssMb: 0, fileMb: 0, anonMb: 0 };
  }
}

/** One `kB` field of `/proc/<pid>/status`, in MiB. */
export function statusMb(status: string, field: string): number {
  const kb = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

/** A process's resident memory (`VmRSS`) or its peak (`VmHWM`), in MiB; 0 when unreadable. */
export function rssMb(pid: number | undefined, field: 'VmRSS' | 'VmHWM'): number {
  try {
    return statusMb(readFileSync(`/proc/${pid}/status`, 'utf8'), field);
  } catch {
    return 0;
  }
}
