//! Objects built field by field through their type's table: what `create` (and so the
//! JSON graph's loader) and the mutator's rebuild do for every derived type, with no
//! code of the type's own.
//!
//! Each field's entry carries a [`FieldBuild`]: the type-erased steps of its Rust type
//! (take a value from a [`FieldSource`] and write it in place, copy it with new children,
//! drop it), one set per field *type*, shared by every object type with such a field.
//! A type's reflection carries its Rust type's layout and deleters ([`TableBuild`]), so
//! that [`build`] can allocate a block as `make_object` would, write every field at its
//! offset, and only then fill in the header. A failure (or a panic) part-way drops what
//! was written and gives the block back.
//!
//! This is what keeps a derived type's own code small (the derive writes no `create`
//! or rebuild function per type, only the table), which is most of what an IR of a few
//! hundred node types costs to compile.
//!
//! Fenced (`unsafe`): the fields are written into raw memory at the table's offsets. The
//! table is the derive's (`offset_of!` and each field's own type, every field of the
//! struct listed, the parent's first), so writing each entry's value at its offset
//! initializes exactly the struct the table describes.

use core::marker::PhantomData;
use core::ptr::NonNull;

use super::create::FieldSource;
use super::runtime::RuntimeFields;
use super::{FieldInfo, FieldValue, ReflectError, TypeReflection};
use crate::alloc::{check_made_as, Placed, TypeAlloc};
use crate::any::TypeError;
use crate::header::Object;
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::registry::{TypeInfo, TypeRegistration};
use crate::transform::{Children, RebuildFn, TransformError};

/// How one field of a Rust type is made in place: the type-erased steps of that type,
/// shared by every table with a field of it. Not public API (the derive's tables hold
/// them).
#[doc(hidden)]
pub struct FieldBuild {
    /// Takes the field's value from a source (its declared default, or `None` for an
    /// `Option`, when the source has none; a skipped field's `Default`) and writes it at
    /// the address.
    pub(super) take:
        unsafe fn(*mut u8, &mut FieldSource<'_, '_>, &FieldInfo) -> Result<(), ReflectError>,
    /// Writes at the second address a copy of the field at the first whose child objects
    /// come from `children` (`FieldValue::rebuild_field`), or a skipped field's `Default`.
    pub(super) rebuild: unsafe fn(*const u8, *mut u8, &mut Children<'_>) -> Result<(), TypeError>,
    /// Drops the field at the address.
    pub(super) drop: unsafe fn(*mut u8),
}

impl core::fmt::Debug for FieldBuild {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("FieldBuild")
    }
}

/// The [`FieldBuild`]s of a field type, as constants (so that a table refers to one
/// `static` per field type).
struct Steps<F>(PhantomData<F>);

impl<F: FieldValue> Steps<F> {
    const REFLECTED: FieldBuild = FieldBuild {
        take: take_reflected::<F>,
        rebuild: rebuild_reflected::<F>,
        drop: drop_field::<F>,
    };
}

impl<F: Default> Steps<F> {
    const SKIPPED: FieldBuild = FieldBuild {
        take: take_default::<F>,
        rebuild: rebuild_default::<F>,
        drop: drop_field::<F>,
    };
}

impl FieldBuild {
    /// The steps of a reflected field of type `F`.
    pub(super) const fn reflected<F: FieldValue>() -> &'static FieldBuild {
        &Steps::<F>::REFLECTED
    }

    /// The steps of a skipped field of type `F`: its `Default`.
    pub(super) const fn skipped<F: Default>() -> &'static FieldBuild {
        &Steps::<F>::SKIPPED
    }
}

/// # Safety
///
/// `dst` is valid for writes of an `F`, aligned, and holds nothing to drop.
unsafe fn take_reflected<F: FieldValue>(
    dst: *mut u8,
    src: &mut FieldSource<'_, '_>,
    field: &FieldInfo,
) -> Result<(), ReflectError> {
    let value: F = match field.default {
        Some(make) => src.take_or_default(field.name, make)?,
        None => src.take(field.name)?,
    };
    // SAFETY: the caller's guarantee.
    unsafe { dst.cast::<F>().write(value) };
    Ok(())
}

/// # Safety
///
/// As [`take_reflected`].
unsafe fn take_default<F: Default>(
    dst: *mut u8,
    _: &mut FieldSource<'_, '_>,
    _: &FieldInfo,
) -> Result<(), ReflectError> {
    // SAFETY: the caller's guarantee.
    unsafe { dst.cast::<F>().write(F::default()) };
    Ok(())
}

