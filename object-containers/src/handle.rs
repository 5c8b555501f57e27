//! The value conversions of object handles come from one macro in `object-core`.

pub(crate) use object_core::__object_handle as object_handle;
