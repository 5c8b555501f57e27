//! Run-time registration ([`TypeSpec`], [`register_type`]) and the first use of a Rust
//! type (found in the table built at first use, or registered then).

use super::info::{TypeInfo, TypeRegistration};
use super::layout::{ForeignMaker, LayoutOwner, TypeLayout};
use super::place::{check_static_index, place_runtime, place_static, KeyName};
use super::{registry, RegistryError};
use crate::reflection::runtime::PendingFields;
use crate::reflection::{FieldSpec, RuntimeFields};

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
    /// A run-time field table's own fields (`Some`, possibly empty), or none.
    fields: Option<Vec<FieldSpec>>,
    is_abstract: bool,
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
            fields: None,
            is_abstract: false,
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

    /// Registers the type with a run-time field table: these fields after its parent's
    /// (see [`RuntimeFields`]). Its objects are made through reflection
    /// ([`create`](crate::reflection::create) by key, a JSON graph, Python's class, C's
    /// `obj_object_create`), hold their fields in the object, and are read, printed,
    /// compared, saved and rebuilt through the table like a derive type's. The parent is
    /// `ffi.Object`, a creatable derive type (not a built-in), or another type with a
    /// run-time table (a type registered without fields under one gets an empty table of
    /// its own).
    ///
    /// ```
    /// use object_core::reflection::{create, FieldSpec, FieldType};
    /// use object_core::registry::{register_type, TypeSpec};
    /// use object_core::structural::structural_equal;
    /// use object_core::Any;
    ///
    /// let spec = TypeSpec::new("doc.spec.Pair", "ffi.Object").fields(vec![
    ///     FieldSpec::new("first", FieldType::Int),
    ///     FieldSpec::new("second", FieldType::Optional(Box::new(FieldType::Object("doc.spec.Pair".into())))),
    /// ]);
    /// register_type(&spec).unwrap();
    /// let inner = create("doc.spec.Pair", [("first", Any::from(2))]).unwrap();
    /// let outer = create("doc.spec.Pair", [("first", Any::from(1)), ("second", Any::from(inner.clone()))]).unwrap();
    /// assert_eq!(format!("{outer:?}"), "doc.spec.Pair { first: 1, second: doc.spec.Pair { first: 2, second: None } }");
    /// assert!(structural_equal(&inner, &create("doc.spec.Pair", [("first", Any::from(2))]).unwrap()));
    /// ```
    pub fn fields(mut self, fields: Vec<FieldSpec>) -> Self {
        self.fields = Some(fields);
        self
    }

    /// Declares the type abstract (only its subtypes are made; `create` refuses it).
    /// Only for a type with a run-time field table ([`fields`](Self::fields)).
    pub fn abstract_type(mut self, yes: bool) -> Self {
        self.is_abstract = yes;
        self
    }

    /// The key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The run-time fields given, if the type has a field table.
    pub fn field_specs(&self) -> Option<&[FieldSpec]> {
        self.fields.as_deref()
    }

    fn describe(&self) -> String {
        let mut d = describe(&self.parent, self.slots, self.is_final, self.allow_overflow);
        describe_fields(&mut d, self.fields.as_deref(), self.is_abstract);
        d
    }
}

fn describe(parent: &str, slots: u32, is_final: bool, overflow: bool) -> String {
    format!("parent `{parent}`, slots {slots}, final {is_final}, overflow {overflow}")
}

fn describe_fields(d: &mut String, fields: Option<&[FieldSpec]>, is_abstract: bool) {
    if let Some(fields) = fields {
        d.push_str(", fields (");
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                d.push_str(", ");
            }
            d.push_str(&f.to_string());
        }
        d.push(')');
    }
    if is_abstract {
        d.push_str(", abstract");
    }
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
    if let Some(host) = super::adopt::adopted() {
        return (host.register_type)(spec);
    }
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
    let fields = match own_fields(spec, parent) {
        Some(own) => Some(fields_table(spec, parent, own)?),
        None if spec.is_abstract => {
            return Err(RegistryError::BadField {
                key: spec.key.clone(),
                field: String::new(),
                reason: "only a type with a run-time field table can be declared abstract".into(),
            })
        }
        None => None,
    };
    place_runtime(
        reg,
        &mut w,
        key,
        parent,
        spec.slots,
        spec.is_final,
        spec.allow_overflow,
        None,
        fields,
    )
}

