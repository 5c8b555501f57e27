//! [`FieldValue`]: the Rust types a reflected field may have, and how each becomes a
//! value and is visited.

use core::marker::PhantomData;

use super::enums::{EnumInfo, EnumRepr};
use super::raw::ObjectEnum;
use super::{AttrVisitor, FieldInfo, FieldKind};
use crate::any::{Any, AnyView, TypeError};
use crate::dtype::{DataType, Device};
use crate::object_type::ObjectType;
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::string::String as ObjString;
use crate::transform::Children;

/// A Rust type that can be a reflected object field: integers, floats, `bool`,
/// strings, `DataType`, `Device`, `Any`, object handles (`ObjectPtr<T>`, `ObjectRef`,
/// and in `object-containers` `Array`, `Map`, `Shape`, `Function`, `Module`, …),
/// field-less enums with `#[derive(ObjectEnum)]`, and `Option` of any of these.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a reflected object field",
    label = "unsupported field type",
    note = "reflected fields are integers, floats, `bool`, `String`, `DataType`, `Device`, `Any`, object handles (`ObjectPtr<T>`, `ObjectRef`, `Array<_>`, `Map<_, _>`, …), field-less enums with `#[derive(ObjectEnum)]`, or `Option` of one",
    note = "a list is an `Array<T>` (from a `Vec<T>`: `Array::from(vec)`), a map a `Map<K, V>`; an enum takes `#[derive(ObjectEnum)]` if its variants hold no data, else it is an object hierarchy (an abstract base type with one subtype per variant, matched with `object_view!`)",
    note = "mark the field `#[object(skip)]` to leave it out of reflection (it then needs `Default`)"
)]
pub trait FieldValue: Sized + 'static {
    /// The value kind.
    const KIND: FieldKind;
    /// The static type key (see [`FieldInfo::static_type_key`]).
    const STATIC_TYPE_KEY: &'static str;
    /// Whether the field may hold `None`.
    const OPTIONAL: bool = false;
    /// The enum's descriptor, for a field-less enum (`#[derive(ObjectEnum)]`, of kind
    /// [`FieldKind::Enum`]) and `Option` of one (see [`FieldInfo::enum_info`]).
    const ENUM: Option<&'static EnumInfo> = None;
    /// Whether the field is stored as one 16-byte `Any` cell
    /// ([`FieldFlags::ANY_LAYOUT`](super::FieldFlags::ANY_LAYOUT)).
    const ANY_LAYOUT: bool = false;
    /// How the structural walk may read the field in place (set by this crate only,
    /// for the handful of layouts it knows; every other type is read through
    /// [`borrow_value`](FieldValue::borrow_value)).
    #[doc(hidden)]
    const LAYOUT: FieldLayout<Self> = FieldLayout::OTHER;
    /// How a generated constructor takes a value for a field of this type (see
    /// [`IntoField`]): [`ByHandle`] for object handles (`ObjectPtr<T>`, typed
    /// references: any handle of a subtype goes in as it is), [`ByInto`] for every
    /// other type (anything that converts `Into` it).
    type Take;

    /// The field as a value.
    ///
    /// # Errors
    ///
    /// Only for unsigned integers beyond `i64::MAX`, which an `int` cannot hold.
    fn to_any(&self) -> Result<Any, TypeError>;

    /// A field from a value, checked.
    ///
    /// # Errors
    ///
    /// A `TypeError` naming the expected and actual type.
    fn from_any(value: Any) -> Result<Self, TypeError>;

    /// Calls the visitor's method for this kind.
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor);

    /// The field as a borrowed value: no count change, no allocation (what structural
    /// equality and hashing read). An unsigned integer beyond `i64::MAX` is seen as the
    /// `int` with the same bits; a string as a borrowed `&str`; an object as a borrowed
    /// handle.
    fn borrow_value(&self) -> ValueRef<'_>;

    /// A copy of this field whose child objects are taken, in order, from `children`
    /// (what the [`transform`](crate::transform) mutator uses to rebuild a node whose
    /// children changed). The children of a field are the objects its
    /// [`borrow_value`](Self::borrow_value) shows (`ValueRef::Object`): one for an
    /// object handle, none for a plain value, a string or `None`.
    ///
    /// The default takes one child where `borrow_value` shows an object and converts
    /// it with [`from_any`](Self::from_any), and copies any other value through
    /// [`to_any`](Self::to_any) / `from_any`; the built-in impls do the same without the
    /// round trip.
    ///
    /// # Errors
    ///
    /// A `TypeError` if the child does not convert to `Self` (a `Stmt` given for an
    /// `ObjectPtr<Expr>` field) or if `children` has none left.
    fn rebuild_field(&self, children: &mut Children<'_>) -> Result<Self, TypeError> {
        match self.borrow_value() {
            ValueRef::Object(_) => Self::from_any(Any::from(children.next_child()?)),
            _ => Self::from_any(self.to_any()?),
        }
    }
}

