//! Structural equality and hashing (`object_core::structural`): alpha-equivalence,
//! sharing rules, maps, floats, tensors, access paths, hash/equality consistency on
//! random graphs, deep graphs on a small stack, types registered at run time.

use std::collections::HashMap;

use object_containers::{Array, BigInt, Dict, Function, List, Map, NDArray, Shape, String};
use object_core::registry::{register_type, TypeSpec};
use object_core::structural::{
    first_mismatch, first_mismatch_with, shallow_equal, shallow_hash, structural_equal,
    structural_equal_with, structural_hash, structural_hash_with, BuildStructuralKeyHasher,
    HashCons, ShallowKey, ShallowSet, StructuralHashCache, StructuralKey, StructuralKind,
    StructuralMap, StructuralOptions, StructuralSet,
};
use object_core::{
    make_object, make_object_as, Any, DataType, Object, ObjectPtr, ObjectRef, ObjectType,
};
use object_tests::{deep, native_or_miri, on_small_stack, seed, LeakCheck, Rng};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------
// A small expression language.
// ---------------------------------------------------------------------------------

#[derive(Object)]
#[repr(C)]
#[object(key = "st.Expr", slots = 16)]
struct Expr {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "st.Var", parent = Expr, structural = "var")]
struct Var {
    base: Expr,
    #[object(no_eq)]
    name: std::string::String,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "st.Int", parent = Expr)]
struct IntImm {
    base: Expr,
    value: i64,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "st.Float", parent = Expr)]
struct FloatImm {
    base: Expr,
    value: f64,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "st.Add", parent = Expr, slots = 2)]
struct Add {
    base: Expr,
    lhs: E,
    rhs: E,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "st.Neg", parent = Expr)]
struct Neg {
    base: Expr,
    arg: E,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "st.Call", parent = Expr)]
struct Call {
    base: Expr,
    op: std::string::String,
    args: Array<E>,
}

/// `let var = value in body`: the variable is defined here.
#[derive(Object)]
#[repr(C)]
#[object(key = "st.Let", parent = Expr)]
struct Let {
    base: Expr,
    #[object(def)]
    var: E,
    value: E,
    body: E,
}

/// `fn(params) { body }`: the parameters are defined here.
#[derive(Object)]
#[repr(C)]
#[object(key = "st.Func", parent = Expr)]
struct Func {
    base: Expr,
    #[object(def)]
    params: Array<E>,
    body: E,
    #[object(no_eq)]
    span: i64,
}

/// A node whose sharing matters.
#[derive(Object)]
#[repr(C)]
#[object(key = "st.DagNode", structural = "dag")]
struct DagNode {
    base: Object,
    label: i64,
    kids: Array<ObjectRef>,
}

/// Compared by identity only.
#[derive(Object)]
#[repr(C)]
#[object(key = "st.Handle", structural = "identity")]
struct Handle {
    base: Object,
    id: i64,
}

/// A subtype that says nothing inherits its parent's kind.
#[derive(Object)]
#[repr(C)]
#[object(key = "st.TypedVar", parent = Var)]
struct TypedVar {
    base: Var,
    ty: std::string::String,
}

/// Built-ins in fields.
#[derive(Object)]
#[repr(C)]
#[object(key = "st.Holder")]
struct Holder {
    base: Object,
    t: Option<NDArray>,
    attrs: Map<String, Any>,
    shape: Option<Shape>,
    any: Any,
}

/// Integer fields of every width, and an optional child.
#[derive(Object)]
#[repr(C)]
#[object(key = "st.Widths")]
struct Widths {
    base: Object,
    a: i8,
    b: u16,
    c: i32,
    d: u64,
    e: usize,
    f: i64,
    next: Option<ObjectPtr<Widths>>,
}

/// A tree type whose fields are all 8-byte integers and object pointers: equality
/// compares its objects in place (without the general step per pair).
#[derive(Object)]
#[repr(C)]
#[object(key = "st.Packed")]
struct Packed {
    base: Object,
    d: u64,
    f: i64,
    opt: Option<ObjectRef>,
    any: ObjectRef,
}

type E = ObjectPtr<Expr>;

fn e() -> Expr {
    Expr {
        base: Object::new(),
    }
}
fn var(name: &str) -> E {
    make_object(Var {
        base: e(),
        name: name.into(),
    })
    .upcast()
}
fn int(value: i64) -> E {
    make_object(IntImm { base: e(), value }).upcast()
}
fn float(value: f64) -> E {
    make_object(FloatImm { base: e(), value }).upcast()
}
fn add(lhs: &E, rhs: &E) -> E {
    make_object(Add {
        base: e(),
        lhs: lhs.clone(),
        rhs: rhs.clone(),
    })
    .upcast()
}
fn neg(arg: E) -> E {
    make_object(Neg { base: e(), arg }).upcast()
}
fn call(op: &str, args: Vec<E>) -> E {
    make_object(Call {
        base: e(),
        op: op.into(),
        args: args.into_iter().collect(),
    })
    .upcast()
}
fn let_(v: &E, value: E, body: E) -> E {
    make_object(Let {
        base: e(),
        var: v.clone(),
        value,
        body,
    })
    .upcast()
}
fn func(params: &[&E], body: E) -> E {
    make_object(Func {
        base: e(),
        params: params.iter().map(|p| (*p).clone()).collect(),
        body,
        span: 0,
    })
    .upcast()
}
fn dag(label: i64, kids: Vec<ObjectRef>) -> ObjectRef {
    make_object(DagNode {
        base: Object::new(),
        label,
        kids: kids.into_iter().collect(),
    })
    .into_object_ref()
}

/// Equal, and hashing alike.
#[track_caller]
fn assert_same<A: object_core::reflection::FieldValue, B: object_core::reflection::FieldValue>(
    a: &A,
    b: &B,
) {
    assert!(structural_equal(a, b), "expected equal");
    assert!(structural_equal(b, a), "expected equal (swapped)");
    assert_eq!(
        structural_hash(a),
        structural_hash(b),
        "equal values hash alike"
    );
    assert!(first_mismatch(a, b).is_none());
}

#[track_caller]
fn assert_differ<A: object_core::reflection::FieldValue, B: object_core::reflection::FieldValue>(
    a: &A,
    b: &B,
) {
    assert!(!structural_equal(a, b), "expected different");
    assert!(!structural_equal(b, a), "expected different (swapped)");
    assert!(first_mismatch(a, b).is_some());
}

fn paths<A: object_core::reflection::FieldValue, B: object_core::reflection::FieldValue>(
    a: &A,
    b: &B,
) -> (std::string::String, std::string::String) {
    let (l, r) = first_mismatch(a, b).expect("a mismatch");
    (l.to_string(), r.to_string())
}

// ---------------------------------------------------------------------------------
// Variables.
// ---------------------------------------------------------------------------------

#[test]
fn functions_equal_up_to_renaming() {
    let _leaks = LeakCheck::new();
    let (x, y) = (var("x"), var("y"));
    let one = int(1);
    let f = func(&[&x], add(&x, &one)); // fn(x) { x + 1 }
    let g = func(&[&y], add(&y, &int(1))); // fn(y) { y + 1 }
    assert_same(&f, &g);
    // fn(y) { x + 1 }: x is free there, so not the parameter.
    let h = func(&[&y], add(&x, &int(1)));
    assert_differ(&f, &h);
    assert_eq!(
        paths(&f, &h),
        ("<root>.body.lhs".into(), "<root>.body.lhs".into())
    );
    // Two parameters, swapped in the body.
    let (a, b) = (var("a"), var("b"));
    let p = func(&[&x, &y], add(&x, &y));
    let q = func(&[&a, &b], add(&a, &b));
    let r = func(&[&a, &b], add(&b, &a));
    assert_same(&p, &q);
    assert_differ(&p, &r);
    // A different number of parameters.
    assert_differ(&func(&[&x], add(&x, &x)), &func(&[&a, &b], add(&a, &a)));
}

#[test]
fn let_binders_and_nested_scopes() {
    let _leaks = LeakCheck::new();
    let (x, y, z) = (var("x"), var("y"), var("z"));
    // let x = 1 in x + x  ==  let y = 1 in y + y
    assert_same(
        &let_(&x, int(1), add(&x, &x)),
        &let_(&y, int(1), add(&y, &y)),
    );
    // let x = 1 in x + x  !=  let y = 1 in y + z
    assert_differ(
        &let_(&x, int(1), add(&x, &x)),
        &let_(&y, int(1), add(&y, &z)),
    );
    // Nested: fn(x) { fn(y) { x + y } } == fn(a) { fn(b) { a + b } } != fn(a) { fn(b) { b + a } }
    let (a, b) = (var("a"), var("b"));
    let f = func(&[&x], func(&[&y], add(&x, &y)));
    let g = func(&[&a], func(&[&b], add(&a, &b)));
    let h = func(&[&a], func(&[&b], add(&b, &a)));
    assert_same(&f, &g);
    assert_differ(&f, &h);
    assert_eq!(paths(&f, &h).0, "<root>.body.body.lhs");
}

#[test]
fn shadowing_with_fresh_variables() {
    let _leaks = LeakCheck::new();
    // let x = 1 in let x' = 2 in x'  (x' is a new variable also named "x")
    let (x1, x2) = (var("x"), var("x"));
    let (a, b) = (var("a"), var("b"));
    let shadowed = let_(&x1, int(1), let_(&x2, int(2), x2.clone()));
    let inner = let_(&a, int(1), let_(&b, int(2), b.clone()));
    let outer = let_(&a, int(1), let_(&b, int(2), a.clone()));
    assert_same(&shadowed, &inner);
    assert_differ(&shadowed, &outer);
    // Names never matter (`no_eq`), so the outer one is not confused by its name.
    assert_eq!(paths(&shadowed, &outer).0, "<root>.body.body");
}

#[test]
fn a_variable_used_before_its_definition_site() {
    let _leaks = LeakCheck::new();
    let (x, y) = (var("x"), var("y"));
    // x + fn(x) { x }: x is free at its first use (identity), bound from the definition on.
    let f = add(&x, &func(&[&x], x.clone()));
    let g = add(&x, &func(&[&y], y.clone()));
    assert_same(&f, &g);
    // y + fn(y) { y }: the free use differs (x is not y) ...
    let h = add(&y, &func(&[&y], y.clone()));
    assert_differ(&f, &h);
    assert_eq!(paths(&f, &h).0, "<root>.lhs");
    // ... unless free variables are mapped too.
    let map = StructuralOptions::new().map_free_vars(true);
    assert!(structural_equal_with(&f, &h, &map));
    assert_eq!(
        structural_hash_with(&f, &map),
        structural_hash_with(&h, &map)
    );
}

/// `depth` levels of negations and one-argument calls over `e` (so the walk goes
/// through fields and array items).
fn nest(depth: usize, e: E) -> E {
    let mut e = e;
    for i in 0..depth {
        e = if i % 3 == 0 {
            call("f", vec![e])
        } else {
            neg(e)
        };
    }
    e
}

/// At depth `outer`: a free use of `used` at depth `inner` below the left operand,
/// then a function that binds `param` on the right.
fn deep_use_then_definition(outer: usize, inner: usize, used: &E, param: &E) -> E {
    nest(
        outer,
        add(&nest(inner, used.clone()), &func(&[param], param.clone())),
    )
}

