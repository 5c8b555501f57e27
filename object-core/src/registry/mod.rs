//! The type registry: type keys ↔ type indices, the hierarchy, and the index ranges that
//! make run-time type checks O(1).
//!
//! # Index ranges
//!
//! | range | holds |
//! | --- | --- |
//! | `0..64` | value kinds carried by `Any` only (never objects) |
//! | `64..128` | static object types, with fixed indices (`ffi.Object` = 64, …) |
//! | `128..` | dynamic types, allocated on first use |
//!
//! # Allocation
//!
//! The first call that needs any type index builds the table from every link-time
//! registration (`#[derive(Object)]` submits one through `inventory`) at once, sorted by
//! key so indices do not depend on link order. Dynamic types are numbered in pre-order,
//! so each type's subtree is one contiguous range `[index, end)`: the type, its link-time
//! subtree, then `slots` further indices reserved for descendants registered *later*
//! with [`register_type`].
//!
//! Static indices (`64..128`) are fixed by the types themselves. When two link-time
//! types claim one, the outcome does not depend on link or hash order: a core type
//! ([`CORE_STATIC_TYPES`]) always keeps its index, otherwise the smaller key does, and
//! the other type is refused (listed by [`link_errors`], an error on its first use).
//!
//! A run-time type takes `slots + 1` indices from the reserved slots of its parent, or
//! of the nearest ancestor that still has room; failing that it *overflows* to the end
//! of the table. Every ancestor whose range it then falls outside must allow overflow
//! (`final` types never have children; `overflow = false` refuses), and is marked as
//! having an overflowed descendant. For those, `is` consults the object type's ancestor
//! array (its "display") at the target's depth: one look-up and one compare.
//!
//! # Concurrency
//!
//! Readers never lock on the hot paths: index → [`TypeInfo`] is a two-level table of
//! atomically published, immutable, leaked entries, and each Rust type caches its own
//! entry (filled before any object of the type exists: while the registry is built for
//! the collected types, else on first use; see `TypeCache`). Key → index
//! (registration, deserialization, foreign front-ends) is a sharded reader-writer map.
//! Writers serialize on one mutex. Racing first uses and identical
//! re-registrations get the same index.
//!
//! Everything the registry allocates lives for the whole process and stays reachable
//! from its statics (ordered maps rather than hash tables, so leak checkers can see it).

//!
//! # Where things are
//!
//! - `info.rs`: [`TypeInfo`] (an entry) and what the derive submits;
//! - `table.rs`: the lock-free index → entry table and the ancestor "display" rows (the
//!   one part of the registry that needs `unsafe`);
//! - `spec.rs`: [`TypeSpec`], [`register_type`] and a Rust type's first use;
//! - `layout.rs`: [`TypeLayout`], [`LayoutOwner`]: the layout each type's objects have,
//!   sealed once by its first owner (a Rust struct, C, `make_object_as`);
//! - `place.rs`: placing one type (index allocation, overflow marking, checks);
//! - `build.rs`: the one-time build from every link-time registration, in named steps;
//! - `error.rs`: [`RegistryError`].

use core::any::TypeId;
use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::sync::{Mutex, MutexGuard, OnceLock, RwLock};

use crate::object_type::TypeCache;
use crate::type_index;

pub mod adopt;
mod build;
mod error;
mod info;
mod layout;
mod place;
#[allow(
    unsafe_code,
    reason = "the exported descriptor and the loader's list of libraries (dl_iterate_phdr, dlopen, dlsym)"
)]
pub mod process;
mod spec;
// The index → entry table publishes and reads leaked entries through raw pointers.
#[allow(unsafe_code)]
mod table;

pub use self::error::RegistryError;
pub use self::info::{TypeInfo, TypeOrigin};
// What generated code submits (also in `__private`); not public API in its details.
#[doc(hidden)]
pub use self::info::{LinkedType, TypeRegistration};
pub use self::layout::{ForeignMaker, LayoutOwner, TypeLayout};
pub use self::spec::{register_type, seal_foreign_layout, TypeSpec};
pub use self::table::MAX_TYPES;

use self::build::build;
pub(crate) use self::spec::resolve_rust_type;
pub(crate) use self::table::display_check;
use self::table::table_get;

/// The registry: key → index (the table holds index → entry), and the writer state.
pub(crate) struct Registry {
    keys: KeyMap,
    writer: Mutex<Writer>,
}

