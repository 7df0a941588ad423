import { FairQueue } from './fair-queue';

interface Item {
  readonly key: string;
  cost: number;
  floorMs: number;
  readonly name: string;
}

const item = (key: string, name: string, cost = 10, floorMs = cost / 2): Item => ({
  key,
  cost,
  floorMs,
  name,
});
const anyKey = () => true;

function drain(queue: FairQueue<Item>, order: 'fifo' | 'lifo'): string[] {
  const names: string[] = [];
  for (let next = queue.next(order, anyKey); next; next = queue.next(order, anyKey)) {
    names.push(next.name);
  }
  return names;
}

describe(FairQueue.name, () => {
  it('serves one key oldest first, or newest first', () => {
    const fifo = new FairQueue<Item>();
    const lifo = new FairQueue<Item>();
    for (const name of ['1', '2', '3']) {
      fifo.push(item('a', name));
      lifo.push(item('a', name));
    }
    expect(drain(fifo, 'fifo')).toEqual(['1', '2', '3']);
    expect(drain(lifo, 'lifo')).toEqual(['3', '2', '1']);
  });

  it('alternates between keys of equal cost, however many one of them queued', () => {
    const queue = new FairQueue<Item>();
    for (let i = 1; i <= 4; i++) queue.push(item('flood', `f${i}`));
    queue.push(item('trickle', 't1'));
    expect(drain(queue, 'fifo')).toEqual(['f1', 't1', 'f2', 'f3', 'f4']);
  });

  it('gives keys the same thread time per round: more cheap entries than expensive ones', () => {
    const queue = new FairQueue<Item>();
    for (let i = 1; i <= 3; i++) queue.push(item('big', `b${i}`, 40));
    for (let i = 1; i <= 8; i++) queue.push(item('small', `s${i}`, 10));
    expect(drain(queue, 'fifo').slice(0, 6)).toEqual(['b1', 's1', 's2', 's3', 's4', 'b2']);
  });

  it('skips entries removed while they wait, and forgets keys with nothing left', () => {
    const queue = new FairQueue<Item>();
    const first = queue.push(item('a', '1'));
    queue.push(item('a', '2'));
    const other = queue.push(item('b', '3'));
    expect(first.remove()).toBe(true);
    expect(first.remove()).toBe(false);
    expect(other.remove()).toBe(true);
    expect(queue.depths()).toEqual([{ key: 'a', waiting: 1, backlogMs: 10 }]);
    expect(drain(queue, 'fifo')).toEqual(['2']);
    expect(queue.size).toBe(0);
  });

  it('does not serve a key that is not eligible', () => {
    const queue = new FairQueue<Item>();
    queue.push(item('jobs', 'j'));
    queue.push(item('a', 'x'));
    expect(queue.next('fifo', (key) => key !== 'jobs')?.name).toBe('x');
    expect(queue.next('fifo', (key) => key !== 'jobs')).toBeUndefined();
    expect(queue.size).toBe(1);
  });

  it('sheds the oldest entry of the fattest key, and only one fatter than asked', () => {
    const queue = new FairQueue<Item>();
    for (const name of ['f1', 'f2', 'f3']) queue.push(item('flood', name));
    queue.push(item('other', 'o1'));
    expect(queue.shedFattest(3)).toBeUndefined();
    expect(queue.shedFattest(1)?.name).toBe('f1');
    expect(queue.waitingOf('flood')).toBe(2);
  });

  it('sheds the oldest entry the caller allows, skipping older ones it does not', () => {
    const queue = new FairQueue<Item>();
    for (const name of ['keep-1', 'f1', 'keep-2', 'f2']) queue.push(item('flood', name));
    expect(queue.shedFattest(0, (entry) => !entry.name.startsWith('keep'))?.name).toBe('f1');
    expect(queue.shedFattest(0, () => false)).toBeUndefined();
    expect(drain(queue, 'fifo')).toEqual(['keep-1', 'keep-2', 'f2']);
  });

  it('estimates the work ahead of a new entry from its fair share of the others', () => {
    const queue = new FairQueue<Item>();
    for (let i = 0; i < 10; i++) queue.push(item('flood', `f${i}`));
    // A newcomer on its own key waits for one flood entry per round, not for all ten.
    expect(queue.workAhead('trickle', 10, 'fifo')).toBe(10);
    expect(queue.workAhead('flood', 10, 'fifo')).toBe(100);
    expect(queue.workAhead('flood', 10, 'lifo')).toBe(0);
  });
});