#[test]
fn walk_order_holds_at_every_depth() {
    // The engine compares the first levels by recursion and deeper ones on its work
    // stack: either way, everything under the left operand is compared before the
    // right one, so the free use of `x` is met before `fn(x)` binds it to `y`.
    let _leaks = LeakCheck::new();
    let (x, y) = (var("x"), var("y"));
    // Around the recursion budget (48 levels), and well past it.
    let depths: &[usize] = if cfg!(miri) {
        &[0, 49]
    } else {
        &[0, 1, 30, 47, 48, 49, 50, 200, 3000]
    };
    for &outer in depths {
        for &inner in depths {
            let f = deep_use_then_definition(outer, inner, &x, &x);
            let g = deep_use_then_definition(outer, inner, &x, &y);
            assert_same(&f, &g);
            // A different free variable is a mismatch, on the left.
            let h = deep_use_then_definition(outer, inner, &y, &y);
            assert_differ(&f, &h);
            let (l, _) = paths(&f, &h);
            assert!(l.contains(".lhs"), "outer {outer}, inner {inner}: {l}");
        }
    }
}

#[test]
fn free_variables_by_identity_unless_mapped() {
    let _leaks = LeakCheck::new();
    let (x, y, z) = (var("x"), var("y"), var("z"));
    let one = int(1);
    assert_same(&add(&x, &one), &add(&x, &int(1)));
    assert_differ(&add(&x, &one), &add(&y, &one));
    let map = StructuralOptions::new().map_free_vars(true);
    assert!(structural_equal_with(&add(&x, &one), &add(&y, &one), &map));
    assert_eq!(
        structural_hash_with(&add(&x, &one), &map),
        structural_hash_with(&add(&y, &one), &map)
    );
    // The mapping is one-to-one both ways.
    assert!(!structural_equal_with(&add(&x, &y), &add(&z, &z), &map));
    assert!(!structural_equal_with(&add(&z, &z), &add(&x, &y), &map));
    assert!(structural_equal_with(&add(&x, &y), &add(&y, &x), &map));
    assert!(first_mismatch_with(&add(&x, &y), &add(&y, &x), &map).is_none());
}

#[test]
fn identical_subtrees_under_a_renaming_are_not_shortcut() {
    let _leaks = LeakCheck::new();
    let (x, y) = (var("x"), var("y"));
    // The same body object under different binders: fn(x) { S } vs fn(y) { S } where S
    // uses x. S is pointer-equal on both sides, yet x is bound to y: not equal.
    let s = add(&x, &int(1));
    let f = func(&[&x], s.clone());
    let g = func(&[&y], s.clone());
    assert_differ(&f, &g);
    assert_eq!(paths(&f, &g).0, "<root>.body.lhs");
    // Without a renaming, the same subtree is the same: fn(x) { S } vs another fn(x) { S }.
    let f2 = func(&[&x], s.clone());
    assert_same(&f, &f2);
    // A shared subtree without variables under a renaming is still equal.
    let c = add(&int(2), &int(3));
    assert_same(&func(&[&x], add(&x, &c)), &func(&[&y], add(&y, &c)));
    // With mapped free variables, identical subtrees are compared too: (S, x) vs (S, y)
    // maps x to itself inside S, so x then cannot meet y.
    let map = StructuralOptions::new().map_free_vars(true);
    let l = call("pair", vec![s.clone(), x.clone()]);
    let r = call("pair", vec![s.clone(), y.clone()]);
    assert!(!structural_equal_with(&l, &r, &map));
}

#[test]
fn subtypes_inherit_their_parents_kind() {
    let _leaks = LeakCheck::new();
    assert_eq!(
        TypedVar::type_info().reflection().structural_kind(),
        StructuralKind::Var
    );
    assert_eq!(
        Add::type_info().reflection().structural_kind(),
        StructuralKind::Tree
    );
    assert_eq!(
        Handle::type_info().reflection().structural_kind(),
        StructuralKind::Identity
    );
    let tv = |n: &str, ty: &str| -> E {
        make_object(TypedVar {
            base: Var {
                base: e(),
                name: n.into(),
            },
            ty: ty.into(),
        })
        .upcast()
    };
    let (a, b, c) = (tv("a", "int"), tv("b", "int"), tv("c", "float"));
    // Bound: equal when their own fields (the type) agree.
    assert_same(&func(&[&a], a.clone()), &func(&[&b], b.clone()));
    let (l, _) = paths(&func(&[&a], a.clone()), &func(&[&c], c.clone()));
    assert_eq!(l, "<root>.params[0].ty");
}

// ---------------------------------------------------------------------------------
// Sharing, identity, excluded fields.
// ---------------------------------------------------------------------------------

#[test]
fn dag_sharing_must_correspond_tree_sharing_need_not() {
    let _leaks = LeakCheck::new();
    // DAG: [s, s] vs [s1, s2] (equal copies): the sharing differs.
    let s = dag(1, vec![]);
    let (s1, s2) = (dag(1, vec![]), dag(1, vec![]));
    let shared = dag(0, vec![s.clone(), s.clone()]);
    let copies = dag(0, vec![s1.clone(), s2.clone()]);
    assert_differ(&shared, &copies);
    assert_eq!(paths(&shared, &copies).0, "<root>.kids[1]");
    // The same sharing on both sides: equal.
    let t = dag(1, vec![]);
    assert_same(&shared, &dag(0, vec![t.clone(), t.clone()]));
    // Two shared nodes must not both map to one.
    assert_differ(
        &dag(0, vec![s1.clone(), s2.clone()]),
        &dag(0, vec![s.clone(), s.clone()]),
    );
    // Identical DAG subtrees still pair the nodes inside them: `inner` is reached in
    // `outer` (paired with itself) and again beside it (paired with a copy).
    let inner = dag(5, vec![]);
    let outer = dag(6, vec![inner.clone()]);
    let l = dag(0, vec![outer.clone(), inner.clone()]);
    let r = dag(0, vec![outer.clone(), dag(5, vec![])]);
    assert_differ(&l, &r);
    assert_same(&l, &dag(0, vec![outer.clone(), inner.clone()]));
    // Tree: sharing does not matter.
    let c = add(&int(1), &int(2));
    assert_same(
        &add(&c, &c),
        &add(&add(&int(1), &int(2)), &add(&int(1), &int(2))),
    );
}

#[test]
fn identity_types_and_excluded_fields() {
    let _leaks = LeakCheck::new();
    let h = |id| {
        make_object(Handle {
            base: Object::new(),
            id,
        })
        .into_object_ref()
    };
    let (a, b) = (h(1), h(1));
    assert_differ(&a, &b);
    assert_same(&a, &a.clone());
    // `no_eq`: spans of functions and names of variables are ignored.
    let x = var("x");
    let f1 = make_object(Func {
        base: e(),
        params: [x.clone()].into_iter().collect(),
        body: x.clone(),
        span: 10,
    });
    let f2 = make_object(Func {
        base: e(),
        params: [x.clone()].into_iter().collect(),
        body: x.clone(),
        span: 99,
    });
    assert_same(&f1, &f2);
}

// ---------------------------------------------------------------------------------
// Values and built-ins.
// ---------------------------------------------------------------------------------

#[test]
fn floats_nan_and_negative_zero() {
    let _leaks = LeakCheck::new();
    let nan2 = f64::from_bits(0x7ff8_0000_0000_0001);
    assert!(nan2.is_nan());
    assert_same(&float(f64::NAN), &float(nan2));
    assert_same(&float(-f64::NAN), &float(f64::NAN));
    assert_differ(&float(0.0), &float(-0.0));
    assert_same(&float(-0.0), &float(-0.0));
    assert_differ(&float(1.0), &int(1));
    assert_eq!(paths(&float(0.0), &float(-0.0)).0, "<root>.value");
    assert_same(&Any::from(f64::NAN), &Any::from(nan2));
}

fn widths(d: u64, f: i64, next: Option<ObjectPtr<Widths>>) -> ObjectPtr<Widths> {
    make_object(Widths {
        base: Object::new(),
        a: -3,
        b: 60_000,
        c: -70_000,
        d,
        e: usize::MAX,
        f,
        next,
    })
}

#[test]
fn integer_fields_of_every_width() {
    // (8-byte integers are read in place, the others through their table entry: the
    // same values either way, u64 beyond i64::MAX included.)
    let _leaks = LeakCheck::new();
    let a = widths(u64::MAX, i64::MIN, Some(widths(1, 2, None)));
    let b = widths(u64::MAX, i64::MIN, Some(widths(1, 2, None)));
    assert_same(&a, &b);
    assert_differ(
        &a,
        &widths(u64::MAX - 1, i64::MIN, Some(widths(1, 2, None))),
    );
    assert_differ(&a, &widths(u64::MAX, i64::MAX, Some(widths(1, 2, None))));
    assert_differ(&a, &widths(u64::MAX, i64::MIN, Some(widths(1, 3, None))));
    assert_differ(&a, &widths(u64::MAX, i64::MIN, None));
    let (l, _) = paths(&a, &widths(u64::MAX, i64::MIN, Some(widths(1, 3, None))));
    assert_eq!(l, "<root>.next.f");
}

fn packed(d: u64, f: i64, opt: Option<ObjectRef>, any: ObjectRef) -> ObjectRef {
    make_object(Packed {
        base: Object::new(),
        d,
        f,
        opt,
        any,
    })
    .into_object_ref()
}

fn text(s: &str) -> ObjectRef {
    String::from(s).into_object_ptr().into_object_ref()
}

#[test]
fn objects_compared_in_place_agree_with_the_general_walk() {
    let _leaks = LeakCheck::new();
    let inner = |f: i64, s: &str| packed(1, f, None, text(s));
    let outer = |d: u64, opt: Option<ObjectRef>, any: ObjectRef| packed(d, i64::MIN, opt, any);
    let a = outer(u64::MAX, Some(inner(2, "s")), int(5).into_object_ref());
    assert_same(
        &a,
        &outer(u64::MAX, Some(inner(2, "s")), int(5).into_object_ref()),
    );
    // Every field, and every kind of child, can make the difference.
    let five = || int(5).into_object_ref();
    for (b, path) in [
        (outer(u64::MAX - 1, Some(inner(2, "s")), five()), "<root>.d"),
        (outer(u64::MAX, Some(inner(3, "s")), five()), "<root>.opt.f"),
        (
            outer(u64::MAX, Some(inner(2, "t")), five()),
            "<root>.opt.any",
        ),
        (outer(u64::MAX, None, five()), "<root>.opt"),
        (
            outer(u64::MAX, Some(inner(2, "s")), int(6).into_object_ref()),
            "<root>.any.value",
        ),
        (
            outer(u64::MAX, Some(inner(2, "s")), float(5.0).into_object_ref()),
            "<root>.any",
        ),
        (outer(u64::MAX, Some(text("s")), five()), "<root>.opt"),
    ] {
        assert_differ(&a, &b);
        assert_eq!(paths(&a, &b).0, path);
        // Hashed in place or through the general walk (which a cache takes), the same.
        assert_eq!(StructuralHashCache::new().hash(&b), structural_hash(&b));
    }
    assert_eq!(StructuralHashCache::new().hash(&a), structural_hash(&a));
    assert_differ(
        &packed(0, 0, Some(text("x")), text("y")),
        &packed(0, 0, None, text("y")),
    );

    // A child held twice on one side and not on the other: tree sharing need not
    // correspond.
    let c = inner(2, "s");
    let shared = outer(7, Some(c.clone()), c);
    assert_same(&shared, &outer(7, Some(inner(2, "s")), inner(2, "s")));
    assert_differ(&shared, &outer(7, Some(inner(2, "s")), inner(3, "s")));

    // Variables below such objects: by identity when free, unless mapped.
    let (x, y) = (var("x").into_object_ref(), var("y").into_object_ref());
    let (px, py) = (outer(1, None, x.clone()), outer(1, None, y.clone()));
    assert_same(&px, &outer(1, None, x.clone()));
    assert_differ(&px, &py);
    let map = StructuralOptions::new().map_free_vars(true);
    assert!(structural_equal_with(&px, &py, &map));
    // (`x` bound to `y` in the first field: `x` against `x` is then a mismatch.)
    assert!(!structural_equal_with(
        &outer(1, Some(x.clone()), x.clone()),
        &outer(1, Some(y.clone()), x.clone()),
        &map
    ));
    assert!(structural_equal_with(
        &outer(1, Some(x.clone()), x.clone()),
        &outer(1, Some(y.clone()), y.clone()),
        &map
    ));
}