macro_rules! int_field {
    ($($t:ty),*) => {$(
        impl FieldValue for $t {
            type Take = ByInto;
            const KIND: FieldKind = FieldKind::Int;
            const STATIC_TYPE_KEY: &'static str = "int";
            const LAYOUT: FieldLayout<Self> = FieldLayout::<Self>::int(<$t>::MIN == 0);
            fn to_any(&self) -> Result<Any, TypeError> {
                i64::try_from(*self)
                    .map(Any::from)
                    .map_err(|_| TypeError::new("int (an i64)", concat!(stringify!($t), " beyond i64::MAX")))
            }
            fn from_any(value: Any) -> Result<Self, TypeError> {
                <$t>::try_from(value)
            }
            fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
                match i64::try_from(*self) {
                    Ok(i) => v.visit_i64(field, i),
                    Err(_) => v.visit_u64(field, *self as u64),
                }
            }
            #[inline]
            fn borrow_value(&self) -> ValueRef<'_> {
                // (Wrapping for u64/usize beyond i64::MAX: the same bits.)
                ValueRef::Value(AnyView::from(*self as i64))
            }
            #[inline]
            fn rebuild_field(&self, _: &mut Children<'_>) -> Result<Self, TypeError> {
                Ok(*self)
            }
        }
    )*};
}
int_field!(i8, i16, i32, i64, u8, u16, u32, u64, usize);

impl FieldValue for isize {
    type Take = ByInto;
    const KIND: FieldKind = FieldKind::Int;
    const STATIC_TYPE_KEY: &'static str = "int";
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(Any::from(*self as i64))
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        let i = i64::try_from(value)?;
        isize::try_from(i).map_err(|_| TypeError::new("isize (in range)", "int"))
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_i64(field, *self as i64);
    }
    #[inline]
    fn borrow_value(&self) -> ValueRef<'_> {
        ValueRef::Value(AnyView::from(*self as i64))
    }
    #[inline]
    fn rebuild_field(&self, _: &mut Children<'_>) -> Result<Self, TypeError> {
        Ok(*self)
    }
}

impl FieldValue for f64 {
    type Take = ByInto;
    const KIND: FieldKind = FieldKind::Float;
    const STATIC_TYPE_KEY: &'static str = "float";
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(Any::from(*self))
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        // An int is accepted for a float field (JSON writes `2.0` as `2` in some tools).
        match value.as_int() {
            Some(i) => Ok(i as f64),
            None => f64::try_from(value),
        }
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_f64(field, *self);
    }
    #[inline]
    fn borrow_value(&self) -> ValueRef<'_> {
        ValueRef::Value(AnyView::from(*self))
    }
    #[inline]
    fn rebuild_field(&self, _: &mut Children<'_>) -> Result<Self, TypeError> {
        Ok(*self)
    }
}

impl FieldValue for f32 {
    type Take = ByInto;
    const KIND: FieldKind = FieldKind::Float;
    const STATIC_TYPE_KEY: &'static str = "float";
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(Any::from(f64::from(*self)))
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        f64::from_any(value).map(|x| x as f32)
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_f64(field, f64::from(*self));
    }
    #[inline]
    fn borrow_value(&self) -> ValueRef<'_> {
        ValueRef::Value(AnyView::from(f64::from(*self)))
    }
    #[inline]
    fn rebuild_field(&self, _: &mut Children<'_>) -> Result<Self, TypeError> {
        Ok(*self)
    }
}

