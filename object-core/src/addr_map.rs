//! Maps and sets keyed by object addresses, for the tables a walk keeps while it runs
//! (structural equality's pairings and bindings, the hash's memo, `transform`'s memo
//! and seen sets): one hasher, [`AddrHasher`], for all of them.
//!
//! An address is already unique among live objects, but its low bits are alignment and
//! its high bits the same for every object of a heap: the hasher mixes every word it
//! is given through a folded 128-bit multiply, so that both the bucket (the low bits
//! of the hash) and the tag (the high bits) spread. A key of several words (a pair of
//! addresses, a map key's kind and value) mixes each of them in turn: none is dropped.
//! The hashes are never a result: they pick buckets, and only for one walk.

use core::hash::{BuildHasherDefault, Hasher};
use std::collections::{HashMap, HashSet};

use crate::ptr::{ObjectPtr, ObjectRef};

/// An odd multiplier (the golden ratio's digits).
const K0: u64 = 0x9E37_79B9_7F4A_7C15;

/// The hasher of the address-keyed tables: each word written is mixed into the state
/// (`fold(state ^ word, K0) ^ state.rotate_left(26)`, where `fold` xors the halves of
/// the 128-bit product), so a single address costs one multiply.
#[derive(Default, Clone, Copy, Debug)]
pub(crate) struct AddrHasher(u64);

impl AddrHasher {
    #[inline(always)]
    fn mix(&mut self, v: u64) {
        let p = u128::from(self.0 ^ v).wrapping_mul(u128::from(K0));
        self.0 = (p as u64) ^ ((p >> 64) as u64) ^ self.0.rotate_left(26);
    }
}

impl Hasher for AddrHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    /// Bytes (a string key's): its length, then eight bytes at a time.
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.mix(bytes.len() as u64);
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.mix(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.mix(u64::from(n));
    }

    #[inline]
    fn write_u16(&mut self, n: u16) {
        self.mix(u64::from(n));
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.mix(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }
}

/// The `BuildHasher` of the address-keyed tables.
pub(crate) type BuildAddrHasher = BuildHasherDefault<AddrHasher>;

/// A map keyed by object addresses (or anything else a walk keys by address).
pub(crate) type AddrMap<V> = HashMap<usize, V, BuildAddrHasher>;

/// A set of object addresses (or of keys made of them).
pub(crate) type AddrSet<K = usize> = HashSet<K, BuildAddrHasher>;

/// The address of an object: the key of the tables above.
#[inline(always)]
pub(crate) fn addr(o: &ObjectRef) -> usize {
    ObjectPtr::as_ptr(o) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::hash::BuildHasher;

    #[test]
    fn every_word_counts() {
        let b = BuildAddrHasher::default();
        // A pair of addresses: both halves change the hash (transform's old hasher kept
        // only the last word written).
        assert_ne!(
            b.hash_one((16usize, 32usize)),
            b.hash_one((48usize, 32usize))
        );
        assert_ne!(
            b.hash_one((16usize, 32usize)),
            b.hash_one((16usize, 48usize))
        );
        // Bytes: every byte, and the length.
        assert_ne!(b.hash_one("abcdefghi"), b.hash_one("abcdefghj"));
        assert_ne!(b.hash_one("abcdefgh"), b.hash_one("bbcdefgh"));
        let mut h = AddrHasher::default();
        h.write(&[1]);
        let mut g = AddrHasher::default();
        g.write(&[1, 0]);
        assert_ne!(h.finish(), g.finish());
    }

    #[test]
    fn addresses_spread() {
        // Neighbouring addresses, 16 bytes apart, fill a table's buckets about as random
        // hashes would (1,024 of them, 1,024 buckets: some 650 filled) and carry every
        // tag (the top 7 bits).
        let b = BuildAddrHasher::default();
        let hashes: Vec<u64> = (0..1024usize)
            .map(|i| b.hash_one(0x7f00_0000_0000 + 16 * i))
            .collect();
        let buckets: std::collections::HashSet<u64> = hashes.iter().map(|h| h & 1023).collect();
        let tags: std::collections::HashSet<u64> = hashes.iter().map(|h| h >> 57).collect();
        assert!(buckets.len() > 550, "{}", buckets.len());
        assert_eq!(tags.len(), 128);
    }
}