#[test]
fn deep_chains_compared_in_place_on_a_small_stack() {
    let _leaks = LeakCheck::new();
    let n = native_or_miri(deep(), 100);
    // Each level's child is its first object field and an integer object its second,
    // so the walk keeps every level on its stack of pairs (and past that stack's depth
    // takes a step, then goes on in place below it).
    let (same, differ_at_bottom, differ_on_the_way_back) = on_small_stack(move || {
        let chain = |bottom: i64, odd_level: usize| {
            let mut o = packed(0, bottom, None, text("leaf"));
            for k in 0..n {
                let second = if k == odd_level { 2 } else { 1 };
                o = packed(k as u64, -1, Some(o), int(second).into_object_ref());
            }
            o
        };
        let (a, b) = (chain(1, n), chain(1, n));
        let (c, d) = (chain(2, n), chain(1, n / 2));
        // Hashing takes the same objects in place, and agrees with the general path
        // (which a cache of subtree hashes takes).
        let hashes = [&a, &b, &c, &d].map(structural_hash);
        let general = [&a, &c, &d].map(|o| StructuralHashCache::new().hash(o));
        assert_eq!(hashes[0], hashes[1]);
        assert_eq!([hashes[0], hashes[2], hashes[3]], general);
        assert_ne!(hashes[0], hashes[2]);
        assert_ne!(hashes[0], hashes[3]);
        (
            structural_equal(&a, &b),
            structural_equal(&a, &c),
            structural_equal(&a, &d),
        )
    });
    assert!(same);
    assert!(!differ_at_bottom);
    assert!(!differ_on_the_way_back);
}

#[test]
fn strings_bytes_and_plain_values() {
    let _leaks = LeakCheck::new();
    assert_same(&Any::from("short"), &String::from("short"));
    assert_same(
        &Any::from(String::from("a longer string here")),
        &Any::from("a longer string here"),
    );
    assert_differ(&Any::from("a"), &Any::from("b"));
    assert_same(
        &Any::from(object_core::Bytes::new(b"xyz")),
        &Any::from(object_core::Bytes::new(b"xyz")),
    );
    assert_differ(
        &Any::from(object_core::Bytes::new(b"xyz")),
        &Any::from(object_core::Bytes::new(b"xyw")),
    );
    assert_differ(&Any::from(1), &Any::from(true));
    assert_same(
        &Any::from(DataType::float(32)),
        &Any::from(DataType::float(32)),
    );
    assert_differ(
        &Any::from(DataType::float(32)),
        &Any::from(DataType::float(16)),
    );
    assert_same(&Any::NONE, &Any::NONE);
    assert_same(&Shape::new(&[2, 3]), &Shape::new(&[2, 3]));
    assert_differ(&Shape::new(&[2, 3]), &Shape::new(&[3, 2]));
}

/// `BigInt`s compare and hash by value: distinct objects of one value are equal (alone,
/// in an `Any`, in containers and fields), different values differ and hash apart, and a
/// mismatch is reported at the number.
#[test]
fn big_ints_by_value() {
    let _leaks = LeakCheck::new();
    let big = |s: &str| s.parse::<BigInt>().unwrap();
    let huge = "-340282366920938463463374607431768211456000000000000000001";
    assert_same(&BigInt::from(5i64), &BigInt::from(5i64));
    assert_same(&BigInt::from(5i64), &big("+0005"));
    assert_same(&big("-0"), &BigInt::from(0u64));
    assert_same(&Any::from(big(huge)), &Any::from(big(huge)));
    assert_same(
        &Array::from_iter([Any::from(big(huge)), Any::from(1)]),
        &Array::from_iter([Any::from(big(huge)), Any::from(1)]),
    );
    assert_same(
        &holder(
            None,
            &[("n", Any::from(big(huge)))],
            Any::from(BigInt::from(7i64)),
        ),
        &holder(
            None,
            &[("n", Any::from(big(huge)))],
            Any::from(BigInt::from(7i64)),
        ),
    );
    assert_differ(&BigInt::from(5i64), &BigInt::from(6i64));
    assert_differ(&BigInt::from(5i64), &BigInt::from(-5i64));
    assert_differ(&big(huge), &big(&huge[1..]));
    assert_differ(&big(huge), &big(&huge[..huge.len() - 1]));
    // A `BigInt` is not the plain integer of its value.
    assert_differ(&Any::from(BigInt::from(5i64)), &Any::from(5));
    // Different values (signs, lengths, byte patterns around word edges) hash apart.
    let values: Vec<BigInt> = [
        "0",
        "1",
        "-1",
        "255",
        "256",
        "-256",
        "18446744073709551615",
        "18446744073709551616",
        "-18446744073709551616",
        "340282366920938463463374607431768211455",
        huge,
        &huge[1..],
    ]
    .into_iter()
    .map(big)
    .collect();
    let hashes: std::collections::HashSet<u64> = values.iter().map(structural_hash).collect();
    assert_eq!(hashes.len(), values.len());
    for (i, a) in values.iter().enumerate() {
        for (j, b) in values.iter().enumerate() {
            assert_eq!(structural_equal(a, b), i == j, "{a} against {b}");
        }
    }
    // The mismatch is the number itself, wherever it is held.
    let a = holder(None, &[("n", Any::from(big(huge)))], Any::from(big("7")));
    let b = holder(None, &[("n", Any::from(big(huge)))], Any::from(big("8")));
    assert_eq!(paths(&a, &b), ("<root>.any".into(), "<root>.any".into()));
    let a = Array::from_iter([Any::from(big("1")), Any::from(big(huge))]);
    let b = Array::from_iter([Any::from(big("1")), Any::from(big(&huge[1..]))]);
    assert_eq!(paths(&a, &b), ("<root>[1]".into(), "<root>[1]".into()));
    assert_eq!(paths(&big("1"), &big("2")).0, "<root>");
}

fn holder(t: Option<NDArray>, attrs: &[(&str, Any)], any: Any) -> ObjectRef {
    let mut m = Map::new();
    for (k, v) in attrs {
        m.insert(String::from(*k), v.clone());
    }
    make_object(Holder {
        base: Object::new(),
        t,
        attrs: m,
        shape: None,
        any,
    })
    .into_object_ref()
}

#[test]
fn maps_ignore_insertion_order() {
    let _leaks = LeakCheck::new();
    let a = holder(
        None,
        &[("k", Any::from(1)), ("j", Any::from("v"))],
        Any::NONE,
    );
    let b = holder(
        None,
        &[("j", Any::from("v")), ("k", Any::from(1))],
        Any::NONE,
    );
    assert_same(&a, &b);
    let c = holder(
        None,
        &[("j", Any::from("v")), ("k", Any::from(2))],
        Any::NONE,
    );
    assert_differ(&a, &c);
    assert_eq!(paths(&a, &c).0, "<root>.attrs[\"k\"]");
    let d = holder(
        None,
        &[("j", Any::from("v")), ("z", Any::from(1))],
        Any::NONE,
    );
    assert_differ(&a, &d);
    assert_eq!(paths(&a, &d).0, "<root>.attrs[\"k\"]");
    let e2 = holder(None, &[("k", Any::from(1))], Any::NONE);
    assert_eq!(paths(&a, &e2).0, "<root>.attrs.len");
    // Larger maps, in reverse order, with expressions as values: still equal.
    let mut m1: Map<String, E> = Map::new();
    let mut m2: Map<String, E> = Map::new();
    let n = native_or_miri(50, 6) as i64;
    for i in 0..n {
        m1.insert(String::from(format!("key{i}")), add(&int(i), &int(i)));
    }
    for i in (0..n).rev() {
        m2.insert(String::from(format!("key{i}")), add(&int(i), &int(i)));
    }
    assert_same(&m1, &m2);
    // Object keys match by identity (or binding).
    let (x, y) = (var("x"), var("y"));
    let mut k1: Map<E, i64> = Map::new();
    k1.insert(x.clone(), 1);
    let mut k2: Map<E, i64> = Map::new();
    k2.insert(y.clone(), 1);
    assert_differ(&k1, &k2);
    let map = StructuralOptions::new().map_free_vars(true);
    let l = call("m", vec![x.clone()]);
    let r = call("m", vec![y.clone()]);
    assert!(structural_equal_with(&l, &r, &map));
}

// ---------------------------------------------------------------------------------
// Mutable containers: List and Dict, by contents, cycles included.
// ---------------------------------------------------------------------------------

fn list(items: Vec<Any>) -> List<Any> {
    items.into_iter().collect()
}

fn dict(entries: &[(&str, Any)]) -> Dict<String, Any> {
    let d = Dict::new();
    for (k, v) in entries {
        d.insert(String::from(*k), v.clone());
    }
    d
}

