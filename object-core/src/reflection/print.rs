//! The printer behind every object's `Debug`: reflected types as `key { field: value,
//! … }`, shared objects labelled and printed once, nesting bounded.
//!
//! Two passes over the same graph: one counts how often each object is reached, the
//! other prints, labelling the objects reached more than once. Both must see the same
//! graph, so a mutable container's contents are copied once per print
//! ([`print_snapshot`]) and the printing pass reuses the counting pass's copy.

use core::any::{Any as StdAny, TypeId};
use core::cell::RefCell;
use core::fmt;
use std::collections::HashMap;
use std::rc::Rc;

use super::{print_slot, raw, AttrVisitor, FieldInfo, Reflect};
use crate::any::AnyView;
use crate::builtin::{BuiltinHooks, BuiltinShape};
use crate::object_type::ObjectType;
use crate::ptr::{ObjectPtr, ObjectRef};

/// How deep the printer descends before writing `…`.
const MAX_PRINT_DEPTH: usize = 96;

#[derive(Default)]
pub(super) struct PrintState {
    /// Objects seen in the counting pass, and how often. The printing pass sets an
    /// object's count to 0 once it has printed it in full without a label.
    seen: HashMap<usize, u32>,
    /// The contents of the mutable containers met, by address and snapshot type, kept
    /// from the counting pass to the end of the print (which also keeps every object
    /// they hold alive, so no address in `seen` is reused by another object).
    snapshots: HashMap<(usize, TypeId), Rc<dyn StdAny>>,
    /// Labels of shared objects already printed in full.
    labels: HashMap<usize, usize>,
    next_label: usize,
    counting: bool,
    depth: usize,
}

/// Discards output (the counting pass).
struct Sink;
impl fmt::Write for Sink {
    fn write_str(&mut self, _: &str) -> fmt::Result {
        Ok(())
    }
}

/// Formats an object through its run-time type: reflected types as
/// `key { field: value, … }` (pretty with `{:#?}`), built-ins through their own
/// `Debug`. An object reached more than once in the printed graph is printed in full
/// the first time, labelled (`tour.Var #1 { … }`, `ffi.Array #1 [1, 2]`), and as `#1`
/// afterwards. Nesting deeper than 96 objects is elided as `key { … }`.
///
/// Every object handle's `Debug` is this.
///
/// # Containers that change
///
/// The printer walks the graph twice (counting, then printing). A mutable container
/// (`List`, `Dict`, or any type whose `Debug` reads its contents through
/// [`print_snapshot`]) is copied once per print, when first reached, and both walks
/// read that copy: another thread changing the container meanwhile cannot make the
/// text disagree with itself (a dict that comes to hold itself mid-print is printed as
/// it was, and as `#n` inside itself from the next print on).
///
/// # Size of the text
///
/// Each object is printed in full at most once per print; every further reference is
/// `#n` (or `key { … }` past the depth limit, or for an object whose `Debug` showed
/// different contents in the two walks), so the text grows linearly with the number
/// of objects and references reached, whatever the sharing or the cycles (`{:#?}`'s
/// indentation adds at most 96 levels a line). The exception is strings and bytes:
/// they are values, printed by content at each reference, so a string held by `n`
/// fields or items is printed `n` times, as a `Vec<Arc<str>>`'s `Debug` would.
///
/// # Errors
///
/// Only the formatter's.
///
/// # Examples
///
/// ```
/// use object_core::prelude::*;
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.print.Pair")]
/// struct Pair { base: Object, a: ObjectRef, b: ObjectRef }
///
/// let shared: ObjectRef = make_object(Object::new());
/// let p = Pair::new(shared.clone(), shared);
/// assert_eq!(format!("{p:?}"), "doc.print.Pair { a: ffi.Object #1, b: #1 }");
/// ```
pub fn debug_object(obj: &ObjectRef, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    print_graph(&DynObject(obj), f)
}

