/**
 * A set of fixed-width keys (`width` 32-bit words each: 2 for a 64-bit hash, 4 for a UUID) by open
 * addressing in one Uint32Array: no object per member, so a set of a million keys is a few
 * typed arrays rather than a million strings for the garbage collector to walk. A key of all
 * zero words marks a free slot, so such a key is stored with its last word 1 (callers hashing
 * values accept that; UUIDs are never all zero). Kept at most half full.
 */
export class WordHashSet {
  private slots: Uint32Array;
  size = 0;

  constructor(
    private readonly width: number,
    initialSlots = 1024,
  ) {
    this.slots = new Uint32Array(width * initialSlots);
  }

  /** Adds the key held in `key` (its first `width` words); answers whether it was new. */
  add(key: ArrayLike<number>): boolean {
    if ((this.size + 1) * 2 > this.slots.length / this.width) this.grow();
    let zero = true;
    for (let w = 0; w < this.width && zero; w++) if (key[w] !== 0) zero = false;
    const added = WordHashSet.insert(this.slots, this.width, zero ? this.zeroKey() : key, 0);
    if (added) this.size++;
    return added;
  }

  /** Bytes held by the set's table. */
  get bytes(): number {
    return this.slots.byteLength;
  }

  /** What an all-zero key is stored as. */
  private zeroKey(): Uint32Array {
    const key = new Uint32Array(this.width);
    key[this.width - 1] = 1;
    return key;
  }

  /** Inserts the key held in `key` from word `from` on. */
  private static insert(slots: Uint32Array, width: number, key: ArrayLike<number>, from: number): boolean {
    let mix = 0;
    for (let w = 0; w < width; w++) mix = Math.imul(mix ^ key[from + w], 0x9e3779b1);
    const mask = slots.length / width - 1;
    for (let i = (mix ^ (mix >>> 15)) & mask; ; i = (i + 1) & mask) {
      const at = i * width;
      let free = true;
      let same = true;
      for (let w = 0; w < width; w++) {
        const s = slots[at + w];
        if (s !== 0) free = false;
        if (s !== key[from + w] >>> 0) same = false;
      }
      if (free) {
        for (let w = 0; w < width; w++) slots[at + w] = key[from + w];
        return true;
      }
      if (same) return false;
    }
  }

  private grow(): void {
    const old = this.slots;
    const width = this.width;
    const slots = new Uint32Array(old.length * 2);
    // Straight from the old table: no view of each slot (those views were most of a growth's cost).
    for (let at = 0; at < old.length; at += width) {
      let used = false;
      for (let w = 0; w < width && !used; w++) if (old[at + w] !== 0) used = true;
      if (used) WordHashSet.insert(slots, width, old, at);
    }
    this.slots = slots;
  }
}
