import { fetchPage, type PageRequest } from 'src/common/paging/page';

/** Rows numbered from 1 to `count`, read newest first below `before`, as a repository would. */
function rowsUpTo(count: number): (request: PageRequest) => Promise<{ number: number }[]> {
  return ({ before, take }) => {
    const top = Math.min(count, (before ?? count + 1) - 1);
    const numbers = Array.from({ length: Math.max(0, top) }, (_, i) => top - i).slice(0, take);
    return Promise.resolve(numbers.map((number) => ({ number })));
  };
}

describe('fetchPage', () => {
  const keyOf = (row: { number: number }): number => row.number;

  it.each([
    ['an empty list', 0, {}, [], null],
    ['fewer rows than the default page', 3, {}, [3, 2, 1], null],
    ['exactly one page', 5, { limit: '5' }, [5, 4, 3, 2, 1], null],
    ['one row more than the page', 6, { limit: '5' }, [6, 5, 4, 3, 2], '2'],
    ['the page after a cursor', 6, { limit: '5', cursor: '2' }, [1], null],
    ['a cursor in the middle', 10, { limit: '3', cursor: '8' }, [7, 6, 5], '5'],
    ['a cursor past the newest row', 3, { cursor: '100' }, [3, 2, 1], null],
  ] as const)('%s', async (_name, count, query, numbers, next) => {
    const page = await fetchPage(query, 25, rowsUpTo(count), keyOf);
    expect(page).toEqual({ rows: numbers.map((number) => ({ number })), nextCursor: next });
  });

  it('asks for one row more than the page, below the cursor', async () => {
    const requests: PageRequest[] = [];
    const record = (request: PageRequest): Promise<{ number: number }[]> => {
      requests.push(request);
      return Promise.resolve([]);
    };
    await fetchPage({ limit: '10', cursor: '42' }, 25, record, keyOf);
    await fetchPage({}, 25, record, keyOf);
    expect(requests).toEqual([
      { before: 42, take: 11 },
      { before: undefined, take: 26 },
    ]);
  });
});
