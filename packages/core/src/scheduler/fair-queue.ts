/** What the fair queue needs to know of an entry: whose it is and what it costs a thread. */
export interface FairEntry {
  readonly key: string;
  /** Estimated run time, in ms: what the entry takes from its key's share. */
  cost: number;
  /** What the entry surely costs at least, in ms: the work a refusal may count. */
  floorMs: number;
}

/** Which estimate of the waiting work to add up: the best guess, or the sure floor. */
export type WorkMeasure = 'cost' | 'floor';

/** Which end of a key's line is served: the oldest (FIFO) or the newest (LIFO). */
export type ServeOrder = 'fifo' | 'lifo';

/** A place in line; `live` turns false when the entry leaves it early (cancelled, shed). */
interface Slot<T> {
  readonly entry: T;
  live: boolean;
}

/**
 * One key's line, in arrival order, with its deficit (RFC 8290's deficit
 * round robin), and a front lane of rescued entries served before the rest.
 */
class KeyLine<T extends FairEntry> {
  private slots: Array<Slot<T>> = [];
  private head = 0;
  private rescued: Array<Slot<T>> = [];
  /** Entries still waiting, and their estimated cost. */
  waiting = 0;
  backlogMs = 0;
  floorBacklogMs = 0;
  deficit = 0;
  /** Whether this key already got its quantum in the current round. */
  granted = false;

  constructor(readonly key: string) {}

  push(slot: Slot<T>): void {
    this.slots.push(slot);
    this.waiting += 1;
    this.backlogMs += slot.entry.cost;
    this.floorBacklogMs += slot.entry.floorMs;
  }

  backlog(measure: WorkMeasure): number {
    return measure === 'cost' ? this.backlogMs : this.floorBacklogMs;
  }

  /** The live entries in the order they would be served: rescued ones, then the served end first. */
  inServeOrder(order: ServeOrder): T[] {
    const entries = this.rescued.filter((slot) => slot.live).map((slot) => slot.entry);
    const line = this.slots.slice(this.head).filter((slot) => slot.live);
    if (order === 'lifo') line.reverse();
    for (const slot of line) entries.push(slot.entry);
    return entries;
  }

  /** The next live entry: a rescued one, else the one at the served end; not taken. */
  peek(order: ServeOrder): Slot<T> | undefined {
    this.skipDead();
    const rescued = this.rescued[0];
    if (rescued !== undefined) return rescued;
    if (this.head >= this.slots.length) return undefined;
    return order === 'fifo' ? this.slots[this.head] : this.slots[this.slots.length - 1];
  }

  /**
   * The oldest live entry in line (not the rescued lane) that `may` allows.
   * Walks the line: bounded by the scheduler's queue backstop.
   */
  oldestWhere(may: (entry: T) => boolean): Slot<T> | undefined {
    for (let index = this.head; index < this.slots.length; index++) {
      const slot = this.slots[index] as Slot<T>;
      if (slot.live && may(slot.entry)) return slot;
    }
    return undefined;
  }

  /** Takes `slot` out of line (anywhere in it: a slot in the middle just dies). */
  leave(slot: Slot<T>): void {
    if (!slot.live) return;
    slot.live = false;
    this.waiting -= 1;
    this.backlogMs -= slot.entry.cost;
    this.floorBacklogMs -= slot.entry.floorMs;
    this.skipDead();
  }

  /** Moves a live entry to the front lane; its new slot, or undefined if it already left. */
  promote(slot: Slot<T>): Slot<T> | undefined {
    if (!slot.live) return undefined;
    // Its old place dies; it is still waiting, so the counts stay.
    slot.live = false;
    const moved: Slot<T> = { entry: slot.entry, live: true };
    this.rescued.push(moved);
    this.skipDead();
    return moved;
  }