#[test]
fn lists_and_dicts_by_contents() {
    let _leaks = LeakCheck::new();
    let a = list(vec![
        Any::from(1),
        Any::from("two"),
        Any::from(add(&int(1), &int(2))),
    ]);
    let b = list(vec![
        Any::from(1),
        Any::from("two"),
        Any::from(add(&int(1), &int(2))),
    ]);
    assert!(!List::ptr_eq(&a, &b));
    assert_same(&a, &b);
    assert_same(&Any::from(a.clone()), &b);
    let c = list(vec![
        Any::from(1),
        Any::from("two"),
        Any::from(add(&int(1), &int(3))),
    ]);
    assert_differ(&a, &c);
    assert_eq!(paths(&a, &c).0, "<root>[2].rhs.value");
    assert_eq!(paths(&a, &list(vec![Any::from(1)])).0, "<root>.len");
    // A list is not an array with the same items: the types differ.
    let arr: Array<Any> = Array::from(vec![Any::from(1), Any::from("two")]);
    let l2 = list(vec![Any::from(1), Any::from("two")]);
    assert!(!structural_equal(&Any::from(arr), &Any::from(l2.clone())));
    // Contents are read now: a change through another handle shows.
    let h = structural_hash(&a);
    let alias = a.clone();
    alias.push(Any::from(4));
    assert_ne!(structural_hash(&a), h);
    assert_differ(&a, &b);
    b.push(Any::from(4));
    assert_same(&a, &b);

    // Dicts ignore insertion order, as maps do.
    let d1 = dict(&[
        ("k", Any::from(1)),
        ("j", Any::from(list(vec![Any::from("v")]))),
    ]);
    let d2 = dict(&[
        ("j", Any::from(list(vec![Any::from("v")]))),
        ("k", Any::from(1)),
    ]);
    assert_same(&d1, &d2);
    let d3 = dict(&[
        ("j", Any::from(list(vec![Any::from("w")]))),
        ("k", Any::from(1)),
    ]);
    assert_differ(&d1, &d3);
    assert_eq!(paths(&d1, &d3).0, "<root>[\"j\"][0]");
    let d4 = dict(&[("k", Any::from(1)), ("z", Any::from(1))]);
    assert_eq!(paths(&d1, &d4).0, "<root>[\"j\"]");
    assert_eq!(paths(&d1, &dict(&[("k", Any::from(1))])).0, "<root>.len");
    // Not a map with the same entries.
    let mut m: Map<String, Any> = Map::new();
    m.insert(String::from("k"), Any::from(1));
    assert!(!structural_equal(
        &Any::from(m),
        &Any::from(dict(&[("k", Any::from(1))]))
    ));

    // In reflected fields, with paths through them.
    let h1 = holder(None, &[], Any::from(list(vec![Any::from(1), Any::from(2)])));
    let h2 = holder(None, &[], Any::from(list(vec![Any::from(1), Any::from(3)])));
    assert_eq!(paths(&h1, &h2).0, "<root>.any[1]");
}

#[test]
fn dict_keys_that_are_bound_variables_match_through_the_binding() {
    let _leaks = LeakCheck::new();
    // fn(x) { {x: 1} } against fn(y) { {y: 1} }: the keys are bound at the parameters.
    // scope(x) { holder { any: {x: 1} } } against scope(y) { holder { any: {y: 1} } }.
    let keyed = |v: &E, value: i64| {
        let d: Dict<E, i64> = Dict::new();
        d.insert(v.clone(), value);
        holder(None, &[], Any::from(d))
    };
    let (x, y) = (var("x"), var("y"));
    // A definition field holding the variables and a dict keyed by them.
    let def_l = dag_free_def(&x, keyed(&x, 1));
    let def_r = dag_free_def(&y, keyed(&y, 1));
    assert_same(&def_l, &def_r);
    let def_other = dag_free_def(&y, keyed(&y, 2));
    assert_differ(&def_l, &def_other);
    // Free (unbound) object keys match by identity only.
    assert_differ(&keyed(&x, 1), &keyed(&y, 1));
    assert_same(&keyed(&x, 1), &keyed(&x, 1));
    // With `map_free_vars`, keys match as a `Map`'s do (a key is looked up before
    // anything binds it: see the module docs' limits).
    let mapped = |v: &E| {
        let mut m: Map<E, i64> = Map::new();
        m.insert(v.clone(), 1);
        holder(None, &[], Any::from(m))
    };
    let o = StructuralOptions::new().map_free_vars(true);
    assert_eq!(
        structural_equal_with(&keyed(&x, 1), &keyed(&y, 1), &o),
        structural_equal_with(&mapped(&x), &mapped(&y), &o)
    );
}

/// A node that defines `v` and holds `rest`.
#[derive(Object)]
#[repr(C)]
#[object(key = "st.Scope")]
struct Scope {
    base: Object,
    #[object(def)]
    v: E,
    rest: ObjectRef,
}

fn dag_free_def(v: &E, rest: ObjectRef) -> ObjectRef {
    make_object(Scope {
        base: Object::new(),
        v: v.clone(),
        rest,
    })
    .into_object_ref()
}

#[test]
fn cycles_through_lists_and_dicts_end() {
    let _leaks = LeakCheck::new();
    // l1 = [l1], l2 = [l2], l3 = [[l3]]: all the same infinite nesting.
    let l1 = list(vec![]);
    l1.push(Any::from(l1.clone()));
    let l2 = list(vec![]);
    l2.push(Any::from(l2.clone()));
    let l3 = list(vec![]);
    let inner = list(vec![Any::from(l3.clone())]);
    l3.push(Any::from(inner.clone()));
    assert_same(&l1, &l1);
    assert_same(&l1, &l2);
    assert_same(&l1, &l3);
    // Two lists holding each other, compared against each other.
    let (p, q) = (list(vec![]), list(vec![]));
    p.push(Any::from(q.clone()));
    q.push(Any::from(p.clone()));
    assert_same(&p, &q);
    assert_same(&p, &l1);
    // A difference beside the cycle is found, with its path.
    let m1 = list(vec![Any::from(1)]);
    m1.insert(0, Any::from(m1.clone())).unwrap();
    let m2 = list(vec![Any::from(2)]);
    m2.insert(0, Any::from(m2.clone())).unwrap();
    assert_differ(&m1, &m2);
    assert_eq!(paths(&m1, &m2).0, "<root>[1]");
    assert_ne!(structural_hash(&m1), structural_hash(&m2));
    // … and one a lap further down: [m, 1] against [[m', 1], 1] with m' = [m', 2].
    let m3 = list(vec![Any::from(m2.clone()), Any::from(1)]);
    assert_differ(&m1, &m3);
    assert_eq!(paths(&m1, &m3).0, "<root>[0][1]");
    // Through a reflected object and a dict: holder.any = {"self": [holder]}.
    let cyc = |n: i64| {
        let d = Dict::<String, Any>::new();
        let h = holder(None, &[("n", Any::from(n))], Any::from(d.clone()));
        d.insert(
            String::from("self"),
            Any::from(list(vec![Any::from(h.clone())])),
        );
        (h, d)
    };
    let (ha, da) = cyc(1);
    let (hb, db) = cyc(1);
    let (hc, dc) = cyc(2);
    assert_same(&ha, &hb);
    assert_differ(&ha, &hc);
    assert_eq!(paths(&ha, &hc).0, "<root>.attrs[\"n\"]");
    // Every mode ends too.
    let o = StructuralOptions::new().map_free_vars(true);
    assert!(structural_equal_with(&ha, &hb, &o));
    assert_eq!(structural_hash_with(&ha, &o), structural_hash_with(&hb, &o));
    assert!(first_mismatch_with(&ha, &hb, &o).is_none());
    // Break the cycles, for the leak check.
    for l in [&l1, &l2, &l3, &inner, &p, &q, &m1, &m2] {
        l.clear();
    }
    for d in [&da, &db, &dc] {
        d.clear();
    }
}

#[test]
fn lists_compared_from_many_threads_while_changing() {
    let _leaks = LeakCheck::new();
    // Snapshots are taken under the lock: comparisons never see a half-done change.
    let shared = list(vec![Any::from(0)]);
    shared.push(Any::from(shared.clone()));
    let n = native_or_miri(2000, 20);
    std::thread::scope(|s| {
        let w = shared.clone();
        s.spawn(move || {
            for i in 0..n as i64 {
                w.set(0, Any::from(i)).unwrap();
            }
        });
        for _ in 0..2 {
            let r = shared.clone();
            s.spawn(move || {
                for _ in 0..n {
                    assert!(structural_equal(&r, &r));
                    let _ = structural_hash(&r);
                    let copy = list(vec![Any::from(-1), Any::NONE]);
                    assert!(!structural_equal(&r, &copy));
                }
            });
        }
    });
    shared.clear();
}

#[test]
fn deep_lists_on_a_small_stack() {
    let _leaks = LeakCheck::new();
    let n = native_or_miri(deep() / 10, 12);
    on_small_stack(move || {
        let nest = |n: usize, leaf: i64| {
            let mut v = list(vec![Any::from(leaf)]);
            for _ in 0..n {
                v = list(vec![Any::from(v)]);
            }
            v
        };
        let (x, y, z) = (nest(n, 1), nest(n, 1), nest(n, 2));
        assert!(structural_equal(&x, &y));
        assert!(!structural_equal(&x, &z));
        assert_eq!(structural_hash(&x), structural_hash(&y));
        let (l, _) = first_mismatch(&nest(n.min(1000), 1), &nest(n.min(1000), 2)).unwrap();
        assert!(l.to_string().ends_with("[0][0]"));
    });
}

#[test]
fn tensors_by_contents_or_not() {
    let _leaks = LeakCheck::new();
    let t = |d: &[f32]| NDArray::from_slice(&[2, 2], d).unwrap();
    let a = holder(Some(t(&[1., 2., 3., 4.])), &[], Any::NONE);
    let b = holder(Some(t(&[1., 2., 3., 4.])), &[], Any::NONE);
    let c = holder(Some(t(&[1., 2., 3., 5.])), &[], Any::NONE);
    assert_same(&a, &b);
    assert_differ(&a, &c);
    assert_eq!(paths(&a, &c).0, "<root>.t.data");
    let skip = StructuralOptions::new().skip_tensor_contents(true);
    assert!(structural_equal_with(&a, &c, &skip));
    assert_eq!(
        structural_hash_with(&a, &skip),
        structural_hash_with(&c, &skip)
    );
    assert_ne!(structural_hash(&a), structural_hash(&c));
    let other_shape = holder(
        Some(NDArray::from_slice(&[4], &[1f32, 2., 3., 4.]).unwrap()),
        &[],
        Any::NONE,
    );
    assert_eq!(paths(&a, &other_shape).0, "<root>.t.shape");
    let other_dtype = holder(
        Some(NDArray::from_slice(&[2, 2], &[1i32, 2, 3, 4]).unwrap()),
        &[],
        Any::NONE,
    );
    assert_eq!(paths(&a, &other_dtype).0, "<root>.t.dtype");
    assert_differ(&a, &holder(None, &[], Any::NONE));
    // A strided view equals a packed copy of its elements.
    let big = NDArray::from_slice(&[3, 2], &[1f32, 2., 3., 4., 5., 6.]).unwrap();
    let rows = big.slice(1..3).unwrap();
    let packed = NDArray::from_slice(&[2, 2], &[3f32, 4., 5., 6.]).unwrap();
    assert_same(&rows, &packed);
}

// ---------------------------------------------------------------------------------
// Paths.
// ---------------------------------------------------------------------------------

