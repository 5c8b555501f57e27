//! Generated constructors (`T::new`, `T::new_value`, `T::new_all`), `#[object(abstract)]`
//! and `#[object(constructor = …)]`, in one crate and across crates (parents in
//! `object-examples`).

use object_core::reflection::{create, ReflectErrorKind};
use object_core::{make_object_as, Any, Object, ObjectPtr, ObjectRef, ObjectType};
use object_examples::expr::{self, BinOp, Expr, IntImm, Var};

// A child declared before its parent in the same module.
/// The leaf of a three-level family: parameters root-most first.
#[derive(Object)]
#[repr(C)]
#[object(key = "test.ctor.Leaf", parent = Mid, final)]
pub struct Leaf {
    base: Mid,
    tag: i64,
}

/// The middle level: a defaulted and a skipped field.
#[derive(Object)]
#[repr(C)]
#[object(key = "test.ctor.Mid", parent = Root, slots = 2)]
pub struct Mid {
    base: Root,
    label: object_core::String,
    #[object(default = 7)]
    weight: i64,
    #[object(skip)]
    cache: u64,
}

/// The abstract root: no constructor of its own.
#[derive(Object)]
#[repr(C)]
#[object(key = "test.ctor.Root", abstract)]
pub struct Root {
    base: Object,
    id: i64,
    next: Option<ObjectRef>,
}

// A child of a type from another crate (whose own parent is there too).
/// A child of `object-examples`' `BinOp`, with a bare `default`.
#[derive(Object)]
#[repr(C)]
#[object(key = "test.ctor.Pow", parent = BinOp, final)]
pub struct Pow {
    base: BinOp,
    #[object(default)]
    checked: bool,
}

// Through a path, not an import.
/// A child whose parent is named by a path.
#[derive(Object)]
#[repr(C)]
#[object(key = "test.ctor.Neg", parent = object_examples::expr::Expr, final)]
pub struct Neg {
    base: expr::Expr,
    arg: ObjectPtr<Expr>,
}

// A type that has a `new` of its own.
/// A type with a `new` of its own (`constructor = false`).
#[derive(Object)]
#[repr(C)]
#[object(key = "test.ctor.Counter", constructor = false)]
pub struct Counter {
    base: Object,
    n: i64,
}

impl Counter {
    /// The type's own `new`, which the derive leaves alone.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Counter::make_zero()
    }
    fn make_zero() -> Self {
        Counter {
            base: Object::new(),
            n: 0,
        }
    }
}

/// A type whose constructor is renamed (`build`).
#[derive(Object)]
#[repr(C)]
#[object(key = "test.ctor.Named", constructor = "build")]
pub struct Named {
    base: Object,
    n: i64,
}

mod private_types {
    use object_core::{Object, ObjectPtr};

    #[derive(Object)]
    #[repr(C)]
    #[object(key = "test.ctor.PrivBase")]
    pub(crate) struct PrivBase {
        base: Object,
        a: i64,
    }

    #[derive(Object)]
    #[repr(C)]
    #[object(key = "test.ctor.PrivLeaf", parent = PrivBase)]
    pub(crate) struct PrivLeaf {
        base: PrivBase,
        b: i64,
    }

    pub(crate) fn make() -> ObjectPtr<PrivLeaf> {
        PrivLeaf::new(1, 2)
    }

    pub(crate) fn sum(p: &PrivLeaf) -> i64 {
        p.base.a + p.b
    }
}

#[test]
fn parents_fields_first_and_object_parameters_upcast() {
    let x = Var::new("x");
    let one = IntImm::new(1);
    // `ObjectPtr<Var>` and `ObjectPtr<IntImm>` where `ObjectPtr<Expr>` is stored.
    let p = Pow::new(x.clone(), one.clone());
    assert!(ObjectPtr::ptr_eq(&p.base.lhs, &x));
    assert!(ObjectPtr::ptr_eq(&p.base.rhs, &one));
    assert!(!p.checked, "a bare `default` is `Default::default()`");
    let q = Pow::new_all(one.clone(), x.clone(), true);
    assert!(q.checked);
    assert_eq!(p.type_key(), "test.ctor.Pow");
    assert!(p.as_object_ref().is::<BinOp>());

    let n = Neg::new(p.clone());
    assert!(ObjectPtr::ptr_eq(&n.arg, &p));
    assert_eq!(ObjectPtr::strong_count(&p), 2);
}

