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
//! entry. Key → index (registration, deserialization, foreign front-ends) is a sharded
//! reader-writer map. Writers serialize on one mutex. Racing first uses and identical
//! re-registrations get the same index.
//!
//! Everything the registry allocates lives for the whole process and stays reachable
//! from its statics (ordered maps rather than hash tables, so leak checkers can see it).

use core::any::TypeId;
use core::fmt;
use core::ops::Range;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, Ordering};
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;
use std::sync::{Mutex, MutexGuard, OnceLock, RwLock};

use crate::object_type::TypeCache;
use crate::reflection::TypeReflection;
use crate::type_index;

/// What `#[derive(Object)]` records about a type, submitted at link time. Not public
/// API in its details: generated code builds it; read types through [`TypeInfo`].
#[derive(Debug)]
#[doc(hidden)]
pub struct TypeRegistration {
    pub key: &'static str,
    /// The parent's key; empty only for the root `ffi.Object`.
    pub parent_key: &'static str,
    pub slots: u32,
    pub is_final: bool,
    pub allow_overflow: bool,
    /// A fixed index in `64..128`, or 0 for a dynamically numbered type.
    pub static_index: u32,
    pub rust_type: fn() -> TypeId,
    pub rust_name: &'static str,
    /// The field table and type-erased entry points built by the derive.
    pub reflection: &'static TypeReflection,
}

/// An `inventory` entry pointing at a [`TypeRegistration`]. Not public API.
#[derive(Debug)]
#[doc(hidden)]
pub struct LinkedType(pub &'static TypeRegistration);

inventory::collect!(LinkedType);

/// Where a registry entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TypeOrigin {
    /// A value kind carried by `Any` (index below 64); not an object type.
    ValueKind,
    /// A link-time registration with a fixed static index.
    Static,
    /// A link-time registration numbered on first use.
    LinkTime,
    /// A [`register_type`] call (plugins, foreign languages, or a Rust type whose
    /// link-time registration was not collected).
    RunTime,
}

/// Everything the registry knows about one type. Immutable once published, except
/// for the "has an overflowed descendant" flag, which only ever goes from false to true.
pub struct TypeInfo {
    index: u32,
    key: &'static str,
    parent: Option<u32>,
    depth: u32,
    /// `ancestors[d]` is the index of the ancestor at depth `d`; the last is this type.
    ancestors: &'static [u32],
    /// The first `DISPLAY_INLINE` ancestors again, inline (0 past the depth), so the
    /// overflow check reads them without following the slice pointer.
    display: [u32; DISPLAY_INLINE],
    range: Range<u32>,
    slots: u32,
    is_final: bool,
    allow_overflow: bool,
    origin: TypeOrigin,
    owner: LayoutOwner,
    overflowed: AtomicBool,
}

/// Who defines the memory layout of a type's objects: a Rust type (through the derive),
/// or nobody beyond its parent (a run-time type whose objects `make_object_as` made with
/// a Rust ancestor's layout). The two are exclusive and decided once, by one atomic
/// transition, so a down-cast can never read a parent-sized object as a larger struct.
const DISPLAY_INLINE: usize = 8;

fn inline_display(ancestors: &[u32]) -> [u32; DISPLAY_INLINE] {
    let mut d = [0; DISPLAY_INLINE];
    for (slot, a) in d.iter_mut().zip(ancestors) {
        *slot = *a;
    }
    d
}

struct LayoutOwner {
    state: AtomicU8,
    rust: OnceLock<&'static TypeRegistration>,
}

const OWNER_OPEN: u8 = 0;
const OWNER_RUST: u8 = 1;
const OWNER_FOREIGN: u8 = 2;

impl LayoutOwner {
    fn new(rust: Option<&'static TypeRegistration>) -> Self {
        let owner = LayoutOwner {
            state: AtomicU8::new(OWNER_OPEN),
            rust: OnceLock::new(),
        };
        if let Some(r) = rust {
            owner.state.store(OWNER_RUST, Ordering::Relaxed);
            let _ = owner.rust.set(r);
        }
        owner
    }
}

impl TypeInfo {
    /// A fresh entry; depth comes from the parent, the display is filled by `publish`.
    #[allow(clippy::too_many_arguments)]
    fn new(
        index: u32,
        key: &'static str,
        parent: Option<&TypeInfo>,
        ancestors: &'static [u32],
        range: Range<u32>,
        slots: u32,
        (is_final, allow_overflow): (bool, bool),
        origin: TypeOrigin,
        rust: Option<&'static TypeRegistration>,
    ) -> TypeInfo {
        TypeInfo {
            index,
            key,
            parent: parent.map(|p| p.index),
            depth: parent.map_or(0, |p| p.depth + 1),
            ancestors,
            display: [0; DISPLAY_INLINE],
            range,
            slots,
            is_final,
            allow_overflow,
            origin,
            owner: LayoutOwner::new(rust),
            overflowed: AtomicBool::new(false),
        }
    }

