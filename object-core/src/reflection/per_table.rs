//! [`PerTable`]: a value worked out from a type's reflection table once for the whole
//! process (the walkers' list of child fields, structural equality's field plan), and
//! kept for good, like the table itself.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use super::TypeReflection;

/// Values derived from reflection tables, one per table, made once and leaked (a few
/// bytes per type). Keyed by the table's address under one lock: callers that ask
/// often keep a per-thread cache in front.
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
}
