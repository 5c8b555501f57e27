//! Objects of types with a run-time field table (`reflection::runtime`): the Rust
//! ancestor's struct, the table's address, then the cells, in one block.

use core::ptr::NonNull;
use std::alloc::{alloc, dealloc, handle_alloc_error};

use super::drop_or_abort;
use crate::header::Object;
use crate::object_type::{is_instance, ObjectType};
use crate::ptr::ObjectPtr;
use crate::reflection::runtime::word_offset;
use crate::reflection::RuntimeFields;
use crate::registry::{RegistryError, TypeInfo, TypeLayout};

/// The deleter of an object made by [`make_object_with_fields`] for the Rust ancestor
/// `T`: drops the cells (the table found through the object's word, not its header,
/// which the release path may have reused), then the `T`, and frees the block.
unsafe extern "C" fn fields_deleter<T: ObjectType>(obj: *mut Object) {
    let base = obj.cast::<u8>();
    // SAFETY: called once, on the last release of a block `make_object_with_fields`
    // made for `T` and the table written into its word (after the `T`): the cells hold
    // initialized values of their storage types and the `T` is initialized; each is
    // dropped once, then the block is freed with the layout it was allocated with.
    unsafe {
        let table = RuntimeFields::of_object(base, core::mem::size_of::<T>());
        table.drop_cells(base);
        drop_or_abort(base.cast::<T>(), T::TYPE_KEY);
        dealloc(base, table.layout());
    }
}

/// Allocates an object of type `info`, which has the run-time field table `table` over
/// the Rust ancestor `T`: `value` first, then the table's address, then every cell empty
/// (false, 0, `None`, ""): the caller fills the cells (while the object is still its
/// own) through the table.
///
/// # Errors
///
/// [`RegistryError::NotAnInstance`] if `info` is not a descendant of `T` whose table
/// is over `T`'s layout (another struct's objects would be read as `T`'s).
pub(crate) fn make_object_with_fields<T: ObjectType>(
    value: T,
    info: &'static TypeInfo,
    table: &'static RuntimeFields,
) -> Result<ObjectPtr<T>, RegistryError> {
    // `T`'s cache first: the check below reads an unfilled cache as "not a `T`".
    let _ = T::type_index();
    let rust = table.rust_registration();
    let same = core::ptr::eq(rust, T::registration())
        || TypeLayout::of_registration(rust) == TypeLayout::of::<T>();
    if !same
        || !is_instance::<T>(info.index())
        || table.word() != word_offset(core::mem::size_of::<T>())
    {
        return Err(RegistryError::NotAnInstance {
            key: info.key().to_owned(),
            of: T::TYPE_KEY.to_owned(),
        });
    }
    let layout = table.layout();
    // SAFETY: the layout is nonzero (it holds the header, the word and the cells).
    let p = unsafe { alloc(layout) };
    let Some(p) = NonNull::new(p) else {
        handle_alloc_error(layout)
    };
    let base = p.as_ptr();
    // SAFETY: a fresh block of the table's layout, whose size covers `T` (the table's
    // word lies after it: checked above), aligned for `T` (the table's alignment is at
    // least the Rust ancestor's, which is `T`'s layout); the header is the first bytes
    // of the `T` (ObjectType's layout contract), written last, with the deleter that
    // drops exactly what was written here.
    unsafe {
        base.cast::<T>().write(value);
        table.init_cells(base);
        Object::init(
            base.cast::<Object>(),
            info.index(),
            Some(fields_deleter::<T>),
        );
        Ok(ObjectPtr::from_raw(base.cast::<T>()))
    }
}