    /// The type index.
    #[inline]
    pub fn index(&self) -> u32 {
        self.index
    }
    /// The unique type key.
    #[inline]
    pub fn key(&self) -> &'static str {
        self.key
    }
    /// The parent's index (`None` for the root and for value kinds).
    #[inline]
    pub fn parent_index(&self) -> Option<u32> {
        self.parent
    }
    /// The parent's entry.
    pub fn parent(&self) -> Option<&'static TypeInfo> {
        self.parent.and_then(table_get)
    }
    /// Distance from `ffi.Object` (0 for the root).
    #[inline]
    pub fn depth(&self) -> u32 {
        self.depth
    }
    /// The indices of the ancestors from the root down to this type itself.
    #[inline]
    pub fn ancestors(&self) -> &'static [u32] {
        self.ancestors
    }
    /// This type's index range: itself, its link-time subtree and its reserved slots.
    /// Descendants registered after their ancestors ran out of slots lie outside it.
    #[inline]
    pub fn range(&self) -> Range<u32> {
        self.range.clone()
    }
    /// Indices reserved for run-time descendants.
    #[inline]
    pub fn slots(&self) -> u32 {
        self.slots
    }
    /// Whether the type is final (has no descendants).
    #[inline]
    pub fn is_final(&self) -> bool {
        self.is_final
    }
    /// Whether descendants may be allocated outside this type's range.
    #[inline]
    pub fn allows_overflow(&self) -> bool {
        self.allow_overflow
    }
    /// Whether this is an object type (false for the value kinds below 64).
    #[inline]
    pub fn is_object(&self) -> bool {
        self.origin != TypeOrigin::ValueKind
    }
    /// Where the entry came from.
    #[inline]
    pub fn origin(&self) -> TypeOrigin {
        self.origin
    }
    /// The Rust type that registered this key through the derive, if any.
    #[inline]
    pub fn rust_name(&self) -> Option<&'static str> {
        self.owner.rust.get().map(|r| r.rust_name)
    }

    /// The type's reflection: its Rust type's field table, or for a type without a Rust
    /// layout of its own (registered at run time), its nearest Rust ancestor's. Value
    /// kinds have an empty, opaque one.
    pub fn reflection(&self) -> &'static TypeReflection {
        let mut info = self;
        loop {
            if let Some(r) = info.owner.rust.get() {
                return r.reflection;
            }
            match info.parent() {
                Some(p) => info = p,
                None => return &crate::reflection::NO_REFLECTION,
            }
        }
    }

    /// Marks the type's layout as its parent's (no Rust struct of its own), for
    /// `make_object_as`. Fails if a Rust type already claimed it.
    pub(crate) fn seal_foreign_layout(&self) -> bool {
        match self.owner.state.compare_exchange(
            OWNER_OPEN,
            OWNER_FOREIGN,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => true,
            Err(state) => state == OWNER_FOREIGN,
        }
    }

    /// Records that a Rust type defines this layout. Fails if objects were already made
    /// with a parent's layout under this type.
    fn claim_rust_layout(&self, r: &'static TypeRegistration) -> bool {
        match self.owner.state.compare_exchange(
            OWNER_OPEN,
            OWNER_RUST,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => {
                let _ = self.owner.rust.set(r);
                true
            }
            Err(state) => state == OWNER_RUST,
        }
    }
    /// Whether some descendant of this type lies outside its range.
    #[inline]
    pub fn has_overflowed_descendants(&self) -> bool {
        self.overflowed.load(Ordering::Relaxed)
    }

    /// Whether an object of type `index` is an instance of this type (the type itself
    /// or a descendant). O(1) and lock-free.
    ///
    /// ```
    /// use object_core::registry;
    /// let object = registry::type_info(64).unwrap();
    /// assert!(object.is_ancestor_or_self_of(64));
    /// ```
    #[inline]
    pub fn is_ancestor_or_self_of(&self, index: u32) -> bool {
        if self.is_final {
            return index == self.index;
        }
        index.wrapping_sub(self.range.start) < self.range.end - self.range.start
            || self.has_overflowed_descendant(index)
    }

    /// The out-of-range half of the instance check: is `index` a descendant that was
    /// allocated outside this type's range? Lock-free: a flag, then the display.
    #[inline(always)]
    pub(crate) fn has_overflowed_descendant(&self, index: u32) -> bool {
        // Relaxed suffices: the flag is set before the overflowed type is published,
        // and an object of that type can only reach us through synchronization that
        // happens after its type was looked up.
        if !self.overflowed.load(Ordering::Relaxed) {
            return false;
        }
        display_check(index, self.depth, self.index)
    }
}

/// Whether the type of an object with index `index` has `target` as its ancestor at
/// `depth` (the "display" check). Lock-free: for indices below 1024 and depths below 8,
/// one load from a flat table and one compare; otherwise the entry's ancestor array.
#[inline(always)]
pub(crate) fn display_check(index: u32, depth: u32, target: u32) -> bool {
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
static DISPLAY: [[core::sync::atomic::AtomicU32; DISPLAY_INLINE]; CHUNK_LEN] =
    [const { [const { core::sync::atomic::AtomicU32::new(0) }; DISPLAY_INLINE] }; CHUNK_LEN];

impl fmt::Debug for TypeInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypeInfo")
            .field("index", &self.index)
            .field("key", &self.key)
            .field("parent", &self.parent)
            .field("depth", &self.depth)
            .field("range", &self.range)
            .field("slots", &self.slots)
            .field("is_final", &self.is_final)
            .field("allow_overflow", &self.allow_overflow)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

/// A type to register at run time with [`register_type`].
///
/// ```
/// use object_core::registry::{register_type, TypeSpec};
///
/// let info = register_type(&TypeSpec::new("doc.spec.Node", "ffi.Object").slots(4)).unwrap();
/// assert_eq!(info.key(), "doc.spec.Node");
/// assert_eq!(info.range().len(), 5);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeSpec {
    key: String,
    parent: String,
    slots: u32,
    is_final: bool,
    allow_overflow: bool,
}