/// # Safety
///
/// `src` points to a live `F`; `dst` is valid for writes of an `F`, aligned, holds
/// nothing to drop, and does not overlap `src`.
unsafe fn rebuild_reflected<F: FieldValue>(
    src: *const u8,
    dst: *mut u8,
    children: &mut Children<'_>,
) -> Result<(), TypeError> {
    // SAFETY: the caller's guarantee: a live `F` at `src`.
    let value = unsafe { &*src.cast::<F>() }.rebuild_field(children)?;
    // SAFETY: the caller's guarantee.
    unsafe { dst.cast::<F>().write(value) };
    Ok(())
}

/// # Safety
///
/// As [`rebuild_reflected`] for `dst`.
unsafe fn rebuild_default<F: Default>(
    _: *const u8,
    dst: *mut u8,
    _: &mut Children<'_>,
) -> Result<(), TypeError> {
    // SAFETY: the caller's guarantee.
    unsafe { dst.cast::<F>().write(F::default()) };
    Ok(())
}

/// # Safety
///
/// `p` points to a live `F`, dropped here and not used again.
unsafe fn drop_field<F>(p: *mut u8) {
    // SAFETY: the caller's guarantee.
    unsafe { core::ptr::drop_in_place(p.cast::<F>()) }
}

/// What a type's reflection needs to build objects through its table: the layout and
/// deleters of its Rust type, and that type's registration. Written by the derive.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct TableBuild {
    pub(super) alloc: TypeAlloc,
    pub(super) registration: &'static TypeRegistration,
}

impl TableBuild {
    /// The table build of the Rust type `T`, whose registration is `registration`.
    ///
    /// # Safety
    ///
    /// `registration` is `T`'s, and the reflection this goes into is `T`'s (its table
    /// lists every field of `T`, each with the steps of its own type).
    pub const unsafe fn of<T: crate::ObjectType>(
        registration: &'static TypeRegistration,
    ) -> TableBuild {
        TableBuild {
            alloc: TypeAlloc::of::<T>(),
            registration,
        }
    }
}

impl TypeReflection {
    /// This reflection building objects through its table (for `create`, the JSON
    /// graph's loader and the mutator's rebuild), if every field of the table can be
    /// built (not an `opaque` type's). Used by the derive.
    ///
    /// # Safety
    ///
    /// `table` is the one of the Rust type whose table this reflection holds.
    #[must_use]
    pub const unsafe fn with_table(mut self, table: TableBuild) -> TypeReflection {
        if !self.opaque && all_buildable(self.fields) {
            self.table = Some(table);
            self.create = Some(create_entry);
            self.rebuild = Some(rebuild_entry as RebuildFn);
        }
        self
    }
}

/// Whether every field of `fields` can be built through the table (a reflected field,
/// or a skipped one with a `Default`).
pub(super) const fn all_buildable(fields: &[FieldInfo]) -> bool {
    let mut i = 0;
    while i < fields.len() {
        if fields[i].build.is_none() {
            return false;
        }
        i += 1;
    }
    true
}

/// The type index the registry gave `table`'s Rust type (its cache is filled when the
/// registration enters the registry, before any table of it is found through a
/// `TypeInfo`).
fn own_index(table: &TableBuild) -> u32 {
    table.registration.cache.filled_index()
}

/// An object being filled: on drop (an error, or a panic in a field's step), the fields
/// written so far are dropped and the block is given back.
struct Partial<'t> {
    alloc: &'t TypeAlloc,
    fields: &'static [FieldInfo],
    obj: NonNull<u8>,
    placed: Placed,
    /// How many of `fields` are written.
    written: usize,
}

impl Drop for Partial<'_> {
    fn drop(&mut self) {
        for f in &self.fields[..self.written] {
            if let Some(b) = f.build {
                // SAFETY: the first `written` fields were written at their offsets from
                // the object and nothing else refers to them.
                unsafe { (b.drop)(self.obj.as_ptr().add(f.offset)) };
            }
        }
        // SAFETY: `obj` and `placed` came from `alloc.allocate()`; no object was made.
        unsafe { self.alloc.free_block(self.obj, self.placed) };
    }
}