  /** Drops dead slots at both ends, and compacts once the dead head is long. */
  private skipDead(): void {
    while (this.rescued.length > 0 && !this.rescued[0]?.live) this.rescued.shift();
    while (this.head < this.slots.length && !this.slots[this.head]?.live) this.head += 1;
    while (this.slots.length > this.head && !this.slots[this.slots.length - 1]?.live) {
      this.slots.pop();
    }
    if (this.head > 64 && this.head * 2 > this.slots.length) {
      this.slots = this.slots.slice(this.head);
      this.head = 0;
    }
  }
}

/** A handle on a queued entry, to take it out of line early or move it ahead in its key. */
export interface QueuedHandle {
  /** Takes the entry out of line; false when it already left (served or removed). */
  remove(): boolean;
  /**
   * Moves the entry ahead of everything else of its key (not of other keys:
   * its key's share stays what it was); false when it already left.
   */
  rescue(): boolean;
  /** Sets the entry's estimates anew (the cost model learnt); false when it already left. */
  reprice(cost: number, floorMs: number): boolean;
}

/** How deep one key's line is. */
export interface KeyDepth {
  readonly key: string;
  readonly waiting: number;
  readonly backlogMs: number;
}

/**
 * Deficit round robin (Shreedhar and Varghese; the fair queuing of RFC 8290)
 * across keys, weighted by cost: every round, each key with waiting entries
 * gets the same budget of estimated thread time (the quantum), and spends it
 * on its own entries. A key that sends expensive tasks gets fewer of them per
 * round; a flooding key gets one share, never the whole pool. Within a key,
 * the caller chooses the end it serves from (oldest first, or newest first
 * while overloaded).
 *
 * Entries that leave early (cancelled, shed) are marked and skipped, so
 * removal is O(1); keys with nothing waiting are forgotten, so memory follows
 * what waits, not how many clients ever called.
 */
export class FairQueue<T extends FairEntry> {
  private readonly lines = new Map<string, KeyLine<T>>();
  /** Keys with waiting entries, in round-robin order. */
  private ring: Array<KeyLine<T>> = [];
  private cursor = 0;
  private total = 0;
  private totalBacklogMs = 0;
  private totalFloorMs = 0;

  /** Entries waiting, all keys together. */
  get size(): number {
    return this.total;
  }

  /** Estimated cost of everything waiting, in ms. */
  get backlogMs(): number {
    return this.totalBacklogMs;
  }

  /** What everything waiting surely costs at least, in ms. */
  get floorBacklogMs(): number {
    return this.totalFloorMs;
  }

  push(entry: T): QueuedHandle {
    let line = this.lines.get(entry.key);
    if (line === undefined) {
      line = new KeyLine<T>(entry.key);
      this.lines.set(entry.key, line);
      this.ring.push(line);
    }
    let slot: Slot<T> = { entry, live: true };
    line.push(slot);
    this.total += 1;
    this.totalBacklogMs += entry.cost;
    this.totalFloorMs += entry.floorMs;
    const owner = line;
    return {
      remove: () => this.leave(owner, slot),
      rescue: () => {
        const moved = owner.promote(slot);
        if (moved === undefined) return false;
        slot = moved;
        return true;
      },
      reprice: (cost, floorMs) => {
        if (!slot.live) return false;
        owner.backlogMs += cost - entry.cost;
        owner.floorBacklogMs += floorMs - entry.floorMs;
        this.totalBacklogMs += cost - entry.cost;
        this.totalFloorMs += floorMs - entry.floorMs;
        entry.cost = cost;
        entry.floorMs = floorMs;
        return true;
      },
    };
  }