impl TypeSpec {
    /// A non-final type with no reserved slots that allows overflow.
    pub fn new(key: impl Into<String>, parent_key: impl Into<String>) -> Self {
        TypeSpec {
            key: key.into(),
            parent: parent_key.into(),
            slots: 0,
            is_final: false,
            allow_overflow: true,
        }
    }
    /// Reserve `n` indices for descendants registered later.
    pub fn slots(mut self, n: u32) -> Self {
        self.slots = n;
        self
    }
    /// Declare the type final.
    pub fn final_type(mut self, yes: bool) -> Self {
        self.is_final = yes;
        self
    }
    /// Allow or refuse descendants outside this type's range.
    pub fn overflow(mut self, allow: bool) -> Self {
        self.allow_overflow = allow;
        self
    }
    fn describe(&self) -> String {
        describe(&self.parent, self.slots, self.is_final, self.allow_overflow)
    }
}

fn describe(parent: &str, slots: u32, is_final: bool, overflow: bool) -> String {
    format!("parent `{parent}`, slots {slots}, final {is_final}, overflow {overflow}")
}

/// Why a type could not be registered or found. Every variant names the key.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryError {
    /// The key exists with a different parent, slots, finality or overflow policy.
    DuplicateKey {
        /// The key.
        key: String,
        /// The existing registration.
        existing: String,
        /// The conflicting request.
        requested: String,
    },
    /// Two different Rust types claim the same key.
    RustTypeConflict {
        /// The key.
        key: String,
        /// The Rust type that holds it.
        first: String,
        /// The Rust type that was refused.
        second: String,
    },
    /// The parent key is not registered.
    UnknownParent {
        /// The key.
        key: String,
        /// The missing parent.
        parent: String,
    },
    /// The parent is a value kind, not an object type.
    ParentNotObject {
        /// The key.
        key: String,
        /// The parent.
        parent: String,
    },
    /// The parent is final.
    FinalParent {
        /// The key.
        key: String,
        /// The final parent.
        parent: String,
    },
    /// No ancestor had room and `ancestor` refuses descendants outside its range.
    SlotsExhausted {
        /// The key.
        key: String,
        /// The ancestor that refuses overflow.
        ancestor: String,
    },
    /// A static index outside `65..128`, or combined with slots.
    BadStaticIndex {
        /// The key.
        key: String,
        /// The requested index.
        index: u32,
        /// What is wrong with it.
        reason: String,
    },
    /// Link-time parents form a cycle, or a type's ancestry never reaches the root.
    Cycle {
        /// The key.
        key: String,
    },
    /// The type table is full.
    TableFull {
        /// The key.
        key: String,
    },
    /// An object of type `key` was asked to be made as a `of`, which is not its
    /// ancestor (or not layout-compatible with it).
    NotAnInstance {
        /// The type asked for.
        key: String,
        /// The Rust object type that would hold it.
        of: String,
    },
    /// A Rust type tried to claim a run-time type whose objects were already made with
    /// a parent's layout (`make_object_as`).
    LayoutTaken {
        /// The key.
        key: String,
        /// The Rust type that was refused.
        rust: String,
    },
    /// A look-up of a key that is not registered.
    UnknownKey {
        /// The key.
        key: String,
    },
    /// The key is a value kind's (`"int"`, `"None"`, `"ffi.SmallStr"`, …: the types
    /// `Any` carries below index 64), which can never name an object type.
    ValueKindKey {
        /// The key.
        key: String,
    },
    /// A final type asked for reserved slots, which only descendants could use.
    FinalWithSlots {
        /// The key.
        key: String,
        /// The slots asked for.
        slots: u32,
    },
    /// Two link-time types claim one static index. A core type (see
    /// [`CORE_STATIC_TYPES`]) always keeps its index; between other types, the one
    /// with the smaller key does. The other is refused with this error.
    StaticIndexTaken {
        /// The refused type's key.
        key: String,
        /// The index both claim.
        index: u32,
        /// The key of the type that holds the index.
        holder: String,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::DuplicateKey { key, existing, requested } => write!(
                f,
                "type key `{key}` is already registered with {existing}; refusing {requested}"
            ),
            RegistryError::RustTypeConflict { key, first, second } => write!(
                f,
                "type key `{key}` is claimed by two Rust types: `{first}` and `{second}`"
            ),
            RegistryError::UnknownParent { key, parent } => {
                write!(f, "type `{key}` names parent `{parent}`, which is not registered")
            }
            RegistryError::ParentNotObject { key, parent } => {
                write!(f, "type `{key}` names parent `{parent}`, which is a value kind, not an object type")
            }
            RegistryError::FinalParent { key, parent } => {
                write!(f, "type `{key}` cannot derive from `{parent}`, which is final")
            }
            RegistryError::SlotsExhausted { key, ancestor } => write!(
                f,
                "type `{key}` does not fit the reserved slots of its ancestors, and `{ancestor}` refuses overflow"
            ),
            RegistryError::BadStaticIndex { key, index, reason } => {
                write!(f, "type `{key}` asks for static index {index}: {reason}")
            }
            RegistryError::Cycle { key } => {
                write!(f, "the ancestry of type `{key}` does not reach `ffi.Object` (a cycle)")
            }
            RegistryError::TableFull { key } => {
                write!(f, "the type table is full; cannot register `{key}`")
            }
            RegistryError::NotAnInstance { key, of } => write!(
                f,
                "type `{key}` is not `{of}` or a run-time descendant of it without Rust fields"
            ),
            RegistryError::LayoutTaken { key, rust } => write!(
                f,
                "Rust type `{rust}` cannot claim type `{key}`: objects of it were already made with a parent's layout"
            ),
            RegistryError::UnknownKey { key } => write!(f, "type key `{key}` is not registered"),
            RegistryError::ValueKindKey { key } => write!(
                f,
                "type key `{key}` names a value kind carried by `Any`, not an object type; it cannot be registered"
            ),
            RegistryError::FinalWithSlots { key, slots } => write!(
                f,
                "type `{key}` is final but reserves {slots} slot(s) for descendants; a final type has none"
            ),
            RegistryError::StaticIndexTaken { key, index, holder } => write!(
                f,
                "type `{key}` asks for static index {index}, which `{holder}` holds"
            ),
        }
    }
}