/// The run-time fields `spec` declares: its own, or none (an empty table) for a type
/// without fields under a type with a run-time table (whose objects have cells), or
/// `None` for a type without a run-time table.
fn own_fields<'s>(spec: &'s TypeSpec, parent: &TypeInfo) -> Option<&'s [FieldSpec]> {
    match (&spec.fields, parent.runtime_fields()) {
        (Some(f), _) => Some(f),
        (None, Some(_)) => Some(&[]),
        (None, None) => None,
    }
}

/// The run-time field table of the type `spec` registers under `parent`, after checking
/// that `parent`'s objects can be extended: a Rust struct's or a run-time table's
/// layout, or a run-time type without one yet or with its Rust ancestor's (sealed now as
/// having exactly that layout, so that no C code gives its objects fields of their own
/// where the cells of the new type's objects lie).
fn fields_table(
    spec: &TypeSpec,
    parent: &'static TypeInfo,
    own: &[FieldSpec],
) -> Result<PendingFields, RegistryError> {
    if spec.is_abstract && spec.is_final {
        return Err(RegistryError::BadField {
            key: spec.key.clone(),
            field: String::new(),
            reason: "a type cannot be both abstract and final".into(),
        });
    }
    let table = RuntimeFields::build(&spec.key, parent, own, spec.is_abstract)?;
    if parent.runtime_fields().is_none()
        && !matches!(parent.layout_owner(), LayoutOwner::Rust { .. })
    {
        let rust = parent
            .rust_layout_ancestor()
            .ok_or_else(|| RegistryError::UnknownKey {
                key: parent.key().to_owned(),
            })?;
        seal_foreign_layout(
            parent.index(),
            rust.size as usize,
            ForeignMaker::RustAncestor(rust.rust_name),
        )?;
    }
    Ok(table)
}

fn same_or_duplicate(
    existing: &'static TypeInfo,
    spec: &TypeSpec,
) -> Result<&'static TypeInfo, RegistryError> {
    let parent_key = existing.parent().map_or("", |p| p.key);
    let existing_fields = existing.runtime_fields();
    let requested_fields = match existing.parent() {
        Some(p) => own_fields(spec, p),
        None => spec.fields.as_deref(),
    };
    if parent_key == spec.parent
        && existing.slots == spec.slots
        && existing.is_final == spec.is_final
        && existing.allow_overflow == spec.allow_overflow
        && existing_fields.map(RuntimeFields::own_fields) == requested_fields
        && existing_fields.is_some_and(RuntimeFields::is_abstract) == spec.is_abstract
    {
        Ok(existing)
    } else {
        let mut held = describe(
            parent_key,
            existing.slots,
            existing.is_final,
            existing.allow_overflow,
        );
        describe_fields(
            &mut held,
            existing_fields.map(RuntimeFields::own_fields),
            existing_fields.is_some_and(RuntimeFields::is_abstract),
        );
        Err(RegistryError::DuplicateKey {
            key: spec.key.clone(),
            existing: held,
            requested: spec.describe(),
        })
    }
}

/// Resolves a derive-registered Rust type to its entry: normally found in the table
/// built at first use; registered at run time if its link-time entry was not collected
/// (e.g. a type in a library loaded later).
pub(crate) fn resolve_rust_type(
    r: &'static TypeRegistration,
) -> Result<&'static TypeInfo, RegistryError> {
    if let Some(host) = super::adopt::adopted() {
        return (host.resolve_rust_type)(r);
    }
    resolve_rust_type_from(r, false)
}

/// [`resolve_rust_type`], also for another copy of the type's code (`foreign`: a
/// plugin's): that copy's `TypeId` may differ from ours (another build of the same
/// crate), so the same Rust type name claims the same key.
pub(crate) fn resolve_rust_type_from(
    r: &'static TypeRegistration,
    foreign: bool,
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
                    None,
                )?
            }
        }
    };
    match w.claimed.get(&info.index) {
        // Another Rust type under the same key. (The same type again, or from another
        // copy of the code (a plugin's) one of the same name, must also have the same
        // layout: another build of a crate may keep its `TypeId` and change its fields.)
        Some(&(held, name)) if held != tid && !(foreign && name == r.rust_name) => {
            return Err(RegistryError::RustTypeConflict {
                key: r.key.to_owned(),
                first: name.to_owned(),
                second: r.rust_name.to_owned(),
            });
        }
        Some(_) => info.claim_rust_layout(r)?,
        None => {
            info.claim_rust_layout(r)?;
            w.claimed.insert(info.index, (tid, r.rust_name));
        }
    }
    w.publish_cache(r.cache, info);
    Ok(info)
}