#[test]
fn defaults_skips_and_three_levels() {
    let tail: ObjectRef = Counter::make_zero_object().into_object_ref();
    // Root's fields (`id`, `next`), Mid's (`label`; `weight` defaulted), Leaf's (`tag`).
    let leaf = Leaf::new(1, Some(tail.clone()), "name", 9);
    assert_eq!(leaf.base.base.id, 1);
    assert!(ObjectPtr::ptr_eq(
        leaf.base.base.next.as_ref().unwrap(),
        &tail
    ));
    assert_eq!(leaf.base.label.as_str(), "name");
    assert_eq!(leaf.base.weight, 7);
    assert_eq!(leaf.base.cache, 0);
    assert_eq!(leaf.tag, 9);

    let mid = Mid::new_all(2, None, String::from("m"), 3);
    assert_eq!((mid.base.id, mid.weight), (2, 3));
    let value: Mid = Mid::new_value(4, None, "v");
    assert_eq!((value.base.id, value.weight), (4, 7));
}

impl Counter {
    fn make_zero_object() -> ObjectPtr<Counter> {
        object_core::make_object(Counter::make_zero())
    }
}

#[test]
fn opt_out_and_rename() {
    assert_eq!(Counter::new().n, 0);
    let n = Named::build(5);
    assert_eq!(n.n, 5);
    let v: Named = Named::build_value(6);
    assert_eq!(v.n, 6);
}

#[test]
fn private_types_in_modules() {
    let p = private_types::make();
    assert_eq!(private_types::sum(&p), 3);
}

#[test]
fn constructors_inside_functions() {
    #[derive(Object)]
    #[repr(C)]
    #[object(key = "test.ctor.InFn")]
    pub struct InFn {
        base: Object,
        v: i64,
    }
    #[derive(Object)]
    #[repr(C)]
    #[object(key = "test.ctor.InFnPub", parent = InFn)]
    struct InFnPub {
        base: InFn,
        w: i64,
    }
    let o = InFnPub::new(1, 2);
    assert_eq!((o.base.v, o.w), (1, 2));
}

#[test]
fn abstract_types_are_refused_by_create_and_the_loader() {
    assert!(Root::type_info().is_abstract());
    assert!(Expr::type_info().is_abstract());
    assert!(BinOp::type_info().is_abstract());
    assert!(!Mid::type_info().is_abstract());
    assert!(Root::type_info().reflection().is_abstract());

    let e = create("test.ctor.Root", [("id", Any::from(1))]).unwrap_err();
    assert_eq!(e.kind(), ReflectErrorKind::Abstract);
    assert_eq!(e.kind().error_kind(), "TypeError");
    assert_eq!(
        e.to_string(),
        "`test.ctor.Root` is abstract: create one of its subtypes instead"
    );
    // A concrete subtype is created, its abstract parent's fields included.
    let m = create(
        "test.ctor.Mid",
        [("id", Any::from(1)), ("label", Any::from("l"))],
    )
    .unwrap();
    assert_eq!(m.downcast_ref::<Mid>().unwrap().weight, 7);

    let text = r#"{"root_index":0,"nodes":[{"type":"tour.BinOp","data":{"lhs":1,"rhs":1}},{"type":"tour.IntImm","data":{"value":1}}]}"#;
    let err = object_json::from_json_graph(text).unwrap_err();
    assert_eq!(err.kind(), object_json::GraphErrorKind::Abstract);
    assert_eq!(err.node(), Some(0));

    // A run-time descendant of an abstract Rust type is not abstract.
    let info = object_core::registry::register_type(&object_core::registry::TypeSpec::new(
        "test.ctor.RtBinOp",
        "tour.BinOp",
    ))
    .unwrap();
    assert!(!info.is_abstract());
    let node = make_object_as(BinOp::value(expr::int(1), expr::int(2)), info.index()).unwrap();
    assert!(node.as_object_ref().is::<BinOp>());
    let made = create(
        "test.ctor.RtBinOp",
        [
            ("lhs", Any::from(expr::int(1))),
            ("rhs", Any::from(expr::int(2))),
        ],
    )
    .unwrap();
    assert_eq!(made.type_key(), "test.ctor.RtBinOp");
}

/// Fields of the primitive types the constructor takes as they are.
#[derive(Object)]
#[repr(C)]
#[object(key = "test.ctor.Flags")]
pub struct Flags {
    base: Object,
    bits: u8,
    on: bool,
    ratio: f32,
}

#[test]
fn primitive_fields_take_literals() {
    // A primitive field's parameter is its own type, so literals infer to it.
    let f = Flags::new(3, true, 0.5);
    assert_eq!((f.bits, f.on, f.ratio), (3, true, 0.5));
}