impl std::error::Error for RegistryError {}

// ---------------------------------------------------------------------------------
// The index → info table: two levels of atomically published pointers.
// ---------------------------------------------------------------------------------

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
fn table_get(index: u32) -> Option<&'static TypeInfo> {
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
fn publish(mut info: TypeInfo) -> &'static TypeInfo {
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

// ---------------------------------------------------------------------------------
// The registry proper.
// ---------------------------------------------------------------------------------

struct Registry {
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
    registry();
    table_get(index)
}

/// The entry for a type key, if one is registered.
pub fn type_info_by_key(key: &str) -> Option<&'static TypeInfo> {
    registry().lookup(key)
}

/// The index of a type key, or an error naming the key.
///
/// ```
/// use object_core::registry::{type_index_of, RegistryError};
/// assert_eq!(type_index_of("ffi.Object"), Ok(64));
/// assert!(matches!(type_index_of("no.such.Type"), Err(RegistryError::UnknownKey { .. })));
/// ```
pub fn type_index_of(key: &str) -> Result<u32, RegistryError> {
    registry()
        .keys
        .get(key)
        .ok_or_else(|| RegistryError::UnknownKey {
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
    registry().lock().link_errors.values().cloned().collect()
}

/// Registers a type at run time (plugins, foreign languages, generated types).
///
/// The new type takes `slots + 1` indices from the reserved slots of its nearest
/// ancestor with room, or overflows past the end of the table when every ancestor it
/// falls outside allows it. Registering an existing key with the same parent, slots,
/// finality and overflow policy returns the existing entry.
///
/// # Errors
///
/// [`RegistryError`] naming the key: a duplicate key that differs, a value kind's key
/// (`"int"`, …), an unknown, final or non-object parent, a final type with slots, slots
/// exhausted where overflow is refused, a full table.
///
/// ```
/// use object_core::registry::{register_type, RegistryError, TypeSpec};
///
/// let a = register_type(&TypeSpec::new("doc.reg.Base", "ffi.Object").slots(1)).unwrap();
/// let b = register_type(&TypeSpec::new("doc.reg.Child", "doc.reg.Base")).unwrap();
/// assert!(a.is_ancestor_or_self_of(b.index()));
/// // Identical re-registration is idempotent; a different one is an error.
/// assert_eq!(register_type(&TypeSpec::new("doc.reg.Child", "doc.reg.Base")).unwrap().index(), b.index());
/// assert!(matches!(
///     register_type(&TypeSpec::new("doc.reg.Child", "ffi.Object")),
///     Err(RegistryError::DuplicateKey { .. })
/// ));
/// ```
pub fn register_type(spec: &TypeSpec) -> Result<&'static TypeInfo, RegistryError> {
    let reg = registry();
    let mut w = reg.lock();
    if let Some(existing) = reg.lookup(&spec.key) {
        if !existing.is_object() {
            return Err(RegistryError::ValueKindKey {
                key: spec.key.clone(),
            });
        }
        return same_or_duplicate(existing, spec);
    }
    let key = KeyName::Owned(&spec.key);
    let parent = reg
        .lookup(&spec.parent)
        .ok_or_else(|| RegistryError::UnknownParent {
            key: spec.key.clone(),
            parent: spec.parent.clone(),
        })?;
    place_runtime(
        reg,
        &mut w,
        key,
        parent,
        spec.slots,
        spec.is_final,
        spec.allow_overflow,
        None,
    )
}

fn same_or_duplicate(
    existing: &'static TypeInfo,
    spec: &TypeSpec,
) -> Result<&'static TypeInfo, RegistryError> {
    let parent_key = existing.parent().map_or("", |p| p.key);
    if parent_key == spec.parent
        && existing.slots == spec.slots
        && existing.is_final == spec.is_final
        && existing.allow_overflow == spec.allow_overflow
    {
        Ok(existing)
    } else {
        Err(RegistryError::DuplicateKey {
            key: spec.key.clone(),
            existing: describe(
                parent_key,
                existing.slots,
                existing.is_final,
                existing.allow_overflow,
            ),
            requested: spec.describe(),
        })
    }
}

