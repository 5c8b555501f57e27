//! The printer behind every object's `Debug`: reflected types as `key { field: value,
//! … }`, shared objects labelled and printed once, nesting bounded.

use core::cell::{Cell, RefCell};
use core::fmt;
use std::collections::HashMap;

use super::visit::visit_table;
use super::{reflection_of, AttrVisitor, FieldInfo, Reflect};
use crate::any::AnyView;
use crate::header::Object;
use crate::object_type::ObjectType;
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::type_index as ti;

/// How deep the printer descends before writing `…`.
const MAX_PRINT_DEPTH: usize = 96;

#[derive(Default)]
struct PrintState {
    /// Objects seen in the counting pass, and how often.
    seen: HashMap<usize, u32>,
    /// Labels of shared objects already printed in full.
    labels: HashMap<usize, usize>,
    next_label: usize,
    counting: bool,
    depth: usize,
}

thread_local! {
    /// The print in progress on this thread: the state on the stack of the outermost
    /// [`print_graph`], or null. A `Cell` of a raw pointer has no destructor, so this
    /// slot is never torn down: printing works at any point of a thread's life, also
    /// from other thread-locals' destructors (a slot with a destructor may already be
    /// gone then, and `with` on it panics, which aborts in a destructor).
    static PRINT: Cell<*const RefCell<PrintState>> = const { Cell::new(core::ptr::null()) };
}

/// Runs `f` on the state of the print in progress: `Some(None)` if there is none,
/// `None` if this thread's slot cannot be reached (not expected on any platform with
/// native thread-locals; the printer then degrades to a plain `key { … }`).
fn with_state<R>(f: impl FnOnce(Option<&mut PrintState>) -> R) -> Option<R> {
    let p = PRINT.try_with(Cell::get).ok()?;
    if p.is_null() {
        return Some(f(None));
    }
    // SAFETY: a non-null pointer is set only by `print_graph`, to state on its own stack
    // frame, and reset to null before that frame ends (on unwinding too); everything
    // that reaches here runs inside that call, on the same thread. The state is only
    // borrowed here, for `f`, which calls no `Debug` impl.
    let state = unsafe { &*p };
    let mut s = state.borrow_mut();
    Some(f(Some(&mut s)))
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
pub fn debug_object(obj: &ObjectRef, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    print_graph(&DynObject(obj), f)
}

/// Prints `root` with graph state: a counting pass, then the printing pass. Nested
/// calls (an object inside a container inside an object) join the outermost print.
fn print_graph(root: &dyn fmt::Debug, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match PRINT.try_with(Cell::get) {
        // Join the print in progress.
        Ok(p) if !p.is_null() => return root.fmt(f),
        Ok(_) => {}
        // No slot: `reach` degrades every object to `key { … }`.
        Err(_) => return root.fmt(f),
    }
    let state = RefCell::new(PrintState {
        counting: true,
        ..PrintState::default()
    });
    /// Clears the slot before `state` goes, even if a `Debug` impl panics.
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            let _ = PRINT.try_with(|p| p.set(core::ptr::null()));
        }
    }
    let _ = PRINT.try_with(|p| p.set(&state));
    let _reset = Reset;
    let _ = fmt::write(&mut Sink, format_args!("{root:?}"));
    {
        let mut s = state.borrow_mut();
        s.counting = false;
        s.depth = 0;
    }
    root.fmt(f)
}

/// What the printer does on reaching an object.
enum Reach {
    Full(Option<usize>),
    BackRef(usize),
    TooDeep,
}

fn reach(addr: usize) -> Reach {
    with_state(|s| {
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

fn enter() {
    with_state(|s| {
        if let Some(s) = s {
            s.depth += 1;
        }
    });
}

fn leave() {
    with_state(|s| {
        if let Some(s) = s {
            s.depth -= 1;
        }
    });
}

struct DynObject<'a>(&'a ObjectRef);

impl fmt::Debug for DynObject<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let obj = self.0;
        let (info, refl) = reflection_of(obj);
        if matches!(info.index(), ti::STRING | ti::BYTES) {
            // Strings and bytes are values: printed by content every time, never labelled.
            // SAFETY: the debug entry of the object's own (Rust) type.
            return unsafe { (refl.debug)(ObjectPtr::as_ptr(obj), f) };
        }
        let label = match reach(ObjectPtr::as_ptr(obj) as usize) {
            Reach::BackRef(n) => return write!(f, "#{n}"),
            Reach::TooDeep => return write!(f, "{} {{ … }}", info.key()),
            Reach::Full(label) => label,
        };
        enter();
        let result = if refl.opaque || refl.custom_debug {
            // A shared opaque object (a container reached twice) is labelled too, so
            // that its later `#n` refers to something.
            let labelled = match label {
                Some(n) => write!(f, "{} #{n} ", info.key()),
                None => Ok(()),
            };
            // SAFETY: the debug entry is the one of the Rust type whose layout the
            // object has (its own, or its Rust ancestor's for a run-time type).
            labelled.and_then(|()| unsafe { (refl.debug)(ObjectPtr::as_ptr(obj), f) })
        } else {
            // SAFETY: as in `visit_object_attrs`.
            unsafe {
                fmt_fields(
                    info.key(),
                    label,
                    refl.fields,
                    ObjectPtr::as_ptr(obj).cast(),
                    f,
                )
            }
        };
        leave();
        result
    }
}

/// The `Debug` of a reflected (non-opaque) `#[derive(Object)]` type. Used by the
/// derive.
#[doc(hidden)]
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
        // SAFETY: `T::FIELDS` describes `T`, and `self.0` is a live `T`.
        let result =
            unsafe { fmt_fields(self.1, label, T::FIELDS, (self.0 as *const T).cast(), f) };
        leave();
        result
    }
}

/// # Safety
///
/// `fields` describes the live object at `base`.
unsafe fn fmt_fields(
    key: &str,
    label: Option<usize>,
    fields: &[FieldInfo],
    base: *const u8,
    f: &mut fmt::Formatter<'_>,
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
    // SAFETY: forwarded from the caller.
    unsafe { visit_table(fields, base, &mut Collect(&mut s)) };
    s.finish()
}

/// The `Debug` entry registered for a type: its own `Debug`. Used by the derive.
///
/// # Safety
///
/// `p` points to a live `T`.
#[doc(hidden)]
pub unsafe fn debug_entry<T: ObjectType + fmt::Debug>(
    p: *const Object,
    f: &mut fmt::Formatter<'_>,
) -> fmt::Result {
    // SAFETY: guaranteed by the caller.
    fmt::Debug::fmt(unsafe { &*p.cast::<T>() }, f)
}
