import type { RawRequest } from 'test/support/raw-http';

/** How a route authenticates in the robustness run. */
export type Caller = 'public' | 'login' | 'root-api';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface FieldSpec {
  valid: Json;
  /** Values of the right JSON type that the route must still refuse. */
  invalid?: Json[];
  /** null is a valid value (it is not tried as a wrong type). */
  nullable?: boolean;
  /** The field may be left out (the route then applies its default). */
  optional?: boolean;
  /** The codes a bad value may be refused with; `BadRequest` unless given. */
  codes?: string[];
}

export interface QuerySpec {
  valid: string;
  invalid?: string[];
  /** The route cannot do without it. */
  required?: boolean;
}

/** One route of the API, with a request it accepts; the cases are derived from it. */
export interface Endpoint {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The OpenAPI path, `{param}` included. */
  path: string;
  caller: Caller;
  /** The route's parameter under test (the first in the path that `fixed` does not fill). */
  param?: { valid: string; invalid: string[] };
  /** Values of the route's other path parameters. */
  fixed?: Record<string, string>;
  query?: Record<string, QuerySpec>;
  body?: Record<string, FieldSpec>;
  /** An event stream: an accepted request's body never ends. */
  stream?: true;
}

export interface BadInput {
  label: string;
  request: RawRequest;
  /** The codes this input may be refused with (always among the route's documented ones). */
  codes: string[];
  /** The route may also accept it (a parameter it ignores): only a 5xx is wrong. */
  mayPass?: true;
}

const HUGE = 'x'.repeat(20_000);
const UNICODE = 'Zalgo̸̢͓ 名前 💥🇫🇷 \u202e\u0000';
export const INJECTIONS = [
  "' OR '1'='1' --",
  '1; DROP TABLE users; --',
  '<script>alert(1)</script>',
  '${jndi:ldap://x/a}',
  '{{7*7}}',
  '../../etc/passwd',
];

/** Malformed values for a snowflake path parameter (1–20 plain digits), URL-encoded as sent. */
export const BAD_SNOWFLAKES = [
  'abc',
  '-1',
  '1.5',
  '1e3',
  '0x1F',
  '007',
  '%20123',
  '123%00',
  '%D9%A1%D9%A2%D9%A3', // Arabic-Indic digits
  '%F0%9F%92%A5',
  '1'.repeat(21),
  '1'.repeat(120),
  encodeURIComponent(INJECTIONS[0]),
  encodeURIComponent(INJECTIONS[1]),
  '..%2F..%2Fetc%2Fpasswd',
  '%zz',
];

/** Malformed values for a UUID path parameter. */
export const BAD_UUIDS = [
  'abc',
  '1',
  '-1',
  '00000000-0000-0000-0000-00000000000',
  '00000000-0000-0000-0000-0000000000000',
  '%7B00000000-0000-0000-0000-000000000000%7D',
  'g0000000-0000-0000-0000-000000000000',
  '1'.repeat(120),
  encodeURIComponent(INJECTIONS[0]),
  '%F0%9F%92%A5',
  '%zz',
];

/** Authorization headers that name no usable session (undefined: no header at all). */
const BAD_AUTHORIZATIONS: (string | undefined)[] = [
  undefined,
  '',
  'Bearer',
  'Bearer ',
  'Basic dXNlcjpwYXNzd29yZA==',
  `Bearer arl_${'a'.repeat(43)}`,
  `Bearer ara_${'a'.repeat(43)}`,
  `Bearer arl_${'a'.repeat(5_000)}`,
  'Bearer arl_\u00e9\u00e9\u00e9',
  `Bearer ${INJECTIONS[0]}`,
  'Bearer arl_x Bearer arl_y',
  'arl_',
];

function wrongTypes(valid: Json): Json[] {
  const all: Json[] = [null, true, 0, -1, 1.5, 'text', [], {}];
  const kind = (value: Json): string =>
    value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  return [
    ...all.filter((value) => kind(value) !== kind(valid)),
    ...(Array.isArray(valid) ? [] : [[valid]]),
  ];
}

function without<T>(record: Record<string, T>, key: string): Record<string, T> {
  return Object.fromEntries(Object.entries(record).filter(([k]) => k !== key));
}

