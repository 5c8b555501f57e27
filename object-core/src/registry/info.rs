//! One registry entry ([`TypeInfo`]) and what `#[derive(Object)]` submits for a type
//! ([`TypeRegistration`]).

use core::any::TypeId;
use core::fmt;
use core::ops::Range;
use core::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::OnceLock;

use super::table::{display_check, table_get};
use crate::object_type::TypeCache;
use crate::reflection::TypeReflection;

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
    /// The type's cache (`ObjectType::type_cache()`): the registry fills it when the
    /// registration enters the registry (at its build for the collected ones), so that
    /// it is filled before any object of the type can exist.
    pub cache: &'static TypeCache,
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
    /// A [`register_type`](super::register_type) call (plugins, foreign languages, or a Rust type whose
    /// link-time registration was not collected).
    RunTime,
}

/// Everything the registry knows about one type. Immutable once published, except
/// for the "has an overflowed descendant" flag, which only ever goes from false to true.
pub struct TypeInfo {
    pub(super) index: u32,
    pub(super) key: &'static str,
    /// `crate::structural::stable_hash_str(key)`, computed once.
    pub(super) key_hash: u64,
    pub(super) parent: Option<u32>,
    pub(super) depth: u32,
    /// `ancestors[d]` is the index of the ancestor at depth `d`; the last is this type.
    pub(super) ancestors: &'static [u32],
    /// The first `DISPLAY_INLINE` ancestors again, inline (0 past the depth), so the
    /// overflow check reads them without following the slice pointer.
    pub(super) display: [u32; DISPLAY_INLINE],
    pub(super) range: Range<u32>,
    pub(super) slots: u32,
    pub(super) is_final: bool,
    pub(super) allow_overflow: bool,
    pub(super) origin: TypeOrigin,
    pub(super) owner: LayoutOwner,
    pub(super) overflowed: AtomicBool,
}

/// How many ancestors each entry (and each row of the table's display) holds inline.
pub(super) const DISPLAY_INLINE: usize = 8;

pub(super) fn inline_display(ancestors: &[u32]) -> [u32; DISPLAY_INLINE] {
    let mut d = [0; DISPLAY_INLINE];
    for (slot, a) in d.iter_mut().zip(ancestors) {
        *slot = *a;
    }
    d
}

/// Who defines the memory layout of a type's objects: a Rust type (through the derive),
/// or nobody beyond its parent (a run-time type whose objects `make_object_as` made with
/// a Rust ancestor's layout). The two are exclusive and decided once, by one atomic
/// transition, so a down-cast can never read a parent-sized object as a larger struct.
pub(super) struct LayoutOwner {
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
    pub(super) fn new(
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
            key_hash: crate::structural::stable_hash_str(key),
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
    /// A hash of the key, the same in every process and build (see
    /// [`structural`](crate::structural)): what structural hashes are seeded from.
    #[inline]
    pub fn key_hash(&self) -> u64 {
        self.key_hash
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

    /// Whether the type itself is declared `#[object(abstract)]` (a base that only its
    /// subtypes instantiate): [`create`](crate::reflection::create) refuses it. A
    /// run-time descendant of an abstract Rust type is not abstract.
    ///
    /// ```
    /// use object_core::prelude::*;
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.info.Shape", abstract)]
    /// struct Shape { base: Object }
    ///
    /// assert!(Shape::type_info().is_abstract());
    /// assert!(!Object::type_info().is_abstract());
    /// ```
    pub fn is_abstract(&self) -> bool {
        self.owner
            .rust
            .get()
            .is_some_and(|r| r.reflection.is_abstract())
    }

    /// The type's reflection: its Rust type's field table, or for a type without a Rust
    /// layout of its own (registered at run time), its nearest Rust ancestor's. Value
    /// kinds have an empty, opaque one.
    ///
    /// ```
    /// use object_core::prelude::*;
    /// use object_core::reflection::FieldKind;
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.info.Point")]
    /// struct Point { base: Object, x: i64, label: Option<String> }
    ///
    /// let refl = Point::type_info().reflection();
    /// let fields: Vec<_> = refl.reflected_fields().map(|f| (f.name(), f.kind())).collect();
    /// assert_eq!(fields, [("x", FieldKind::Int), ("label", FieldKind::Str)]);
    /// assert_eq!(refl.field("x").unwrap().offset(), core::mem::offset_of!(Point, x));
    /// assert!(refl.can_create() && !refl.is_opaque());
    /// ```
    #[inline]
    pub fn reflection(&self) -> &'static TypeReflection {
        match self.owner.rust.get() {
            Some(r) => r.reflection,
            None => self.inherited_reflection(),
        }
    }

    /// `reflection` of a type with no Rust struct of its own: its nearest Rust
    /// ancestor's (or none).
    #[inline(never)]
    fn inherited_reflection(&self) -> &'static TypeReflection {
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
    pub(super) fn claim_rust_layout(&self, r: &'static TypeRegistration) -> bool {
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