#[test]
fn first_mismatch_paths() {
    let _leaks = LeakCheck::new();
    let (x, y) = (var("x"), var("y"));
    let args = |third: E| vec![int(0), int(1), add(&third, &int(9)), int(3)];
    let cases: Vec<(E, E, &str)> = vec![
        (int(1), int(2), "<root>.value"),
        (
            add(&int(1), &int(2)),
            add(&int(3), &int(2)),
            "<root>.lhs.value",
        ),
        (
            add(&int(1), &int(2)),
            add(&int(1), &int(4)),
            "<root>.rhs.value",
        ),
        (add(&int(1), &int(2)), int(1), "<root>"),
        (
            call("f", args(int(5))),
            call("f", args(int(6))),
            "<root>.args[2].lhs.value",
        ),
        (
            call("f", args(int(5))),
            call("g", args(int(5))),
            "<root>.op",
        ),
        (
            call("f", args(int(5))),
            call("f", vec![int(0)]),
            "<root>.args.len",
        ),
        (
            func(&[&x], call("f", args(x.clone()))),
            func(&[&y], call("f", args(int(5)))),
            "<root>.body.args[2].lhs",
        ),
        (
            let_(&x, int(1), neg(x.clone())),
            let_(&y, int(2), neg(y.clone())),
            "<root>.value.value",
        ),
        (
            let_(&x, int(1), neg(neg(x.clone()))),
            let_(&y, int(1), neg(neg(int(1)))),
            "<root>.body.arg.arg",
        ),
        (neg(float(1.5)), neg(float(2.5)), "<root>.arg.value"),
        (
            func(&[&x, &y], x.clone()),
            func(&[&y], y.clone()),
            "<root>.params.len",
        ),
    ];
    assert!(cases.len() >= 12);
    for (l, r, want) in &cases {
        let (lp, rp) = paths(l, r);
        assert_eq!(lp, *want, "left path");
        assert_eq!(rp, *want, "right path");
        assert!(!structural_equal(l, r));
    }
    // Holders: map values, tensor parts, an `Any` field.
    let a = holder(
        None,
        &[("k", Any::from(1))],
        Any::from(add(&int(1), &int(2))),
    );
    let b = holder(
        None,
        &[("k", Any::from(1))],
        Any::from(add(&int(1), &int(3))),
    );
    assert_eq!(paths(&a, &b).0, "<root>.any.rhs.value");
}

// ---------------------------------------------------------------------------------
// Keys.
// ---------------------------------------------------------------------------------

#[test]
fn structural_keys_in_a_hash_map() {
    let _leaks = LeakCheck::new();
    let (x, y) = (var("x"), var("y"));
    let mut seen: HashMap<StructuralKey<E>, &str> = HashMap::new();
    seen.insert(StructuralKey::new(func(&[&x], add(&x, &int(1)))), "inc");
    seen.insert(StructuralKey::new(add(&int(2), &int(3))), "five");
    assert_eq!(
        seen.get(&StructuralKey::new(func(&[&y], add(&y, &int(1))))),
        Some(&"inc")
    );
    assert_eq!(
        seen.get(&StructuralKey::new(add(&int(2), &int(3)))),
        Some(&"five")
    );
    assert_eq!(seen.get(&StructuralKey::new(add(&int(3), &int(2)))), None);
    let k = StructuralKey::new(int(7));
    assert_eq!(k.structural_hash(), structural_hash(k.get()));
    assert_eq!(k.clone(), k);
    drop(seen);
}

#[test]
fn structural_maps_use_the_keys_hash_as_it_is() {
    use std::hash::{BuildHasher, Hash, Hasher};
    let _leaks = LeakCheck::new();
    let (x, y) = (var("x"), var("y"));
    let mut seen: StructuralMap<E, &str> = StructuralMap::default();
    seen.insert(StructuralKey::new(func(&[&x], add(&x, &int(1)))), "inc");
    seen.insert(StructuralKey::new(add(&int(2), &int(3))), "five");
    assert_eq!(
        seen.get(&StructuralKey::new(func(&[&y], add(&y, &int(1))))),
        Some(&"inc")
    );
    assert_eq!(seen.get(&StructuralKey::new(add(&int(3), &int(2)))), None);
    // The map's hash of a key is its structural hash, unchanged.
    let k = StructuralKey::new(add(&int(2), &int(3)));
    assert_eq!(BuildStructuralKeyHasher.hash_one(&k), k.structural_hash());
    let set: StructuralSet<E> = [int(1), int(1), int(2)]
        .into_iter()
        .map(StructuralKey::new)
        .collect();
    assert_eq!(set.len(), 2);
    // Other keys still hash (bytes folded in, the length in the last word).
    type H = <BuildStructuralKeyHasher as BuildHasher>::Hasher;
    let h = |v: &dyn Fn(&mut H)| {
        let mut s = BuildStructuralKeyHasher.build_hasher();
        v(&mut s);
        s.finish()
    };
    assert_eq!(h(&|s| "abc".hash(s)), h(&|s| "abc".hash(s)));
    assert_ne!(h(&|s| s.write(b"ab")), h(&|s| s.write(b"ab\0")));
    assert_ne!(h(&|s| (1u64, 2u64).hash(s)), h(&|s| (2u64, 1u64).hash(s)));
    drop((seen, set));
}

#[test]
fn hashes_are_seeded_from_type_keys() {
    let _leaks = LeakCheck::new();
    // The same fields under two type keys hash differently; the same value always hashes
    // to the same number, computed only from keys and values (see the stability test in
    // `object-core`'s docs: no address or index takes part).
    let a = add(&int(1), &int(2));
    let n = make_object(Neg {
        base: e(),
        arg: int(1),
    });
    assert_ne!(structural_hash(&a), structural_hash(&n));
    assert_eq!(structural_hash(&a), structural_hash(&add(&int(1), &int(2))));
    // A fixed value: the hash of a string is the same in every process and build.
    assert_eq!(
        structural_hash(&Any::from("stable")),
        structural_hash(&String::from("stable"))
    );
    assert_eq!(structural_hash(&1i64), STABLE_ONE);
}

/// `structural_hash(&1i64)`, recorded once: a change means hashes are no longer stable
/// across builds.
const STABLE_ONE: u64 = 7773468528656894221;

// ---------------------------------------------------------------------------------
// Types registered at run time.
// ---------------------------------------------------------------------------------

#[test]
fn types_registered_at_run_time() {
    let _leaks = LeakCheck::new();
    let sub = register_type(&TypeSpec::new("st.rt.Sum", "st.Add")).unwrap();
    let mk = |l: i64, r: i64| {
        make_object_as(
            Add {
                base: e(),
                lhs: int(l),
                rhs: int(r),
            },
            sub.index(),
        )
        .unwrap()
        .into_object_ref()
    };
    let (a, b, c) = (mk(1, 2), mk(1, 2), mk(1, 3));
    assert_eq!(a.type_key(), "st.rt.Sum");
    assert_same(&a, &b);
    assert_differ(&a, &c);
    assert_eq!(paths(&a, &c).0, "<root>.rhs.value");
    // Not equal to the Rust type with the same fields, and hashed from its own key.
    let plain = add(&int(1), &int(2));
    assert_differ(&a, &plain);
    assert_ne!(structural_hash(&a), structural_hash(&plain));
}

// ---------------------------------------------------------------------------------
// Random graphs.
// ---------------------------------------------------------------------------------

/// A program shape from which two alpha-equivalent object graphs are built.
#[derive(Debug, Clone)]
enum Ast {
    Int(i64),
    Text(u8),
    /// A bound variable (the n-th in scope, modulo) or, with none in scope, a free one.
    Var(usize),
    Add(Box<Ast>, Box<Ast>),
    Let(Box<Ast>, Box<Ast>),
    Func(usize, Box<Ast>),
    Call(Vec<Ast>),
    /// The same subtree object twice.
    Twice(Box<Ast>),
    /// The same subtree object twice, the second time one level further down.
    TwiceNested(Box<Ast>),
}

fn ast() -> impl Strategy<Value = Ast> {
    let leaf = prop_oneof![
        (-3i64..3).prop_map(Ast::Int),
        (0u8..3).prop_map(Ast::Text),
        (0usize..4).prop_map(Ast::Var),
    ];
    let (depth, size) = (native_or_miri(6, 3) as u32, native_or_miri(48, 8) as u32);
    leaf.prop_recursive(depth, size, 4, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Ast::Add(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Ast::Let(Box::new(a), Box::new(b))),
            (0usize..3, inner.clone()).prop_map(|(n, b)| Ast::Func(n, Box::new(b))),
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Ast::Call),
            inner.clone().prop_map(|a| Ast::Twice(Box::new(a))),
            inner.prop_map(|a| Ast::TwiceNested(Box::new(a))),
        ]
    })
}

struct Builder<'f> {
    scope: Vec<E>,
    free: &'f [E],
    /// Mutate the n-th leaf value (counting down), if any.
    mutate: Option<usize>,
    leaves: usize,
}

impl Builder<'_> {
    fn leaf(&mut self) -> bool {
        let hit = self.mutate == Some(self.leaves);
        self.leaves += 1;
        hit
    }

    fn build(&mut self, a: &Ast) -> E {
        match a {
            Ast::Int(v) => {
                let m = self.leaf();
                int(if m { v + 100 } else { *v })
            }
            Ast::Text(t) => {
                let m = self.leaf();
                call(&format!("t{}", if m { 9 } else { *t }), vec![])
            }
            Ast::Var(i) => {
                if self.scope.is_empty() {
                    self.free[i % self.free.len()].clone()
                } else {
                    self.scope[self.scope.len() - 1 - i % self.scope.len()].clone()
                }
            }
            Ast::Add(l, r) => {
                let (l, r) = (self.build(l), self.build(r));
                add(&l, &r)
            }
            Ast::Let(v, b) => {
                let value = self.build(v);
                let x = var("v");
                self.scope.push(x.clone());
                let body = self.build(b);
                self.scope.pop();
                let_(&x, value, body)
            }
            Ast::Func(n, b) => {
                let params: Vec<E> = (0..*n).map(|_| var("p")).collect();
                self.scope.extend(params.iter().cloned());
                let body = self.build(b);
                self.scope.truncate(self.scope.len() - params.len());
                func(&params.iter().collect::<Vec<_>>(), body)
            }
            Ast::Call(args) => {
                let args = args.iter().map(|a| self.build(a)).collect();
                call("c", args)
            }
            Ast::Twice(a) => {
                let s = self.build(a);
                add(&s, &s)
            }
            Ast::TwiceNested(a) => {
                let s = self.build(a);
                add(&s, &neg(s.clone()))
            }
        }
    }
}

fn build(a: &Ast, free: &[E], mutate: Option<usize>) -> (E, usize) {
    let mut b = Builder {
        scope: Vec::new(),
        free,
        mutate,
        leaves: 0,
    };
    let e = b.build(a);
    (e, b.leaves)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: native_or_miri(256, 4) as u32,
        ..ProptestConfig::default()
    })]

    /// Two builds of one program (fresh binders each time) are equal and hash alike; a
    /// single changed leaf makes them differ (and `first_mismatch` finds it).
    #[test]
    fn hash_agrees_with_equality_on_random_graphs(a in ast(), pick in any::<prop::sample::Index>()) {
        let _leaks = LeakCheck::new();
        let free = [var("f0"), var("f1")];
        let (l, leaves) = build(&a, &free, None);
        let (r, _) = build(&a, &free, None);
        prop_assert!(structural_equal(&l, &r));
        prop_assert_eq!(structural_hash(&l), structural_hash(&r));
        prop_assert!(first_mismatch(&l, &r).is_none());
        let map = StructuralOptions::new().map_free_vars(true);
        prop_assert!(structural_equal_with(&l, &r, &map));
        prop_assert_eq!(structural_hash_with(&l, &map), structural_hash_with(&r, &map));
        if leaves > 0 {
            let (m, _) = build(&a, &free, Some(pick.index(leaves)));
            prop_assert!(!structural_equal(&l, &m));
            prop_assert!(!structural_equal(&m, &l));
            prop_assert!(first_mismatch(&l, &m).is_some());
        }
    }
}