/// Resolves a derive-registered Rust type to its entry: normally found in the table
/// built at first use; registered at run time if its link-time entry was not collected
/// (e.g. a type in a library loaded later).
pub(crate) fn resolve_rust_type(
    r: &'static TypeRegistration,
    cache: &'static TypeCache,
) -> Result<&'static TypeInfo, RegistryError> {
    let reg = registry();
    let mut w = reg.lock();
    if let Some(err) = w.link_errors.get(r.key) {
        return Err(err.clone());
    }
    let tid = (r.rust_type)();
    let info = match reg.lookup(r.key) {
        Some(existing) if !existing.is_object() => {
            return Err(RegistryError::ValueKindKey {
                key: r.key.to_owned(),
            });
        }
        Some(existing) => {
            let spec = spec_of(r);
            same_or_duplicate(existing, &spec)?;
            existing
        }
        None => {
            if r.static_index != 0 {
                check_static_index(r)?;
                let parent =
                    reg.lookup(r.parent_key)
                        .ok_or_else(|| RegistryError::UnknownParent {
                            key: r.key.to_owned(),
                            parent: r.parent_key.to_owned(),
                        })?;
                place_static(reg, &w, r, parent)?
            } else {
                let parent =
                    reg.lookup(r.parent_key)
                        .ok_or_else(|| RegistryError::UnknownParent {
                            key: r.key.to_owned(),
                            parent: r.parent_key.to_owned(),
                        })?;
                place_runtime(
                    reg,
                    &mut w,
                    KeyName::Static(r.key),
                    parent,
                    r.slots,
                    r.is_final,
                    r.allow_overflow,
                    Some(r),
                )?
            }
        }
    };
    let info = match w.claimed.get(&info.index) {
        Some(&(held, name)) if held != tid => Err(RegistryError::RustTypeConflict {
            key: r.key.to_owned(),
            first: name.to_owned(),
            second: r.rust_name.to_owned(),
        }),
        Some(_) => Ok(info),
        None => {
            if !info.claim_rust_layout(r) {
                return Err(RegistryError::LayoutTaken {
                    key: r.key.to_owned(),
                    rust: r.rust_name.to_owned(),
                });
            }
            w.claimed.insert(info.index, (tid, r.rust_name));
            Ok(info)
        }
    }?;
    // Still under the writer lock: no overflow can be registered between reading the
    // entry's flag and recording the cache that must follow it.
    cache.publish(info);
    let caches = w.caches.entry(info.index).or_default();
    if !caches.iter().any(|c| core::ptr::eq(*c, cache)) {
        caches.push(cache);
    }
    Ok(info)
}

fn spec_of(r: &TypeRegistration) -> TypeSpec {
    TypeSpec {
        key: r.key.to_owned(),
        parent: r.parent_key.to_owned(),
        slots: r.slots,
        is_final: r.is_final,
        allow_overflow: r.allow_overflow,
    }
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
fn is_core_static(r: &TypeRegistration) -> bool {
    CORE_STATIC_TYPES.contains(&(r.static_index, r.key))
}

fn check_static_index(r: &TypeRegistration) -> Result<(), RegistryError> {
    let bad = |reason: &str| RegistryError::BadStaticIndex {
        key: r.key.to_owned(),
        index: r.static_index,
        reason: reason.to_owned(),
    };
    if !(type_index::STATIC_OBJECT_BEGIN + 1..type_index::DYNAMIC_OBJECT_BEGIN)
        .contains(&r.static_index)
    {
        return Err(bad("static indices lie in 65..128"));
    }
    if r.slots != 0 {
        return Err(bad("static types cannot reserve slots"));
    }
    if let Some(holder) = table_get(r.static_index) {
        return Err(RegistryError::StaticIndexTaken {
            key: r.key.to_owned(),
            index: r.static_index,
            holder: holder.key.to_owned(),
        });
    }
    Ok(())
}

fn ancestors_with(parent: &TypeInfo, index: u32) -> &'static [u32] {
    let mut v = Vec::with_capacity(parent.ancestors.len() + 1);
    v.extend_from_slice(parent.ancestors);
    v.push(index);
    Box::leak(v.into_boxed_slice())
}

fn check_parent(key: &str, parent: &TypeInfo) -> Result<(), RegistryError> {
    if !parent.is_object() {
        return Err(RegistryError::ParentNotObject {
            key: key.to_owned(),
            parent: parent.key.to_owned(),
        });
    }
    if parent.is_final {
        return Err(RegistryError::FinalParent {
            key: key.to_owned(),
            parent: parent.key.to_owned(),
        });
    }
    Ok(())
}

