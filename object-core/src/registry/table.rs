//! The index → entry table: two levels of atomically published pointers to leaked,
//! immutable [`TypeInfo`]s, and for the first `CHUNK_LEN` indices, each type's first
//! ancestors in flat rows (the "display"), so the out-of-range instance check is one
//! load. Readers never lock; entries are published once, under the writer lock (or
//! during the one-time build), and never freed.
//!
//! The fenced part of the registry: the only `unsafe` is turning a published pointer
//! back into `&'static`.

use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use super::info::{inline_display, TypeInfo, DISPLAY_INLINE};

/// Whether the type of an object with index `index` has `target` as its ancestor at
/// `depth` (the "display" check). Lock-free: for indices below 1024 and depths below 8,
/// one load from a flat table and one compare; otherwise the entry's ancestor array.
#[inline(always)]
pub(crate) fn display_check(index: u32, depth: u32, target: u32) -> bool {
    if let Some(host) = super::adopt::adopted() {
        return (host.display_check)(index, depth, target);
    }
    if (index as usize) < CHUNK_LEN && (depth as usize) < DISPLAY_INLINE {
        // Relaxed suffices: the row is written before the type is published, and an
        // object of that type reaches us only through synchronization after that.
        return DISPLAY[index as usize][depth as usize].load(Ordering::Relaxed) == target;
    }
    match table_get(index) {
        Some(info) if (depth as usize) < DISPLAY_INLINE => info.display[depth as usize] == target,
        Some(info) => info.ancestors.get(depth as usize) == Some(&target),
        None => false,
    }
}

/// For indices below `CHUNK_LEN`: each type's first `DISPLAY_INLINE` ancestors (0 past
/// its depth; 0 is never an object type), so the overflow check is one load.
static DISPLAY: [[AtomicU32; DISPLAY_INLINE]; CHUNK_LEN] =
    [const { [const { AtomicU32::new(0) }; DISPLAY_INLINE] }; CHUNK_LEN];

const CHUNK_BITS: u32 = 10;
const CHUNK_LEN: usize = 1 << CHUNK_BITS;
const TOP_LEN: usize = 4096;
/// The number of type indices the table can hold (about four million).
pub const MAX_TYPES: u32 = (CHUNK_LEN * TOP_LEN) as u32;

type Chunk = [AtomicPtr<TypeInfo>; CHUNK_LEN];

/// Indices below `CHUNK_LEN` (every static and most dynamic types): one level.
static FIRST: Chunk = [const { AtomicPtr::new(core::ptr::null_mut()) }; CHUNK_LEN];

/// Further chunks (entry 0 unused: that range is `FIRST`).
static TABLE: [AtomicPtr<Chunk>; TOP_LEN] =
    [const { AtomicPtr::new(core::ptr::null_mut()) }; TOP_LEN];

/// Reads an entry without touching the registry's lazy initialization: callers either
/// hold an index that came out of the registry (so it is initialized) or accept `None`.
#[inline(always)]
pub(crate) fn table_get(index: u32) -> Option<&'static TypeInfo> {
    if let Some(host) = super::adopt::adopted() {
        return (host.type_info)(index);
    }
    let slot = if (index as usize) < CHUNK_LEN {
        &FIRST[index as usize]
    } else {
        table_slot(index)?
    };
    let p = slot.load(Ordering::Acquire);
    if p.is_null() {
        None
    } else {
        // SAFETY: non-null entries are leaked, immutable `TypeInfo`s (see `publish`).
        Some(unsafe { &*p })
    }
}

#[inline]
fn table_slot(index: u32) -> Option<&'static AtomicPtr<TypeInfo>> {
    let chunk = TABLE
        .get((index >> CHUNK_BITS) as usize)?
        .load(Ordering::Acquire);
    if chunk.is_null() {
        return None;
    }
    // SAFETY: non-null chunk pointers are leaked `Box<Chunk>`s, never freed.
    Some(unsafe { &(*chunk)[(index as usize) & (CHUNK_LEN - 1)] })
}

/// Publishes an entry. Only called with the writer lock held (or during the one-time
/// build), so chunk creation does not race.
pub(super) fn publish(mut info: TypeInfo) -> &'static TypeInfo {
    info.display = inline_display(info.ancestors);
    let info: &'static TypeInfo = Box::leak(Box::new(info));
    if (info.index as usize) < CHUNK_LEN {
        for (slot, a) in DISPLAY[info.index as usize].iter().zip(info.display) {
            slot.store(a, Ordering::Relaxed);
        }
        FIRST[info.index as usize]
            .store(info as *const TypeInfo as *mut TypeInfo, Ordering::Release);
        return info;
    }
    let top = &TABLE[(info.index >> CHUNK_BITS) as usize];
    let mut chunk = top.load(Ordering::Acquire);
    if chunk.is_null() {
        let fresh: Box<Chunk> =
            Box::new([const { AtomicPtr::new(core::ptr::null_mut()) }; CHUNK_LEN]);
        chunk = Box::into_raw(fresh);
        top.store(chunk, Ordering::Release);
    }
    // SAFETY: `chunk` is a leaked, never-freed `Box<Chunk>` (just stored or loaded).
    let slot = unsafe { &(*chunk)[(info.index as usize) & (CHUNK_LEN - 1)] };
    // Release: the entry's fields are visible to any reader that sees the pointer.
    slot.store(info as *const TypeInfo as *mut TypeInfo, Ordering::Release);
    info
}
