//! Values worked out from a type's reflection table once for the whole process (the
//! walkers' list of child fields, structural equality's field plan), kept for good,
//! like the table itself: [`PerTable`], which makes each one once, and [`Kept`], the
//! slot in the table through which it is found again with one load.

use core::sync::atomic::{AtomicPtr, Ordering};
use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use super::TypeReflection;

/// Values derived from reflection tables, one per table, made once and leaked (a few
/// bytes per type). Keyed by the table's address under one lock: callers that ask
/// often keep a per-thread cache in front, or a [`Kept`] slot in the table.
///
/// A `BTreeMap`, whose nodes are held by pointers to their starts: memcheck sees the
/// leaked values as reachable (a hash table is held by a pointer into its middle).
pub(crate) struct PerTable<V: ?Sized + 'static> {
    made: Mutex<BTreeMap<usize, &'static V>>,
}

impl<V: ?Sized + 'static> PerTable<V> {
    /// An empty set of values (for a `static`).
    pub(crate) const fn new() -> Self {
        PerTable {
            made: Mutex::new(BTreeMap::new()),
        }
    }

    /// The value for `table`, made by `make` the first time any thread asks.
    pub(crate) fn get(
        &self,
        table: &'static TypeReflection,
        make: impl FnOnce() -> Box<V>,
    ) -> &'static V {
        let key = table as *const TypeReflection as usize;
        let mut made = self.made.lock().unwrap_or_else(PoisonError::into_inner);
        made.entry(key).or_insert_with(|| Box::leak(make()))
    }

    /// The value kept in `slot` (a slot of `table`), made by `make` and kept there the
    /// first time any thread asks (racing threads get the same value from `self`), then
    /// found with one load.
    #[inline]
    pub(crate) fn kept(
        &'static self,
        slot: &Kept<V>,
        table: &'static TypeReflection,
        make: impl FnOnce() -> Box<V>,
    ) -> &'static V
    where
        V: Sized + Sync,
    {
        slot.get()
            .unwrap_or_else(|| slot.keep(self.get(table, make)))
    }
}

/// A slot of a reflection table for a value kept for the rest of the process: empty
/// (null) until a value is kept, then that value, found with one acquire load.
pub(crate) struct Kept<V: Sync + 'static>(AtomicPtr<V>);

impl<V: Sync + 'static> Kept<V> {
    /// An empty slot (for a table in a constant).
    pub(crate) const fn new() -> Self {
        Kept(AtomicPtr::new(core::ptr::null_mut()))
    }

    /// The value kept, if any.
    #[inline(always)]
    pub(crate) fn get(&self) -> Option<&'static V> {
        let p = self.0.load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        // SAFETY: a non-null pointer was stored by `keep`, from a `&'static V` (never
        // freed, never written through; `V: Sync`, so it may be shared with any thread);
        // the acquire load pairs with that release store, so the value is seen made.
        Some(unsafe { &*p })
    }

    /// Keeps `v` (in place of any value kept before: callers keep the same one) and
    /// hands it back.
    #[cold]
    pub(crate) fn keep(&self, v: &'static V) -> &'static V {
        self.0
            .store(core::ptr::from_ref(v).cast_mut(), Ordering::Release);
        v
    }
}
