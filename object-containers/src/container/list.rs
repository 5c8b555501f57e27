//! `List<T>` (`ffi.List`, static index 75): the *mutable* counterpart of
//! [`Array`](super::Array). One shared object that every holder sees change: no
//! copy-on-write; mutation goes through `&self`, under a lock inside the object.

use core::fmt;
use core::marker::PhantomData;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use object_core::{make_object, Any, AnyItem, AnyView, Object, ObjectPtr, TypeError};

use super::{Array, ArrayError};

/// The object behind [`List`]: the header and the items behind a reader-writer lock.
///
/// The lock is held only for the length of one operation on the `Vec` and never while
/// code outside this module runs: items are cloned out (an atomic increment) and
/// removed items are dropped after the lock is released, so a deleter that touches the
/// same list (through a user `Drop`) cannot deadlock, and printing a list that contains
/// itself does not re-enter the lock.
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "ffi.List", index = 75, final, opaque, builtin = LIST_HOOKS)]
pub struct ListObj {
    base: Object,
    items: RwLock<Vec<Any>>,
}

impl ListObj {
    /// Shared access to the items. A poisoned lock is taken anyway: no operation here
    /// can leave the `Vec` half-changed (each is one `Vec` call; allocation failure
    /// aborts), so a panic elsewhere while it was held broke nothing.
    fn read(&self) -> RwLockReadGuard<'_, Vec<Any>> {
        self.items.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Vec<Any>> {
        self.items.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// A copy of the items (each a new reference), taken under the lock.
    fn snapshot(&self) -> Vec<Any> {
        self.read().clone()
    }
}

/// The items, as a list (what an `ffi.List` held in an `Any` prints as). The items are
/// copied out first, so the lock is not held while they print, and once per print
/// (`print_snapshot`), so the printer's two walks see the same items.
impl fmt::Debug for ListObj {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items = object_core::reflection::print_snapshot(self, || self.snapshot());
        f.debug_list().entries(items.iter().map(Any::view)).finish()
    }
}

/// A mutable, shared list of values, `ffi.List`.
///
/// Unlike [`Array`], a `List` is *one* object that every holder sees change: cloning a
/// `List` clones the handle, and [`push`](List::push), [`set`](List::set),
/// [`remove`](List::remove) … take `&self` and change the object for everyone (as a
/// Python list does). Storage is a `Vec<Any>` behind an `RwLock` inside the object.
///
/// **Typed views.** `T` says what the list holds, as for `Array<T>`, but since another
/// handle (a `List<Any>` of the same object, a foreign caller) may store anything at
/// any time, a `List<T>` cannot promise that every item is a `T`: writes take a `T`,
/// reads convert and report a mismatch ([`ArrayError::WrongType`]). Reads return
/// clones (new references), never references into the storage, which a concurrent
/// `push` could move.
///
/// # Thread Safety
///
/// `List<T>` is `Send + Sync`: every access to the items takes the lock (reads share
/// it), and items are `Any`s, which are `Send + Sync` (every object type is). Each
/// method is atomic on its own; a sequence of calls is not (another thread may change
/// the list between a `len` and a `get`: hence `get` returns an error rather than
/// panicking).
///
/// # Cycles
///
/// A list can contain itself (`l.push(Any::from(l.clone()))`) or reach itself through
/// other objects. Such a cycle is never freed by reference counting: it leaks until it
/// is broken by hand (`clear`, `pop`, `set`). The printer prints the repeated list as
/// a back-reference (`ffi.List #1 [#1]`); saving a JSON graph that contains a cycle is
/// an error (`GraphErrorKind::Cycle`), never a hang; `==` compares items as `Any` does
/// (objects by identity), so it does not descend into the cycle. Structural equality
/// compares lists by contents and ends on cycles (bisimulation: `l1 = [l1]` equals
/// `l2 = [l2]`; see `object_core::structural`).
///
/// ```
/// use object_containers::List;
/// use object_core::Any;
///
/// let a: List<i64> = List::new();
/// let b = a.clone(); // the same list
/// a.push(1);
/// b.push(2);
/// assert_eq!(a.to_vec().unwrap(), [1, 2]);
/// assert!(List::ptr_eq(&a, &b));
///
/// let any: List<Any> = a.cast().unwrap();
/// any.push(Any::from("three")); // another view may store anything
/// assert!(a.get(2).is_err(), "typed reads are checked");
/// ```
#[repr(transparent)]
pub struct List<T: AnyItem = Any> {
    obj: ObjectPtr<ListObj>,
    _items: PhantomData<T>,
}

fn new_obj(items: Vec<Any>) -> ObjectPtr<ListObj> {
    make_object(ListObj {
        base: Object::new(),
        items: RwLock::new(items),
    })
}

