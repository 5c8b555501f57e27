//! Layouts: what a type's objects look like in memory, decided once per type.
//!
//! A down-cast reads an object as the Rust struct of its type, so every object of a type
//! must have the layout that struct describes — including objects made outside this
//! copy of the code: by C (`obj_object_init`), by `make_object_as` with an ancestor's
//! layout, or by a plugin built from another version of a shared crate. So each entry
//! records the layout its first owner gave it, *sealed* by whoever first makes an object
//! of it or first claims it from Rust, and every later claim is checked against it:
//!
//! - **A Rust struct** (the derive) owns its type's layout: [`TypeLayout`] is its size,
//!   its alignment and a fingerprint of its field table (every field's name, offset,
//!   kind, flags, in-place layout tag and Rust type, in table order). A link-time type
//!   is sealed when the registry is built; a run-time one on its first use. Another copy
//!   of the same type (a plugin's) is accepted only with an equal layout.
//! - **A foreign layout**: objects made without a Rust struct of their own. The type's
//!   nearest ancestor owned by a Rust struct gives the part Rust reads, and the objects
//!   may be larger (C's own fields after it). The first maker seals the size of the
//!   type's objects; another size is refused. A Rust struct may claim such a type later
//!   only if it adds nothing to its Rust ancestor (equal layouts): it would otherwise
//!   read bytes that are C's, or past the object.
//! - **A run-time field table** ([`RuntimeFields`]): a type registered with fields
//!   (Python's `@py_class`, C's `obj_type_register_fields`, `TypeSpec::fields`). Its
//!   objects start with its nearest Rust ancestor's struct, then one cell per run-time
//!   field, the table's address in the word before them (see `reflection::runtime`).
//!   Sealed when the type is registered; neither C (`obj_object_init`) nor
//!   `make_object_as` nor a Rust struct can claim it afterwards: its objects are made
//!   through its table only.
//! - The three are exclusive: a type sealed by one can never be sealed by another, so
//!   C cannot make objects of a Rust struct's type (`ffi.Array`, any derive type), and a
//!   Rust struct cannot claim a C type whose objects are not its own layout.

use core::fmt;
use core::sync::atomic::{AtomicU32, Ordering};

use super::info::TypeRegistration;
use crate::reflection::{RuntimeFields, TypeReflection};

/// The memory layout of a type's objects as a Rust struct describes it: size, alignment
/// and a fingerprint of the field table.
///
/// ```
/// use object_core::prelude::*;
/// use object_core::registry::TypeLayout;
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.layout.Pair")]
/// struct Pair { base: Object, a: i64, b: i64 }
///
/// let layout = TypeLayout::of::<Pair>();
/// assert_eq!(layout.size(), 32);
/// assert_eq!(layout.align(), 8);
/// assert_ne!(layout, TypeLayout::of::<Object>());
/// assert_eq!(Pair::type_info().layout_owner().rust_layout(), Some(layout));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TypeLayout {
    size: u32,
    align: u32,
    fields: u64,
}

impl TypeLayout {
    /// The layout of the Rust object type `T`.
    pub fn of<T: crate::ObjectType>() -> TypeLayout {
        TypeLayout::of_registration(T::registration())
    }

    /// The layout a derive registration describes.
    pub(crate) fn of_registration(r: &TypeRegistration) -> TypeLayout {
        TypeLayout {
            size: r.size,
            align: r.align,
            fields: fingerprint(r.reflection),
        }
    }

    /// The layout of the objects of a type with a run-time field table.
    pub(crate) fn of_runtime(f: &'static RuntimeFields) -> TypeLayout {
        TypeLayout {
            size: f.object_size() as u32,
            align: f.object_align() as u32,
            fields: fingerprint(f.reflection()),
        }
    }

    /// The struct's size in bytes (header included).
    #[inline]
    pub fn size(&self) -> u32 {
        self.size
    }

    /// The struct's alignment in bytes.
    #[inline]
    pub fn align(&self) -> u32 {
        self.align
    }

    /// A 64-bit fingerprint (FNV-1a) of the field table: each field's name, offset,
    /// kind, flags, in-place layout tag and Rust type (and an enum field's variants), in
    /// table order, and whether the type is opaque. Two builds of one struct agree; adding, moving, renaming or
    /// retyping a field changes it.
    #[inline]
    pub fn fields_fingerprint(&self) -> u64 {
        self.fields
    }
}

impl fmt::Display for TypeLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} bytes, align {}, fields {:#018x}",
            self.size, self.align, self.fields
        )
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn fnv_bytes(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(FNV_PRIME);
    }
    // A terminator, so that ("ab", "c") and ("a", "bc") differ.
    (h ^ 0xff).wrapping_mul(FNV_PRIME)
}

fn fnv_u64(h: u64, v: u64) -> u64 {
    fnv_bytes(h, &v.to_le_bytes())
}

