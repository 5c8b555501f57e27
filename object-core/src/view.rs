//! Exhaustive views: an `enum` of a base type's subtypes that a pass can `match`, so
//! that adding a node type makes the compiler point at every pass that must handle it.
//!
//! Declare the family once with [`object_view!`](crate::object_view):
//!
//! ```
//! use object_core::prelude::*;
//! use object_core::object_view;
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.view.Expr", abstract, slots = 4)]
//! pub struct Expr { base: Object }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.view.Int", parent = Expr, final)]
//! pub struct Int { base: Expr, value: i64 }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.view.BinOp", parent = Expr, abstract)]
//! pub struct BinOp { base: Expr, lhs: ObjectPtr<Expr>, rhs: ObjectPtr<Expr> }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.view.Add", parent = BinOp, final)]
//! pub struct Add { base: BinOp }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.view.Mul", parent = BinOp, final)]
//! pub struct Mul { base: BinOp }
//!
//! object_view! {
//!     /// What an `Expr` is.
//!     pub enum ExprView for Expr { Int, BinOp, Add, Mul }
//! }
//!
//! fn eval(e: &ObjectPtr<Expr>) -> i64 {
//!     match e.view() {
//!         ExprView::Int(i) => i.value,
//!         ExprView::Add(a) => eval(&a.base.lhs) + eval(&a.base.rhs),
//!         ExprView::Mul(m) => eval(&m.base.lhs) * eval(&m.base.rhs),
//!         // Any other `BinOp` (a plugin's, say): the most derived listed type wins.
//!         ExprView::BinOp(_) => 0,
//!         ExprView::Other(_) => 0,
//!     }
//! }
//!
//! let e = Add::new(Int::new(2), Mul::new(Int::new(3), Int::new(4)));
//! assert_eq!(eval(&e.upcast()), 14);
//! // In a test: every concrete subtype of `Expr` in this crate has a variant.
//! assert!(ExprView::unlisted().is_empty());
//! ```
//!
//! What `object_view!` writes: the enum (`Variant(&'a Type)` for each listed type, and
//! `Other(&'a ObjectPtr<Base>)`), `View::of(&ObjectPtr<Base>)`, `View::unlisted()`,
//! `View::assert_exhaustive()`, and [`HasView`] for the base, so that
//! `ObjectPtr::<Base>::view()` works; that impl must live in the base's crate (the
//! orphan rule), so a view is declared beside its family. A listed type that is not a
//! subtype of the base is a compile error at that type. Listing an abstract
//! intermediate (`BinOp`) gives a variant for its subtypes that no more derived variant
//! lists: those of other crates, plugins' and run-time ones; `unlisted` still reports
//! the concrete types of the view's own crate that are not listed by exact type.
//!
//! Matching is O(1): the view keeps a table, built lazily (one entry per index of the
//! base's range, filled on first sight of each type), from the object's type index to
//! its variant; the variant's reference is then made without a further check. Objects
//! of types outside the base's range (run-time descendants that overflowed its reserved
//! slots) are classified through the registry on each visit.

use core::sync::atomic::{AtomicPtr, AtomicU16, Ordering};

use crate::object_type::ObjectType;
use crate::ptr::ObjectPtr;
use crate::registry::{self, TypeInfo};

/// A base type with an exhaustive view (written by [`object_view!`](crate::object_view)),
/// so that `ptr.view()` works on `ObjectPtr<Base>`.
pub trait HasView: ObjectType {
    /// The view enum.
    type View<'a>;
    /// The view of `ptr`.
    fn view_of(ptr: &ObjectPtr<Self>) -> Self::View<'_>;
}

/// An entry that was not looked at yet.
const UNKNOWN: u16 = u16::MAX;

/// The lazily built table of a view: type index − the base's index → variant (0 for
/// `Other`, `k + 1` for the `k`-th listed type). Written by `object_view!`.
#[derive(Debug)]
pub struct ViewTable {
    /// Null until first use, then a leaked `Table` (one per view, never freed).
    table: AtomicPtr<Table>,
}

#[derive(Debug)]
struct Table {
    begin: u32,
    entries: Box<[AtomicU16]>,
}

