//! Visiting an object's reflected fields: [`AttrVisitor`].

use super::FieldInfo;
use crate::any::AnyView;
use crate::dtype::{DataType, Device};
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
    /// A field-less enum field (`#[derive(ObjectEnum)]`): the variant's integer value
    /// and its reflected name. By default an integer field's visit.
    fn visit_enum(&mut self, field: &FieldInfo, value: i64, name: &'static str) {
        let _ = name;
        self.visit_i64(field, value);
    }
    /// An `Option` field holding `None`.
    fn visit_none(&mut self, field: &FieldInfo) {
        self.visit_any(field, AnyView::NONE);
    }
}