/// Prints `root` with graph state: a counting pass, then the printing pass. Nested
/// calls (an object inside a container inside an object) join the outermost print.
fn print_graph(root: &dyn fmt::Debug, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    // Join the print in progress; without a slot, `reach` degrades every object to
    // `key { … }`.
    if print_slot::in_progress() != Some(false) {
        return root.fmt(f);
    }
    let state = RefCell::new(PrintState {
        counting: true,
        ..PrintState::default()
    });
    print_slot::with_installed(&state, || {
        let _ = fmt::write(&mut Sink, format_args!("{root:?}"));
        {
            let mut s = state.borrow_mut();
            s.counting = false;
            s.depth = 0;
        }
        root.fmt(f)
    })
}

/// What the printer does on reaching an object.
enum Reach {
    Full(Option<usize>),
    BackRef(usize),
    /// `key { … }`: too deep, or already printed in full without a label.
    Elided,
}

fn reach(addr: usize) -> Reach {
    print_slot::with_state(|s| {
        let Some(s) = s else {
            return Reach::Full(None);
        };
        if s.depth >= MAX_PRINT_DEPTH {
            return Reach::Elided;
        }
        if s.counting {
            let n = s.seen.entry(addr).or_insert(0);
            *n += 1;
            return if *n > 1 {
                Reach::BackRef(0)
            } else {
                Reach::Full(None)
            };
        }
        if let Some(&label) = s.labels.get(&addr) {
            return Reach::BackRef(label);
        }
        // Both walks see the same graph (containers through their kept snapshots), so
        // an object counted once is reached once here. One reached again all the same
        // (the `Debug` of a type of its own showed other contents the second time) is
        // elided, so that nothing is printed in full twice.
        match s.seen.get_mut(&addr) {
            Some(n) if *n > 1 => {
                s.next_label += 1;
                let label = s.next_label;
                s.labels.insert(addr, label);
                Reach::Full(Some(label))
            }
            Some(0) => Reach::Elided,
            Some(n) => {
                *n = 0;
                Reach::Full(None)
            }
            None => {
                s.seen.insert(addr, 0);
                Reach::Full(None)
            }
        }
    })
    .unwrap_or(Reach::Elided)
}

/// The contents a mutable container prints, copied by `take` once per print: the
/// printer walks the graph twice (counting shared objects, then printing), and both
/// walks must see the same contents, also when another thread changes the container
/// in between. The first call for `container` in a print calls `take` and keeps its
/// result until the print ends; later calls in the same print return the kept copy.
/// Outside a print, `take` is called every time.
///
/// A container whose contents can change behind a shared reference (a lock inside
/// the object) reads them through this in its `Debug`; `List` and `Dict` do.
///
/// # Examples
///
/// ```
/// use std::sync::Mutex;
///
/// use object_core::prelude::*;
/// use object_core::reflection::print_snapshot;
/// use object_core::Any;
///
/// /// A mutable bag of values.
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.print.Bag", opaque)]
/// struct Bag { base: Object, items: Mutex<Vec<Any>> }
///
/// impl std::fmt::Debug for Bag {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         // A copy taken under the lock (released before anything prints).
///         let items = print_snapshot(self, || self.items.lock().unwrap().clone());
///         f.debug_list().entries(items.iter().map(Any::view)).finish()
///     }
/// }
///
/// // By hand: an `opaque` type (a `Mutex` field) has no generated constructor.
/// let bag = make_object(Bag { base: Object::new(), items: Mutex::new(vec![Any::from(1)]) });
/// bag.items.lock().unwrap().push(Any::from(bag.clone()));
/// assert_eq!(format!("{bag:?}"), "doc.print.Bag #1 [1, #1]");
/// bag.items.lock().unwrap().clear(); // break the cycle
/// ```
pub fn print_snapshot<T: ObjectType, S: 'static>(container: &T, take: impl FnOnce() -> S) -> Rc<S> {
    let key = (container as *const T as usize, TypeId::of::<S>());
    let kept = print_slot::with_state(|s| s.and_then(|s| s.snapshots.get(&key).cloned()));
    if let Some(Ok(snap)) = kept.flatten().map(Rc::downcast::<S>) {
        return snap;
    }
    // Taken with the state released: `take` is the container's code.
    let snap = Rc::new(take());
    print_slot::with_state(|s| {
        if let Some(s) = s {
            s.snapshots.insert(key, snap.clone());
        }
    });
    snap
}

/// Whether this is the counting pass (its output is discarded).
fn counting() -> bool {
    print_slot::with_state(|s| s.is_some_and(|s| s.counting)).unwrap_or(false)
}