fn fingerprint(refl: &TypeReflection) -> u64 {
    let fields = refl.fields();
    let mut h = fnv_u64(FNV_OFFSET, fields.len() as u64);
    h = fnv_u64(h, u64::from(refl.is_opaque()));
    for f in fields {
        h = fnv_bytes(h, f.name().as_bytes());
        h = fnv_u64(h, f.offset() as u64);
        h = fnv_u64(h, f.kind() as u64);
        h = fnv_u64(h, u64::from(f.flags().bits()));
        h = fnv_u64(h, u64::from(f.layout_tag()));
        h = fnv_bytes(h, f.rust_type().as_bytes());
        h = fnv_bytes(h, f.static_type_key().as_bytes());
        // An enum's variants: another version of the enum reads its values otherwise.
        if let Some(e) = f.enum_info() {
            for v in e.variants() {
                h = fnv_bytes(h, v.name().as_bytes());
                h = fnv_u64(h, v.value() as u64);
            }
        }
    }
    h
}

/// Who made the objects of a type with a foreign layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ForeignMaker {
    /// C code, through `obj_object_init` (or anything that calls
    /// [`seal_foreign_layout`](super::seal_foreign_layout) for it).
    C,
    /// `make_object_as`, with the layout of the named Rust ancestor.
    RustAncestor(&'static str),
}

impl fmt::Display for ForeignMaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ForeignMaker::C => f.write_str("C (`obj_object_init`)"),
            ForeignMaker::RustAncestor(name) => {
                write!(f, "`make_object_as` with the layout of `{name}`")
            }
        }
    }
}

/// Who gave a type's objects their layout, as [`TypeInfo::layout_owner`](super::TypeInfo::layout_owner) reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LayoutOwner {
    /// Nobody yet: no object of the type was made and no Rust struct claimed it.
    Open,
    /// A Rust struct defines it.
    Rust {
        /// The struct's path.
        rust_name: &'static str,
        /// Its layout.
        layout: TypeLayout,
    },
    /// A run-time field table ([`RuntimeFields`]): objects made through it only.
    Fields {
        /// The key of the nearest ancestor a Rust struct owns: the part Rust reads.
        ancestor_key: &'static str,
        /// That ancestor's layout.
        ancestor_layout: TypeLayout,
        /// The layout of the type's objects (the ancestor's struct and the cells; the
        /// table's address lies before them).
        layout: TypeLayout,
    },
    /// Objects without a Rust struct of their own.
    Foreign {
        /// Who sealed it.
        maker: ForeignMaker,
        /// The key of the nearest ancestor a Rust struct owns: the part Rust reads.
        ancestor_key: &'static str,
        /// That ancestor's layout.
        ancestor_layout: TypeLayout,
        /// The size of the type's own objects, once one was made (an ancestor of such
        /// types may never have objects of its own).
        object_size: Option<u32>,
    },
}

impl LayoutOwner {
    /// The layout of the owning Rust struct, if a Rust struct owns it.
    pub fn rust_layout(&self) -> Option<TypeLayout> {
        match self {
            LayoutOwner::Rust { layout, .. } => Some(*layout),
            _ => None,
        }
    }
}

impl fmt::Display for LayoutOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutOwner::Open => f.write_str("no layout yet"),
            LayoutOwner::Rust { rust_name, layout } => {
                write!(f, "the Rust struct `{rust_name}` ({layout})")
            }
            LayoutOwner::Fields {
                ancestor_key,
                ancestor_layout,
                layout,
            } => write!(
                f,
                "a run-time field table ({layout}) over `{ancestor_key}` ({ancestor_layout})"
            ),
            LayoutOwner::Foreign {
                maker,
                ancestor_key,
                ancestor_layout,
                object_size,
            } => {
                write!(f, "objects made by {maker}")?;
                if let Some(size) = object_size {
                    write!(f, " of {size} bytes")?;
                }
                write!(
                    f,
                    ", with no Rust struct of their own over `{ancestor_key}` ({ancestor_layout})"
                )
            }
        }
    }
}

/// What an entry's layout was sealed as (set once).
pub(super) enum Sealed {
    Rust(&'static TypeRegistration),
    Foreign(ForeignSeal),
    Fields(&'static RuntimeFields),
}

pub(super) struct ForeignSeal {
    pub(super) maker: ForeignMaker,
    /// The nearest ancestor's registration that a Rust struct owns (from whichever copy
    /// of its code sealed this).
    pub(super) ancestor: &'static TypeRegistration,
    /// The size of this type's own objects; 0 until one is made.
    pub(super) object_size: AtomicU32,
}

impl Sealed {
    pub(super) fn owner(&self) -> LayoutOwner {
        match self {
            Sealed::Rust(r) => LayoutOwner::Rust {
                rust_name: r.rust_name,
                layout: TypeLayout::of_registration(r),
            },
            Sealed::Fields(f) => LayoutOwner::Fields {
                ancestor_key: f.rust_ancestor_key(),
                ancestor_layout: TypeLayout::of_registration(f.rust_registration()),
                layout: TypeLayout::of_runtime(f),
            },
            Sealed::Foreign(f) => LayoutOwner::Foreign {
                maker: f.maker,
                ancestor_key: f.ancestor.key,
                ancestor_layout: TypeLayout::of_registration(f.ancestor),
                object_size: match f.object_size.load(Ordering::Acquire) {
                    0 => None,
                    n => Some(n),
                },
            },
        }
    }
}