impl<T: AnyItem> List<T> {
    /// An empty list.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::List;
    /// let l: List<i64> = List::new();
    /// assert!(l.is_empty());
    /// ```
    pub fn new() -> Self {
        Self::from_obj(new_obj(Vec::new()))
    }

    /// An empty list with room for `n` items.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::List;
    /// let l: List<i64> = List::with_capacity(8);
    /// assert_eq!(l.len(), 0);
    /// ```
    pub fn with_capacity(n: usize) -> Self {
        Self::from_obj(new_obj(Vec::with_capacity(n)))
    }

    fn from_obj(obj: ObjectPtr<ListObj>) -> Self {
        List {
            obj,
            _items: PhantomData,
        }
    }

    fn convert(index: usize, item: Any) -> Result<T, ArrayError> {
        T::try_from_any(item).map_err(|error| ArrayError::WrongType { index, error })
    }

    /// The number of items now.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::List;
    /// let l: List<i64> = [1, 2, 3].into_iter().collect();
    /// assert_eq!(l.len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        self.obj.read().len()
    }

    /// Whether the list is empty now.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::List;
    /// let l: List<i64> = List::new();
    /// assert!(l.is_empty());
    /// l.push(1);
    /// assert!(!l.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A clone of the item at `index`.
    ///
    /// # Errors
    ///
    /// [`ArrayError::OutOfRange`] past the end, [`ArrayError::WrongType`] for an item
    /// that is not a `T` (stored through another view).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{ArrayError, List};
    /// let l: List<i64> = [1, 2].into_iter().collect();
    /// assert_eq!(l.get(1), Ok(2));
    /// assert_eq!(l.get(5), Err(ArrayError::OutOfRange { index: 5, len: 2 }));
    /// ```
    pub fn get(&self, index: usize) -> Result<T, ArrayError> {
        let item = {
            let items = self.obj.read();
            match items.get(index) {
                Some(v) => v.clone(),
                None => {
                    return Err(ArrayError::OutOfRange {
                        index,
                        len: items.len(),
                    })
                }
            }
        };
        Self::convert(index, item)
    }

    /// Appends an item.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::List;
    /// let l: List<i64> = List::new();
    /// let alias = l.clone(); // `push` takes `&self`: every handle sees it
    /// l.push(1);
    /// assert_eq!(alias.to_vec().unwrap(), [1]);
    /// ```
    pub fn push(&self, value: T) {
        let value = value.into_any();
        self.obj.write().push(value);
    }

    /// Removes and returns the last item, as it was stored (`None` when empty).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Any, List};
    /// let l: List<i64> = [1, 2].into_iter().collect();
    /// assert_eq!(l.pop(), Some(Any::from(2)));
    /// assert_eq!(l.pop(), Some(Any::from(1)));
    /// assert_eq!(l.pop(), None);
    /// ```
    pub fn pop(&self) -> Option<Any> {
        let last = self.obj.write().pop();
        last
    }

    /// Replaces the item at `index`; returns the old one, as it was stored (dropped by
    /// the caller, after the lock is released).
    ///
    /// # Errors
    ///
    /// [`ArrayError::OutOfRange`] past the end.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Any, List};
    /// let l: List<i64> = [1, 2].into_iter().collect();
    /// assert_eq!(l.set(0, 10), Ok(Any::from(1)));
    /// assert_eq!(l.to_vec().unwrap(), [10, 2]);
    /// assert!(l.set(2, 30).is_err());
    /// ```
    pub fn set(&self, index: usize, value: T) -> Result<Any, ArrayError> {
        let value = value.into_any();
        let mut items = self.obj.write();
        let len = items.len();
        match items.get_mut(index) {
            Some(slot) => Ok(core::mem::replace(slot, value)),
            None => Err(ArrayError::OutOfRange { index, len }),
        }
    }

    /// Inserts `value` before `index` (`index == len` appends).
    ///
    /// # Errors
    ///
    /// [`ArrayError::OutOfRange`] for an index past `len`.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::List;
    /// let l: List<i64> = [1, 3].into_iter().collect();
    /// l.insert(1, 2).unwrap();
    /// l.insert(3, 4).unwrap(); // at the end
    /// assert_eq!(l.to_vec().unwrap(), [1, 2, 3, 4]);
    /// assert!(l.insert(9, 0).is_err());
    /// ```
    pub fn insert(&self, index: usize, value: T) -> Result<(), ArrayError> {
        let value = value.into_any();
        let mut items = self.obj.write();
        if index > items.len() {
            return Err(ArrayError::OutOfRange {
                index,
                len: items.len(),
            });
        }
        items.insert(index, value);
        Ok(())
    }

    /// Removes and returns the item at `index`, as it was stored.
    ///
    /// # Errors
    ///
    /// [`ArrayError::OutOfRange`] past the end.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Any, List};
    /// let l: List<i64> = [1, 2, 3].into_iter().collect();
    /// assert_eq!(l.remove(1), Ok(Any::from(2)));
    /// assert_eq!(l.to_vec().unwrap(), [1, 3]);
    /// ```
    pub fn remove(&self, index: usize) -> Result<Any, ArrayError> {
        let mut items = self.obj.write();
        if index >= items.len() {
            return Err(ArrayError::OutOfRange {
                index,
                len: items.len(),
            });
        }
        Ok(items.remove(index))
    }

    /// Removes every item (they are released after the lock is).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Any, List};
    /// let l: List<Any> = List::new();
    /// l.push(Any::from(l.clone())); // a list that holds itself leaks...
    /// l.clear(); // ...until the cycle is broken
    /// assert!(l.is_empty());
    /// ```
    pub fn clear(&self) {
        let old = core::mem::take(&mut *self.obj.write());
        drop(old);
    }

    /// Clones of the items, converted.
    ///
    /// # Errors
    ///
    /// [`ArrayError::WrongType`] for the first item that is not a `T`.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Any, List};
    /// let l: List<i64> = [1, 2].into_iter().collect();
    /// assert_eq!(l.to_vec().unwrap(), [1, 2]);
    /// l.cast::<Any>().unwrap().push(Any::from("three"));
    /// assert!(l.to_vec().is_err()); // another view stored a string
    /// ```
    pub fn to_vec(&self) -> Result<Vec<T>, ArrayError> {
        self.obj
            .snapshot()
            .into_iter()
            .enumerate()
            .map(|(i, v)| Self::convert(i, v))
            .collect()
    }

    /// The items now, as an immutable [`Array`] (a copy of the slots).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::List;
    /// let l: List<i64> = [1, 2].into_iter().collect();
    /// let frozen = l.to_array();
    /// l.push(3);
    /// assert_eq!((frozen.len(), l.len()), (2, 3));
    /// ```
    pub fn to_array(&self) -> Array<Any> {
        Array::from(self.obj.snapshot())
    }

    /// The same list viewed as holding `U`, if every item is one now (a later write
    /// through another view may change that: typed reads stay checked).
    ///
    /// # Errors
    ///
    /// A [`TypeError`] for the first item that is not a `U`.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Any, List};
    /// let any: List<Any> = vec![Any::from(1), Any::from(2)].into();
    /// let ints: List<i64> = any.cast().unwrap();
    /// assert_eq!(ints.get(1), Ok(2));
    /// any.push(Any::from("x"));
    /// assert!(any.cast::<i64>().is_err());
    /// ```
    pub fn cast<U: AnyItem>(&self) -> Result<List<U>, TypeError> {
        // Checked on a snapshot: `matches` of a nested list takes that list's lock,
        // which may be this one.
        for item in &self.obj.snapshot() {
            if !U::matches(item) {
                return Err(TypeError::new(U::expected(), item.type_key()));
            }
        }
        Ok(List::from_obj(self.obj.clone()))
    }

    /// Whether two handles are the same list, whatever their item types.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::List;
    /// let a: List<i64> = [1].into_iter().collect();
    /// let b: List<i64> = [1].into_iter().collect();
    /// assert!(List::ptr_eq(&a, &a.clone()));
    /// assert!(!List::ptr_eq(&a, &b));
    /// assert_eq!(a, b); // `==` compares the items
    /// ```
    #[inline]
    pub fn ptr_eq<U: AnyItem>(this: &Self, other: &List<U>) -> bool {
        ObjectPtr::ptr_eq(&this.obj, &other.obj)
    }

    /// The underlying object.
    #[inline]
    pub fn as_object_ptr(&self) -> &ObjectPtr<ListObj> {
        &self.obj
    }

    /// The underlying object, taking over this handle's reference.
    #[inline]
    pub fn into_object_ptr(self) -> ObjectPtr<ListObj> {
        self.obj
    }

    /// Wraps a list object, checking that every item is a `T` now.
    ///
    /// # Errors
    ///
    /// A [`TypeError`] for the first item that is not.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_containers::{Any, List};
    /// let l: List<Any> = vec![Any::from(1), Any::from("two")].into();
    /// let obj = l.into_object_ptr();
    /// assert!(List::<i64>::from_object_ptr(obj.clone()).is_err());
    /// assert_eq!(List::<Any>::from_object_ptr(obj).unwrap().len(), 2);
    /// ```
    pub fn from_object_ptr(obj: ObjectPtr<ListObj>) -> Result<Self, TypeError> {
        List::<Any>::from_obj(obj).cast()
    }
}