impl FieldValue for bool {
    type Take = ByInto;
    const KIND: FieldKind = FieldKind::Bool;
    const STATIC_TYPE_KEY: &'static str = "bool";
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(Any::from(*self))
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        bool::try_from(value)
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_bool(field, *self);
    }
    #[inline]
    fn borrow_value(&self) -> ValueRef<'_> {
        ValueRef::Value(AnyView::from(*self))
    }
    #[inline]
    fn rebuild_field(&self, _: &mut Children<'_>) -> Result<Self, TypeError> {
        Ok(*self)
    }
}

impl FieldValue for std::string::String {
    type Take = ByInto;
    const KIND: FieldKind = FieldKind::Str;
    const STATIC_TYPE_KEY: &'static str = "ffi.String";
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(Any::from(self.as_str()))
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        std::string::String::try_from(value)
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_str(field, self);
    }
    #[inline]
    fn borrow_value(&self) -> ValueRef<'_> {
        ValueRef::Str(self.as_str())
    }
    #[inline]
    fn rebuild_field(&self, _: &mut Children<'_>) -> Result<Self, TypeError> {
        Ok(self.clone())
    }
}

impl FieldValue for ObjString {
    type Take = ByInto;
    const KIND: FieldKind = FieldKind::Str;
    const STATIC_TYPE_KEY: &'static str = "ffi.String";
    // `String` is `repr(transparent)` over `Any`.
    const ANY_LAYOUT: bool = true;
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(Any::from(self.clone()))
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        ObjString::try_from(value)
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_str(field, self.as_str());
    }
    #[inline]
    fn borrow_value(&self) -> ValueRef<'_> {
        ValueRef::Str(self.as_str())
    }
    #[inline]
    fn rebuild_field(&self, _: &mut Children<'_>) -> Result<Self, TypeError> {
        Ok(self.clone())
    }
}

impl FieldValue for DataType {
    type Take = ByInto;
    const KIND: FieldKind = FieldKind::DataType;
    const STATIC_TYPE_KEY: &'static str = "DataType";
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(Any::from(*self))
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        DataType::try_from(value)
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_data_type(field, *self);
    }
    #[inline]
    fn borrow_value(&self) -> ValueRef<'_> {
        ValueRef::Value(AnyView::from(*self))
    }
    #[inline]
    fn rebuild_field(&self, _: &mut Children<'_>) -> Result<Self, TypeError> {
        Ok(*self)
    }
}

impl FieldValue for Device {
    type Take = ByInto;
    const KIND: FieldKind = FieldKind::Device;
    const STATIC_TYPE_KEY: &'static str = "Device";
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(Any::from(*self))
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        Device::try_from(value)
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_device(field, *self);
    }
    #[inline]
    fn borrow_value(&self) -> ValueRef<'_> {
        ValueRef::Value(AnyView::from(*self))
    }
    #[inline]
    fn rebuild_field(&self, _: &mut Children<'_>) -> Result<Self, TypeError> {
        Ok(*self)
    }
}

impl FieldValue for Any {
    type Take = ByInto;
    const KIND: FieldKind = FieldKind::Any;
    const STATIC_TYPE_KEY: &'static str = "Any";
    const ANY_LAYOUT: bool = true;
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(self.clone())
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        Ok(value)
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_any(field, self.view());
    }
    #[inline]
    fn borrow_value(&self) -> ValueRef<'_> {
        ValueRef::from_any(self)
    }
    #[inline]
    fn rebuild_field(&self, children: &mut Children<'_>) -> Result<Self, TypeError> {
        match self.borrow_value() {
            ValueRef::Object(_) => children.next_child().map(Any::from),
            _ => Ok(self.clone()),
        }
    }
}

