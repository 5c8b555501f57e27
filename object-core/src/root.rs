//! `Object` as the root object type.

use crate::header::Object;
use crate::object_type::{FieldsMut, NonFinal, ObjectType, TypeCache, Zero};
use crate::registry::{LinkedType, TypeRegistration};
use crate::type_index;

pub(crate) static ROOT_REGISTRATION: TypeRegistration = TypeRegistration {
    key: type_index::OBJECT_KEY,
    parent_key: "",
    slots: 0,
    is_final: false,
    allow_overflow: true,
    static_index: type_index::OBJECT,
    rust_type: core::any::TypeId::of::<Object>,
    rust_name: "object_core::Object",
    size: core::mem::size_of::<Object>() as u32,
    align: core::mem::align_of::<Object>() as u32,
    reflection: &crate::reflection::ROOT_REFLECTION,
    cache: &ROOT_CACHE,
};

static ROOT_CACHE: TypeCache = TypeCache::new();

inventory::submit! { LinkedType(&ROOT_REGISTRATION) }

// SAFETY: `Object` is the header itself (offset 0, repr(C)); depth 0; its registration
// and cache are its own.
unsafe impl ObjectType for Object {
    const TYPE_KEY: &'static str = type_index::OBJECT_KEY;
    const FINAL: bool = false;
    const DEPTH: u32 = 0;
    type Parent = Object;
    type Depth = Zero;

    fn registration() -> &'static TypeRegistration {
        &ROOT_REGISTRATION
    }

    fn type_cache() -> &'static TypeCache {
        &ROOT_CACHE
    }

    #[inline]
    fn type_index() -> u32 {
        type_index::OBJECT
    }
}

// SAFETY: `Object` is not final.
unsafe impl NonFinal for Object {}

// SAFETY: the root's projection is `()`: the header's fields are never handed out.
unsafe impl FieldsMut for Object {
    type Mut<'a> = ();
    #[inline(always)]
    unsafe fn project<'a>(_: core::ptr::NonNull<Self>) -> Self::Mut<'a> {}
}