/// Seals the layout of objects of type `type_index` made without a Rust struct of their
/// own (by C, or by `make_object_as` with an ancestor's struct): `object_size` bytes,
/// starting with the layout of the nearest ancestor a Rust struct owns, which it
/// returns. The type and every type between it and that ancestor can never be claimed
/// by a Rust struct that adds to the ancestor (see [`TypeLayout`]). Idempotent for the
/// same size; the first size made is the type's.
///
/// # Errors
///
/// [`RegistryError::UnknownKey`] for an unregistered index or a value kind;
/// [`RegistryError::LayoutMismatch`] naming both layouts: a Rust struct owns the type's
/// layout, objects of another size were made, or `object_size` is smaller than the
/// Rust ancestor's struct.
///
/// ```
/// use object_core::registry::{register_type, seal_foreign_layout, ForeignMaker, TypeSpec};
///
/// let info = register_type(&TypeSpec::new("doc.seal.CNode", "ffi.Object")).unwrap();
/// let ancestor = seal_foreign_layout(info.index(), 24, ForeignMaker::C).unwrap();
/// assert_eq!(ancestor.key(), "ffi.Object");
/// assert!(seal_foreign_layout(info.index(), 24, ForeignMaker::C).is_ok());
/// assert!(seal_foreign_layout(info.index(), 32, ForeignMaker::C).is_err(), "another size");
/// // A Rust struct's type is never sealed as foreign.
/// assert!(seal_foreign_layout(64, 16, ForeignMaker::C).is_err());
/// ```
pub fn seal_foreign_layout(
    type_index: u32,
    object_size: usize,
    maker: ForeignMaker,
) -> Result<&'static TypeInfo, RegistryError> {
    let info = super::type_info(type_index)
        .filter(|i| i.is_object())
        .ok_or_else(|| RegistryError::UnknownKey {
            key: format!("<type index {type_index}>"),
        })?;
    let ancestor = info
        .rust_layout_ancestor()
        .ok_or_else(|| RegistryError::UnknownKey {
            key: info.key().to_owned(),
        })?;
    let requested = |size: Option<u32>| LayoutOwner::Foreign {
        maker,
        ancestor_key: ancestor.key,
        ancestor_layout: TypeLayout::of_registration(ancestor),
        object_size: size,
    };
    let mismatch = |size: Option<u32>| RegistryError::LayoutMismatch {
        key: info.key().to_owned(),
        existing: info.layout_owner().to_string(),
        requested: requested(size).to_string(),
    };
    let size = u32::try_from(object_size).map_err(|_| mismatch(None))?;
    if matches!(info.layout_owner(), LayoutOwner::Rust { .. }) {
        return Err(mismatch(Some(size)));
    }
    if size < ancestor.size {
        return Err(RegistryError::LayoutMismatch {
            key: info.key().to_owned(),
            existing: format!(
                "its Rust ancestor `{}`: objects start with `{}` ({})",
                ancestor.key,
                ancestor.rust_name,
                TypeLayout::of_registration(ancestor)
            ),
            requested: format!("an object of {size} bytes"),
        });
    }
    let mut t = info;
    let mut own = Some(size);
    while t.key() != ancestor.key {
        t.seal_foreign(maker, ancestor, own.take())?;
        t = match t.parent() {
            Some(p) => p,
            None => break,
        };
    }
    super::type_info_by_key(ancestor.key).ok_or_else(|| RegistryError::UnknownKey {
        key: ancestor.key.to_owned(),
    })
}

fn spec_of(r: &TypeRegistration) -> TypeSpec {
    TypeSpec {
        key: r.key.to_owned(),
        parent: r.parent_key.to_owned(),
        slots: r.slots,
        is_final: r.is_final,
        allow_overflow: r.allow_overflow,
        fields: None,
        is_abstract: false,
    }
}

#[cfg(test)]
mod tests {
    use core::any::TypeId;

    use super::*;
    use crate::object_type::TypeCache;
    use crate::registry::{link_errors, type_index_of, TypeOrigin};
    use crate::type_index;

    const fn late(
        key: &'static str,
        name: &'static str,
        cache: &'static TypeCache,
    ) -> TypeRegistration {
        sized(key, name, 16, &crate::reflection::NO_REFLECTION, cache)
    }