impl<T: ObjectType> FieldValue for ObjectPtr<T> {
    type Take = ByHandle;
    const KIND: FieldKind = FieldKind::Object;
    const STATIC_TYPE_KEY: &'static str = T::TYPE_KEY;
    // (`repr(transparent)` over a non-null pointer to the object, whatever `T`.)
    const LAYOUT: FieldLayout<Self> = FieldLayout::<Self>::OBJECT_POINTER;
    fn to_any(&self) -> Result<Any, TypeError> {
        Ok(Any::from(self))
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        ObjectPtr::<T>::try_from(value)
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        v.visit_object(field, Some(self.as_object_ref()));
    }
    #[inline]
    fn borrow_value(&self) -> ValueRef<'_> {
        ValueRef::Object(self.as_object_ref())
    }
    #[inline]
    fn rebuild_field(&self, children: &mut Children<'_>) -> Result<Self, TypeError> {
        children
            .next_child()?
            .downcast::<T>()
            .map_err(|o| TypeError::new(T::TYPE_KEY, o.type_key()))
    }
}

impl<F: FieldValue> FieldValue for Option<F> {
    type Take = ByInto;
    const KIND: FieldKind = F::KIND;
    const STATIC_TYPE_KEY: &'static str = F::STATIC_TYPE_KEY;
    const OPTIONAL: bool = true;
    const ENUM: Option<&'static EnumInfo> = F::ENUM;
    // (`Option` of a non-null pointer is the pointer, null for `None`.)
    const LAYOUT: FieldLayout<Self> = F::LAYOUT.optional();
    fn to_any(&self) -> Result<Any, TypeError> {
        match self {
            Some(x) => x.to_any(),
            None => Ok(Any::default()),
        }
    }
    fn from_any(value: Any) -> Result<Self, TypeError> {
        if value.is_none() {
            Ok(None)
        } else {
            F::from_any(value).map(Some)
        }
    }
    fn visit(&self, field: &FieldInfo, v: &mut dyn AttrVisitor) {
        match self {
            Some(x) => x.visit(field, v),
            None => v.visit_none(field),
        }
    }
    #[inline]
    fn borrow_value(&self) -> ValueRef<'_> {
        match self {
            Some(x) => x.borrow_value(),
            None => ValueRef::Value(AnyView::NONE),
        }
    }
    #[inline]
    fn rebuild_field(&self, children: &mut Children<'_>) -> Result<Self, TypeError> {
        match self {
            Some(x) => x.rebuild_field(children).map(Some),
            None => Ok(None),
        }
    }
}

/// How a field of Rust type `T` lies in memory, for the few layouts the structural
/// walk reads in place. Every type may name [`OTHER`](FieldLayout::OTHER) (read through
/// `borrow_value`); the other layouts are made by this crate only, in its own impls
/// for the types they describe (`ObjectPtr`, `Option` of one, 8-byte integers), or
/// for an [`ObjectEnum`] from what its `unsafe impl` vouches for
/// ([`object_enum`](FieldLayout::object_enum)), and a `FieldLayout<T>` fits no impl but
/// `T`'s: so no impl outside this crate can claim a layout it does not have.
#[doc(hidden)]
pub struct FieldLayout<T: ?Sized>(u8, PhantomData<fn() -> T>);

impl<T: ?Sized> Clone for FieldLayout<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized> Copy for FieldLayout<T> {}

impl<T: ?Sized> core::fmt::Debug for FieldLayout<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("FieldLayout").field(&self.0).finish()
    }
}

impl<T: ?Sized> FieldLayout<T> {
    /// Read through `borrow_value`.
    pub const OTHER: FieldLayout<T> = FieldLayout(0, PhantomData);

    /// The layout's tag (one of the `LAYOUT_*` constants below), kept in the field's
    /// table entry.
    pub(crate) const fn tag(self) -> u8 {
        self.0
    }

    /// The layout of an `Option<T>`.
    const fn optional(self) -> FieldLayout<Option<T>>
    where
        T: Sized,
    {
        if self.0 == LAYOUT_OBJECT_POINTER {
            // (`self` describes an `ObjectPtr<_>`: `Option` of its non-null pointer is
            // the pointer, null for `None`.)
            FieldLayout(LAYOUT_OPTIONAL_OBJECT_POINTER, PhantomData)
        } else {
            FieldLayout(LAYOUT_OTHER, PhantomData)
        }
    }
}