/// A key that is either already `'static` (derive registrations) or borrowed from a
/// run-time request (leaked only once the registration succeeds).
#[derive(Clone, Copy)]
enum KeyName<'a> {
    Static(&'static str),
    Owned(&'a str),
}

impl KeyName<'_> {
    fn as_str(&self) -> &str {
        match self {
            KeyName::Static(s) => s,
            KeyName::Owned(s) => s,
        }
    }
    fn into_static(self) -> &'static str {
        match self {
            KeyName::Static(s) => s,
            KeyName::Owned(s) => Box::leak(s.to_owned().into_boxed_str()),
        }
    }
}

/// Allocates `slots + 1` indices for a new type under `parent` and publishes it.
#[allow(clippy::too_many_arguments)]
fn place_runtime(
    reg: &Registry,
    w: &mut Writer,
    key: KeyName<'_>,
    parent: &'static TypeInfo,
    slots: u32,
    is_final: bool,
    allow_overflow: bool,
    rust: Option<&'static TypeRegistration>,
) -> Result<&'static TypeInfo, RegistryError> {
    let name = key.as_str();
    check_parent(name, parent)?;
    if is_final && slots != 0 {
        return Err(RegistryError::FinalWithSlots {
            key: name.to_owned(),
            slots,
        });
    }
    let need = slots
        .checked_add(1)
        .ok_or_else(|| RegistryError::TableFull {
            key: name.to_owned(),
        })?;
    // Walk up from the parent to the nearest ancestor with room; each ancestor we pass
    // will not contain the new type, so it must allow overflow.
    let mut container = Some(parent);
    let mut start = None;
    while let Some(a) = container {
        if a.depth == 0 {
            break; // the root contains everything; allocate at the end of the table
        }
        let free = w.free_slot.get(&a.index).copied().unwrap_or(a.range.end);
        if u64::from(free) + u64::from(need) <= u64::from(a.range.end) {
            start = Some(free);
            w.free_slot.insert(a.index, free + need);
            break;
        }
        if !a.allow_overflow {
            return Err(RegistryError::SlotsExhausted {
                key: name.to_owned(),
                ancestor: a.key.to_owned(),
            });
        }
        container = a.parent();
    }
    let index = match start {
        Some(i) => i,
        None => {
            let i = w.next;
            if u64::from(i) + u64::from(need) > u64::from(MAX_TYPES) {
                return Err(RegistryError::TableFull {
                    key: name.to_owned(),
                });
            }
            w.next = i + need;
            i
        }
    };
    mark_overflow(w, parent, index);
    // Only now that the type is accepted does its key become process-lifetime.
    let key = key.into_static();
    let info = TypeInfo::new(
        index,
        key,
        Some(parent),
        ancestors_with(parent, index),
        index..index + need,
        slots,
        (is_final, allow_overflow),
        TypeOrigin::RunTime,
        rust,
    );
    if slots > 0 {
        w.free_slot.insert(index, index + 1);
    }
    let info = publish(info);
    reg.keys.insert(key, index);
    Ok(info)
}

/// Flags every ancestor (from `parent` up) whose range does not contain `index`, in
/// its entry and in the caches of the Rust types that hold it.
fn mark_overflow(w: &Writer, parent: &TypeInfo, index: u32) {
    let mut a = Some(parent);
    while let Some(t) = a {
        if !t.range.contains(&index) {
            t.overflowed.store(true, Ordering::Relaxed);
            for c in w.caches.get(&t.index).into_iter().flatten() {
                c.set_overflow();
            }
        }
        a = t.parent();
    }
}

fn place_static(
    reg: &Registry,
    w: &Writer,
    r: &'static TypeRegistration,
    parent: &'static TypeInfo,
) -> Result<&'static TypeInfo, RegistryError> {
    check_parent(r.key, parent)?;
    let index = r.static_index;
    if !parent.range.contains(&index) && !parent.allow_overflow {
        return Err(RegistryError::SlotsExhausted {
            key: r.key.to_owned(),
            ancestor: parent.key.to_owned(),
        });
    }
    mark_overflow(w, parent, index);
    let info = publish(TypeInfo::new(
        index,
        r.key,
        Some(parent),
        ancestors_with(parent, index),
        index..index + 1,
        0,
        (r.is_final, r.allow_overflow),
        TypeOrigin::Static,
        Some(r),
    ));
    reg.keys.insert(r.key, index);
    Ok(info)
}

