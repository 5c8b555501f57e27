//! `Array<T>` (`ffi.Array`, static index 71): a copy-on-write array of `Any` slots stored
//! inline after the object header, in one allocation, with a typed view on top.

use core::fmt;
use core::marker::PhantomData;
use core::ops::Index;

use object_core::{
    make_object_with_items, Any, AnyItem, Error, ErrorKind, InlineItems, Object, ObjectPtr,
    TypeError,
};

/// The object behind [`Array`]: header, a pointer to the slots (for C readers and for
/// `Debug`, which only has `&self`), length, capacity, then the `Any` slots.
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "ffi.Array", index = 71, final, opaque, builtin = ARRAY_HOOKS)]
pub struct ArrayObj {
    base: Object,
    data: *const Any,
    len: usize,
    cap: usize,
}

// SAFETY: the slots are owned by the object and `data` only ever points at them, in
// the object's own block; they change only through a unique handle (copy-on-write).
unsafe impl Send for ArrayObj {}
// SAFETY: as above; shared access reads only.
unsafe impl Sync for ArrayObj {}

// SAFETY: `ArrayObj` values are built only in this module (private fields) and only
// through `make_object_with_items`; `len`/`cap` change only through the setters.
unsafe impl InlineItems for ArrayObj {
    type Item = Any;
    #[inline]
    fn item_capacity(&self) -> usize {
        self.cap
    }
    #[inline]
    fn item_len(&self) -> usize {
        self.len
    }
    #[inline]
    unsafe fn set_item_len(&mut self, len: usize) {
        self.len = len;
    }
    #[inline]
    unsafe fn set_item_capacity(&mut self, cap: usize) {
        self.cap = cap;
    }
    #[inline]
    fn set_items_ptr(&mut self, ptr: *const Any) {
        self.data = ptr;
    }
}

impl ArrayObj {
    /// The items, borrowed for as long as the array object is: what a walk that holds
    /// `&ArrayObj` (found by `downcast_ref` on a borrowed handle) reads without
    /// cloning the array's handle.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Array, ArrayObj};
    /// use object_core::{Any, ObjectRef};
    ///
    /// let obj: ObjectRef = Array::from(vec![1i64, 2]).into_object_ptr().into_object_ref();
    /// let array: &ArrayObj = obj.downcast_ref().unwrap();
    /// assert_eq!(array.as_slots(), &[Any::from(1), Any::from(2)]);
    /// ```
    #[inline]
    pub fn as_slots(&self) -> &[Any] {
        // `ArrayObj`s are made only by `make_object_with_items`, which points `data` at
        // the `len` initialized slots with the allocation's provenance (not a `&self`'s).
        // SAFETY: as said; they change only through a unique handle, impossible while
        // `self` is borrowed through a shared one.
        unsafe { core::slice::from_raw_parts(self.data, self.len) }
    }
}

/// The items, as a list (what an `ffi.Array` held in an `Any` prints as).
impl fmt::Debug for ArrayObj {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.as_slots().iter().map(Any::view))
            .finish()
    }
}

fn new_obj(capacity: usize, items: impl IntoIterator<Item = Any>) -> ObjectPtr<ArrayObj> {
    make_object_with_items(
        ArrayObj {
            base: Object::new(),
            data: core::ptr::null(),
            len: 0,
            cap: 0,
        },
        capacity,
        items,
    )
}

/// An index past the end, or an item of the wrong type in a typed view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArrayError {
    /// `index` is not below `len`.
    OutOfRange {
        /// The index asked for.
        index: usize,
        /// The array's length.
        len: usize,
    },
    /// The item at `index` is not of the view's type.
    WrongType {
        /// The first bad index.
        index: usize,
        /// What was found there, and what was expected.
        error: TypeError,
    },
}

impl fmt::Display for ArrayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArrayError::OutOfRange { index, len } => {
                write!(
                    f,
                    "index {index} is out of range for an array of length {len}"
                )
            }
            ArrayError::WrongType { index, error } => write!(f, "item {index}: {error}"),
        }
    }
}

impl std::error::Error for ArrayError {}