impl<T: AnyItem> Default for List<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Another handle to the same list (not a copy).
impl<T: AnyItem> Clone for List<T> {
    fn clone(&self) -> Self {
        List::from_obj(self.obj.clone())
    }
}

/// The same items now (as `Any` compares: objects by identity, so a list that contains
/// itself compares without descending). Each list is read under its own lock in turn,
/// never both at once.
impl<T: AnyItem> PartialEq for List<T> {
    fn eq(&self, other: &Self) -> bool {
        List::ptr_eq(self, other) || self.obj.snapshot() == other.obj.snapshot()
    }
}

/// The items, as a list; objects through their reflection, shared ones (and the list
/// itself, if it is inside) once.
impl<T: AnyItem> fmt::Debug for List<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.obj, f)
    }
}

impl<T: AnyItem> Extend<T> for List<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        let new: Vec<Any> = iter.into_iter().map(AnyItem::into_any).collect();
        self.obj.write().extend(new);
    }
}

impl<T: AnyItem> FromIterator<T> for List<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Self::from_obj(new_obj(iter.into_iter().map(AnyItem::into_any).collect()))
    }
}

impl<T: AnyItem> From<Vec<T>> for List<T> {
    fn from(v: Vec<T>) -> Self {
        v.into_iter().collect()
    }
}