impl<T: ObjectType> FieldLayout<ObjectPtr<T>> {
    /// An [`ObjectPtr`] (whatever its type parameter): `repr(transparent)` over one
    /// non-null pointer to the object.
    const OBJECT_POINTER: Self = FieldLayout(LAYOUT_OBJECT_POINTER, PhantomData);
}

impl<R: crate::TypedRef> FieldLayout<R> {
    /// A typed reference: `repr(transparent)` over an `ObjectPtr` (the `TypedRef`
    /// contract), so laid out as one.
    pub(crate) const TYPED_REF: Self = FieldLayout(LAYOUT_OBJECT_POINTER, PhantomData);
}

impl<T> FieldLayout<T> {
    /// The layout of an integer type (used by the integer impls only, `unsigned` for
    /// the unsigned ones): one of 8 bytes (`i64`, `u64`, `usize`) is read in place as
    /// an `i64`'s bits, as its `borrow_value` sees it; the other widths through
    /// `borrow_value`.
    const fn int(unsigned: bool) -> Self {
        if core::mem::size_of::<T>() != 8 || core::mem::align_of::<T>() != 8 {
            FieldLayout(LAYOUT_OTHER, PhantomData)
        } else if unsigned {
            FieldLayout(LAYOUT_U64, PhantomData)
        } else {
            FieldLayout(LAYOUT_I64, PhantomData)
        }
    }
}

impl<E: ObjectEnum> FieldLayout<E> {
    /// The layout of a field-less enum (used by `#[derive(ObjectEnum)]`): one of
    /// integer representation (`#[repr(u8)]`, …: [`EnumRepr::Int`], of the enum's own
    /// size and alignment) is read in place as that integer, widened to an `i64` as
    /// `Variant as i64` widens it; any other through `borrow_value`.
    pub const fn object_enum() -> Self {
        let EnumRepr::Int { size, signed } = E::ENUM_INFO.repr() else {
            return FieldLayout(LAYOUT_OTHER, PhantomData);
        };
        if core::mem::size_of::<E>() != size as usize || core::mem::align_of::<E>() != size as usize
        {
            return FieldLayout(LAYOUT_OTHER, PhantomData);
        }
        let tag = match (size, signed) {
            (1, true) => LAYOUT_I8,
            (1, false) => LAYOUT_U8,
            (2, true) => LAYOUT_I16,
            (2, false) => LAYOUT_U16,
            (4, true) => LAYOUT_I32,
            (4, false) => LAYOUT_U32,
            // (`u64` too: its value is `Variant as i64`, the same bits.)
            (8, _) => LAYOUT_I64,
            _ => LAYOUT_OTHER,
        };
        FieldLayout(tag, PhantomData)
    }
}

/// [`FieldLayout::OTHER`]'s tag.
pub(crate) const LAYOUT_OTHER: u8 = 0;
/// The tag of an `ObjectPtr<_>`'s layout.
pub(crate) const LAYOUT_OBJECT_POINTER: u8 = 1;
/// The tag of an `Option<ObjectPtr<_>>`'s layout.
pub(crate) const LAYOUT_OPTIONAL_OBJECT_POINTER: u8 = 2;
/// The tag of an 8-byte signed integer's layout (`i64`), read as an `i64`.
pub(crate) const LAYOUT_I64: u8 = 3;
/// The tag of an 8-byte unsigned integer's layout (`u64`, `usize`), read as an `i64`'s
/// bits like `LAYOUT_I64` (a value beyond `i64::MAX` as a negative number); the exact
/// reads (`field_ref`, `ObjectFields::get`) refuse such a value.
pub(crate) const LAYOUT_U64: u8 = 4;
/// The tags of the narrower integer layouts (set only by [`FieldLayout::object_enum`],
/// for enums of that integer representation): read in place and widened to an `i64`,
/// signed or not.
pub(crate) const LAYOUT_I8: u8 = 5;
/// See [`LAYOUT_I8`].
pub(crate) const LAYOUT_U8: u8 = 6;
/// See [`LAYOUT_I8`].
pub(crate) const LAYOUT_I16: u8 = 7;
/// See [`LAYOUT_I8`].
pub(crate) const LAYOUT_U16: u8 = 8;
/// See [`LAYOUT_I8`].
pub(crate) const LAYOUT_I32: u8 = 9;
/// See [`LAYOUT_I8`].
pub(crate) const LAYOUT_U32: u8 = 10;

