import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import * as ts from 'typescript';

/**
 * The operator's files in docker/ checked without a running service (prometheus.e2e-spec.ts
 * runs them against one): the dashboard against Grafana's own dashboard schema, the metric names
 * the dashboard and the alerts use against those the service registers, and each alert's runbook
 * against the sections of docs/operations.md. No application boots here.
 */
const ROOT = resolve(__dirname, '..', '..');
const DASHBOARD_FILE = join(ROOT, 'docker', 'grafana', 'dashboards', 'bot-management-service.json');
const ALERTS_FILE = join(ROOT, 'docker', 'prometheus', 'alerts.yml');
const OPERATIONS_DOC = join(ROOT, 'docs', 'operations.md');

interface Target {
  refId: string;
  expr: string;
  datasource?: { type?: string; uid?: string };
}
interface GridPos {
  h: number;
  w: number;
  x: number;
  y: number;
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: GridPos;
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
  panels?: Panel[];
  options?: unknown;
  fieldConfig?: { defaults: { custom?: unknown } };
}
interface Dashboard {
  uid: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query?: string }[] };
}

const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;
/** Every panel, those inside rows included, rows themselves excluded. */
const panels = dashboard.panels.flatMap((panel) =>
  panel.type === 'row' ? (panel.panels ?? []) : [panel],
);

describe('the Grafana dashboard (docker/grafana/dashboards)', () => {
  it('queries the Prometheus datasource variable with a PromQL expression in every target', () => {
    expect(panels.length).toBeGreaterThan(0);
    const wrong = panels.flatMap((panel) =>
      [panel, ...(panel.targets ?? [])]
        .filter(
          (item) =>
            item.datasource?.type !== 'prometheus' || item.datasource.uid !== '${datasource}',
        )
        .map(() => panel.title),
    );
    expect(wrong).toEqual([]);
    expect(
      panels.filter((panel) => !panel.targets?.length || panel.targets.some((t) => !t.expr)),
    ).toEqual([]);
    expect(dashboard.templating.list.map((variable) => variable.name)).toEqual(
      expect.arrayContaining(['datasource', 'job', 'instance']),
    );
  });

  it('has unique panel ids and panels that do not overlap within the 24 columns', () => {
    const all = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
    expect(new Set(all.map((panel) => panel.id)).size).toBe(all.length);
    const cells = new Map<string, string>();
    const clashes: string[] = [];
    for (const panel of dashboard.panels) {
      const { x, y, w, h } = panel.gridPos;
      expect(x + w).toBeLessThanOrEqual(24);
      for (let row = y; row < y + h; row++) {
        for (let column = x; column < x + w; column++) {
          const held = cells.get(`${row},${column}`);
          if (held) clashes.push(`${panel.title} over ${held}`);
          cells.set(`${row},${column}`, panel.title);
        }
      }
    }
    expect([...new Set(clashes)]).toEqual([]);
  });

  const schema = grafanaSchema();
  if ('why' in schema) console.warn(`Skipping the check against Grafana's schema: ${schema.why}`);
  ('dir' in schema ? it : it.skip)(
    "is a dashboard of Grafana's schema, its panels' options those of their panel plugins",
    () => {
      expect(schemaErrors('dir' in schema ? schema.dir : '')).toEqual([]);
    },
    60_000,
  );
});

describe('the metrics the dashboard and the alerts use', () => {
  it('are metrics the service registers, and the dashboard shows every one of them', () => {
    const registered = registeredMetrics();
    expect(registered.size).toBeGreaterThan(10);
    const exprs = [
      ...panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr)),
      ...dashboard.templating.list.map((variable) => variable.query ?? ''),
    ];
    const onDashboard = metricNames(exprs.join('\n'));
    const inAlerts = metricNames(readFileSync(ALERTS_FILE, 'utf8'));
    expect([...onDashboard, ...inAlerts].filter((name) => !registered.has(name))).toEqual([]);
    expect([...registered].filter((name) => !onDashboard.has(name))).toEqual([]);
  });
});

describe('the alerts (docker/prometheus/alerts.yml)', () => {
  it('each name a runbook: a section of docs/operations.md', () => {
    const text = readFileSync(ALERTS_FILE, 'utf8');
    const alerts = text.split(/^\s*- alert: /m).slice(1);
    expect(alerts.length).toBeGreaterThanOrEqual(6);
    const anchors = headingAnchors(readFileSync(OPERATIONS_DOC, 'utf8'));
    const runbooks = alerts.map((block) => {
      const name = block.split('\n')[0].trim();
      const runbook = /^\s+runbook: docs\/operations\.md#(\S+)$/m.exec(block)?.[1];
      return { name, runbook, found: runbook !== undefined && anchors.has(runbook) };
    });
    expect(runbooks.filter((alert) => !alert.found)).toEqual([]);
    // Each alert's own section, named as the alert.
    expect(runbooks.filter((alert) => alert.runbook !== alert.name.toLowerCase())).toEqual([]);
  });
});

