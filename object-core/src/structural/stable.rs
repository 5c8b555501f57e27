//! The stable mixing functions every structural hash is built from: plain arithmetic on
//! fixed constants, so a hash is the same in every process, build and platform (no
//! random keys, no addresses, no type indices).

/// Multipliers (odd, from the golden ratio and the digits of pi).
const K0: u64 = 0x9E37_79B9_7F4A_7C15;
const K1: u64 = 0x243F_6A88_85A3_08D3;
const K2: u64 = 0x1319_8A2E_0370_7344;

/// The folded 128-bit product: the high and low halves xored.
#[inline(always)]
const fn fold(a: u64, b: u64) -> u64 {
    let p = (a as u128).wrapping_mul(b as u128);
    (p as u64) ^ ((p >> 64) as u64)
}

/// Mixes `v` into the running hash `h` (order-sensitive).
#[inline(always)]
pub(crate) const fn combine(h: u64, v: u64) -> u64 {
    fold(h ^ v ^ K1, K0) ^ h.rotate_left(26)
}

/// A final avalanche, applied to each unordered entry before summing.
#[inline(always)]
pub(crate) const fn finish(h: u64) -> u64 {
    fold(h ^ K2, K0)
}

/// A stable hash of bytes, tagged with `tag`.
pub(crate) const fn hash_bytes(tag: u64, bytes: &[u8]) -> u64 {
    let mut h = combine(tag, bytes.len() as u64);
    let mut i = 0;
    while i + 8 <= bytes.len() {
        let w = u64::from_le_bytes([
            bytes[i],
            bytes[i + 1],
            bytes[i + 2],
            bytes[i + 3],
            bytes[i + 4],
            bytes[i + 5],
            bytes[i + 6],
            bytes[i + 7],
        ]);
        h = combine(h, w);
        i += 8;
    }
    if i < bytes.len() {
        let mut tail = [0u8; 8];
        let mut j = 0;
        while i + j < bytes.len() {
            tail[j] = bytes[i + j];
            j += 1;
        }
        h = combine(h, u64::from_le_bytes(tail));
    }
    finish(h)
}

/// A stable hash of a string: how type keys seed structural hashes.
///
/// ```
/// use object_core::structural::stable_hash_str;
/// // The same value in every process and build.
/// assert_eq!(stable_hash_str("ffi.Array"), stable_hash_str("ffi.Array"));
/// assert_ne!(stable_hash_str("ffi.Array"), stable_hash_str("ffi.Map"));
/// ```
pub const fn stable_hash_str(s: &str) -> u64 {
    hash_bytes(TAG_STR, s.as_bytes())
}

/// Tags: what kind of leaf a hash is of, so that equal bits of different kinds differ.
pub(crate) const TAG_STR: u64 = 0x5354_5221;
pub(crate) const TAG_BYTES: u64 = 0x4259_5445;
pub(crate) const TAG_NONE: u64 = 0x4e4f_4e45;
pub(crate) const TAG_VAR_DEF: u64 = 0x5641_5244;
pub(crate) const TAG_VAR_USE: u64 = 0x5641_5255;
pub(crate) const TAG_FREE_VAR: u64 = 0x4652_4545;
pub(crate) const TAG_IDENTITY: u64 = 0x4944_454e;
pub(crate) const TAG_CYCLE: u64 = 0x4359_434c;
pub(crate) const TAG_CUT: u64 = 0x4355_5421;
pub(crate) const TAG_TENSOR_UNREAD: u64 = 0x554e_5244;
