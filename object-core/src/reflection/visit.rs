//! Visiting an object's reflected fields: [`AttrVisitor`] and [`Reflect`].

use super::{FieldInfo, FieldSource};
use crate::any::AnyView;
use crate::dtype::{DataType, Device};
use crate::error::Error;
use crate::header::Object;
use crate::ptr::ObjectRef;

/// Receives an object's reflected fields, in table order (the parent's first). Every
/// typed method defaults to [`visit_any`](AttrVisitor::visit_any), the only one a
/// visitor must write.
pub trait AttrVisitor {
    /// Any field, as a value view.
    fn visit_any(&mut self, field: &FieldInfo, value: AnyView<'_>);

    /// An integer field that fits in `i64`.
    fn visit_i64(&mut self, field: &FieldInfo, value: i64) {
        self.visit_any(field, AnyView::from(value));
    }
    /// An unsigned field beyond `i64::MAX`.
    fn visit_u64(&mut self, field: &FieldInfo, value: u64) {
        self.visit_any(field, AnyView::from(value as f64));
    }
    /// A float field.
    fn visit_f64(&mut self, field: &FieldInfo, value: f64) {
        self.visit_any(field, AnyView::from(value));
    }
    /// A `bool` field.
    fn visit_bool(&mut self, field: &FieldInfo, value: bool) {
        self.visit_any(field, AnyView::from(value));
    }
    /// A string field.
    fn visit_str(&mut self, field: &FieldInfo, value: &str) {
        self.visit_any(field, AnyView::from(value));
    }
    /// A `DataType` field.
    fn visit_data_type(&mut self, field: &FieldInfo, value: DataType) {
        self.visit_any(field, AnyView::from(value));
    }
    /// A `Device` field.
    fn visit_device(&mut self, field: &FieldInfo, value: Device) {
        self.visit_any(field, AnyView::from(value));
    }
    /// An object field (`None` only through an `Option`).
    fn visit_object(&mut self, field: &FieldInfo, value: Option<&ObjectRef>) {
        match value {
            Some(o) => self.visit_any(field, AnyView::from(o)),
            None => self.visit_none(field),
        }
    }
    /// An `Option` field holding `None`.
    fn visit_none(&mut self, field: &FieldInfo) {
        self.visit_any(field, AnyView::NONE);
    }
}

/// An object type whose fields the derive reflected. `#[derive(Object)]` implements it.
///
/// (Not a subtrait of [`ObjectType`](crate::ObjectType), so that a type that fails `ObjectType`'s checks
/// reports that once, not again for every use of its reflection.)
pub trait Reflect: Sized {
    /// Every field, the parent's first (skipped ones flagged).
    const FIELDS: &'static [FieldInfo];

    /// Builds a value from named fields (parents first), taking each from `src`.
    ///
    /// # Errors
    ///
    /// A missing field, or a field of the wrong kind.
    #[doc(hidden)]
    fn from_fields(src: &mut FieldSource<'_, '_>) -> Result<Self, Error>;

    /// Calls `v` for every reflected field, the parent's first.
    fn visit_attrs(&self, v: &mut dyn AttrVisitor) {
        // SAFETY: `Self::FIELDS` describes `Self`'s layout (the derive built it with
        // `offset_of!`), and `self` is a live `Self`.
        unsafe { visit_table(Self::FIELDS, (self as *const Self).cast(), v) }
    }
}

/// # Safety
///
/// `fields` describes the layout of the live object at `base`.
pub(super) unsafe fn visit_table(fields: &[FieldInfo], base: *const u8, v: &mut dyn AttrVisitor) {
    for field in fields {
        if let Some(visit) = field.visit {
            // SAFETY: the field lies at `offset` in the object (caller's guarantee).
            unsafe { visit(base.add(field.offset), field, v) };
        }
    }
}

impl Reflect for Object {
    const FIELDS: &'static [FieldInfo] = &[];
    fn from_fields(_: &mut FieldSource<'_, '_>) -> Result<Self, Error> {
        Ok(Object::new())
    }
}