/// A copy-on-write array of values, `ffi.Array`.
///
/// `T` is what the array holds: [`Any`] (anything), an object handle
/// (`ObjectPtr<Var>`, `ObjectRef`, [`String`](crate::String)), `i64` or `f64`. The
/// storage is always `Any` slots inline after the header (one allocation, amortized
/// growth), so one array can hold AST nodes and runtime values alike, and a checked,
/// zero-copy [`Array::cast`] turns an `Array<ObjectRef>` into an `Array<ObjectPtr<Var>>`.
///
/// Cloning shares the object. Mutation of a shared array copies it first, so a clone
/// never sees the change. Equality compares items as `Any` does: objects by identity.
///
/// ```
/// use object_containers::{Array, String};
/// use object_core::Any;
///
/// let mut a: Array<Any> = Array::new();
/// a.push(Any::from(1));
/// a.push(Any::from("two"));
/// let snapshot = a.clone();
/// a.push(Any::from(3.0));
/// assert_eq!((a.len(), snapshot.len()), (3, 2));
/// assert_eq!(a[1].as_str(), Some("two"));
///
/// let names: Array<String> = ["x", "y"].into_iter().map(String::from).collect();
/// assert_eq!(names.iter().map(|s| s.as_str()).collect::<Vec<_>>(), ["x", "y"]);
/// ```
#[repr(transparent)]
pub struct Array<T: AnyItem = Any> {
    obj: ObjectPtr<ArrayObj>,
    _items: PhantomData<T>,
}

impl<T: AnyItem> Array<T> {
    /// An empty array.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Array;
    /// let a: Array<i64> = Array::new();
    /// assert!(a.is_empty());
    /// ```
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty array with room for `n` items.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Array;
    /// let a: Array<f64> = Array::with_capacity(10);
    /// assert_eq!((a.len(), a.capacity()), (0, 10));
    /// ```
    pub fn with_capacity(n: usize) -> Self {
        Array {
            obj: new_obj(n, core::iter::empty()),
            _items: PhantomData,
        }
    }

    fn from_obj(obj: ObjectPtr<ArrayObj>) -> Self {
        Array {
            obj,
            _items: PhantomData,
        }
    }

