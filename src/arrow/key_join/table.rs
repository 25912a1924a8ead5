//! The key join's hash tables: open addressing with linear probing, at most
//! half full, each slot 16 bytes holding all a lookup needs, so that a
//! lookup usually touches one slot. Probing a table of a million keys is
//! bound by memory latency, not by instructions: the probe loops fetch the
//! slot a row will need some rows ahead ([`SlotTable::prefetch`]).
//!
//! - [`WordSlot`]: a word key itself and its source row (tag equality is
//!   key equality);
//! - [`ByteSlot`]: 32 bits of the hash of a byte key, its source row and
//!   where its bytes start in [`ByteKeys`], which a matching tag confirms
//!   by comparing them.

/// The row of an empty slot (source rows are below `u32::MAX`).
pub(super) const EMPTY: u32 = u32::MAX;

/// Fibonacci hashing: the top bits of the hash times 2^64 / phi.
const SPREAD: u64 = 0x9E37_79B9_7F4A_7C15;

pub(super) trait Slot: Copy {
    const EMPTY: Self;
    fn row(&self) -> u32;
}

#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub(super) struct WordSlot {
    pub word: u64,
    pub row: u32,
}

impl Slot for WordSlot {
    const EMPTY: Self = WordSlot {
        word: 0,
        row: EMPTY,
    };
    fn row(&self) -> u32 {
        self.row
    }
}

#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub(super) struct ByteSlot {
    /// Where the key starts in [`ByteKeys`].
    pub start: u64,
    /// The low 32 bits of the key's hash.
    pub tag: u32,
    pub row: u32,
}

impl Slot for ByteSlot {
    const EMPTY: Self = ByteSlot {
        start: 0,
        tag: 0,
        row: EMPTY,
    };
    fn row(&self) -> u32 {
        self.row
    }
}

pub(super) struct SlotTable<S> {
    slots: Box<[S]>,
    /// `64 - log2(slots.len())`.
    shift: u32,
    len: usize,
}

impl<S: Slot> SlotTable<S> {
    /// A table for up to `keys` keys (never resized).
    pub fn with_capacity(keys: usize) -> Self {
        let slots = keys.saturating_mul(2).max(16).next_power_of_two();
        SlotTable {
            slots: vec![S::EMPTY; slots].into_boxed_slice(),
            shift: 64 - slots.trailing_zeros(),
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn home(&self, hash: u64) -> usize {
        // Fold the high half in first: word keys that differ only there
        // (timestamps a day apart in seconds...) still spread.
        ((hash ^ (hash >> 32)).wrapping_mul(SPREAD) >> self.shift) as usize
    }

    /// Asks the CPU to fetch the home slot of `hash` (a hint; a no-op where
    /// Rust has no stable prefetch instruction).
    #[inline]
    pub fn prefetch(&self, hash: u64) {
        prefetch(&self.slots[self.home(hash)]);
    }

    /// The first slot from `hash`'s home on that `matches` accepts.
    #[inline]
    pub fn find(&self, hash: u64, matches: impl Fn(&S) -> bool) -> Option<&S> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(hash);
        loop {
            let slot = &self.slots[i];
            if slot.row() == EMPTY {
                return None;
            }
            if matches(slot) {
                return Some(slot);
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds `slot` under `hash`, unless `matches` accepts a slot there
    /// already (the same key): then returns that one and adds nothing.
    #[inline]
    pub fn insert(&mut self, hash: u64, slot: S, matches: impl Fn(&S) -> bool) -> Option<S> {
        debug_assert!(slot.row() != EMPTY);
        debug_assert!(self.len < self.slots.len() / 2, "sized for its keys");
        let mask = self.slots.len() - 1;
        let mut i = self.home(hash);
        loop {
            let found = self.slots[i];
            if found.row() == EMPTY {
                self.slots[i] = slot;
                self.len += 1;
                return None;
            }
            if matches(&found) {
                return Some(found);
            }
            i = (i + 1) & mask;
        }
    }
}

/// Byte keys stored end to end, each after its length (4 bytes, little
/// endian), so that one read finds both.
#[derive(Default)]
pub(super) struct ByteKeys {
    data: Vec<u8>,
}

impl ByteKeys {
    /// Room for `bytes` more bytes of keys (each with its 4 length bytes).
    pub fn reserve(&mut self, bytes: usize) {
        self.data.reserve(bytes);
    }

    /// Appends `key`; returns where it starts, or `None` for a key of 4 GiB or more.
    pub fn push(&mut self, key: &[u8]) -> Option<u64> {
        let len = u32::try_from(key.len()).ok()?;
        let start = self.data.len() as u64;
        self.data.extend_from_slice(&len.to_le_bytes());
        self.data.extend_from_slice(key);
        Some(start)
    }

    /// Whether the key at `start` is `key`.
    #[inline]
    pub fn equals(&self, start: u64, key: &[u8]) -> bool {
        let start = start as usize;
        let Some(len) = self.data.get(start..start + 4) else {
            return false;
        };
        let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
        len == key.len() && self.data.get(start + 4..start + 4 + len) == Some(key)
    }

    /// Asks the CPU to fetch the start of the key at `start`.
    #[inline]
    pub fn prefetch(&self, start: u64) {
        if let Some(byte) = self.data.get(start as usize) {
            prefetch(byte);
        }
    }
}

/// A prefetch hint for the cache line holding `value`.
#[inline(always)]
pub(super) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // Safety: a prefetch is a hint; it never faults and changes no state
    // visible to the program, and SSE is part of x86_64's baseline.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