/** `bms_…` names in PromQL text, a histogram's series named by the histogram. */
function metricNames(text: string): Set<string> {
  return new Set(
    [...text.matchAll(/\bbms_[a-z0-9_]+/g)].map(([name]) =>
      name.replace(/_(bucket|count|sum)$/, ''),
    ),
  );
}

/** The `bms_` metrics the service's code registers (names are string literals in src/). */
function registeredMetrics(): Set<string> {
  const names = new Set<string>();
  for (const file of sourceFiles(join(ROOT, 'src'))) {
    for (const [, name] of readFileSync(file, 'utf8').matchAll(/['"](bms_[a-z0-9_]+)['"]/g)) {
      names.add(name);
    }
  }
  return names;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** GitHub's anchors of a Markdown file's headings. */
function headingAnchors(markdown: string): Set<string> {
  return new Set(
    [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map(([, heading]) =>
      heading
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

/**
 * Grafana's dashboard schema as Grafana publishes it: the TypeScript types generated from the
 * dashboard kind's CUE schema, in the `@grafana/schema` package (the version of the Grafana image
 * in docker/compose.yml). Where it is not installed, the check is skipped, saying so.
 */
function grafanaSchema(): { dir: string } | { why: string } {
  try {
    return { dir: dirname(require.resolve('@grafana/schema/package.json')) };
  } catch {
    return {
      why: "the package @grafana/schema (Grafana's dashboard schema, as TypeScript types) is not installed",
    };
  }
}

/**
 * Type-checks the dashboard, as an object literal, against the schema's `Dashboard`: a field the
 * schema does not know, a missing one or a value of the wrong kind is an error, at any depth.
 * Each panel's options (and a time series' field config) are checked against its plugin's types;
 * those may be partial, since Grafana fills in each plugin's defaults. The schema's string enums
 * are compared by their values, which is what JSON holds.
 */
function schemaErrors(dir: string): string[] {
  const types = join(dir, 'dist', 'types');
  const plugins: Record<string, string> = {
    timeseries: join(types, 'raw', 'composable', 'timeseries', 'panelcfg', 'x', 'types.gen'),
    stat: join(types, 'raw', 'composable', 'stat', 'panelcfg', 'x', 'types.gen'),
  };
  const unknownType = panels.find((panel) => !plugins[panel.type]);
  if (unknownType) return [`no plugin types for panel type ${unknownType.type}`];
  const checks = panels.flatMap((panel, index) => [
    `export const options${index}: Loose<${panel.type === 'stat' ? 'Stat' : 'TimeSeries'}.Options> = ${JSON.stringify(panel.options)};`,
    ...(panel.type === 'timeseries' && panel.fieldConfig?.defaults.custom
      ? [
          `export const custom${index}: Loose<TimeSeries.FieldConfig> = ${JSON.stringify(panel.fieldConfig.defaults.custom)};`,
        ]
      : []),
  ]);
  const source = [
    `import type { Dashboard } from ${JSON.stringify(join(types, 'raw', 'dashboard', 'x', 'types.gen'))};`,
    `import type * as TimeSeries from ${JSON.stringify(plugins.timeseries)};`,
    `import type * as Stat from ${JSON.stringify(plugins.stat)};`,
    'type Json<T> = T extends string ? `${T}` : T extends number | boolean | null | undefined ? T',
    '  : T extends readonly (infer U)[] ? Json<U>[] : T extends object ? { [K in keyof T]: Json<T[K]> } : T;',
    'type Loose<T> = T extends string ? `${T}` : T extends number | boolean | null | undefined ? T',
    '  : T extends readonly (infer U)[] ? Loose<U>[] : T extends object ? { [K in keyof T]?: Loose<T[K]> } : T;',
    `export const dashboard: Json<Dashboard> = ${JSON.stringify(dashboard)};`,
    ...checks,
  ].join('\n');
  const fileName = join(ROOT, 'dashboard-schema-check.ts');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    types: [],
    lib: ['lib.es2022.d.ts'],
    baseUrl: types,
    paths: { '@grafana/schema': [join(types, 'index.d.ts')] },
  };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  const exists = host.fileExists.bind(host);
  const get = host.getSourceFile.bind(host);
  host.readFile = (name) => (name === fileName ? source : read(name));
  host.fileExists = (name) => name === fileName || exists(name);
  host.getSourceFile = (name, version, onError, create) =>
    name === fileName
      ? ts.createSourceFile(name, source, version)
      : get(name, version, onError, create);
  const program = ts.createProgram([fileName], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const where =
      diagnostic.file && diagnostic.start !== undefined
        ? source.slice(Math.max(0, diagnostic.start - 60), diagnostic.start + 60)
        : '';
    return `${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}${where ? ` (near …${where}…)` : ''}`;
  });
}