    /// The number of items.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Array;
    /// let a = Array::from(vec![1i64, 2, 3]);
    /// assert_eq!(a.len(), 3);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.obj.item_len()
    }

    /// Whether there are no items.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Array;
    /// let mut a: Array<i64> = Array::new();
    /// assert!(a.is_empty());
    /// a.push(1);
    /// assert!(!a.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The allocated slots.
    pub fn capacity(&self) -> usize {
        self.obj.item_capacity()
    }

    /// The raw `Any` slots.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Array;
    /// use object_core::Any;
    /// let a = Array::from(vec![1i64, 2]);
    /// assert_eq!(a.as_slots(), &[Any::from(1), Any::from(2)]);
    /// ```
    #[inline]
    pub fn as_slots(&self) -> &[Any] {
        ObjectPtr::items(&self.obj)
    }

    /// The item at `index`, or `None` past the end.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Array, String};
    /// let names: Array<String> = ["x", "y"].into_iter().map(String::from).collect();
    /// assert_eq!(names.get(1).map(|s| s.as_str()), Some("y"));
    /// assert!(names.get(2).is_none());
    /// ```
    #[inline]
    pub fn get(&self, index: usize) -> Option<&T> {
        // SAFETY: every slot of an `Array<T>` matches `T` (checked on the way in).
        self.as_slots()
            .get(index)
            .map(|s| unsafe { T::from_slot_unchecked(s) })
    }

    /// The first item.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Array;
    /// assert_eq!(Array::from(vec![7i64, 8]).first(), Some(&7));
    /// assert_eq!(Array::<i64>::new().first(), None);
    /// ```
    pub fn first(&self) -> Option<&T> {
        self.get(0)
    }

    /// The last item.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Array;
    /// assert_eq!(Array::from(vec![7i64, 8]).last(), Some(&8));
    /// ```
    pub fn last(&self) -> Option<&T> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    /// Iterates over the items by reference (no clones).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Array;
    /// let a = Array::from(vec![1.5f64, 2.5]);
    /// assert_eq!(a.iter().sum::<f64>(), 4.0);
    /// ```
    #[inline]
    pub fn iter(&self) -> Iter<'_, T> {
        Iter {
            slots: self.as_slots().iter(),
            _items: PhantomData,
        }
    }

    /// Makes the array unique (copying it if shared) with room for `extra` more items.
    fn make_unique(&mut self, extra: usize) {
        let len = self.len();
        let need = len.saturating_add(extra);
        if ObjectPtr::strong_count(&self.obj) == 1 {
            if need > self.capacity() {
                let cap = need.max(self.capacity().saturating_mul(2)).max(4);
                ObjectPtr::grow_items(&mut self.obj, cap);
            }
        } else {
            let cap = need.max(len.saturating_mul(2)).max(4);
            self.obj = new_obj(cap, self.as_slots().iter().cloned());
        }
    }

    /// Appends an item (copying the array first if it is shared).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Array;
    /// let mut a = Array::from(vec![1i64]);
    /// let shared = a.clone();
    /// a.push(2);
    /// assert_eq!((a.len(), shared.len()), (2, 1), "the clone does not see the push");
    /// ```
    #[inline]
    pub fn push(&mut self, value: T) {
        if let Err(back) = ObjectPtr::push_item(&mut self.obj, value.into_any()) {
            self.push_slow(back);
        }
    }

    /// `push` when the array is shared or full: copy or grow, then push.
    #[cold]
    #[inline(never)]
    fn push_slow(&mut self, mut any: Any) {
        loop {
            self.make_unique(1);
            match ObjectPtr::push_item(&mut self.obj, any) {
                Ok(()) => return,
                Err(back) => any = back,
            }
        }
    }

    /// Removes and returns the last item.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Array;
    /// let mut a = Array::from(vec![1i64, 2]);
    /// assert_eq!(a.pop(), Some(2));
    /// assert_eq!(a.pop(), Some(1));
    /// assert_eq!(a.pop(), None);
    /// ```
    pub fn pop(&mut self) -> Option<T> {
        if self.is_empty() {
            return None;
        }
        self.make_unique(0);
        ObjectPtr::pop_item(&mut self.obj).and_then(|a| T::try_from_any(a).ok())
    }

    /// Inserts an item at `index` (shifting the rest right).
    ///
    /// # Errors
    ///
    /// [`ArrayError::OutOfRange`] if `index > len`; the array is unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Array;
    /// let mut a = Array::from(vec![1i64, 3]);
    /// a.insert(1, 2).unwrap();
    /// assert_eq!(a, Array::from(vec![1, 2, 3]));
    /// assert!(a.insert(9, 4).is_err());
    /// ```
    pub fn insert(&mut self, index: usize, value: T) -> Result<(), ArrayError> {
        let len = self.len();
        if index > len {
            return Err(ArrayError::OutOfRange { index, len });
        }
        self.push(value);
        if let Some(items) = ObjectPtr::items_mut(&mut self.obj) {
            items[index..].rotate_right(1);
        }
        Ok(())
    }

    /// Removes and returns the item at `index` (shifting the rest left).
    ///
    /// # Errors
    ///
    /// [`ArrayError::OutOfRange`] if `index >= len`.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Array, ArrayError};
    /// let mut a = Array::from(vec![1i64, 2, 3]);
    /// assert_eq!(a.remove(0), Ok(1));
    /// assert_eq!(a, Array::from(vec![2, 3]));
    /// assert_eq!(a.remove(5), Err(ArrayError::OutOfRange { index: 5, len: 2 }));
    /// ```
    pub fn remove(&mut self, index: usize) -> Result<T, ArrayError> {
        let len = self.len();
        if index >= len {
            return Err(ArrayError::OutOfRange { index, len });
        }
        self.make_unique(0);
        if let Some(items) = ObjectPtr::items_mut(&mut self.obj) {
            items[index..].rotate_left(1);
        }
        self.pop().ok_or(ArrayError::OutOfRange { index, len })
    }

    /// Replaces the item at `index`, returning the old one.
    ///
    /// # Errors
    ///
    /// [`ArrayError::OutOfRange`] if `index >= len`.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Array;
    /// let mut a = Array::from(vec![1i64, 2]);
    /// assert_eq!(a.set(1, 20), Ok(2));
    /// assert_eq!(a[1], 20);
    /// assert!(a.set(2, 0).is_err());
    /// ```
    pub fn set(&mut self, index: usize, value: T) -> Result<T, ArrayError> {
        let len = self.len();
        if index >= len {
            return Err(ArrayError::OutOfRange { index, len });
        }
        self.make_unique(0);
        let slot = ObjectPtr::items_mut(&mut self.obj).and_then(|items| items.get_mut(index));
        match slot {
            Some(slot) => {
                let old = core::mem::replace(slot, value.into_any());
                T::try_from_any(old).map_err(|error| ArrayError::WrongType { index, error })
            }
            None => Err(ArrayError::OutOfRange { index, len }),
        }
    }

    /// Removes every item (a shared array is left to its other handles).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Array;
    /// let mut a = Array::from(vec![1i64, 2]);
    /// let shared = a.clone();
    /// a.clear();
    /// assert_eq!((a.len(), shared.len()), (0, 2));
    /// ```
    pub fn clear(&mut self) {
        if ObjectPtr::strong_count(&self.obj) == 1 {
            ObjectPtr::truncate_items(&mut self.obj, 0);
        } else {
            *self = Self::new();
        }
    }

    /// A view of the same items as `U`, without copying, if every item is a `U`.
    ///
    /// # Errors
    ///
    /// [`ArrayError::WrongType`] naming the first item that is not a `U`.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Array;
    /// use object_core::{make_object, Object, ObjectPtr, ObjectRef};
    ///
    /// let items: Array<ObjectRef> = (0..3).map(|_| make_object(Object::new())).collect();
    /// let same: Array<ObjectPtr<Object>> = items.cast().unwrap();
    /// assert!(Array::ptr_eq(&same, &items));
    /// let mixed: Array<object_core::Any> = vec![1.into(), "x".into()].into_iter().collect();
    /// assert_eq!(mixed.cast::<i64>().unwrap_err().to_string(), "item 1: expected int, got ffi.String");
    /// ```
    pub fn cast<U: AnyItem>(&self) -> Result<Array<U>, ArrayError> {
        for (index, slot) in self.as_slots().iter().enumerate() {
            if !U::matches(slot) {
                return Err(ArrayError::WrongType {
                    index,
                    error: TypeError::new(U::expected(), slot.type_key()),
                });
            }
        }
        Ok(Array::from_obj(self.obj.clone()))
    }

    /// The same array with `Any` items (always possible).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Array;
    /// let ints = Array::from(vec![1i64, 2]);
    /// let anys = ints.clone().into_any_array();
    /// assert!(Array::ptr_eq(&anys, &ints), "the same object");
    /// ```
    pub fn into_any_array(self) -> Array<Any> {
        Array::from_obj(self.obj)
    }

    /// Whether two arrays share one object, whatever their item types
    /// (`Array::ptr_eq(&a, &b)`, as `Arc::ptr_eq`).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Array;
    /// let a = Array::from(vec![1i64]);
    /// assert!(Array::ptr_eq(&a, &a.clone()));
    /// assert!(!Array::ptr_eq(&a, &Array::from(vec![1i64])), "equal, not the same");
    /// ```
    #[inline]
    pub fn ptr_eq<U: AnyItem>(this: &Self, other: &Array<U>) -> bool {
        ObjectPtr::ptr_eq(&this.obj, &other.obj)
    }

    /// Whether `self` and `other` are the same array object (identity, as TVM's
    /// `same_as`); `==` compares items.
    ///
    /// ```
    /// use object_containers::Array;
    /// let a = Array::from(vec![1i64]);
    /// assert!(a.same_as(&a.clone()));
    /// assert!(!a.same_as(&Array::from(vec![1i64])) && a == Array::from(vec![1i64]));
    /// ```
    #[inline]
    pub fn same_as<U: AnyItem>(&self, other: &Array<U>) -> bool {
        ObjectPtr::ptr_eq(&self.obj, &other.obj)
    }

    /// The underlying object.
    #[inline]
    pub fn as_object_ptr(&self) -> &ObjectPtr<ArrayObj> {
        &self.obj
    }

    /// The underlying object, taking over this handle's reference.
    #[inline]
    pub fn into_object_ptr(self) -> ObjectPtr<ArrayObj> {
        self.obj
    }

    /// Wraps an array object, checking that every item is a `T`.
    ///
    /// # Errors
    ///
    /// [`ArrayError::WrongType`] naming the first item that is not a `T`.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::Array;
    /// use object_core::Any;
    /// let mixed: Array<Any> = vec![Any::from(1), Any::from("x")].into();
    /// let obj = mixed.into_object_ptr();
    /// assert!(Array::<i64>::from_object_ptr(obj.clone()).is_err());
    /// assert_eq!(Array::<Any>::from_object_ptr(obj).unwrap().len(), 2);
    /// ```
    pub fn from_object_ptr(obj: ObjectPtr<ArrayObj>) -> Result<Self, ArrayError> {
        Array::<Any>::from_obj(obj).cast()
    }
}