/// Every object under `root` (each once), in post-order: children before parents.
fn post_order(root: &ObjectRef) -> Vec<ObjectRef> {
    struct Post(Vec<ObjectRef>);
    impl object_core::transform::Visitor for Post {
        fn enter(&mut self, _: &ObjectRef) -> object_core::transform::Walk {
            object_core::transform::Walk::Continue
        }
        fn leave(&mut self, node: &ObjectRef) {
            self.0.push(node.clone());
        }
    }
    let mut v = Post(Vec::new());
    object_core::transform::walk(root, &mut v);
    v.0
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: native_or_miri(256, 4) as u32,
        ..ProptestConfig::default()
    })]

    /// A hash cache gives `structural_hash`'s very numbers, whatever the order the
    /// subterms come in (children first, parents first, shuffled), with binders, shared
    /// subtrees and free variables, and keys made through it find keys made without.
    #[test]
    fn hash_cache_agrees_with_structural_hash(a in ast(), seed in any::<u64>()) {
        let _leaks = LeakCheck::new();
        let free = [var("f0"), var("f1")];
        let (root, _) = build(&a, &free, None);
        let root = root.into_object_ref();
        let subs = post_order(&root);
        let fresh: Vec<u64> = subs.iter().map(structural_hash).collect();
        let mut shuffled: Vec<usize> = (0..subs.len()).collect();
        let mut x = seed | 1;
        for i in (1..shuffled.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            shuffled.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let reversed: Vec<usize> = (0..subs.len()).rev().collect();
        for order in [(0..subs.len()).collect::<Vec<_>>(), reversed, shuffled] {
            let mut cache = StructuralHashCache::new();
            for _ in 0..2 {
                for &i in &order {
                    prop_assert_eq!(cache.hash(&subs[i]), fresh[i], "subterm {}", i);
                }
            }
            let mut seen: StructuralMap<ObjectRef, usize> = StructuralMap::default();
            for (i, sub) in subs.iter().enumerate() {
                seen.entry(cache.key(sub.clone())).or_insert(i);
            }
            for sub in &subs {
                prop_assert!(seen.contains_key(&StructuralKey::new(sub.clone())));
            }
            prop_assert!(cache.len() <= subs.len());
        }
    }
}

#[test]
fn hash_cache_keeps_nothing_that_can_change() {
    let _leaks = LeakCheck::new();
    let mut cache = StructuralHashCache::new();
    // A list (mutable): its hash follows its contents, and what it holds is hashed
    // afresh inside it.
    let sum = add(&int(1), &int(2));
    let l = list(vec![Any::from(sum.clone())]);
    let before = cache.hash(&l);
    assert_eq!(before, structural_hash(&l));
    l.push(Any::from(3));
    assert_eq!(cache.hash(&l), structural_hash(&l));
    assert_ne!(cache.hash(&l), before);
    let holder = call("c", vec![sum.clone()]);
    assert_eq!(cache.hash(&holder), structural_hash(&holder));
    // A tensor: never kept, nor anything holding one.
    let t = NDArray::from_slice(&[2], &[1f32, 2.]).unwrap();
    let arr: Array<Any> = vec![Any::from(t.clone()), Any::from(sum.clone())].into();
    let kept = cache.len();
    assert_eq!(cache.hash(&arr), structural_hash(&arr));
    assert_eq!(
        cache.len(),
        kept,
        "neither the tensor nor its array is kept"
    );
    // Under a binder: a variable's use depends on where it is met.
    let x = var("x");
    let body = add(&x, &int(1));
    let f = func(&[&x], body.clone());
    assert_eq!(cache.hash(&f), structural_hash(&f));
    assert_eq!(cache.hash(&body), structural_hash(&body));
    assert_eq!(cache.hash(&f), structural_hash(&f));
    // A shared subtree met twice under a binder: its second meeting comes from the
    // walk's memo, and what holds it is no more context-free than the first.
    let s = add(&x, &int(1));
    let twice = neg(s.clone());
    let g = func(&[&x], add(&s, &twice));
    let mut fresh_cache = StructuralHashCache::new();
    assert_eq!(fresh_cache.hash(&g), structural_hash(&g));
    assert_eq!(fresh_cache.hash(&twice), structural_hash(&twice));
    assert_eq!(fresh_cache.hash(&s), structural_hash(&s));
    drop((g, twice, s, fresh_cache));
    // The cache holds what it keeps; clearing lets go.
    assert!(!cache.is_empty());
    cache.clear();
    assert!(cache.is_empty());
    drop((l, holder, t, arr, f, body, x, sum));
}

// ---------------------------------------------------------------------------------
// Deep graphs.
// ---------------------------------------------------------------------------------

/// `-(-(…-(leaf)))`, `n` deep.
fn chain(n: usize, leaf: i64) -> E {
    let mut e = int(leaf);
    for _ in 0..n {
        e = neg(e);
    }
    e
}

#[test]
fn deep_chains_on_a_small_stack() {
    let _leaks = LeakCheck::new();
    let n = native_or_miri(deep(), 60);
    on_small_stack(move || {
        let a = chain(n, 1);
        let b = chain(n, 1);
        let c = chain(n, 2);
        assert!(structural_equal(&a, &a), "itself");
        assert!(structural_equal(&a, &b));
        assert!(!structural_equal(&a, &c));
        assert_eq!(structural_hash(&a), structural_hash(&b));
        assert_ne!(structural_hash(&a), structural_hash(&c));
        // Dropped here, on the small stack too.
    });
}

#[test]
fn deep_binders_and_arrays_on_a_small_stack() {
    let _leaks = LeakCheck::new();
    let n = native_or_miri(deep() / 10, 12);
    on_small_stack(move || {
        // let v0 = 0 in let v1 = v0 in … in v_n, built twice with fresh variables.
        let build = |n: usize| {
            let vars: Vec<E> = (0..=n).map(|_| var("v")).collect();
            let mut body = vars[n].clone();
            for i in (1..=n).rev() {
                body = let_(&vars[i], vars[i - 1].clone(), body);
            }
            let_(&vars[0], int(0), body)
        };
        let (a, b) = (build(n), build(n));
        assert!(structural_equal(&a, &b));
        assert_eq!(structural_hash(&a), structural_hash(&b));
        // Nested arrays.
        let nest = |n: usize, leaf: i64| {
            let mut v = Any::from(leaf);
            for _ in 0..n {
                v = Any::from(Array::<Any>::from(vec![v]));
            }
            v
        };
        let (x, y, z) = (nest(n, 1), nest(n, 1), nest(n, 2));
        assert!(structural_equal(&x, &y));
        assert!(!structural_equal(&x, &z));
        assert_eq!(structural_hash(&x), structural_hash(&y));
        let shallow = nest(n.min(1000), 2);
        let (l, _) = first_mismatch(&nest(n.min(1000), 1), &shallow).unwrap();
        assert!(l.to_string().ends_with("[0][0]"));
    });
}

/// A `String` is inline (up to 7 bytes) or an object; equality and hashing see the text
/// either way, in handles, `Any` slots and containers alike.
#[test]
fn inline_strings_equal_string_objects() {
    let _leaks = LeakCheck::new();
    let inline = String::from("abc");
    let object = String::from_object_ptr(String::from("abc").into_object_ptr());
    assert!(inline.is_inline() && !object.is_inline());
    assert_same(&inline, &object);
    assert_same(&Any::from(inline.clone()), &Any::from(object.clone()));
    let a: Array<String> = vec![inline.clone(), String::from("a long string here")].into();
    let b: Array<Any> = vec![
        Any::from(object.clone()),
        Any::from(String::from("a long string here")),
    ]
    .into();
    assert_same(&a, &b);
    let mut m1: Map<String, i64> = Map::new();
    m1.insert(inline, 1);
    let mut m2: Map<String, i64> = Map::new();
    m2.insert(object, 1);
    assert_same(&m1, &m2);
    assert_differ(&a, &Array::<String>::from(vec![String::from("abd")]));
    assert_differ(&String::from("abc"), &String::from("abd"));
}

// ---------------------------------------------------------------------------------
// Stability.
// ---------------------------------------------------------------------------------

/// A few graphs covering every way the hash combines (fields, binders, free variables,
/// arrays, maps, lists, dicts, floats, strings, sharing), with their hashes.
fn pinned_values() -> Vec<(&'static str, u64)> {
    let (x, y) = (var("x"), var("y"));
    let shared = add(&int(1), &float(2.5));
    let graphs: Vec<(&'static str, Any)> = vec![
        ("int", Any::from(7i64)),
        ("str", Any::from("seven")),
        (
            "tree",
            Any::from(add(&add(&int(1), &int(2)), &neg(float(-0.5)))),
        ),
        (
            "binders",
            Any::from(func(&[&x], let_(&y, x.clone(), add(&x, &y)))),
        ),
        (
            "free",
            Any::from(add(&x, &call("f", vec![y.clone(), int(3)]))),
        ),
        ("shared", Any::from(add(&shared, &shared))),
        ("deep", Any::from(nest(60, add(&x, &int(4))))),
        (
            "containers",
            Any::from(holder(
                None,
                &[
                    ("k", Any::from(1)),
                    ("j", Any::from(list(vec![Any::from("v")]))),
                ],
                Any::from(dict(&[("a", Any::from(2.0f64))])),
            )),
        ),
    ];
    // (Pinned as content-only hashes: by default free variables hash by identity,
    // which differs from run to run.)
    let stable = StructuralOptions::new().content_only_hashes(true);
    graphs
        .into_iter()
        .map(|(name, g)| (name, structural_hash_with(&g, &stable)))
        .collect()
}

/// By default a free variable and an identity object hash by identity: distinct ones
/// apart (so keys over many free variables do not collide), the same one alike; bound
/// variables still hash by position (alpha-equivalent programs alike); with
/// `content_only_hashes`, all free variables of a type hash alike.
#[test]
fn free_variables_and_identity_objects_hash_by_identity() {
    let _leaks = LeakCheck::new();
    let stable = StructuralOptions::new().content_only_hashes(true);
    let vars: Vec<E> = (0..1000).map(|i| var(&format!("v{i}"))).collect();
    let keys: Vec<E> = vars.iter().map(|v| add(v, &int(1))).collect();
    let distinct: std::collections::HashSet<u64> = keys.iter().map(structural_hash).collect();
    assert_eq!(distinct.len(), keys.len(), "free variables collide");
    // The same variable: equal, and equal hashes.
    let again = add(&vars[7], &int(1));
    assert!(structural_equal(&keys[7], &again));
    assert_eq!(structural_hash(&keys[7]), structural_hash(&again));
    // Content only: all alike (and unequal, which a hash may be).
    assert_eq!(
        structural_hash_with(&keys[0], &stable),
        structural_hash_with(&keys[1], &stable)
    );
    assert!(!structural_equal(&keys[0], &keys[1]));
    // Bound: by position, so alpha-equivalent functions hash alike either way.
    let (x, y) = (var("x"), var("y"));
    let fx = func(&[&x], add(&x, &int(2)));
    let fy = func(&[&y], add(&y, &int(2)));
    assert!(structural_equal(&fx, &fy));
    assert_eq!(structural_hash(&fx), structural_hash(&fy));
    assert_eq!(
        structural_hash_with(&fx, &stable),
        structural_hash_with(&fy, &stable)
    );
    // Identity objects.
    let h = |id| {
        make_object(Handle {
            base: Object::new(),
            id,
        })
    };
    let (a, b) = (h(1), h(1));
    assert!(!structural_equal(&a, &b));
    assert_ne!(structural_hash(&a), structural_hash(&b));
    assert_eq!(structural_hash(&a), structural_hash(&a.clone()));
    assert_eq!(
        structural_hash_with(&a, &stable),
        structural_hash_with(&b, &stable)
    );
    // The subtree cache agrees with the plain hash.
    let mut cache = StructuralHashCache::new();
    for k in &keys[..10] {
        assert_eq!(cache.hash(k), structural_hash(k));
    }
}

