//! ANALYZE's two-stage sample (PostgreSQL's `acquire_sample_rows`): a uniform sample of
//! `targrows` blocks (Knuth's Algorithm S), then a uniform reservoir of `targrows` rows from
//! the rows of those blocks. A table of at most `targrows` blocks and rows is read whole, so
//! its statistics are exact and deterministic.

use rand::Rng;

/// Chooses `min(targblocks, nblocks)` block numbers uniformly, in increasing order
/// (Algorithm S: each block is taken with probability needed / remaining).
pub struct BlockSampler<R: Rng> {
    nblocks: u32,
    target: u32,
    /// Blocks passed so far.
    scanned: u32,
    /// Blocks chosen so far.
    chosen: u32,
    rng: R,
}

impl<R: Rng> BlockSampler<R> {
    pub fn new(nblocks: u32, targblocks: usize, rng: R) -> BlockSampler<R> {
        BlockSampler {
            nblocks,
            target: targblocks.min(u32::MAX as usize) as u32,
            scanned: 0,
            chosen: 0,
            rng,
        }
    }

    /// Blocks chosen so far (PostgreSQL's `bs.m`), the denominator of the row extrapolation.
    pub fn chosen(&self) -> u32 {
        self.chosen
    }
}

impl<R: Rng> Iterator for BlockSampler<R> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if self.scanned >= self.nblocks || self.chosen >= self.target {
            return None;
        }
        let mut remaining = (self.nblocks - self.scanned) as f64;
        let needed = (self.target - self.chosen) as f64;
        if needed < remaining {
            // Skip each block with probability 1 - needed/remaining, in one draw.
            let v: f64 = self.rng.r#gen();
            let mut p = 1.0 - needed / remaining;
            while v < p {
                self.scanned += 1;
                remaining -= 1.0;
                p *= 1.0 - needed / remaining;
            }
        }
        self.chosen += 1;
        let block = self.scanned;
        self.scanned += 1;
        Some(block)
    }
}

/// A uniform sample of at most `target` items from a stream (Algorithm R: the t-th item,
/// 0-based, replaces a random slot with probability target/(t+1)). Items carry their
/// physical position; `finish` returns them in that order, which the correlation needs.
pub struct Reservoir<T, R: Rng> {
    target: usize,
    seen: u64,
    items: Vec<(u64, T)>,
    replaced: bool,
    rng: R,
}

impl<T, R: Rng> Reservoir<T, R> {
    pub fn new(target: usize, rng: R) -> Reservoir<T, R> {
        Reservoir {
            target,
            seen: 0,
            items: Vec::new(),
            replaced: false,
            rng,
        }
    }

    /// Offers the item at physical position `pos` (positions increase along the scan).
    pub fn offer(&mut self, pos: u64, item: T) {
        let _ = self.offer_with(pos, || Ok::<T, ()>(item));
    }

    /// As `offer`, building the item only if the sample takes it: once the reservoir is
    /// full, most rows are passed over, and decoding them would be most of ANALYZE's work.
    pub fn offer_with<E>(
        &mut self,
        pos: u64,
        make: impl FnOnce() -> Result<T, E>,
    ) -> Result<(), E> {
        let t = self.seen;
        self.seen += 1;
        if self.items.len() < self.target {
            self.items.push((pos, make()?));
            return Ok(());
        }
        let k = self.rng.gen_range(0..=t);
        if (k as usize) < self.target {
            self.items[k as usize] = (pos, make()?);
            self.replaced = true;
        }
        Ok(())
    }

    /// Rows offered so far.
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// The sample in physical order.
    pub fn finish(mut self) -> Vec<T> {
        if self.replaced {
            self.items.sort_unstable_by_key(|i| i.0);
        }
        self.items.into_iter().map(|i| i.1).collect()
    }
}

/// The table's estimated row count from `liverows` seen in `chosen` of `totalblocks` blocks
/// (PostgreSQL: the live-row density of the sampled blocks times the table's blocks).
pub fn estimate_total_rows(liverows: f64, chosen: u32, totalblocks: u32) -> f64 {
    if chosen == 0 {
        return 0.0;
    }
    (liverows / chosen as f64 * totalblocks as f64 + 0.5).floor()
}