function describeValue(value: Json): string {
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

function queryString(query: Record<string, string | string[]>): string {
  const pairs = Object.entries(query).flatMap(([key, value]) =>
    (Array.isArray(value) ? value : [value]).map((v) => `${key}=${v}`),
  );
  return pairs.length ? `?${pairs.join('&')}` : '';
}

function validQuery(endpoint: Endpoint): Record<string, string> {
  return Object.fromEntries(
    Object.entries(endpoint.query ?? {}).map(([key, spec]) => [key, spec.valid]),
  );
}

function validBody(endpoint: Endpoint): Record<string, Json> {
  return Object.fromEntries(
    Object.entries(endpoint.body ?? {}).map(([key, spec]) => [key, spec.valid]),
  );
}

/** The request the route accepts, with its parts replaceable. */
export function buildRequest(
  endpoint: Endpoint,
  parts: {
    param?: string;
    query?: string;
    body?: string;
    contentType?: string | null;
    contentLength?: number;
  } = {},
): RawRequest {
  const param = parts.param ?? endpoint.param?.valid ?? '';
  const fixed = Object.entries(endpoint.fixed ?? {}).reduce(
    (path, [name, value]) => path.replace(`{${name}}`, value),
    endpoint.path,
  );
  const path = fixed.replace(/\{[a-z_]+\}/, param);
  const query = parts.query ?? queryString(validQuery(endpoint));
  const headers: Record<string, string> = {};
  let body = parts.body;
  if (endpoint.body && body === undefined) body = JSON.stringify(validBody(endpoint));
  const contentType = parts.contentType === undefined ? 'application/json' : parts.contentType;
  if (body !== undefined && contentType !== null) headers['content-type'] = contentType;
  return {
    method: endpoint.method,
    path: path + query,
    headers,
    body,
    contentLength: parts.contentLength,
  };
}

/** Every bad input of the route's parameters, query and body. */
export function badInputs(endpoint: Endpoint): BadInput[] {
  return [...paramCases(endpoint), ...queryCases(endpoint), ...bodyCases(endpoint)];
}

/** Bad Authorization headers, for routes that need a session. */
export function badAuthorizations(endpoint: Endpoint): BadInput[] {
  return BAD_AUTHORIZATIONS.map((authorization) => {
    const request = buildRequest(endpoint);
    if (authorization !== undefined) request.headers = { ...request.headers, authorization };
    return {
      label: `Authorization ${authorization === undefined ? '(none)' : JSON.stringify(authorization.slice(0, 40))}`,
      request,
      codes: ['NoAuthToken', 'InvalidToken'],
    };
  });
}

function paramCases(endpoint: Endpoint): BadInput[] {
  return (endpoint.param?.invalid ?? []).map((param) => ({
    label: `path parameter ${param.slice(0, 40)}`,
    request: buildRequest(endpoint, { param }),
    codes: ['BadRequest'],
  }));
}

function queryCases(endpoint: Endpoint): BadInput[] {
  if (!endpoint.query) return [];
  const valid = validQuery(endpoint);
  const cases: BadInput[] = [];
  const add = (label: string, query: Record<string, string | string[]>): void => {
    cases.push({
      label: `query ${label}`,
      request: buildRequest(endpoint, { query: queryString(query) }),
      codes: ['BadRequest'],
    });
  };
  for (const [key, spec] of Object.entries(endpoint.query)) {
    add(`${key} twice`, { ...valid, [key]: [spec.valid, spec.valid] });
    add(`${key}[]`, { ...without(valid, key), [`${key}[]`]: spec.valid });
    for (const value of [...(spec.invalid ?? []), '', HUGE.slice(0, 2_000)]) {
      add(`${key}=${value.slice(0, 30)}`, { ...valid, [key]: encodeURIComponent(value) });
    }
    if (spec.required) add(`without ${key}`, without(valid, key));
  }
  add('with an unknown parameter', { ...valid, unknown: '1' });
  return cases;
}

function bodyCases(endpoint: Endpoint): BadInput[] {
  if (!endpoint.body) return [];
  const valid = validBody(endpoint);
  const json = JSON.stringify(valid);
  const cases: BadInput[] = [];
  const add = (label: string, parts: Parameters<typeof buildRequest>[1]): void => {
    cases.push({
      label: `body ${label}`,
      request: buildRequest(endpoint, parts),
      codes: ['BadRequest'],
    });
  };
  const addJson = (label: string, body: Json): void => add(label, { body: JSON.stringify(body) });

  for (const whole of [null, [], [valid], 'text', 42, true, {}] as Json[]) {
    addJson(`= ${describeValue(whole)}`, whole);
  }
  for (const [field, spec] of Object.entries(endpoint.body)) {
    if (!spec.optional) addJson(`without ${field}`, without(valid, field));
    const values = [
      ...wrongTypes(spec.valid).filter((value) => !(spec.nullable && value === null)),
      ...(spec.invalid ?? []),
    ];
    for (const value of values) {
      cases.push({
        label: `body ${field} = ${describeValue(value)}`,
        request: buildRequest(endpoint, { body: JSON.stringify({ ...valid, [field]: value }) }),
        codes: spec.codes ?? ['BadRequest'],
      });
    }
  }
  addJson('with an extra field', { ...valid, extra: 1 });
  add('with __proto__', { body: `{"__proto__":{"polluted":true},${json.slice(1)}` });
  add('with constructor.prototype', {
    body: `{"constructor":{"prototype":{"polluted":true}},${json.slice(1)}`,
  });
  add('truncated', { body: json.slice(0, Math.floor(json.length / 2)) });
  add('empty', { body: '' });
  add('not JSON', { body: "{name: 'x'}" });
  // Nesting far below the body limit that would overflow a recursive validator's stack.
  // (As deep as fits in the 100 KiB body limit.)
  for (const [open, close, depth] of [
    ['[', ']', 30_000],
    ['{"a":', '}', 15_000],
  ] as const) {
    add(`nested ${depth} deep with ${open}`, {
      body: `${open.repeat(depth)}1${close.repeat(depth)}`,
    });
    const field = Object.keys(endpoint.body)[0];
    add(`${field} nested ${depth} deep with ${open}`, {
      body: JSON.stringify({ ...valid, [field]: '@' }).replace(
        '"@"',
        `${open.repeat(depth)}1${close.repeat(depth)}`,
      ),
    });
  }
  // JSON.stringify writes U+0000 as the escape \u0000, which PostgreSQL refuses in text and jsonb.
  addJson('with a NUL character in a string', {
    ...valid,
    [Object.keys(endpoint.body)[0]]: 'nul\u0000',
  });
  // JSON.stringify writes a lone surrogate as its escape; PostgreSQL refuses it in jsonb.
  for (const [name, text] of [
    ['a lone high surrogate', 'lone\ud800'],
    ['a lone low surrogate', 'lone\udc00x'],
    ['a reversed surrogate pair', '\udc00\ud800'],
  ]) {
    addJson(`with ${name} in a string`, { ...valid, [Object.keys(endpoint.body)[0]]: text });
    addJson(`with ${name} in a key`, { ...valid, [text]: 1 });
  }
  add('over 100 KiB', { body: JSON.stringify({ ...valid, padding: 'x'.repeat(110 * 1024) }) });
  for (const contentType of [
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/xml',
    'application/octet-stream',
  ]) {
    add(`as ${contentType}`, { contentType });
  }
  add('without a Content-Type', { contentType: null });
  return cases;
}

/** A query parameter no route declares: routes without a query DTO ignore it. */
export const UNDECLARED_QUERY = 'junk';

/**
 * Junk for any query parameter, as sent. `refused`: text the database refuses, which every route
 * answers 400 whether or not it reads the parameter. The rest may be ignored, never a 5xx.
 */
const QUERY_JUNK: { label: string; value: string; refused?: true }[] = [
  { label: 'a NUL', value: '%00', refused: true },
  { label: 'text holding a NUL', value: 'guildroles%00', refused: true },
  { label: 'a NUL in a JSON escape', value: encodeURIComponent('{"role_id":"\\u0000"}') },
  { label: 'a lone surrogate in a JSON escape', value: encodeURIComponent('{"a":"\\ud800"}') },
  { label: 'a lone surrogate, percent-encoded', value: '%ED%A0%80' },
  { label: 'a broken percent-escape', value: '%zz' },
  { label: 'over-long text', value: 'x'.repeat(4_000) },
  { label: 'a huge number', value: '1e400' },
  { label: 'a negative number', value: '-1' },
  { label: 'a boolean', value: 'true' },
  { label: 'an empty value', value: '' },
  { label: 'a JSON array', value: encodeURIComponent('[1]') },
];

/**
 * Junk in each of the route's query parameters (those its OpenAPI operation declares, and one it
 * does not), one parameter at a time, the others valid: as text, repeated (an array) and in
 * bracket form. Routes that write get only the junk refused before anything runs, so no case can
 * change data.
 */
export function queryJunk(endpoint: Endpoint, declared: readonly string[]): BadInput[] {
  const valid = validQuery(endpoint);
  const writes = endpoint.method !== 'GET';
  const cases: BadInput[] = [];
  for (const name of [...declared, UNDECLARED_QUERY]) {
    const rest = without(valid, name);
    const shapes: { label: string; query: Record<string, string | string[]>; refused?: true }[] =
      QUERY_JUNK.filter((junk) => junk.refused || !writes).map((junk) => ({
        ...junk,
        query: { ...rest, [name]: junk.value },
      }));
    if (!writes) {
      shapes.push(
        { label: 'repeated', query: { ...rest, [name]: ['1', '2'] } },
        { label: 'in bracket form', query: { ...rest, [`${name}[]`]: '1' } },
        { label: 'as an object', query: { ...rest, [`${name}[a]`]: '1' } },
      );
    }
    for (const { label, query, refused } of shapes) {
      cases.push({
        label: `query ${name}: ${label}`,
        request: buildRequest(endpoint, { query: queryString(query) }),
        ...(refused
          ? { codes: ['BadRequest'] }
          : { codes: ['BadRequest', 'NotFound', 'Restricted'], mayPass: true as const }),
      });
    }
  }
  return cases;
}

/** Values no string field of this API accepts where a specific format is required. */
export const STRING_ABUSE: Json[] = [HUGE, UNICODE, ...INJECTIONS];
/** Too long, or carrying control characters. */
export const LONG_AND_CONTROL: Json[] = [HUGE, UNICODE];