/// Builds the registry on first use from every link-time registration.
fn build() -> Registry {
    let reg = Registry {
        keys: KeyMap::new(),
        writer: Mutex::new(Writer::default()),
    };
    let mut w = Writer {
        next: type_index::DYNAMIC_OBJECT_BEGIN,
        ..Writer::default()
    };

    for &(index, key) in type_index::VALUE_KINDS {
        publish(TypeInfo::new(
            index,
            key,
            None,
            &[],
            index..index + 1,
            0,
            (true, false),
            TypeOrigin::ValueKind,
            None,
        ));
        reg.keys.insert(key, index);
    }

    // Gather link-time registrations by key; two Rust types on one key is a conflict.
    let mut all: Vec<&'static TypeRegistration> = inventory::iter::<LinkedType>
        .into_iter()
        .map(|l| l.0)
        .collect();
    all.sort_by(|a, b| (a.key, a.rust_name).cmp(&(b.key, b.rust_name)));
    let mut by_key: HashMap<&'static str, &'static TypeRegistration> = HashMap::new();
    for r in &all {
        // Registrations that can never be placed, whatever else is linked.
        if reg.keys.get(r.key).is_some() {
            // Only the value kinds are registered yet.
            w.link_errors.insert(
                r.key,
                RegistryError::ValueKindKey {
                    key: r.key.to_owned(),
                },
            );
            continue;
        }
        if r.is_final && r.slots != 0 {
            w.link_errors.insert(
                r.key,
                RegistryError::FinalWithSlots {
                    key: r.key.to_owned(),
                    slots: r.slots,
                },
            );
            continue;
        }
        match by_key.get(r.key) {
            None => {
                by_key.insert(r.key, r);
            }
            Some(first) if (first.rust_type)() == (r.rust_type)() => {}
            Some(first) => {
                // Neither claimant gets the key: picking one would be arbitrary, and a
                // shared index would let down-casts confuse the two layouts.
                w.link_errors.insert(
                    r.key,
                    RegistryError::RustTypeConflict {
                        key: r.key.to_owned(),
                        first: first.rust_name.to_owned(),
                        second: r.rust_name.to_owned(),
                    },
                );
            }
        }
    }
    for key in w.link_errors.keys() {
        by_key.remove(key);
    }
    // (`by_key` and `children` below are temporary; only what is published stays.)

    // The root.
    let root_key = type_index::OBJECT_KEY;
    let root = publish(TypeInfo::new(
        type_index::OBJECT,
        root_key,
        None,
        &[type_index::OBJECT],
        type_index::OBJECT..u32::MAX,
        0,
        (false, true),
        TypeOrigin::Static,
        Some(&crate::root::ROOT_REGISTRATION),
    ));
    reg.keys.insert(root_key, root.index);
    if let Some(r) = by_key.get(root_key) {
        w.claimed.insert(root.index, ((r.rust_type)(), r.rust_name));
    }

    // Static types, parents before children (ascending index, parents must be lower).
    // The root has a static index too, but is placed above. Of two types claiming one
    // index, the first placed keeps it and the other is refused (`StaticIndexTaken`):
    // a core type first, then by key, so the outcome never depends on hash order.
    let mut statics: Vec<_> = by_key
        .values()
        .copied()
        .filter(|r| r.static_index != 0 && r.key != root_key)
        .collect();
    statics.sort_by_key(|r| (r.static_index, !is_core_static(r), r.key));
    for r in statics {
        let res = check_static_index(r).and_then(|()| {
            let parent = reg
                .lookup(r.parent_key)
                .ok_or_else(|| RegistryError::BadStaticIndex {
                    key: r.key.to_owned(),
                    index: r.static_index,
                    reason: format!(
                        "the parent `{}` must be a static type with a lower index",
                        r.parent_key
                    ),
                })?;
            place_static(&reg, &w, r, parent)
        });
        match res {
            Ok(info) => {
                w.claimed.insert(info.index, ((r.rust_type)(), r.rust_name));
            }
            Err(e) => {
                w.link_errors.insert(r.key, e);
            }
        }
    }

    // Dynamic link-time types: pre-order over the forest hanging off known types.
    let mut children: HashMap<&'static str, Vec<&'static TypeRegistration>> = HashMap::new();
    for r in by_key
        .values()
        .filter(|r| r.static_index == 0 && r.key != root_key)
    {
        children.entry(r.parent_key).or_default().push(r);
    }
    for list in children.values_mut() {
        list.sort_by_key(|r| r.key);
    }
    let mut anchors: Vec<&'static TypeInfo> =
        children.keys().filter_map(|k| reg.lookup(k)).collect();
    anchors.sort_by_key(|i| i.index);
    for anchor in anchors {
        let Some(kids) = children.remove(anchor.key) else {
            continue;
        };
        for r in kids {
            if let Err(e) = check_parent(r.key, anchor) {
                reject_subtree(&mut w, &mut children, r, e);
                continue;
            }
            if !anchor.range.contains(&w.next) && !anchor.allow_overflow {
                let e = RegistryError::SlotsExhausted {
                    key: r.key.to_owned(),
                    ancestor: anchor.key.to_owned(),
                };
                reject_subtree(&mut w, &mut children, r, e);
                continue;
            }
            mark_overflow(&w, anchor, w.next);
            preorder(&reg, &mut w, &mut children, r, anchor);
        }
    }
    // Whatever is left hangs off an unknown key, or off a cycle.
    let left: Vec<_> = children.drain().collect();
    for (parent_key, kids) in left {
        for r in kids {
            let e = if by_key.contains_key(parent_key) {
                RegistryError::Cycle {
                    key: r.key.to_owned(),
                }
            } else {
                RegistryError::UnknownParent {
                    key: r.key.to_owned(),
                    parent: parent_key.to_owned(),
                }
            };
            w.link_errors.insert(r.key, e);
        }
    }

    *reg.writer.lock().unwrap_or_else(|e| e.into_inner()) = w;
    reg
}

