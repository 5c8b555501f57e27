//! One registry entry ([`TypeInfo`]) and what `#[derive(Object)]` submits for a type
//! ([`TypeRegistration`]).

use core::any::TypeId;
use core::fmt;
use core::ops::Range;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::OnceLock;

use super::layout::{ForeignMaker, ForeignSeal, LayoutOwner, Sealed, TypeLayout};
use super::table::{display_check, table_get};
use super::RegistryError;
use crate::object_type::TypeCache;
use crate::reflection::{RuntimeFields, TypeReflection};

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
    /// `size_of` the struct: with `align` and the field table, the layout its objects
    /// have (see [`TypeLayout`]).
    pub size: u32,
    /// `align_of` the struct.
    pub align: u32,
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
    /// Who gave the type's objects their layout, decided once (see `layout.rs`).
    pub(super) sealed: OnceLock<Sealed>,
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
        fields: Option<&'static RuntimeFields>,
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
            sealed: match (rust, fields) {
                (Some(r), _) => OnceLock::from(Sealed::Rust(r)),
                (None, Some(f)) => OnceLock::from(Sealed::Fields(f)),
                (None, None) => OnceLock::new(),
            },
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
        self.rust_registration().map(|r| r.rust_name)
    }

    #[inline]
    fn rust_registration(&self) -> Option<&'static TypeRegistration> {
        match self.sealed.get() {
            Some(Sealed::Rust(r)) => Some(r),
            _ => None,
        }
    }

    /// Who gave the type's objects their layout: a Rust struct, a foreign maker (C, or
    /// `make_object_as` with an ancestor's layout), or nobody yet. Decided once: see
    /// [`TypeLayout`] for the rule every later claim is checked against.
    ///
    /// ```
    /// use object_core::registry::{register_type, LayoutOwner, TypeSpec};
    /// use object_core::{make_object_as, Object, ObjectType};
    ///
    /// assert!(matches!(
    ///     Object::type_info().layout_owner(),
    ///     LayoutOwner::Rust { rust_name: "object_core::Object", .. }
    /// ));
    /// let info = register_type(&TypeSpec::new("doc.owner.Tag", "ffi.Object")).unwrap();
    /// assert_eq!(info.layout_owner(), LayoutOwner::Open);
    /// let _tag = make_object_as(Object::new(), info.index()).unwrap();
    /// assert!(matches!(info.layout_owner(), LayoutOwner::Foreign { object_size: Some(16), .. }));
    /// ```
    pub fn layout_owner(&self) -> LayoutOwner {
        self.sealed.get().map_or(LayoutOwner::Open, Sealed::owner)
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
        match self.sealed.get() {
            Some(Sealed::Rust(r)) => r.reflection.is_abstract(),
            Some(Sealed::Fields(f)) => f.is_abstract(),
            _ => false,
        }
    }

    /// The run-time field table of a type registered with fields (Python's
    /// `@py_class`, C's `obj_type_register_fields`,
    /// [`TypeSpec::fields`](super::TypeSpec::fields)); `None` for every other type.
    ///
    /// ```
    /// use object_core::reflection::{FieldSpec, FieldType};
    /// use object_core::registry::{register_type, TypeSpec};
    ///
    /// let info = register_type(
    ///     &TypeSpec::new("doc.info.Tagged", "ffi.Object").fields(vec![FieldSpec::new("tag", FieldType::Str)]),
    /// )
    /// .unwrap();
    /// let fields = info.runtime_fields().unwrap();
    /// assert_eq!(fields.rust_ancestor_key(), "ffi.Object");
    /// assert_eq!(info.reflection().field("tag").unwrap().static_type_key(), "ffi.String");
    /// ```
    #[inline]
    pub fn runtime_fields(&self) -> Option<&'static RuntimeFields> {
        match self.sealed.get() {
            Some(Sealed::Fields(f)) => Some(f),
            _ => None,
        }
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
        match self.sealed.get() {
            Some(Sealed::Rust(r)) => r.reflection,
            _ => self.inherited_reflection(),
        }
    }

    /// `reflection` of a type with no Rust struct of its own: its nearest Rust
    /// ancestor's (or none).
    #[inline(never)]
    fn inherited_reflection(&self) -> &'static TypeReflection {
        let mut info = self;
        loop {
            match info.sealed.get() {
                Some(Sealed::Rust(r)) => return r.reflection,
                Some(Sealed::Fields(f)) => return f.reflection(),
                _ => {}
            }
            match info.parent() {
                Some(p) => info = p,
                None => return &crate::reflection::NO_REFLECTION,
            }
        }
    }

    /// The registration of the nearest ancestor-or-self whose layout a Rust struct owns
    /// (the part of this type's objects Rust code reads).
    pub(crate) fn rust_layout_ancestor(&self) -> Option<&'static TypeRegistration> {
        let mut info = self;
        loop {
            if let Some(r) = info.rust_registration() {
                return Some(r);
            }
            info = info.parent()?;
        }
    }

    /// Seals the type's layout as foreign (no Rust struct of its own) over `ancestor`,
    /// the nearest ancestor a Rust struct owns, with objects of `object_size` bytes of
    /// its own (`None` for a type strictly between the ancestor and the one whose object
    /// is made). Idempotent for an equal request.
    ///
    /// # Errors
    ///
    /// [`RegistryError::LayoutMismatch`]: a Rust struct owns the layout, or it was sealed
    /// over another layout or with another object size.
    pub(crate) fn seal_foreign(
        &self,
        maker: ForeignMaker,
        ancestor: &'static TypeRegistration,
        object_size: Option<u32>,
    ) -> Result<(), RegistryError> {
        let sealed = self.sealed.get_or_init(|| {
            Sealed::Foreign(ForeignSeal {
                maker,
                ancestor,
                object_size: AtomicU32::new(0),
            })
        });
        let refuse = |existing: &Sealed| {
            let requested = LayoutOwner::Foreign {
                maker,
                ancestor_key: ancestor.key,
                ancestor_layout: TypeLayout::of_registration(ancestor),
                object_size,
            };
            RegistryError::LayoutMismatch {
                key: self.key.to_owned(),
                existing: existing.owner().to_string(),
                requested: requested.to_string(),
            }
        };
        let Sealed::Foreign(f) = sealed else {
            return Err(refuse(sealed));
        };
        if !core::ptr::eq(f.ancestor, ancestor)
            && TypeLayout::of_registration(f.ancestor) != TypeLayout::of_registration(ancestor)
        {
            return Err(refuse(sealed));
        }
        if let Some(size) = object_size {
            match f
                .object_size
                .compare_exchange(0, size, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {}
                Err(held) if held == size => {}
                Err(_) => return Err(refuse(sealed)),
            }
        }
        Ok(())
    }

    /// Records that the Rust struct of `r` defines this layout, or checks that it agrees
    /// with the layout already sealed: another copy of the struct (a plugin's) must have
    /// an equal [`TypeLayout`]; over a foreign layout, the struct must add nothing to
    /// the Rust ancestor that layout is over.
    ///
    /// # Errors
    ///
    /// [`RegistryError::LayoutMismatch`] naming both layouts.
    pub(super) fn claim_rust_layout(
        &self,
        r: &'static TypeRegistration,
    ) -> Result<(), RegistryError> {
        let sealed = self.sealed.get_or_init(|| Sealed::Rust(r));
        let same = match sealed {
            Sealed::Rust(held) => {
                core::ptr::eq(*held, r)
                    || TypeLayout::of_registration(held) == TypeLayout::of_registration(r)
            }
            Sealed::Foreign(f) => {
                TypeLayout::of_registration(f.ancestor) == TypeLayout::of_registration(r)
            }
            // (Its objects are made through its run-time table only.)
            Sealed::Fields(_) => false,
        };
        if same {
            return Ok(());
        }
        let requested = LayoutOwner::Rust {
            rust_name: r.rust_name,
            layout: TypeLayout::of_registration(r),
        };
        Err(RegistryError::LayoutMismatch {
            key: self.key.to_owned(),
            existing: sealed.owner().to_string(),
            requested: requested.to_string(),
        })
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