/// A reflected value borrowed from where it is stored (an object's field, an `Any`, an
/// array slot), for as long as that lives: a plain value or string as an [`AnyView`]
/// (never an object), or an object as a borrowed handle. What
/// [`FieldValue::borrow_value`] returns and structural comparisons walk.
#[derive(Clone, Copy, Debug)]
pub enum ValueRef<'a> {
    /// A value that is neither an object nor a string: `None`, a number, `bool`,
    /// `DataType`, `Device`, an opaque pointer.
    Value(AnyView<'a>),
    /// A string, however it is stored.
    Str(&'a str),
    /// An object (strings and bytes included when they are objects).
    Object(&'a ObjectRef),
}

impl<'a> ValueRef<'a> {
    /// `any`'s value, its object borrowed from it.
    #[inline]
    pub fn from_any(any: &'a Any) -> ValueRef<'a> {
        if let Some(s) = any.as_str() {
            return ValueRef::Str(s);
        }
        match any.as_object() {
            Some(o) => ValueRef::Object(o),
            None => ValueRef::Value(any.view()),
        }
    }
}

/// [`FieldValue::Take`] of object handles: a generated constructor takes any handle
/// (`ObjectPtr<U>` or a typed reference) whose node is a subtype of the field's.
#[derive(Debug)]
pub enum ByHandle {}

/// [`FieldValue::Take`] of every other field type: a generated constructor takes
/// anything that converts `Into` the field's type.
#[derive(Debug)]
pub enum ByInto {}

/// How a value converts into a field of type `F` by the rule `How` (the field type's
/// [`FieldValue::Take`]). Implemented here for both rules; not for implementing.
#[doc(hidden)]
pub trait TakeAs<F, How> {
    /// Converts.
    fn take(self) -> F;
}

impl<T: Into<F>, F> TakeAs<F, ByInto> for T {
    #[inline(always)]
    fn take(self) -> F {
        self.into()
    }
}

/// What a generated constructor takes for a field of type `F`: for an object field
/// (`ObjectPtr<U>`, `ObjectRef`, a typed reference, also when written through a
/// `type` alias), the handle of any subtype of its node type, as it is; for any other
/// field, anything that converts `Into` `F` (`&str` for a `String`, a `Vec` for an
/// `Array`, …). Implemented for every such pair; there is nothing to implement.
///
/// ```
/// use object_core::prelude::*;
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.into_field.Expr")]
/// pub struct Expr { base: Object }
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.into_field.Int", parent = Expr)]
/// pub struct Int { base: Expr, value: i64 }
///
/// type ExprRef = ObjectPtr<Expr>;  // an alias still takes any subtype's handle
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.into_field.Neg", parent = Expr)]
/// pub struct Neg { base: Expr, arg: ExprRef, note: String }
///
/// let n = Neg::new(Int::new(1), "a note");  // `ObjectPtr<Int>` for `ExprRef`, `&str` for `String`
/// assert!(n.arg.is::<Int>());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used for a field of type `{F}`",
    label = "not a value for a `{F}` field",
    note = "an object field (`ObjectPtr<T>`, a typed reference) takes the handle of `T` or of any subtype of it; up-casts are free, but unrelated or base types need the checked `.downcast()`",
    note = "any other field takes a value of its type, or one that converts into it with `Into`"
)]
pub trait IntoField<F> {
    /// Converts.
    fn into_field(self) -> F;
}

impl<T, F> IntoField<F> for T
where
    F: FieldValue,
    T: TakeAs<F, F::Take>,
{
    #[inline(always)]
    fn into_field(self) -> F {
        self.take()
    }
}
