//! The expansion is warning-free under strict lints, even with every trait it names
//! already in scope (so that no path in it looks needlessly qualified).
//!
//! `forbid(unsafe_code)` holds too: the `unsafe impl`s and the field projection's
//! `unsafe` blocks carry the derive's call-site spans, and rustc does not report lints
//! inside an external macro's output. (A token re-spanned to user code would be.)

#![deny(warnings)]
#![forbid(unsafe_code)]
#![deny(unused_qualifications, unused, rust_2018_idioms, missing_docs)]
#![deny(missing_debug_implementations, unreachable_pub, trivial_casts)]
#![deny(unused_lifetimes, single_use_lifetimes, elided_lifetimes_in_paths)]
#![deny(clippy::all, clippy::pedantic)]

// `Succ` and `TypeCache` are what the expansion names through `__private`.
use object_core::__private::{Succ, TypeCache};
use object_core::reflection::FieldValue;
use object_core::{FieldsMut, NonFinal, Object, ObjectEnum, ObjectType};

/// A documented public object type.
#[derive(Object)]
#[repr(C)]
#[object(key = "lints.Node", slots = 1)]
pub struct Node {
    /// The parent.
    pub base: Object,
    /// A payload.
    pub value: i64,
}

/// A documented final child.
#[derive(Object)]
#[repr(C)]
#[object(key = "lints.Leaf", parent = Node, final)]
pub struct Leaf {
    /// The parent.
    pub base: Node,
}

/// A documented field-less enum (its `unsafe impl` under `forbid(unsafe_code)` too).
#[derive(ObjectEnum, Debug, Clone, Copy)]
#[repr(u8)]
pub enum Kind {
    /// One.
    A,
    /// Two.
    B = 7,
}

/// A documented type with an enum field.
#[derive(Object)]
#[repr(C)]
#[object(key = "lints.WithKind")]
pub struct WithKind {
    /// The parent.
    pub base: Object,
    /// The enum.
    pub kind: Kind,
}

fn assert_field<T: FieldValue>() {}

fn assert_traits<T: ObjectType<Depth = Succ<Succ<D>>> + FieldsMut, D>() {}
fn assert_non_final<T: NonFinal>() {}

fn main() {
    assert_traits::<Leaf, _>();
    assert_non_final::<Node>();
    assert_field::<Kind>();
    assert_eq!(Kind::B.value(), 7);
    let _ = WithKind::new(Kind::A);
    let _: &TypeCache = Leaf::type_cache();
    let _ = Leaf {
        base: Node {
            base: Object::new(),
            value: 0,
        },
    };
}
