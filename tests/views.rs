//! Exhaustive views (`object_view!`): most derived listed type wins, `Other` for the
//! rest (plugins', run-time and unlisted types), the `unlisted` check, and the run-time
//! descendants that overflow the base's reserved slots.

use object_core::registry::{register_type, TypeSpec};
use object_core::{make_object_as, object_view, Object, ObjectPtr, ObjectType};

/// The family's abstract base, with two reserved slots.
#[derive(Object)]
#[repr(C)]
#[object(key = "test.view.Expr", abstract, slots = 2)]
pub struct Expr {
    base: Object,
}

/// A listed leaf.
#[derive(Object)]
#[repr(C)]
#[object(key = "test.view.Int", parent = Expr, final)]
pub struct Int {
    base: Expr,
    value: i64,
}

/// A listed base with subtypes of its own.
#[derive(Object)]
#[repr(C)]
#[object(key = "test.view.BinOp", parent = Expr, slots = 1)]
pub struct BinOp {
    base: Expr,
    lhs: ObjectPtr<Expr>,
    rhs: ObjectPtr<Expr>,
}

/// A listed subtype of a listed base: the most derived listed type wins.
#[derive(Object)]
#[repr(C)]
#[object(key = "test.view.Add", parent = BinOp, final)]
pub struct Add {
    base: BinOp,
}

/// A listed subtype under a variant name of its own (`Product`).
#[derive(Object)]
#[repr(C)]
#[object(key = "test.view.Mul", parent = BinOp)]
pub struct Mul {
    base: BinOp,
}

/// Not listed by the view: `unlisted` reports it; it matches `Other`.
#[derive(Object)]
#[repr(C)]
#[object(key = "test.view.Neg", parent = Expr, final)]
pub struct Neg {
    base: Expr,
    arg: ObjectPtr<Expr>,
}

object_view! {
    /// The test family's view.
    pub enum ExprView for Expr {
        Int,
        BinOp,
        Add,
        Product(Mul),
    }
}

fn name(e: &ObjectPtr<Expr>) -> &'static str {
    match e.view() {
        ExprView::Int(_) => "int",
        ExprView::BinOp(_) => "binop",
        ExprView::Add(_) => "add",
        ExprView::Product(_) => "mul",
        ExprView::Other(_) => "other",
    }
}

fn eval(e: &ObjectPtr<Expr>) -> i64 {
    match ExprView::of(e) {
        ExprView::Int(i) => i.value,
        ExprView::Add(a) => eval(&a.base.lhs) + eval(&a.base.rhs),
        ExprView::Product(m) => eval(&m.base.lhs) * eval(&m.base.rhs),
        ExprView::BinOp(_) | ExprView::Other(_) => 0,
    }
}

#[test]
fn most_derived_listed_type_wins() {
    let two = Int::new(2);
    let e: ObjectPtr<Expr> = Add::new(two.clone(), Mul::new(Int::new(3), Int::new(4))).upcast();
    assert_eq!(eval(&e), 14);
    assert_eq!(name(&two.clone().upcast()), "int");
    assert_eq!(name(&e), "add");
    assert_eq!(name(&Mul::new(two.clone(), two.clone()).upcast()), "mul");
    // A `BinOp` that is none of the listed subtypes.
    assert_eq!(
        name(&BinOp::new(two.clone(), two.clone()).upcast()),
        "binop"
    );
    assert_eq!(name(&Neg::new(two.clone()).upcast()), "other");
    // The view borrows the very object.
    let two_expr = two.clone().upcast::<Expr>();
    let ExprView::Int(i) = two_expr.view() else {
        panic!("not an int");
    };
    assert_eq!(i.value, 2);
    match e.view() {
        ExprView::Add(a) => assert!(ObjectPtr::ptr_eq(&a.base.lhs, &two)),
        other => panic!("{other:?}"),
    }
    let neg: ObjectPtr<Expr> = Neg::new(two.clone()).upcast();
    match neg.view() {
        ExprView::Other(p) => assert!(ObjectPtr::ptr_eq(p, &neg)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn run_time_descendants_in_slots_and_overflowed() {
    // In BinOp's reserved slot, then past it (overflow), then a run-time `Mul`.
    let in_slot = register_type(&TypeSpec::new("test.view.rt.Shl", "test.view.BinOp")).unwrap();
    let overflowed = register_type(&TypeSpec::new("test.view.rt.Shr", "test.view.BinOp")).unwrap();
    let rt_mul = register_type(&TypeSpec::new("test.view.rt.Mul2", "test.view.Mul")).unwrap();
    let rt_expr = register_type(&TypeSpec::new("test.view.rt.Hole", "test.view.Expr")).unwrap();
    assert!(BinOp::type_info().range().contains(&in_slot.index()));
    assert!(!BinOp::type_info().range().contains(&overflowed.index()));
    let two = || Int::new(2);
    let make = |index: u32| -> ObjectPtr<Expr> {
        make_object_as(BinOp::new_value(two(), two()), index)
            .unwrap()
            .upcast()
    };
    for _ in 0..3 {
        // The second and third rounds read the table.
        assert_eq!(name(&make(in_slot.index())), "binop");
        assert_eq!(name(&make(overflowed.index())), "binop");
    }
    let m = make_object_as(Mul::new_value(two(), two()), rt_mul.index()).unwrap();
    assert_eq!(name(&m.upcast()), "mul");
    let h = make_object_as(Int::new_value(5), rt_expr.index());
    // An `Int` value cannot take a run-time type whose parent is not `Int`.
    assert!(h.is_err());
}

#[test]
fn unlisted_reports_the_forgotten_type() {
    let missing: Vec<&str> = ExprView::unlisted().iter().map(|t| t.key()).collect();
    // `Expr` is abstract; `BinOp`'s run-time subtypes are not Rust types.
    assert_eq!(missing, ["test.view.Neg"]);
    let r = std::panic::catch_unwind(ExprView::assert_exhaustive);
    let msg = *r.unwrap_err().downcast::<String>().unwrap();
    assert!(msg.contains("views::Neg (test.view.Neg)"), "{msg}");
}

#[test]
fn threads_agree() {
    let exprs: Vec<ObjectPtr<Expr>> = vec![
        Int::new(1).upcast(),
        Add::new(Int::new(1), Int::new(2)).upcast(),
        Mul::new(Int::new(1), Int::new(2)).upcast(),
        BinOp::new(Int::new(1), Int::new(2)).upcast(),
        Neg::new(Int::new(1)).upcast(),
    ];
    let expected = ["int", "add", "mul", "binop", "other"];
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..1000 {
                    for (e, want) in exprs.iter().zip(expected) {
                        assert_eq!(name(e), want);
                    }
                }
            });
        }
    });
}