  /**
   * The next entry to run, taken out of line, or undefined when none may run.
   * Each key's turn grants it a quantum of the largest cost at the head of
   * any line, so every key whose turn comes can run one entry (a pick visits
   * each key at most twice) and every key gets the same thread time per round.
   * `eligible` says whether a key may run now (a key at its thread cap may not);
   * `fits`, whether its next entry may (a key whose next entry does not fit
   * a batch waits for a turn of its own).
   */
  next(
    order: ServeOrder,
    eligible: (key: string) => boolean,
    fits?: (entry: T) => boolean,
  ): T | undefined {
    let quantum = 0;
    for (const line of this.ring) quantum = Math.max(quantum, line.peek(order)?.entry.cost ?? 0);
    const visits = 2 * this.ring.length + 1;
    for (let visit = 0; visit < visits && this.ring.length > 0; visit++) {
      if (this.cursor >= this.ring.length) this.cursor = 0;
      const line = this.ring[this.cursor] as KeyLine<T>;
      const slot = line.peek(order);
      if (slot !== undefined && eligible(line.key) && (fits?.(slot.entry) ?? true)) {
        if (line.deficit < slot.entry.cost && !line.granted) {
          line.deficit += quantum;
          line.granted = true;
        }
        if (line.deficit >= slot.entry.cost) {
          line.deficit -= slot.entry.cost;
          this.leave(line, slot);
          return slot.entry;
        }
      }
      // This key's turn is over.
      line.granted = false;
      this.cursor += 1;
    }
    return undefined;
  }

  /**
   * Estimated thread time served before a new entry of `key` costing `cost`,
   * if it joins now: its own key's line ahead of it (none when served newest
   * first), and from every other key at most as much as its own key spends
   * up to and including it: round robin serves the others in parallel with it.
   */
  workAhead(key: string, cost: number, order: ServeOrder, measure: WorkMeasure = 'cost'): number {
    const own = this.lines.get(key)?.backlog(measure) ?? 0;
    return this.othersBeside(key, order === 'fifo' ? own : 0, cost, measure);
  }

  /**
   * `ownAhead` of a key's own work before an entry costing `cost`, plus what
   * round robin serves of every other key meanwhile: at most as much as the
   * entry's own key spends up to and including it.
   */
  othersBeside(key: string, ownAhead: number, cost: number, measure: WorkMeasure): number {
    const share = ownAhead + cost;
    let ahead = ownAhead;
    for (const line of this.ring) {
      if (line.key !== key) ahead += Math.min(line.backlog(measure), share);
    }
    return ahead;
  }

  /** Each key's waiting entries, in the order they would be served. */
  linesInServeOrder(order: ServeOrder): Array<{ key: string; entries: T[] }> {
    return this.ring.map((line) => ({ key: line.key, entries: line.inServeOrder(order) }));
  }

  /**
   * Takes out the oldest entry that `may` allows of the key with the most
   * entries waiting, if it has more than `than`: when the queue is full, the
   * flood pays, not the newcomer (RFC 8290, section 4.1.3, drops from the
   * fattest flow too). Rescued entries are never taken: they are the ones
   * about to run before their deadline.
   */
  shedFattest(than: number, may: (entry: T) => boolean = () => true): T | undefined {
    let fattest: KeyLine<T> | undefined;
    for (const line of this.ring) {
      if (line.waiting > (fattest?.waiting ?? than)) fattest = line;
    }
    const slot = fattest?.oldestWhere(may);
    if (fattest === undefined || slot === undefined) return undefined;
    this.leave(fattest, slot);
    return slot.entry;
  }

  /** How many entries of `key` wait. */
  waitingOf(key: string): number {
    return this.lines.get(key)?.waiting ?? 0;
  }

  /** Each key with waiting entries, and how many. */
  depths(): KeyDepth[] {
    return this.ring.map(({ key, waiting, backlogMs }) => ({ key, waiting, backlogMs }));
  }

  private leave(line: KeyLine<T>, slot: Slot<T>): boolean {
    if (!slot.live) return false;
    line.leave(slot);
    this.total -= 1;
    this.totalBacklogMs -= slot.entry.cost;
    this.totalFloorMs -= slot.entry.floorMs;
    if (line.waiting === 0) this.forget(line);
    return true;
  }

  private forget(line: KeyLine<T>): void {
    this.lines.delete(line.key);
    const place = this.ring.indexOf(line);
    if (place === -1) return;
    this.ring.splice(place, 1);
    // The key after it moves into its place, and takes its turn there.
    if (place < this.cursor) this.cursor -= 1;
    else if (place === this.cursor) line.granted = false;
  }
}