/// Opaque built-ins (a `Function`: equal only to itself) hash by identity too, the same
/// number whether the walk meets them by recursion (the top levels) or on its work
/// stack (below them), so a hash kept by the subtree cache at one depth is the one a
/// fresh walk computes at another.
#[test]
fn opaque_built_ins_hash_by_identity_at_every_depth() {
    let _leaks = LeakCheck::new();
    let (f, g) = (
        Function::from_typed(|x: i64| x + 1),
        Function::from_typed(|x: i64| x + 1),
    );
    assert!(!structural_equal(&f, &g));
    assert_ne!(structural_hash(&f), structural_hash(&g));
    assert_eq!(structural_hash(&f), structural_hash(&f.clone()));
    let stable = StructuralOptions::new().content_only_hashes(true);
    assert_eq!(
        structural_hash_with(&f, &stable),
        structural_hash_with(&g, &stable)
    );
    // `inner` hashed at the top (by recursion) and kept; then met 60 arrays down (on
    // the work stack) inside `outer`.
    let inner: Array<Any> = vec![Any::from(f.clone())].into();
    let mut outer = Any::from(inner.clone());
    for _ in 0..60 {
        outer = Any::from(Array::<Any>::from(vec![outer]));
    }
    let mut cache = StructuralHashCache::new();
    assert_eq!(cache.hash(&inner), structural_hash(&inner));
    assert_eq!(cache.hash(&outer), structural_hash(&outer));
    let mut other = Any::from(Array::<Any>::from(vec![Any::from(g.clone())]));
    for _ in 0..60 {
        other = Any::from(Array::<Any>::from(vec![other]));
    }
    assert_ne!(structural_hash(&outer), structural_hash(&other));
    assert_eq!(
        structural_hash_with(&outer, &stable),
        structural_hash_with(&other, &stable)
    );
    drop((cache, outer, other, inner, f, g));
}

#[test]
fn hashes_are_pinned() {
    // Hashes are documented as the same in every process and build: these values were
    // computed once and must not change with the engine's implementation.
    let _leaks = LeakCheck::new();
    let got = pinned_values();
    let want: &[(&str, u64)] = &[
        ("int", 0x8c776870079af07d),
        ("str", 0xfe84b0d0236d5fc5),
        ("tree", 0x664229f65c9ae578),
        ("binders", 0x2525dd6ca31b57ce),
        ("free", 0xd6b6e8c49b0a1636),
        ("shared", 0x1d9efa0e175cbb55),
        ("deep", 0x65be9917e036085d),
        ("containers", 0x6eea210a04a88fdf),
    ];
    for ((name, h), (wname, w)) in got.iter().zip(want) {
        assert_eq!(name, wname);
        assert_eq!(h, w, "the hash of `{name}` changed");
    }
    assert_eq!(got.len(), want.len(), "{got:#x?}");
}

// ---------------------------------------------------------------------------------
// Shallow keys and hash-consing.
// ---------------------------------------------------------------------------------

/// Equal as shallow keys, both ways, and hashing alike.
#[track_caller]
fn assert_shallow_same<
    A: object_core::reflection::FieldValue,
    B: object_core::reflection::FieldValue,
>(
    a: &A,
    b: &B,
) {
    assert!(shallow_equal(a, b), "expected shallow-equal");
    assert!(shallow_equal(b, a), "expected shallow-equal (swapped)");
    assert_eq!(shallow_hash(a), shallow_hash(b), "equal keys hash alike");
}

/// Different shallow keys, both ways, with different hashes (not required, but keys
/// this different colliding would be a bad hash).
#[track_caller]
fn assert_shallow_differ<
    A: object_core::reflection::FieldValue,
    B: object_core::reflection::FieldValue,
>(
    a: &A,
    b: &B,
) {
    assert!(!shallow_equal(a, b), "expected shallow-different");
    assert!(!shallow_equal(b, a), "expected shallow-different (swapped)");
    assert_ne!(shallow_hash(a), shallow_hash(b), "different keys collide");
}

/// A shallow key is the node's type, its own values and its children's identities:
/// equal keys for separately built nodes over the same children, different keys for
/// structurally equal but distinct children.
#[test]
fn shallow_keys_are_own_values_and_child_identities() {
    let _leaks = LeakCheck::new();
    let (a, b) = (int(1), int(2));
    // The same children, separately built parents.
    assert_shallow_same(&add(&a, &b), &add(&a, &b));
    assert_shallow_same(&neg(a.clone()), &neg(a.clone()));
    // A structurally equal child that is another object: another key (one level only).
    let a2 = int(1);
    assert!(structural_equal(&add(&a, &b), &add(&a2, &b)));
    assert_shallow_differ(&add(&a, &b), &add(&a2, &b));
    // Order, type and arity.
    assert_shallow_differ(&add(&a, &b), &add(&b, &a));
    assert_shallow_differ(&add(&a, &a), &neg(a.clone()));
    // Own values by value (integers, floats as structural equality has them).
    assert_shallow_same(&int(7), &int(7));
    assert_shallow_differ(&int(7), &int(8));
    assert_shallow_same(&float(f64::NAN), &float(-f64::NAN));
    assert_shallow_differ(&float(0.0), &float(-0.0));
    assert_shallow_differ(&int(1), &float(1.0));
    // Strings by text, however stored (a `std` field, an inline or an object string).
    assert_shallow_same(&call("f", vec![a.clone()]), &call("f", vec![a.clone()]));
    assert_shallow_differ(&call("f", vec![a.clone()]), &call("g", vec![a.clone()]));
    let long = "a string too long to be inline";
    assert_shallow_same(
        &packed(1, 2, Some(text(long)), text("s")),
        &packed(1, 2, Some(text(long)), text("s")),
    );
    assert_shallow_same(&Any::from(long), &Any::from(String::from(long)));
    assert_shallow_same(&Any::from(3), &Any::from(3));
    assert_shallow_differ(&Any::from(3), &Any::from(true));
    // Objects read in place (all fields 8-byte integers and object pointers) and through
    // the general plan (`Widths`) alike.
    let w = widths(1, 2, None);
    assert_shallow_same(
        &widths(5, 6, Some(w.clone())),
        &widths(5, 6, Some(w.clone())),
    );
    assert_shallow_differ(&widths(5, 6, Some(w.clone())), &widths(5, 6, None));
    assert_shallow_differ(
        &widths(5, 6, Some(w.clone())),
        &widths(5, 7, Some(w.clone())),
    );
    assert_shallow_differ(
        &widths(5, 6, Some(w.clone())),
        &widths(5, 6, Some(widths(1, 2, None))),
    );
    let x = int(3).into_object_ref();
    assert_shallow_same(
        &packed(1, 2, None, x.clone()),
        &packed(1, 2, None, x.clone()),
    );
    assert_shallow_differ(
        &packed(1, 2, None, x.clone()),
        &packed(1, 2, Some(x.clone()), x.clone()),
    );
    assert_shallow_differ(
        &packed(1, 2, None, x.clone()),
        &packed(1, 3, None, x.clone()),
    );
}

/// Variables, identity objects, `no_eq` and `def` fields.
#[test]
fn shallow_keys_of_variables_identities_and_flagged_fields() {
    let _leaks = LeakCheck::new();
    // A variable is keyed by identity: its name (`no_eq`) or not, another variable is
    // another key; the same one, the same key.
    let vars: Vec<E> = (0..1000).map(|_| var("v")).collect();
    let hashes: std::collections::HashSet<u64> = vars.iter().map(shallow_hash).collect();
    assert_eq!(hashes.len(), vars.len(), "free variables collide");
    assert_shallow_same(&vars[3], &vars[3].clone());
    assert_shallow_differ(&vars[3], &vars[4]);
    // And so are keys over them: `v_i + 1` for every `i`, all apart.
    let one = int(1);
    let sums: ShallowSet<E> = vars.iter().map(|v| ShallowKey::new(add(v, &one))).collect();
    assert_eq!(sums.len(), vars.len());
    let hashes: std::collections::HashSet<u64> =
        sums.iter().map(ShallowKey::shallow_hash).collect();
    assert_eq!(hashes.len(), vars.len(), "keys over free variables collide");
    // Identity objects: only the same object.
    let h = |id| {
        make_object(Handle {
            base: Object::new(),
            id,
        })
    };
    let (p, q) = (h(1), h(1));
    assert_shallow_differ(&p, &q);
    assert_shallow_same(&p, &p.clone());
    // `no_eq` fields are left out (a function's span); a `def` field is read like any
    // other (its array's variables by identity, nothing bound), so alpha-equivalent
    // functions with distinct parameters are different keys.
    let (x, y) = (var("x"), var("y"));
    let body = add(&x, &one);
    let f = |params: &Array<E>, span| {
        make_object(Func {
            base: e(),
            params: params.clone(),
            body: body.clone(),
            span,
        })
    };
    let px: Array<E> = vec![x.clone()].into();
    assert_shallow_same(&f(&px, 10), &f(&px, 99));
    assert_shallow_same(&f(&px, 10), &f(&vec![x.clone()].into(), 10));
    assert_shallow_differ(&f(&px, 10), &f(&vec![y.clone()].into(), 10));
    let (fx, fy) = (func(&[&x], add(&x, &one)), func(&[&y], add(&y, &one)));
    assert!(structural_equal(&fx, &fy));
    assert_shallow_differ(&fx, &fy);
}