/// Key → index, in shards so concurrent readers rarely share a lock.
struct KeyMap {
    hasher: std::hash::RandomState,
    shards: [RwLock<BTreeMap<&'static str, u32>>; 16],
}

impl KeyMap {
    fn new() -> Self {
        KeyMap {
            hasher: std::hash::RandomState::new(),
            shards: [const { RwLock::new(BTreeMap::new()) }; 16],
        }
    }
    fn shard(&self, key: &str) -> &RwLock<BTreeMap<&'static str, u32>> {
        &self.shards[(self.hasher.hash_one(key) % 16) as usize]
    }
    fn get(&self, key: &str) -> Option<u32> {
        // A panic while holding a shard cannot leave a half-inserted entry, so a
        // poisoned lock is still consistent.
        self.shard(key)
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .copied()
    }
    fn insert(&self, key: &'static str, index: u32) {
        self.shard(key)
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, index);
    }
    fn values(&self) -> Vec<u32> {
        self.shards
            .iter()
            .flat_map(|s| {
                s.read()
                    .unwrap_or_else(|e| e.into_inner())
                    .values()
                    .copied()
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

#[derive(Default)]
struct Writer {
    /// The next index past everything allocated so far.
    next: u32,
    /// For types with reserved slots: the next free index inside them.
    free_slot: BTreeMap<u32, u32>,
    /// Which Rust type holds each derive-registered index.
    claimed: BTreeMap<u32, (TypeId, &'static str)>,
    /// Link-time registrations that failed, by key.
    link_errors: BTreeMap<&'static str, RegistryError>,
    /// The filled per-Rust-type caches of each index (one per copy of the type's code,
    /// e.g. in a host and a plugin), whose overflow bit must follow the entry's flag.
    caches: BTreeMap<u32, Vec<&'static TypeCache>>,
}

impl Writer {
    /// Fills a Rust type's cache from its entry and records it among the index's
    /// caches. Called with the writer held (or while building, before anyone can see
    /// the registry), so no overflow can be registered between reading the entry's
    /// flag and recording the cache that must follow it.
    fn publish_cache(&mut self, cache: &'static TypeCache, info: &'static TypeInfo) {
        cache.publish(info);
        let caches = self.caches.entry(info.index).or_default();
        if !caches.iter().any(|c| core::ptr::eq(*c, cache)) {
            caches.push(cache);
        }
    }
}

static REGISTRY: OnceLock<Registry> = OnceLock::new();

fn registry() -> &'static Registry {
    REGISTRY.get_or_init(build)
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, Writer> {
        // The writer's invariants hold between statements that can panic (we only
        // panic on allocation failure), so a poisoned lock is still consistent.
        self.writer.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lookup(&self, key: &str) -> Option<&'static TypeInfo> {
        self.keys.get(key).and_then(table_get)
    }
}

/// The entry for a type index, if one is registered.
///
/// ```
/// let info = object_core::registry::type_info(64).unwrap();
/// assert_eq!(info.key(), "ffi.Object");
/// assert_eq!(object_core::registry::type_info(1).unwrap().key(), "int");
/// ```
pub fn type_info(index: u32) -> Option<&'static TypeInfo> {
    if let Some(host) = adopt::adopted() {
        return (host.type_info)(index);
    }
    registry();
    table_get(index)
}

/// The entry for a type key, if one is registered.
pub fn type_info_by_key(key: &str) -> Option<&'static TypeInfo> {
    if let Some(host) = adopt::adopted() {
        return (host.type_info_by_key)(key);
    }
    registry().lookup(key)
}

/// The index of a type key.
///
/// # Errors
///
/// [`RegistryError::UnknownKey`] naming the key, if it is not registered.
///
/// ```
/// use object_core::registry::{type_index_of, RegistryError};
/// assert_eq!(type_index_of("ffi.Object"), Ok(64));
/// assert!(matches!(type_index_of("no.such.Type"), Err(RegistryError::UnknownKey { .. })));
/// ```
pub fn type_index_of(key: &str) -> Result<u32, RegistryError> {
    let found = match adopt::adopted() {
        Some(host) => (host.type_info_by_key)(key).map(TypeInfo::index),
        None => registry().keys.get(key),
    };
    found.ok_or_else(|| RegistryError::UnknownKey {
        key: key.to_owned(),
    })
}

/// Whether an object whose type index is `index` is an instance of the type at
/// `target` (the run-time counterpart of `is::<T>()`, same algorithm).
pub fn is_instance_of_index(index: u32, target: u32) -> bool {
    match type_info(target) {
        Some(t) if t.is_object() => t.is_ancestor_or_self_of(index),
        _ => false,
    }
}

/// A snapshot of every registered type, in index order.
pub fn types() -> Vec<&'static TypeInfo> {
    if let Some(host) = adopt::adopted() {
        return (host.types)();
    }
    let reg = registry();
    let mut out: Vec<_> = reg
        .keys
        .values()
        .into_iter()
        .filter_map(table_get)
        .collect();
    out.sort_by_key(|i| i.index);
    out
}

/// Link-time registrations that were refused (a key claimed by two Rust types, a value
/// kind's key, unknown or final parents, bad or taken static indices), so a program can
/// report them all at start-up. A Rust type whose registration is listed here panics on
/// first use instead of getting an index that would let down-casts confuse it with
/// another type; a key claimed twice is registered for neither claimant.
pub fn link_errors() -> Vec<RegistryError> {
    if let Some(host) = adopt::adopted() {
        return (host.link_errors)();
    }
    registry().lock().link_errors.values().cloned().collect()
}

/// The static object types this workspace defines (in `object-core` and
/// `object-containers`), with the indices the tvm-ffi ecosystem gives them. A link-time
/// registration with exactly one of these (key, index) pairs is a *core* type: it always
/// keeps its index, and any other type claiming that index is refused with
/// [`RegistryError::StaticIndexTaken`], whatever the order of registration. (A type that
/// only borrows a core key, e.g. `ffi.Tensor` from another Rust type, is a
/// [`RegistryError::RustTypeConflict`] instead.) Between two non-core types on one
/// index, the smaller key keeps it.
pub const CORE_STATIC_TYPES: &[(u32, &str)] = &[
    (type_index::STRING, "ffi.String"),
    (type_index::BYTES, "ffi.Bytes"),
    (type_index::ERROR, "ffi.Error"),
    (type_index::FUNCTION, "ffi.Function"),
    (type_index::SHAPE, "ffi.Shape"),
    (type_index::TENSOR, "ffi.Tensor"),
    (type_index::ARRAY, "ffi.Array"),
    (type_index::MAP, "ffi.Map"),
    (type_index::MODULE, "ffi.Module"),
];

/// Whether `r` is one of the [`CORE_STATIC_TYPES`].
pub(crate) fn is_core_static(r: &TypeRegistration) -> bool {
    CORE_STATIC_TYPES.contains(&(r.static_index, r.key))
}
