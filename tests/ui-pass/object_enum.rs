//! `#[derive(ObjectEnum)]` in every accepted form, under the workspace's lints.
#![deny(missing_docs, warnings)]

use object_core::prelude::*;

/// With a key, a `repr`, explicit values and a renamed variant.
#[derive(ObjectEnum, Clone, Copy, Debug, PartialEq)]
#[repr(i32)]
#[object_enum(key = "pass.Op")]
pub enum Op {
    /// One.
    Add = -4,
    /// Two.
    #[object_enum(rename = "minus")]
    Sub = 9,
}

/// Without attributes, one variant, not `Copy`.
#[derive(ObjectEnum)]
pub enum Unit {
    /// The only one.
    Only,
}

mod renamed {
    /// Through a renamed `object_core`.
    #[derive(object_core::ObjectEnum)]
    #[object_enum(crate = "::object_core")]
    #[repr(usize)]
    pub enum Size {
        /// Small.
        S,
        /// Large.
        L,
    }
}

/// Fields of each.
#[derive(Object)]
#[repr(C)]
#[object(key = "pass.WithEnums")]
pub struct WithEnums {
    base: Object,
    op: Op,
    unit: Unit,
    size: Option<renamed::Size>,
}

fn main() {
    let w = WithEnums::new(Op::Sub, Unit::Only, Some(renamed::Size::L));
    assert_eq!(w.op, Op::Sub);
    assert!(matches!(w.unit, Unit::Only));
    assert!(matches!(w.size, Some(renamed::Size::L)));
}
