// Replaces the pinned copy of Discord's OpenAPI document (test/fixtures/discord-openapi/) with
// the one at a given commit of discord/discord-api-spec, with its licence, and records the pin.
//
//   node scripts/refresh-discord-openapi.mjs <commit, tag or branch>   # e.g. main
//   npm run discord-openapi:refresh -- main
//
// The ref is resolved to its full commit through GitHub's API (set GITHUB_TOKEN to raise the
// anonymous rate limit); the files are read from raw.githubusercontent.com at that commit, so
// the copy is exactly that commit's, byte for byte (pin.json records the file's git blob id,
// which the tests check). Needs the network; nothing else changes. Then run the tests that read
// the document (docs/platform.md, "Discord's own contract") and update the allowlist.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const REPOSITORY = 'discord/discord-api-spec';
const SPEC_PATH = 'specs/openapi.json';
const DIR = join(import.meta.dirname, '..', 'test', 'fixtures', 'discord-openapi');

/** git's id of a file's content: what `git hash-object` prints. */
export function gitBlobId(bytes) {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

async function get(url, accept) {
  const headers = { Accept: accept, 'User-Agent': 'bot-management-service' };
  if (process.env.GITHUB_TOKEN) headers.Authorization = `Bearer ${process.env.GITHUB_TOKEN}`;
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(60_000) });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${res.statusText}`);
  return res;
}

async function main(ref) {
  if (!ref) {
    console.error('usage: node scripts/refresh-discord-openapi.mjs <commit, tag or branch>');
    process.exit(2);
  }
  const commit = await (
    await get(
      `https://api.github.com/repos/${REPOSITORY}/commits/${encodeURIComponent(ref)}`,
      'application/vnd.github+json',
    )
  ).json();
  const sha = commit.sha;
  if (!/^[0-9a-f]{40}$/.test(sha ?? '')) throw new Error(`${ref}: no commit in the answer`);
  const raw = (path) => `https://raw.githubusercontent.com/${REPOSITORY}/${sha}/${path}`;
  const spec = Buffer.from(await (await get(raw(SPEC_PATH), '*/*')).arrayBuffer());
  const licence = Buffer.from(await (await get(raw('LICENSE'), '*/*')).arrayBuffer());

  const document = JSON.parse(spec.toString('utf8'));
  if (!/^3\.1\./.test(document.openapi ?? '')) {
    throw new Error(`${SPEC_PATH} at ${sha} is OpenAPI ${document.openapi}, not 3.1`);
  }
  const pin = {
    repository: REPOSITORY,
    path: SPEC_PATH,
    commit: sha,
    committed_at: commit.commit?.committer?.date ?? null,
    blob: gitBlobId(spec),
  };
  writeFileSync(join(DIR, 'openapi.json'), spec);
  writeFileSync(join(DIR, 'LICENSE'), licence);
  writeFileSync(join(DIR, 'pin.json'), `${JSON.stringify(pin, null, 2)}\n`);
  // The README names the commit too, on its line that starts with "Commit:".
  const readme = join(DIR, 'README.md');
  writeFileSync(
    readme,
    readFileSync(readme, 'utf8').replace(
      /^Commit: .*$/m,
      `Commit: \`${sha}\` (${pin.committed_at ?? 'date unknown'})`,
    ),
  );
  console.log(`Pinned ${REPOSITORY}@${sha} (${SPEC_PATH}, blob ${pin.blob}).`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv[2]).catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