/// Builds an object with the table `fields` in a block from `alloc`, of type `index`,
/// writing each field with `write(position, field, steps, address)` in table order,
/// then the header with the deleter `alloc` chose. For a run-time field table
/// (`word`), its address is written into the word before the object first. The one
/// way objects are built through a table: a derived type's (`create_entry`,
/// `rebuild_entry`) and a run-time field table's (`reflection::runtime`).
///
/// # Safety
///
/// `fields` lists every field of the objects `alloc` places, each at its offset from
/// the object's address (a derived type `T`'s table and `T`'s `TypeAlloc`; or a run-time
/// table, `word`, and its own `TypeAlloc`), every one with its steps ([`all_buildable`]);
/// `index` is the index of a type whose objects have that layout ([`check_made_as`]).
/// `write` writes a value of the field's own type (the one its steps drop) at the
/// address it is given, or fails having written nothing.
pub(super) unsafe fn build<E>(
    fields: &'static [FieldInfo],
    alloc: &TypeAlloc,
    word: Option<&'static RuntimeFields>,
    index: u32,
    mut write: impl FnMut(usize, &'static FieldInfo, &'static FieldBuild, *mut u8) -> Result<(), E>,
) -> Result<ObjectRef, E> {
    let (obj, deleter, placed) = alloc.allocate();
    if let Some(table) = word {
        // SAFETY: the caller's guarantee: a run-time table's objects, placed by its
        // own `TypeAlloc`, which leaves room for the word before the object.
        unsafe { table.write_word(obj.as_ptr()) };
    }
    let mut partial = Partial {
        alloc,
        fields,
        obj,
        placed,
        written: 0,
    };
    for (i, f) in fields.iter().enumerate() {
        let Some(steps) = f.build else {
            // Not reached: the caller checked `all_buildable`. (Dropping `partial`
            // gives everything back.)
            unreachable!("a table built through has every field buildable");
        };
        // SAFETY: the field lies at `offset` from the object, inside its block (the
        // caller's guarantee); the block is not shared.
        let at = unsafe { obj.as_ptr().add(f.offset) };
        write(i, f, steps, at)?;
        partial.written += 1;
    }
    core::mem::forget(partial);
    let obj = obj.as_ptr().cast::<Object>();
    // SAFETY: every field is written, so the object is complete but for its header,
    // which this fills in (the count is one: the handle made below). `deleter` is the one
    // `allocate` chose for the block.
    unsafe {
        Object::init(obj, index, Some(deleter));
        Ok(ObjectPtr::from_raw(obj))
    }
}

/// `create`'s entry for a derived type: takes each field from `src`, in table order,
/// and builds an object of type `info` (the Rust type of `info`'s table, or a run-time
/// descendant of it without a layout of its own).
pub(super) fn create_entry(
    src: &mut FieldSource<'_, '_>,
    info: &'static TypeInfo,
) -> Result<ObjectRef, ReflectError> {
    let refl = info.reflection();
    let Some(table) = refl.table.as_ref().filter(|_| refl.create.is_some()) else {
        return Err(ReflectError::not_creatable(info.key()));
    };
    let own = own_index(table);
    if info.index() != own {
        check_made_as(table.registration, own, info.index())
            .map_err(|e| ReflectError::layout_mismatch(info.key(), e))?;
    }
    // `refl` is the table of `info`, `table` its Rust type's (the derive wrote both into
    // one reflection); every field is buildable (`create` is set only then); `info`'s
    // objects have that type's layout (checked just above); `take` writes a value of the
    // field's type or fails having written nothing.
    // SAFETY: as just said: `build`'s contract holds for this table and type.
    unsafe {
        build(
            refl.fields,
            &table.alloc,
            None,
            info.index(),
            |_, f, steps, at| (steps.take)(at, src, f),
        )
    }
}

/// The mutator's rebuild entry for a derived type: a copy of `obj` with each field
/// copied through its steps, its child objects taken from `children` in order.
pub(crate) fn rebuild_entry(
    obj: &ObjectRef,
    children: &mut Children<'_>,
    info: &'static TypeInfo,
) -> Result<ObjectRef, TransformError> {
    // The object's own type (the walkers pass it; checked, as the table must describe
    // `obj`).
    let info = if info.index() == obj.type_index() {
        info
    } else {
        obj.type_info()
    };
    let refl = info.reflection();
    let Some(table) = refl.table.as_ref().filter(|_| refl.rebuild.is_some()) else {
        return Err(TransformError::not_rebuildable(info.key()));
    };
    let from = ObjectPtr::as_ptr(obj).cast::<u8>();
    let key = info.key();
    // `refl` is the table of `obj`'s type (and so describes `obj`), `table` its Rust
    // type's; every field is buildable (`rebuild` is set only then); the copy carries
    // `obj`'s own index, whose layout `obj` has. Each field of `obj` lies at its offset
    // from `from`, and the new block does not overlap it.
    // SAFETY: as just said: `build`'s contract holds for this table, type and source.
    unsafe {
        build(
            refl.fields,
            &table.alloc,
            None,
            obj.type_index(),
            |_, f, steps, at| {
                (steps.rebuild)(from.add(f.offset), at, children)
                    .map_err(|e| TransformError::wrong_child(key, f.name, e))
            },
        )
    }
}
