//! `Shape` (`ffi.Shape`, static index 69): an immutable list of `i64` dimensions stored
//! inline after the header (with a data pointer and size, as C readers expect).

use core::fmt;
use core::ops::Deref;

use object_core::{make_object_with_slice, InlineItems, Object, ObjectPtr};

/// The object behind [`Shape`].
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "ffi.Shape", index = 69, final, opaque, builtin = SHAPE_HOOKS)]
pub struct ShapeObj {
    base: Object,
    data: *const i64,
    size: usize,
}

// SAFETY: the dimensions are immutable after construction and owned by the object;
// `data` only points into the object's own block.
unsafe impl Send for ShapeObj {}
// SAFETY: as above; shared access is read-only.
unsafe impl Sync for ShapeObj {}

// SAFETY: values are built only by `Shape::new` (private fields), through
// `make_object_with_slice` with capacity `size`, fully initialized; the setters only
// record (the count always equals the capacity).
unsafe impl InlineItems for ShapeObj {
    type Item = i64;
    // Fixed at creation: the setters below only record, so nothing may resize.
    const RESIZABLE: bool = false;
    fn item_capacity(&self) -> usize {
        self.size
    }
    fn item_len(&self) -> usize {
        self.size
    }
    unsafe fn set_item_len(&mut self, _len: usize) {}
    unsafe fn set_item_capacity(&mut self, _cap: usize) {}
    fn set_items_ptr(&mut self, ptr: *const i64) {
        self.data = ptr;
    }
}

impl ShapeObj {
    /// The dimensions.
    fn dims(&self) -> &[i64] {
        // SAFETY: `data` points at the `size` dimensions in this object's own block
        // (set by the allocator from the allocation's pointer), immutable while it lives.
        unsafe { core::slice::from_raw_parts(self.data, self.size) }
    }
}

/// The dimensions, as a list.
impl fmt::Debug for ShapeObj {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.dims(), f)
    }
}

/// An immutable tensor shape, `ffi.Shape`: dimensions inline in one allocation, cheap to
/// clone, compared by value.
///
/// ```
/// use object_containers::Shape;
/// let s = Shape::from(&[2, 3, 4][..]);
/// assert_eq!(s.len(), 3);
/// assert_eq!(s.iter().product::<i64>(), 24);
/// assert_eq!(s, Shape::from(vec![2, 3, 4]));
/// assert_eq!(format!("{s:?}"), "[2, 3, 4]");
/// ```
#[repr(transparent)]
#[derive(Clone)]
pub struct Shape(ObjectPtr<ShapeObj>);

impl Shape {
    /// A shape with these dimensions.
    pub fn new(dims: &[i64]) -> Self {
        let value = ShapeObj {
            base: Object::new(),
            data: core::ptr::null(),
            size: dims.len(),
        };
        Shape(make_object_with_slice(value, dims.len(), dims, 0))
    }
    /// The dimensions.
    #[inline]
    pub fn as_slice(&self) -> &[i64] {
        ObjectPtr::items(&self.0)
    }
    /// The number of elements (the product of the dimensions), or `None` on overflow or
    /// a negative dimension. A zero dimension makes 0, whatever the product of the
    /// others (`[1 << 62, 4, 0]` is empty, not an overflow).
    pub fn numel(&self) -> Option<i64> {
        if self.iter().any(|&d| d < 0) {
            return None;
        }
        if self.contains(&0) {
            return Some(0);
        }
        self.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d))
    }
}

impl Deref for Shape {
    type Target = [i64];
    fn deref(&self) -> &[i64] {
        self.as_slice()
    }
}
impl PartialEq for Shape {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}
impl Eq for Shape {}
impl core::hash::Hash for Shape {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state)
    }
}
impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_slice(), f)
    }
}
impl From<&[i64]> for Shape {
    fn from(d: &[i64]) -> Self {
        Shape::new(d)
    }
}
impl From<Vec<i64>> for Shape {
    fn from(d: Vec<i64>) -> Self {
        Shape::new(&d)
    }
}
impl<const N: usize> From<[i64; N]> for Shape {
    fn from(d: [i64; N]) -> Self {
        Shape::new(&d)
    }
}
crate::handle::object_handle!(Shape, ShapeObj, "ffi.Shape");
crate::function::impl_call_traits!(Shape);

/// A shape is a built-in of shape integers: its dimensions.
static SHAPE_HOOKS: object_core::builtin::BuiltinHooks = object_core::builtin::BuiltinHooks {
    shape: object_core::builtin::BuiltinShape::Ints,
    mutable: false,
    contents: shape_contents,
    build: |parts| match parts {
        object_core::builtin::Parts::Ints(dims) => Ok(object_core::Any::from(Shape::new(&dims))),
        other => Err(object_core::builtin::BuiltinError::wrong_shape(
            object_core::builtin::BuiltinShape::Ints,
            &other,
        )),
    },
};

/// The contents of `obj` (a named function: no closure shim on the walkers' path).
fn shape_contents(obj: &object_core::ObjectRef) -> object_core::builtin::Contents<'_> {
    match obj.downcast_ptr_ref::<ShapeObj>() {
        Some(p) => object_core::builtin::Contents::Ints(ObjectPtr::items(p)),
        None => object_core::builtin::Contents::Identity,
    }
}