fn reject_subtree(
    w: &mut Writer,
    children: &mut HashMap<&'static str, Vec<&'static TypeRegistration>>,
    r: &'static TypeRegistration,
    e: RegistryError,
) {
    w.link_errors.insert(r.key, e);
    for c in children.remove(r.key).unwrap_or_default() {
        let e = RegistryError::UnknownParent {
            key: c.key.to_owned(),
            parent: r.key.to_owned(),
        };
        reject_subtree(w, children, c, e);
    }
}

/// Numbers `r` and its link-time subtree in pre-order, then reserves `r.slots`.
fn preorder(
    reg: &Registry,
    w: &mut Writer,
    children: &mut HashMap<&'static str, Vec<&'static TypeRegistration>>,
    r: &'static TypeRegistration,
    parent: &TypeInfo,
) {
    let index = w.next;
    w.next += 1;
    let ancestors = ancestors_with(parent, index);
    // Children need this type's entry (for their ancestry and parent checks) before its
    // range end is known, so they are numbered against a provisional view.
    let kids = children.remove(r.key).unwrap_or_default();
    let provisional = TypeInfo::new(
        index,
        r.key,
        Some(parent),
        ancestors,
        index..index + 1,
        r.slots,
        (r.is_final, r.allow_overflow),
        TypeOrigin::LinkTime,
        Some(r),
    );
    let mut placed = Vec::new();
    for c in kids {
        if let Err(e) = check_parent(c.key, &provisional) {
            reject_subtree(w, children, c, e);
            continue;
        }
        placed.push(c);
    }
    // The children's entries point at their parent by index; publishing the parent
    // last is fine because nothing reads the table until the build completes.
    for c in placed {
        preorder(reg, w, children, c, &provisional);
    }
    let end = w.next + r.slots;
    w.next = end;
    if r.slots > 0 {
        w.free_slot.insert(index, end - r.slots);
    }
    publish(TypeInfo::new(
        index,
        r.key,
        Some(parent),
        ancestors,
        index..end,
        r.slots,
        (r.is_final, r.allow_overflow),
        TypeOrigin::LinkTime,
        Some(r),
    ));
    reg.keys.insert(r.key, index);
    w.claimed.insert(index, ((r.rust_type)(), r.rust_name));
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn late(key: &'static str, name: &'static str) -> TypeRegistration {
        TypeRegistration {
            key,
            parent_key: type_index::OBJECT_KEY,
            slots: 0,
            is_final: false,
            allow_overflow: true,
            static_index: 0,
            rust_type: TypeId::of::<u8>,
            rust_name: name,
            reflection: &crate::reflection::NO_REFLECTION,
        }
    }

    // Registrations inventory never collected (as for a library loaded later).
    static SEALED: TypeRegistration = late("unit.Sealed", "unit::Sealed");
    static CLAIMED: TypeRegistration = late("unit.Claimed", "unit::Claimed");
    static UNCOLLECTED: TypeRegistration = late("unit.Uncollected", "unit::Uncollected");
    static CACHE_SEALED: TypeCache = TypeCache::new();
    static CACHE_CLAIMED: TypeCache = TypeCache::new();
    static CACHE_UNCOLLECTED: TypeCache = TypeCache::new();

    /// A type whose objects were made with a parent's layout can never be claimed by a
    /// Rust struct afterwards (a down-cast would read past the allocation), and a type a
    /// Rust struct claimed can never be sealed.
    #[test]
    fn layout_ownership_is_decided_once() {
        let sealed = register_type(&TypeSpec::new("unit.Sealed", "ffi.Object")).unwrap();
        assert!(sealed.seal_foreign_layout());
        assert!(sealed.seal_foreign_layout(), "sealing is idempotent");
        let err = resolve_rust_type(&SEALED, &CACHE_SEALED).unwrap_err();
        assert!(matches!(err, RegistryError::LayoutTaken { .. }), "{err}");

        let claimed = register_type(&TypeSpec::new("unit.Claimed", "ffi.Object")).unwrap();
        let info = resolve_rust_type(&CLAIMED, &CACHE_CLAIMED).unwrap();
        assert_eq!(info.index(), claimed.index());
        assert_eq!(info.rust_name(), Some("unit::Claimed"));
        assert!(!claimed.seal_foreign_layout());
    }

    /// A Rust type whose link-time registration was not collected (say, in a library
    /// loaded later) is registered on first use, under its parent.
    #[test]
    fn uncollected_rust_types_register_on_first_use() {
        let info = resolve_rust_type(&UNCOLLECTED, &CACHE_UNCOLLECTED).unwrap();
        assert_eq!(info.origin(), TypeOrigin::RunTime);
        assert_eq!(info.parent_index(), Some(type_index::OBJECT));
        assert_eq!(type_index_of("unit.Uncollected"), Ok(info.index()));
    }

    /// The root has its own static index (64, below the range the derive may ask for)
    /// and is placed before the static types: it is not one of them, and not an error.
    #[test]
    fn the_root_is_not_a_link_error() {
        let errors = link_errors();
        assert!(
            errors
                .iter()
                .all(|e| !e.to_string().contains("`ffi.Object`")),
            "{errors:?}"
        );
        let info = <crate::Object as crate::ObjectType>::type_info();
        assert_eq!(info.index(), type_index::OBJECT);
        assert_eq!(info.rust_name(), Some("object_core::Object"));
    }
}
