//! [`RegistryError`]: why a type could not be registered or found.

use core::fmt;

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
    /// The type's layout was sealed by its first owner (a Rust struct, or objects made
    /// by C or by `make_object_as` without a struct of their own), and a later claim
    /// describes another one: a plugin's copy of a struct with other fields, a Rust
    /// struct claiming a type whose objects C made, C making objects of a Rust struct's
    /// type, objects of another size (see [`TypeLayout`](super::TypeLayout)).
    LayoutMismatch {
        /// The key.
        key: String,
        /// The sealed layout and its owner.
        existing: String,
        /// The refused claim's.
        requested: String,
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
    /// [`CORE_STATIC_TYPES`](super::CORE_STATIC_TYPES)) always keeps its index; between other types, the one
    /// with the smaller key does. The other is refused with this error.
    StaticIndexTaken {
        /// The refused type's key.
        key: String,
        /// The index both claim.
        index: u32,
        /// The key of the type that holds the index.
        holder: String,
    },
    /// A run-time field table that cannot be made (see
    /// [`TypeSpec::fields`](super::TypeSpec::fields)): a field without a name or with a
    /// name taken, a type nesting too deep or naming an unregistered object type, a
    /// default that does not fit its type, a parent whose objects cannot be extended (a
    /// built-in, C objects with fields of their own), abstract and final at once.
    BadField {
        /// The key.
        key: String,
        /// The field (empty for the type as a whole).
        field: String,
        /// Why.
        reason: String,
    },
    /// Another build of this crate runs this process's registry (the Python extension,
    /// `libobject_capi.so` or a plugin built from another version or by another
    /// compiler), so this copy runs none: its types cannot be shared with that one's.
    RuntimeConflict {
        /// The library whose copy runs the registry.
        library: String,
        /// That copy's build (`adopt::BUILD_ID`).
        theirs: String,
        /// This copy's.
        ours: String,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::RuntimeConflict { library, theirs, ours } => write!(
                f,
                "another build of the object runtime runs this process's type registry \
                 (`{theirs}`, in {library}); this copy is `{ours}` and runs none: load one \
                 build per process (the same object-core, built by the same compiler)"
            ),
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
            RegistryError::LayoutMismatch {
                key,
                existing,
                requested,
            } => write!(
                f,
                "type `{key}` has the layout of {existing}; {requested} does not match it"
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
            RegistryError::BadField { key, field, reason } if field.is_empty() => {
                write!(f, "type `{key}` cannot be registered with fields: {reason}")
            }
            RegistryError::BadField { key, field, reason } => {
                write!(f, "field `{field}` of type `{key}`: {reason}")
            }
            RegistryError::StaticIndexTaken { key, index, holder } => write!(
                f,
                "type `{key}` asks for static index {index}, which `{holder}` holds"
            ),
        }
    }
}

impl std::error::Error for RegistryError {}