impl<'a, T: AnyItem> From<&'a List<T>> for AnyView<'a> {
    fn from(v: &'a List<T>) -> Self {
        AnyView::from(&v.obj)
    }
}

impl<T: AnyItem> From<List<T>> for Any {
    fn from(l: List<T>) -> Any {
        Any::from(l.obj)
    }
}

impl<T: AnyItem> TryFrom<Any> for List<T> {
    type Error = TypeError;
    /// Checks that the value is an `ffi.List` whose items are all `T` now.
    fn try_from(a: Any) -> Result<Self, TypeError> {
        List::from_object_ptr(ObjectPtr::<ListObj>::try_from(a)?)
    }
}

// SAFETY: `List<T>` is `repr(transparent)` over `ObjectPtr<ListObj>` whatever `T` is
// (`PhantomData` is zero-sized), so a slot that holds a list object is a valid
// `List<T>`. Soundness never rests on the items: `matches` checks them as they are now,
// but no view of a shared mutable list can keep that true, so every typed read of a
// `List<T>` checks its item again.
unsafe impl<T: AnyItem> AnyItem for List<T> {
    fn expected() -> std::borrow::Cow<'static, str> {
        format!("ffi.List of {}", T::expected()).into()
    }
    fn into_any(self) -> Any {
        Any::from(self)
    }
    fn matches(slot: &Any) -> bool {
        slot.as_object_of::<ListObj>()
            .is_some_and(|o| o.snapshot().iter().all(T::matches))
    }
    fn from_slot(slot: &Any) -> Option<&Self> {
        if !Self::matches(slot) {
            return None;
        }
        let p = slot.as_object_of::<ListObj>()?;
        // SAFETY: `List<T>` is `repr(transparent)` over `ObjectPtr<ListObj>`.
        Some(unsafe { &*(p as *const ObjectPtr<ListObj> as *const List<T>) })
    }
    /// Without the item check (which copies the items): a slot known to match holds
    /// a `ListObj`, which is all the cast needs.
    unsafe fn from_slot_unchecked(slot: &Any) -> &Self {
        match slot.as_object_of::<ListObj>() {
            // SAFETY: `List<T>` is `repr(transparent)` over `ObjectPtr<ListObj>`.
            Some(p) => unsafe { &*(p as *const ObjectPtr<ListObj> as *const List<T>) },
            // SAFETY: the caller guarantees the slot matches, so it holds a `ListObj`.
            None => unsafe { core::hint::unreachable_unchecked() },
        }
    }
    fn try_from_any(slot: Any) -> Result<Self, TypeError> {
        List::try_from(slot)
    }
}

super::view_field_value!(List<T>, "ffi.List");

crate::function::impl_call_traits!(impl<T: AnyItem> List<T>);

/// A list is a mutable built-in of shape items: walkers read a snapshot of its items
/// taken under the lock (so none is held while they are compared, rewritten or saved);
/// one is built as a new list.
static LIST_HOOKS: object_core::builtin::BuiltinHooks = object_core::builtin::BuiltinHooks {
    shape: object_core::builtin::BuiltinShape::Items,
    mutable: true,
    contents: list_contents,
    build: |parts| match parts {
        object_core::builtin::Parts::Items(items) => {
            Ok(Any::from(items.into_iter().collect::<List<Any>>()))
        }
        other => Err(object_core::builtin::BuiltinError::wrong_shape(
            object_core::builtin::BuiltinShape::Items,
            &other,
        )),
    },
};

/// The contents of `obj` (a named function: no closure shim on the walkers' path).
fn list_contents(obj: &object_core::ObjectRef) -> object_core::builtin::Contents<'_> {
    match obj.downcast_ref::<ListObj>() {
        Some(l) => object_core::builtin::Contents::SnapshotItems(l.snapshot()),
        None => object_core::builtin::Contents::Identity,
    }
}