impl<T: AnyItem> Default for Array<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: AnyItem> Clone for Array<T> {
    #[inline]
    fn clone(&self) -> Self {
        Array {
            obj: self.obj.clone(),
            _items: PhantomData,
        }
    }
}

impl<T: AnyItem> Index<usize> for Array<T> {
    type Output = T;
    /// # Panics
    ///
    /// If `index` is out of range (use [`Array::get`] to get an `Option`).
    fn index(&self, index: usize) -> &T {
        match self.get(index) {
            Some(v) => v,
            None => panic!(
                "index {index} is out of range for an array of length {}",
                self.len()
            ),
        }
    }
}

impl<T: AnyItem> PartialEq for Array<T> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slots() == other.as_slots()
    }
}
impl<T: AnyItem> Eq for Array<T> {}

/// The items, as a list; objects through their reflection, shared ones once (see
/// [`debug_object`](object_core::reflection::debug_object)).
impl<T: AnyItem> fmt::Debug for Array<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.obj, f)
    }
}

impl<T: AnyItem> Extend<T> for Array<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        let mut iter = iter.into_iter().peekable();
        if iter.peek().is_none() {
            return; // nothing to add: a shared array stays shared
        }
        self.make_unique(iter.size_hint().0);
        for v in iter {
            self.push(v);
        }
    }
}

