import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_VERSION } from 'src/common/service-version';

describe('SERVICE_VERSION', () => {
  it("is package.json's version", () => {
    const manifest = JSON.parse(
      readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'),
    ) as { version: string };
    expect(SERVICE_VERSION).toBe(manifest.version);
  });
});
