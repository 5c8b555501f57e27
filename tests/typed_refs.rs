//! Typed references (`#[object(ref = Name)]`): layout, ownership, identity, up-casts
//! along the hierarchy, checked down-casts and views, constructors taking any subtype's
//! handle (also through a `type` alias), and the same conversions as any handle: `Any`,
//! containers, typed calls, reflected fields, `create`, the JSON graph, structural
//! equality and the mutator.

#![allow(missing_docs)] // test types

use std::collections::HashSet;
use std::mem::size_of;

use object_containers::{Array, Function};
use object_core::prelude::*;
use object_core::reflection::{self, FieldKind};
use object_core::structural::structural_equal;
use object_core::transform::{mutate, Rewriter, TransformError, TransformErrorKind};
use object_core::{Any, AnyView, HasRef, String};
use object_tests::LeakCheck;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.tref.Expr", abstract, slots = 8, ref = Expr)]
pub struct ExprNode {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.tref.Int", parent = ExprNode, final, ref = Int)]
pub struct IntNode {
    base: ExprNode,
    pub value: i64,
}

/// A base without a reference of its own between `Expr` and `Add`.
#[derive(Object)]
#[repr(C)]
#[object(key = "test.tref.BinOp", parent = ExprNode, abstract, slots = 4)]
pub struct BinOpNode {
    base: ExprNode,
    pub lhs: Expr,
    pub rhs: Expr,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.tref.Add", parent = BinOpNode, final, ref = Add)]
pub struct AddNode {
    base: BinOpNode,
}

/// A field written through an alias of `ObjectPtr`.
type ExprPtr = ObjectPtr<ExprNode>;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.tref.Neg", parent = ExprNode, final, ref = Neg)]
pub struct NegNode {
    base: ExprNode,
    pub arg: ExprPtr,
    #[object(default)]
    pub note: String,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.tref.Stmt", ref = Stmt)]
pub struct StmtNode {
    base: Object,
}

object_core::object_view! {
    pub enum ExprView for ExprNode { IntNode, AddNode, NegNode }
}

// The user's own methods on references.
impl Expr {
    fn eval(&self) -> i64 {
        match self.view() {
            ExprView::IntNode(i) => i.value,
            ExprView::AddNode(a) => a.base.lhs.eval() + a.base.rhs.eval(),
            ExprView::NegNode(n) => -Expr::from_object_ptr(n.arg.clone()).eval(),
            ExprView::Other(o) => panic!("unknown {}", o.type_key()),
        }
    }
}

impl Int {
    fn doubled(&self) -> Int {
        Int::new(2 * self.value)
    }
}

fn int(v: i64) -> Expr {
    Int::new(v).into()
}

#[test]
fn same_size_as_a_pointer() {
    assert_eq!(size_of::<Expr>(), size_of::<usize>());
    assert_eq!(size_of::<Option<Expr>>(), size_of::<usize>());
    assert_eq!(size_of::<Add>(), size_of::<ObjectPtr<AddNode>>());
}

#[test]
fn clone_drop_and_identity() {
    let _leaks = LeakCheck::new();
    let a = Int::new(7);
    assert_eq!(TypedRef::strong_count(&a), 1);
    let b = a.clone();
    assert_eq!(TypedRef::strong_count(&a), 2);
    assert_eq!(a, b);
    drop(b);
    assert_eq!(TypedRef::strong_count(&a), 1);
    // Equality and hashing by identity: an equal-looking node is another object.
    let c = Int::new(7);
    assert_ne!(a, c);
    let set: HashSet<Int> = [a.clone(), a.clone(), c.clone()].into_iter().collect();
    assert_eq!(set.len(), 2);
    assert!(a.same_as(&a.clone()));
    assert!(!a.same_as(&c));
    // Deref to the node.
    assert_eq!(a.value, 7);
    assert_eq!(a.doubled().value, 14);
    assert_eq!(a.type_key(), "test.tref.Int");
    assert!(format!("{a:?}").contains("test.tref.Int"), "{a:?}");
}

#[test]
fn upcasts_along_the_hierarchy() {
    let _leaks = LeakCheck::new();
    let sum = Add::new(Int::new(1), int(2));
    // `From` for each ancestor's reference, skipping a level without one.
    let e: Expr = sum.clone().into();
    assert_eq!(e.eval(), 3);
    // Into `ObjectPtr` and `ObjectRef` of any ancestor, and `Any`.
    let p: ObjectPtr<BinOpNode> = sum.clone().into();
    assert!(p.lhs.is::<IntNode>());
    let o: ObjectRef = sum.clone().into();
    assert!(o.is::<AddNode>());
    let node: ObjectPtr<AddNode> = sum.clone().into_node_ptr();
    assert!(ObjectPtr::ptr_eq(&node, &p));
    let up: Expr = sum.clone().upcast();
    assert!(up.same_as(&sum));
    // Back from a handle.
    let again = Add::from_object_ptr(node);
    assert_eq!(again, sum);
    let from_ptr: Add = ObjectPtr::<AddNode>::from(again).into();
    assert_eq!(from_ptr, sum);
}

#[test]
fn checked_downcasts_and_views() {
    let _leaks = LeakCheck::new();
    let e: Expr = Add::new(int(1), int(2)).into();
    assert!(e.is::<AddNode>() && e.is::<BinOpNode>() && !e.is::<IntNode>());
    assert!(e.downcast_ref::<AddNode>().is_some());
    assert!(e.downcast_as::<Add>().is_some());
    assert!(e.downcast_as::<Int>().is_none());
    let e = match e.downcast::<Int>() {
        Ok(_) => panic!("an Add is not an Int"),
        Err(e) => e, // handed back unchanged
    };
    let add: Add = e.clone().downcast().expect("an Add");
    assert!(add.same_as(&e));
    assert!(matches!(e.view(), ExprView::AddNode(_)));
    let o: ObjectRef = Stmt::new().into();
    assert!(Expr::try_from_object(o).is_err());
}

#[test]
fn constructors_take_any_subtype_handle() {
    let _leaks = LeakCheck::new();
    // A typed reference, an `ObjectPtr` of a subtype, and the field's own type.
    let node: ObjectPtr<IntNode> = Int::new(5).into_node_ptr();
    let a = Add::new(node, Int::new(6));
    assert_eq!(Expr::from(a.clone()).eval(), 11);
    // A field written through an alias of `ObjectPtr<ExprNode>` takes a typed reference
    // of a subtype, and a `&str` for its `String`.
    let n = Neg::new(a.clone());
    assert_eq!(Expr::from(n.clone()).eval(), -11);
    let n2 = Neg::new_all(Int::new(1), "why");
    assert_eq!(n2.note.as_str(), "why");
    // Constructors are on the reference; `new_value` stays on the node.
    let v: IntNode = IntNode::new_value(3);
    assert_eq!(v.value, 3);
}

#[test]
fn any_containers_and_calls() {
    let _leaks = LeakCheck::new();
    let e = int(4);
    let any = Any::from(e.clone());
    assert_eq!(Expr::try_from(any.clone()).unwrap(), e);
    assert_eq!(Int::try_from(any.clone()).unwrap().value, 4);
    let err = Add::try_from(any).unwrap_err();
    assert_eq!(
        (err.expected.as_ref(), err.actual),
        ("test.tref.Add", "test.tref.Int")
    );
    let view = AnyView::from(&e);
    assert_eq!(view.type_key(), "test.tref.Int");

    // Typed containers hold references and lend them in place.
    let items: Array<Expr> = vec![int(1), Add::new(int(2), int(3)).into()].into();
    let total: i64 = items.iter().map(|e| e.eval()).sum();
    assert_eq!(total, 6);
    let untyped = Any::from(Array::<Any>::from(vec![Any::from(int(1))]));
    let ints = Array::<Int>::try_from(untyped.clone()).expect("every item is an Int");
    assert_eq!(ints.get(0).map(|i| i.value), Some(1));
    assert!(Array::<Add>::try_from(untyped).is_err());

    // Typed calls take and return references.
    let f = Function::from_typed(|a: Expr, b: Int| -> Add { Add::new(a, b) });
    let out = f
        .call(&[AnyView::from(&e), AnyView::from(&Int::new(9))])
        .unwrap();
    let out = Add::try_from(out).unwrap();
    assert_eq!(Expr::from(out).eval(), 13);
    let wrong = f.call(&[AnyView::from(&Stmt::new()), AnyView::from(&Int::new(9))]);
    assert!(wrong.is_err());
}

#[test]
fn reflected_fields_create_and_json() {
    let _leaks = LeakCheck::new();
    let info = <BinOpNode as ObjectType>::type_info();
    let lhs = info
        .reflection()
        .fields()
        .iter()
        .find(|f| f.name() == "lhs")
        .expect("lhs is reflected");
    assert_eq!(lhs.kind(), FieldKind::Object);
    assert_eq!(lhs.static_type_key(), "test.tref.Expr");

    let sum = Add::new(int(1), int(2));
    let lhs = reflection::get_attr(sum.as_object_ref(), "lhs").unwrap();
    assert_eq!(Int::try_from(lhs).unwrap().value, 1);

    // `create` checks the field's type.
    let made = reflection::create(
        "test.tref.Add",
        [("lhs", Any::from(int(5))), ("rhs", Any::from(int(6)))],
    )
    .unwrap();
    assert_eq!(Expr::try_from_object(made).unwrap().eval(), 11);
    let bad = reflection::create(
        "test.tref.Add",
        [("lhs", Any::from(Stmt::new())), ("rhs", Any::from(int(6)))],
    );
    assert!(bad.is_err());

    // A JSON graph round trip and structural equality.
    let e: Expr = Add::new(int(1), Neg::new(int(2))).into();
    let text = object_json::to_json_graph(&Any::from(e.clone())).unwrap();
    let back = Expr::try_from(object_json::from_json_graph(&text).unwrap()).unwrap();
    assert!(!back.same_as(&e));
    assert!(structural_equal(&back, &e));
    assert_eq!(back.eval(), -1);
}

#[test]
fn the_mutator_rebuilds_reference_fields() {
    let _leaks = LeakCheck::new();
    // Doubles every integer: the `Add`s above them are rebuilt with new `Expr` fields.
    struct Double;
    impl Rewriter for Double {
        type Error = TransformError;
        fn post(&mut self, n: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
            Ok(match Int::try_from_object(n) {
                Ok(i) => i.doubled().into(),
                Err(n) => n,
            })
        }
    }
    let e: Expr = Add::new(int(1), Add::new(int(2), int(3))).into();
    let out = mutate(e.as_object_ref(), &mut Double).unwrap();
    assert_eq!(Expr::try_from_object(out).unwrap().eval(), 12);

    // A statement where an `Expr` field is: an error naming the field, no leak.
    struct Bad;
    impl Rewriter for Bad {
        type Error = TransformError;
        fn pre(&mut self, n: &ObjectRef) -> Result<Option<ObjectRef>, TransformError> {
            Ok(n.is::<IntNode>().then(|| Stmt::new().into()))
        }
    }
    let err = mutate(e.as_object_ref(), &mut Bad).unwrap_err();
    assert_eq!(err.kind(), TransformErrorKind::WrongChildType);
    assert_eq!(err.field(), Some("lhs"));
}

#[test]
fn has_ref_names_the_reference() {
    fn reference_of<N: HasRef>(n: ObjectPtr<N>) -> N::Ref {
        N::Ref::from_object_ptr(n)
    }
    let i: Int = reference_of(Int::new(3).into_node_ptr());
    assert_eq!(i.value, 3);
}