/// Built-in containers: held in a field, one level in (items by identity); keyed
/// themselves, the same; value built-ins by value; mutable ones and tensors by identity.
#[test]
fn shallow_keys_of_containers() {
    let _leaks = LeakCheck::new();
    let (a, b) = (int(1), int(2));
    // An `Array` field (`Call.args`): items by identity, one level in.
    assert_shallow_same(
        &call("c", vec![a.clone(), b.clone()]),
        &call("c", vec![a.clone(), b.clone()]),
    );
    assert_shallow_differ(
        &call("c", vec![a.clone(), b.clone()]),
        &call("c", vec![a.clone(), int(2)]),
    );
    assert_shallow_differ(
        &call("c", vec![a.clone(), b.clone()]),
        &call("c", vec![a.clone()]),
    );
    assert_shallow_differ(
        &call("c", vec![a.clone(), b.clone()]),
        &call("c", vec![b.clone(), a.clone()]),
    );
    // An `Array` keyed itself.
    let arr = |xs: &[&E]| Array::<E>::from(xs.iter().map(|x| (*x).clone()).collect::<Vec<_>>());
    assert_shallow_same(&arr(&[&a, &b]), &arr(&[&a, &b]));
    assert_shallow_same(&arr(&[]), &arr(&[]));
    assert_shallow_differ(&arr(&[&a, &b]), &arr(&[&a, &int(2)]));
    // One level only: an array inside an array is an item, by identity.
    let nested =
        |inner: &Array<E>| Array::<Any>::from(vec![Any::from(inner.clone()), Any::from("s")]);
    let inner = arr(&[&a]);
    assert_shallow_same(&nested(&inner), &nested(&inner));
    assert_shallow_differ(&nested(&inner), &nested(&arr(&[&a])));
    // Items that are values: by value (strings, integers).
    assert_shallow_same(
        &Array::<Any>::from(vec![
            Any::from(1),
            Any::from("a string too long to be inline"),
        ]),
        &Array::<Any>::from(vec![
            Any::from(1),
            Any::from("a string too long to be inline"),
        ]),
    );
    // A `Map` field: entries regardless of order, values by identity; a shape by value;
    // a tensor by identity.
    let t = NDArray::from_slice(&[2], &[1f32, 2.]).unwrap();
    let hold = |attrs: &[(&str, Any)], t: Option<NDArray>| {
        holder(t, attrs, Any::from(Shape::from(vec![2, 3])))
    };
    let (va, vb) = (Any::from(a.clone()), Any::from(b.clone()));
    assert_shallow_same(
        &hold(&[("k", va.clone()), ("j", vb.clone())], Some(t.clone())),
        &hold(&[("j", vb.clone()), ("k", va.clone())], Some(t.clone())),
    );
    assert_shallow_differ(
        &hold(&[("k", va.clone()), ("j", vb.clone())], None),
        &hold(&[("k", va.clone()), ("j", va.clone())], None),
    );
    assert_shallow_differ(
        &hold(&[("k", va.clone())], None),
        &hold(&[("k", Any::from(int(1)))], None),
    );
    assert_shallow_differ(
        &hold(&[("k", va.clone())], Some(t.clone())),
        &hold(
            &[("k", va.clone())],
            Some(NDArray::from_slice(&[2], &[1f32, 2.]).unwrap()),
        ),
    );
    // A `Map` keyed itself, and a map whose two keys hash alike as values.
    let map = |es: &[(&str, &E)]| {
        let mut m: Map<String, E> = Map::new();
        for (k, v) in es {
            m.insert(String::from(*k), (*v).clone());
        }
        m
    };
    assert_shallow_same(&map(&[("x", &a), ("y", &b)]), &map(&[("y", &b), ("x", &a)]));
    assert_shallow_differ(&map(&[("x", &a), ("y", &b)]), &map(&[("x", &b), ("y", &a)]));
    assert_shallow_differ(&map(&[("x", &a)]), &map(&[("x", &a), ("y", &b)]));
    // Mutable containers are keyed by identity (their items can change).
    let l = list(vec![Any::from(1)]);
    assert_shallow_differ(&l, &list(vec![Any::from(1)]));
    assert_shallow_same(&l, &l.clone());
    // Value built-ins by value.
    assert_shallow_same(&Shape::from(vec![1, 2]), &Shape::from(vec![1, 2]));
    assert_shallow_differ(&Shape::from(vec![1, 2]), &Shape::from(vec![2, 1]));
    assert_shallow_same(&BigInt::from(5i64), &BigInt::from(5i64));
    assert_shallow_differ(&BigInt::from(5i64), &BigInt::from(6i64));
}

/// A hash-consing table: interning bottom-up shares equal subtrees; a variable is its
/// own canonical node; `get`, `iter`, `clear`.
#[test]
fn hash_cons_interns_bottom_up() {
    let _leaks = LeakCheck::new();
    let (x, y) = (var("x"), var("y"));
    let mut table: HashCons<Expr> = HashCons::new();
    let one = table.intern(int(1));
    assert!(ObjectPtr::ptr_eq(&table.intern(int(1)), &one));
    let s1 = table.intern(add(&x, &one));
    let another_one = table.intern(int(1));
    let s2 = table.intern(add(&x, &another_one));
    assert!(ObjectPtr::ptr_eq(&s1, &s2));
    assert!(!ObjectPtr::ptr_eq(&s1, &table.intern(add(&y, &one))));
    assert!(ObjectPtr::ptr_eq(&table.intern(x.clone()), &x));
    assert!(table
        .get(&add(&x, &one))
        .is_some_and(|c| ObjectPtr::ptr_eq(c, &s1)));
    assert!(table.get(&add(&y, &x)).is_none());
    assert_eq!(table.len(), 4);
    assert_eq!(table.iter().count(), 4);
    table.clear();
    assert!(table.is_empty());
}

/// What a pass of hash-consing does to a program of ~88,000 nodes over 2,000 free
/// variables, built with no sharing but its variables: each node keyed once, one
/// canonical node per structural class (as many as deep keys count), a result in
/// which no two nodes are shallowly equal — and keys that do not collide, which is
/// what keeps the pass linear. (With content-only hashes, deep keys of nodes over
/// different free variables collide, as the last check shows.)
#[test]
fn hash_consing_many_free_variables_keys_each_node_once() {
    let _leaks = LeakCheck::new();
    let vars: Vec<E> = (0..native_or_miri(2000, 8))
        .map(|i| var(&format!("v{i}")))
        .collect();
    let mut rng = Rng::new(seed("hash_consing_many_free_variables", 7));
    let exprs: Vec<E> = (0..native_or_miri(800, 2))
        .map(|_| cse_expr(&mut rng, native_or_miri(7, 3) as u32, &vars))
        .collect();
    let program = call("program", exprs).into_object_ref();
    let nodes = post_order(&program);

    /// Hash-consing that counts the nodes it keys.
    struct Counting {
        table: HashCons,
        keyed: usize,
    }
    impl object_core::transform::Rewriter for Counting {
        type Error = object_core::transform::TransformError;
        fn post(&mut self, node: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, Self::Error> {
            self.keyed += 1;
            Ok(self.table.intern(node))
        }
    }
    let mut pass = Counting {
        table: HashCons::new(),
        keyed: 0,
    };
    let shared = object_core::transform::mutate(&program, &mut pass).unwrap();
    assert_eq!(pass.keyed, nodes.len(), "each node keyed exactly once");
    assert!(structural_equal(&shared, &program));

    // One canonical node per class of structurally equal subtrees.
    let mut deep = StructuralHashCache::new();
    let classes: StructuralSet<ObjectRef> = nodes.iter().map(|n| deep.key(n.clone())).collect();
    assert_eq!(pass.table.len(), classes.len());
    // (Natively; Miri's two small expressions need not repeat themselves.)
    assert!(
        cfg!(miri) || pass.table.len() < nodes.len() / 2,
        "the program repeats itself"
    );
    let result = post_order(&shared);
    assert_eq!(result.len(), classes.len());
    let keys: ShallowSet<ObjectRef> = result.iter().map(|n| ShallowKey::new(n.clone())).collect();
    assert_eq!(
        keys.len(),
        result.len(),
        "two result nodes are shallowly equal"
    );

    // Keys apart: shallow hashes of the canonical nodes, and deep hashes of the classes.
    let collisions = |hashes: &mut dyn Iterator<Item = u64>, n: usize| {
        n - hashes.collect::<std::collections::HashSet<_>>().len()
    };
    let n = pass.table.len();
    assert!(collisions(&mut pass.table.iter().map(shallow_hash), n) <= 1);
    assert!(collisions(&mut classes.iter().map(StructuralKey::structural_hash), n) <= 1);
    let stable = StructuralOptions::new().content_only_hashes(true);
    let content_only = collisions(
        &mut classes
            .iter()
            .map(|k| structural_hash_with(k.get(), &stable)),
        n,
    );
    assert!(
        content_only > n / 10,
        "{content_only} content-only collisions of {n}"
    );
    drop((deep, keys, classes, result, shared, pass, nodes, program));
}

/// A random expression `depth` deep over `vars` and small integers, with `Add`, `Neg`
/// and `Call` nodes, built with no sharing but the variables; below depth 4, half the
/// subtrees are copies (built afresh) of a few hundred fixed ones.
fn cse_expr(rng: &mut Rng, depth: u32, vars: &[E]) -> E {
    if depth == 0 {
        return if rng.chance(0.5) {
            vars[rng.below(vars.len())].clone()
        } else {
            int(rng.below(8) as i64)
        };
    }
    if depth < 4 && rng.chance(0.5) {
        let mut fixed = Rng::new(rng.below(300) as u64 * 1_000 + u64::from(depth));
        return cse_expr_fresh(&mut fixed, depth, vars);
    }
    cse_node(rng, depth, vars, cse_expr)
}

/// [`cse_expr`] without copies (what a copy is built from).
fn cse_expr_fresh(rng: &mut Rng, depth: u32, vars: &[E]) -> E {
    if depth == 0 {
        return cse_expr(rng, 0, vars);
    }
    cse_node(rng, depth, vars, cse_expr_fresh)
}

fn cse_node(rng: &mut Rng, depth: u32, vars: &[E], sub: fn(&mut Rng, u32, &[E]) -> E) -> E {
    match rng.below(4) {
        0 => neg(sub(rng, depth - 1, vars)),
        1 => call(
            "f",
            vec![sub(rng, depth - 1, vars), sub(rng, depth - 1, vars)],
        ),
        _ => {
            let l = sub(rng, depth - 1, vars);
            add(&l, &sub(rng, depth - 1, vars))
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: native_or_miri(256, 4) as u32,
        ..ProptestConfig::default()
    })]

    /// On random programs (binders, shared subtrees, arrays, free variables): shallow
    /// equality implies equal shallow hashes between any two nodes of two builds;
    /// hash-consing gives a structurally equal program in which no two nodes are
    /// shallowly equal, and hash-consing that again changes nothing.
    #[test]
    fn hash_consing_random_programs(a in ast()) {
        let _leaks = LeakCheck::new();
        let free = [var("f0"), var("f1")];
        let (l, _) = build(&a, &free, None);
        let (r, _) = build(&a, &free, None);
        let (ln, rn) = (post_order(l.as_object_ref()), post_order(r.as_object_ref()));
        for p in ln.iter().chain(&rn) {
            for q in &rn {
                if shallow_equal(p, q) {
                    prop_assert!(shallow_equal(q, p));
                    prop_assert_eq!(shallow_hash(p), shallow_hash(q));
                }
            }
        }
        let mut table = HashCons::new();
        let root = l.clone().into_object_ref();
        let shared = object_core::transform::mutate(&root, &mut table).unwrap();
        prop_assert!(structural_equal(&shared, &root));
        let nodes = post_order(&shared);
        let keys: ShallowSet<ObjectRef> = nodes.iter().map(|n| ShallowKey::new(n.clone())).collect();
        prop_assert_eq!(keys.len(), nodes.len());
        let again = object_core::transform::mutate(&shared, &mut table).unwrap();
        prop_assert!(ObjectPtr::ptr_eq(&again, &shared));
    }
}