fn enter() {
    print_slot::with_state(|s| {
        if let Some(s) = s {
            s.depth += 1;
        }
    });
}

fn leave() {
    print_slot::with_state(|s| {
        if let Some(s) = s {
            s.depth -= 1;
        }
    });
}

struct DynObject<'a>(&'a ObjectRef);

impl fmt::Debug for DynObject<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let obj = self.0;
        let d = raw::describe(obj);
        let (info, refl) = (d.info(), d.reflection());
        let builtin = refl.builtin();
        if builtin.is_some_and(BuiltinHooks::is_value) {
            // Strings and bytes are values: printed by content every time, never labelled.
            return d.debug(f);
        }
        let label = match reach(ObjectPtr::as_ptr(obj) as usize) {
            Reach::BackRef(n) => return write!(f, "#{n}"),
            Reach::Elided => return write!(f, "{} {{ … }}", info.key()),
            Reach::Full(label) => label,
        };
        if builtin.is_some_and(|b| b.shape == BuiltinShape::Integer) && counting() {
            // A number holds no object, so the counting pass need not write its digits
            // (a million of them take a good part of a second).
            return Ok(());
        }
        enter();
        let result = if refl.opaque || refl.custom_debug {
            // A shared opaque object (a container reached twice) is labelled too, so
            // that its later `#n` refers to something.
            let labelled = match label {
                Some(n) => write!(f, "{} #{n} ", info.key()),
                None => Ok(()),
            };
            labelled.and_then(|()| d.debug(f))
        } else {
            fmt_fields(info.key(), label, f, |v| d.visit(v))
        };
        leave();
        result
    }
}

/// The `Debug` of a reflected (non-opaque) `#[derive(Object)]` type. Used by the
/// derive.
///
/// # Errors
///
/// Only the formatter's.
pub fn debug_reflected<T: Reflect>(
    this: &T,
    key: &'static str,
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    debug_value(raw::ValueFields::of(this), key, f)
}

/// [`debug_reflected`] for any type: one function, whatever the type.
fn debug_value(
    value: raw::ValueFields<'_>,
    key: &'static str,
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    print_graph(&StaticObject(value, key), f)
}

struct StaticObject<'a>(raw::ValueFields<'a>, &'static str);

impl fmt::Debug for StaticObject<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match reach(self.0.address()) {
            Reach::BackRef(n) => return write!(f, "#{n}"),
            Reach::Elided => return write!(f, "{} {{ … }}", self.1),
            Reach::Full(label) => label,
        };
        enter();
        let result = fmt_fields(self.1, label, f, |v| self.0.visit(v));
        leave();
        result
    }
}

/// Writes `key { field: value, … }` (with the label, if any), the fields from `visit`.
fn fmt_fields(
    key: &str,
    label: Option<usize>,
    f: &mut fmt::Formatter<'_>,
    visit: impl FnOnce(&mut dyn AttrVisitor),
) -> fmt::Result {
    let name = match label {
        Some(n) => format!("{key} #{n}"),
        None => key.to_owned(),
    };
    let mut s = f.debug_struct(&name);
    struct Collect<'b, 'c, 'd>(&'b mut fmt::DebugStruct<'c, 'd>);
    impl AttrVisitor for Collect<'_, '_, '_> {
        fn visit_any(&mut self, field: &FieldInfo, value: AnyView<'_>) {
            self.0.field(field.name, &value);
        }
        fn visit_u64(&mut self, field: &FieldInfo, value: u64) {
            self.0.field(field.name, &value);
        }
        fn visit_str(&mut self, field: &FieldInfo, value: &str) {
            self.0.field(field.name, &value);
        }
        fn visit_enum(&mut self, field: &FieldInfo, _: i64, name: &'static str) {
            // By name, as the enum's own `Debug` would print it.
            self.0.field(field.name, &format_args!("{name}"));
        }
        fn visit_object(&mut self, field: &FieldInfo, value: Option<&ObjectRef>) {
            match value {
                Some(o) => self.0.field(field.name, &DynObject(o)),
                None => self.0.field(field.name, &format_args!("None")),
            };
        }
    }
    visit(&mut Collect(&mut s));
    s.finish()
}