impl ViewTable {
    /// An empty table.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        ViewTable {
            table: AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    /// The variant of an object of type `index` that is a `B`: 0 for none of
    /// `variants`, else 1 + the position of the most derived of `variants` it is an
    /// instance of.
    #[inline(always)]
    pub fn classify<B: ObjectType>(
        &'static self,
        index: u32,
        variants: &'static [fn() -> &'static TypeInfo],
    ) -> usize {
        if let Some(t) = self.get() {
            let off = index.wrapping_sub(t.begin) as usize;
            if let Some(e) = t.entries.get(off) {
                // Relaxed: the value is a pure function of the (immutable) registry
                // entries of `index` and the variants; any thread stores the same one.
                let v = e.load(Ordering::Relaxed);
                if v != UNKNOWN {
                    return usize::from(v);
                }
            }
        }
        self.classify_slow::<B>(index, variants)
    }

    #[cold]
    #[inline(never)]
    fn classify_slow<B: ObjectType>(
        &'static self,
        index: u32,
        variants: &'static [fn() -> &'static TypeInfo],
    ) -> usize {
        let t = match self.get() {
            Some(t) => t,
            None => {
                let range = B::type_info().range();
                let len = range.end.saturating_sub(range.start) as usize;
                let fresh = Box::into_raw(Box::new(Table {
                    begin: range.start,
                    entries: (0..len).map(|_| AtomicU16::new(UNKNOWN)).collect(),
                }));
                // Release publishes the table's contents to the Acquire in `get`.
                match self.table.compare_exchange(
                    core::ptr::null_mut(),
                    fresh,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => {}
                    Err(_) => {
                        // Another thread published first: ours was never shared.
                        // SAFETY: `fresh` came from `Box::into_raw` just above and
                        // nothing else has seen it.
                        drop(unsafe { Box::from_raw(fresh) });
                    }
                }
                match self.get() {
                    Some(t) => t,
                    None => return variant_of(index, variants),
                }
            }
        };
        let v = variant_of(index, variants);
        let off = index.wrapping_sub(t.begin) as usize;
        if let Some(e) = t.entries.get(off) {
            // `v` fits: `object_view!` refuses more than `u16::MAX - 1` variants.
            e.store(v as u16, Ordering::Relaxed);
        }
        v
    }
}

impl ViewTable {
    #[inline(always)]
    fn get(&self) -> Option<&Table> {
        let p = self.table.load(Ordering::Acquire);
        // SAFETY: non-null values are leaked `Box<Table>`s published with Release in
        // `classify_slow` and never freed or mutated except through their atomics.
        unsafe { p.as_ref() }
    }
}

/// The most derived of `variants` that `index` is an instance of (1-based), or 0.
fn variant_of(index: u32, variants: &[fn() -> &'static TypeInfo]) -> usize {
    let mut best = 0;
    let mut best_depth = 0;
    for (k, v) in variants.iter().enumerate() {
        let info = v();
        if info.is_ancestor_or_self_of(index) && (best == 0 || info.depth() > best_depth) {
            best = k + 1;
            best_depth = info.depth();
        }
    }
    best
}

/// The registered Rust types of crate `krate` that are concrete (not `abstract`)
/// subtypes of `B` (or `B` itself) and are not listed in `variants` by exact type: what
/// a view's `unlisted` reports. Written for `object_view!`.
pub fn unlisted<B: ObjectType>(
    variants: &[fn() -> &'static TypeInfo],
    krate: &str,
) -> Vec<&'static TypeInfo> {
    let base = B::type_info();
    let listed: Vec<u32> = variants.iter().map(|v| v().index()).collect();
    let prefix = format!("{krate}::");
    let mut out: Vec<&'static TypeInfo> = registry::types()
        .into_iter()
        .filter(|t| {
            t.is_object()
                && base.is_ancestor_or_self_of(t.index())
                && !t.is_abstract()
                && !listed.contains(&t.index())
                && t.rust_name().is_some_and(|n| n.starts_with(&prefix))
        })
        .collect();
    out.sort_by_key(|t| t.key());
    out
}

/// Panics naming the types [`unlisted`] reports, for a view's `assert_exhaustive`.
#[track_caller]
pub fn assert_exhaustive<B: ObjectType>(
    view: &str,
    variants: &[fn() -> &'static TypeInfo],
    krate: &str,
) {
    let missing = unlisted::<B>(variants, krate);
    if !missing.is_empty() {
        let names: Vec<String> = missing
            .iter()
            .map(|t| format!("{} ({})", t.rust_name().unwrap_or("?"), t.key()))
            .collect();
        panic!(
            "the view `{view}` of `{}` lists no variant for: {}; add them to its `object_view!`",
            B::TYPE_KEY,
            names.join(", ")
        );
    }
}

/// The reference to the object as a `U`, for a variant the table chose. Not public API.
///
/// # Safety
///
/// The object must be a `U` (or a subtype): `object_view!` calls it only for the variant
/// that [`ViewTable::classify`] returned, whose type the object is an instance of.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn view_cast<T: ObjectType, U: ObjectType>(ptr: &ObjectPtr<T>) -> &U {
    // SAFETY: the caller guarantees the object is a `U`; by `ObjectType`'s layout
    // contract its address is then a valid `U`, alive while `ptr` is borrowed.
    unsafe { &*(ObjectPtr::as_ptr(ptr) as *const U) }
}