impl<T: AnyItem> FromIterator<T> for Array<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut iter = iter.into_iter();
        // The items written straight into the new block, as many as the iterator says
        // it has at least (no per-item capacity or sharing check); any it has beyond
        // that are pushed after.
        let at_least = iter.size_hint().0;
        let mut a = Array::from_obj(new_obj(
            at_least,
            iter.by_ref().take(at_least).map(AnyItem::into_any),
        ));
        a.extend(iter);
        a
    }
}

impl<T: AnyItem> From<Vec<T>> for Array<T> {
    fn from(v: Vec<T>) -> Self {
        Array::from_obj(new_obj(v.len(), v.into_iter().map(AnyItem::into_any)))
    }
}

/// Borrowing iterator over an [`Array`].
#[derive(Debug, Clone)]
pub struct Iter<'a, T> {
    slots: core::slice::Iter<'a, Any>,
    _items: PhantomData<T>,
}

impl<'a, T: AnyItem> Iterator for Iter<'a, T> {
    type Item = &'a T;
    #[inline]
    fn next(&mut self) -> Option<&'a T> {
        // SAFETY: every slot of an `Array<T>` matches `T` (checked on the way in).
        self.slots
            .next()
            .map(|s| unsafe { T::from_slot_unchecked(s) })
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.slots.size_hint()
    }
}

impl<T: AnyItem> ExactSizeIterator for Iter<'_, T> {}
impl<T: AnyItem> DoubleEndedIterator for Iter<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        // SAFETY: as in `next`.
        self.slots
            .next_back()
            .map(|s| unsafe { T::from_slot_unchecked(s) })
    }
}

impl<'a, T: AnyItem> IntoIterator for &'a Array<T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

/// Owning iterator over an [`Array`]: items are cloned out (a count increment for
/// objects), since the array may be shared.
#[derive(Debug, Clone)]
pub struct IntoIter<T: AnyItem> {
    array: Array<T>,
    next: usize,
}

impl<T: AnyItem> Iterator for IntoIter<T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        let v = self.array.get(self.next).cloned();
        self.next += 1;
        v
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.array.len().saturating_sub(self.next);
        (n, Some(n))
    }
}

impl<T: AnyItem> IntoIterator for Array<T> {
    type Item = T;
    type IntoIter = IntoIter<T>;
    fn into_iter(self) -> IntoIter<T> {
        IntoIter {
            array: self,
            next: 0,
        }
    }
}

impl<'a, T: AnyItem> From<&'a Array<T>> for object_core::AnyView<'a> {
    fn from(v: &'a Array<T>) -> Self {
        object_core::AnyView::from(&v.obj)
    }
}