    const fn sized(
        key: &'static str,
        name: &'static str,
        size: u32,
        reflection: &'static crate::reflection::TypeReflection,
        cache: &'static TypeCache,
    ) -> TypeRegistration {
        TypeRegistration {
            key,
            parent_key: type_index::OBJECT_KEY,
            slots: 0,
            is_final: false,
            allow_overflow: true,
            static_index: 0,
            rust_type: TypeId::of::<u8>,
            rust_name: name,
            size,
            align: 8,
            reflection,
            cache,
        }
    }

    // Registrations inventory never collected (as for a library loaded later).
    static SEALED: TypeRegistration = sized(
        "unit.Sealed",
        "unit::Sealed",
        32,
        &crate::reflection::NO_REFLECTION,
        &CACHE_SEALED,
    );
    static MARKER: TypeRegistration = sized(
        "unit.Marker",
        "unit::Marker",
        16,
        &crate::reflection::ROOT_REFLECTION,
        &CACHE_MARKER,
    );
    static CLAIMED: TypeRegistration = late("unit.Claimed", "unit::Claimed", &CACHE_CLAIMED);
    static CLAIMED_SKEWED: TypeRegistration = sized(
        "unit.Claimed",
        "unit::Claimed",
        24,
        &crate::reflection::NO_REFLECTION,
        &CACHE_SKEWED,
    );
    static UNCOLLECTED: TypeRegistration =
        late("unit.Uncollected", "unit::Uncollected", &CACHE_UNCOLLECTED);
    static CACHE_SEALED: TypeCache = TypeCache::new();
    static CACHE_MARKER: TypeCache = TypeCache::new();
    static CACHE_CLAIMED: TypeCache = TypeCache::new();
    static CACHE_SKEWED: TypeCache = TypeCache::new();
    static CACHE_UNCOLLECTED: TypeCache = TypeCache::new();

    /// A type whose objects were made without a Rust struct of their own can be claimed
    /// afterwards only by a struct that adds nothing to its Rust ancestor (a larger one
    /// would read past the objects); a Rust struct's type can never be sealed as
    /// foreign; another copy of a struct (a plugin's) must have the same layout.
    #[test]
    fn layout_ownership_is_decided_once() {
        let sealed = register_type(&TypeSpec::new("unit.Sealed", "ffi.Object")).unwrap();
        seal_foreign_layout(sealed.index(), 16, ForeignMaker::C).unwrap();
        seal_foreign_layout(sealed.index(), 16, ForeignMaker::C).expect("idempotent");
        let err = seal_foreign_layout(sealed.index(), 24, ForeignMaker::C).unwrap_err();
        assert!(matches!(err, RegistryError::LayoutMismatch { .. }), "{err}");
        let err = resolve_rust_type(&SEALED).unwrap_err();
        assert!(matches!(err, RegistryError::LayoutMismatch { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("unit.Sealed") && text.contains("16 bytes") && text.contains("32 bytes"),
            "names the key and both layouts: {text}"
        );

        // A struct with its ancestor's layout exactly (a marker) may claim C's type.
        let marker = register_type(&TypeSpec::new("unit.Marker", "ffi.Object")).unwrap();
        seal_foreign_layout(marker.index(), 16, ForeignMaker::C).unwrap();
        assert_eq!(resolve_rust_type(&MARKER).unwrap().index(), marker.index());

        let claimed = register_type(&TypeSpec::new("unit.Claimed", "ffi.Object")).unwrap();
        let info = resolve_rust_type(&CLAIMED).unwrap();
        assert_eq!(info.index(), claimed.index());
        assert_eq!(info.rust_name(), Some("unit::Claimed"));
        let err = seal_foreign_layout(claimed.index(), 16, ForeignMaker::C).unwrap_err();
        assert!(matches!(err, RegistryError::LayoutMismatch { .. }), "{err}");
        // Another copy of the same struct (same name) with another layout: refused.
        let err = resolve_rust_type_from(&CLAIMED_SKEWED, true).unwrap_err();
        assert!(matches!(err, RegistryError::LayoutMismatch { .. }), "{err}");
        assert!(err.to_string().contains("24 bytes"), "{err}");
        // The same copy again, and a copy with the same layout: accepted.
        assert!(resolve_rust_type_from(&CLAIMED, true).is_ok());
    }

    /// A Rust type whose link-time registration was not collected (say, in a library
    /// loaded later) is registered on first use, under its parent.
    #[test]
    fn uncollected_rust_types_register_on_first_use() {
        let info = resolve_rust_type(&UNCOLLECTED).unwrap();
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
