//! The printer behind every object's `Debug`: reflected types as `key { field: value,
//! … }`, shared objects labelled and printed once, nesting bounded.

use core::cell::RefCell;
use core::fmt;
use std::collections::HashMap;

use super::{print_slot, raw, AttrVisitor, FieldInfo, Reflect};
use crate::any::AnyView;
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::type_index as ti;

/// How deep the printer descends before writing `…`.
const MAX_PRINT_DEPTH: usize = 96;

#[derive(Default)]
pub(super) struct PrintState {
    /// Objects seen in the counting pass, and how often.
    seen: HashMap<usize, u32>,
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
/// let p = make_object(Pair { base: Object::new(), a: shared.clone(), b: shared });
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
    TooDeep,
}

fn reach(addr: usize) -> Reach {
    print_slot::with_state(|s| {
        let Some(s) = s else {
            return Reach::Full(None);
        };
        if s.depth >= MAX_PRINT_DEPTH {
            return Reach::TooDeep;
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
        if s.seen.get(&addr).copied().unwrap_or(0) > 1 {
            s.next_label += 1;
            let label = s.next_label;
            s.labels.insert(addr, label);
            return Reach::Full(Some(label));
        }
        Reach::Full(None)
    })
    .unwrap_or(Reach::TooDeep)
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
        if matches!(info.index(), ti::STRING | ti::BYTES) {
            // Strings and bytes are values: printed by content every time, never labelled.
            return d.debug(f);
        }
        let label = match reach(ObjectPtr::as_ptr(obj) as usize) {
            Reach::BackRef(n) => return write!(f, "#{n}"),
            Reach::TooDeep => return write!(f, "{} {{ … }}", info.key()),
            Reach::Full(label) => label,
        };
        if info.index() == ti::BIG_INT && counting() {
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
    print_graph(&StaticObject(this, key), f)
}

struct StaticObject<'a, T>(&'a T, &'static str);

impl<T: Reflect> fmt::Debug for StaticObject<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match reach(self.0 as *const T as usize) {
            Reach::BackRef(n) => return write!(f, "#{n}"),
            Reach::TooDeep => return write!(f, "{} {{ … }}", self.1),
            Reach::Full(label) => label,
        };
        enter();
        let result = fmt_fields(self.1, label, f, |v| raw::visit_value(self.0, v));
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