impl<T: AnyItem> From<Array<T>> for Any {
    fn from(a: Array<T>) -> Any {
        Any::from(a.obj)
    }
}

impl<T: AnyItem> TryFrom<Any> for Array<T> {
    type Error = TypeError;
    /// Checks that the value is an `ffi.Array` whose items are all `T`.
    fn try_from(a: Any) -> Result<Self, TypeError> {
        let key = a.type_key();
        let obj = ObjectPtr::<ArrayObj>::try_from(a)?;
        Array::from_object_ptr(obj).map_err(|e| match e {
            ArrayError::WrongType { index, error } => TypeError::new(
                format!(
                    "ffi.Array of {} (item {index} is {})",
                    error.expected, error.actual
                ),
                key,
            ),
            ArrayError::OutOfRange { .. } => TypeError::new("ffi.Array", key),
        })
    }
}

// SAFETY: `Array<T>` is `repr(transparent)` over `ObjectPtr<ArrayObj>`; a slot matches
// when it holds an array object whose every item is a `T`.
unsafe impl<T: AnyItem> AnyItem for Array<T> {
    fn expected() -> std::borrow::Cow<'static, str> {
        format!("ffi.Array of {}", T::expected()).into()
    }
    fn into_any(self) -> Any {
        Any::from(self)
    }
    fn matches(slot: &Any) -> bool {
        slot.as_object_of::<ArrayObj>()
            .is_some_and(|o| ObjectPtr::items(o).iter().all(T::matches))
    }
    fn from_slot(slot: &Any) -> Option<&Self> {
        if !Self::matches(slot) {
            return None;
        }
        let p = slot.as_object_of::<ArrayObj>()?;
        // SAFETY: `Array<T>` is `repr(transparent)` over `ObjectPtr<ArrayObj>`, and the
        // items were just checked.
        Some(unsafe { &*(p as *const ObjectPtr<ArrayObj> as *const Array<T>) })
    }
    /// Without the check of every item (a slot known to match holds an `ArrayObj`, which
    /// is all the cast needs): `Array<Array<T>>::get` is then O(1), not O(inner length).
    unsafe fn from_slot_unchecked(slot: &Any) -> &Self {
        match slot.as_object_of::<ArrayObj>() {
            // SAFETY: `Array<T>` is `repr(transparent)` over `ObjectPtr<ArrayObj>`, and the
            // caller guarantees the items match.
            Some(p) => unsafe { &*(p as *const ObjectPtr<ArrayObj> as *const Array<T>) },
            // SAFETY: the caller guarantees the slot matches, so it holds a `ArrayObj`.
            None => unsafe { core::hint::unreachable_unchecked() },
        }
    }
    fn try_from_any(slot: Any) -> Result<Self, TypeError> {
        Array::try_from(slot)
    }
}

impl From<ArrayError> for Error {
    fn from(e: ArrayError) -> Self {
        match e {
            ArrayError::OutOfRange { .. } => Error::new(ErrorKind::IndexError, e.to_string()),
            ArrayError::WrongType { .. } => Error::type_error(e.to_string()),
        }
    }
}

super::view_field_value!(Array<T>, "ffi.Array");

crate::function::impl_call_traits!(impl<T: AnyItem> Array<T>);

/// An array is a built-in of shape items: lent in place, built from a `Vec` of them.
static ARRAY_HOOKS: object_core::builtin::BuiltinHooks = object_core::builtin::BuiltinHooks {
    shape: object_core::builtin::BuiltinShape::Items,
    mutable: false,
    contents: array_contents,
    build: |parts| match parts {
        // (In one block of the iterator's length: items past it are not taken.)
        object_core::builtin::Parts::Items(items) => Ok(Any::from(Array::<Any>::from_obj(
            new_obj(items.len(), items),
        ))),
        other => Err(object_core::builtin::BuiltinError::wrong_shape(
            object_core::builtin::BuiltinShape::Items,
            &other,
        )),
    },
};

/// The contents of `obj` (a named function: no closure shim on the walkers' path).
fn array_contents(obj: &object_core::ObjectRef) -> object_core::builtin::Contents<'_> {
    match obj.downcast_ptr_ref::<ArrayObj>() {
        Some(p) => object_core::builtin::Contents::Items(ObjectPtr::items(p)),
        None => object_core::builtin::Contents::Identity,
    }
}
