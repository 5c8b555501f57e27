//! The identical-subtree shortcut, where it is live: this test binary links no `dag`
//! type (the integration tests do, which turns the shortcut off there).

use super::{structural_equal, structural_equal_with, structural_hash, StructuralOptions};
use crate::prelude::*;

#[derive(Object)]
#[repr(C)]
#[object(key = "unit.st.Var", structural = "var")]
struct Var {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "unit.st.Pair")]
struct Pair {
    base: Object,
    a: ObjectRef,
    b: ObjectRef,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "unit.st.Lam")]
struct Lam {
    base: Object,
    #[object(def)]
    param: ObjectRef,
    body: ObjectRef,
}

fn var() -> ObjectRef {
    make_object(Var {
        base: Object::new(),
    })
    .into_object_ref()
}
fn pair(a: &ObjectRef, b: &ObjectRef) -> ObjectRef {
    make_object(Pair {
        base: Object::new(),
        a: a.clone(),
        b: b.clone(),
    })
    .into_object_ref()
}
fn lam(p: &ObjectRef, body: &ObjectRef) -> ObjectRef {
    make_object(Lam {
        base: Object::new(),
        param: p.clone(),
        body: body.clone(),
    })
    .into_object_ref()
}

#[test]
fn no_dag_type_here() {
    assert!(!super::equal::any_dag_type());
}

#[test]
fn identical_subtrees_are_equal_without_a_renaming() {
    let (x, y) = (var(), var());
    let s = pair(&x, &y);
    assert!(structural_equal(&pair(&s, &s), &pair(&s, &s)));
    assert!(structural_equal(&lam(&x, &s), &lam(&x, &s)));
    assert_eq!(structural_hash(&lam(&x, &s)), structural_hash(&lam(&x, &s)));
}

#[test]
fn a_renaming_turns_the_shortcut_off() {
    let (x, y) = (var(), var());
    // fn(x) { S } vs fn(y) { S }, S using x: x is bound to y, so S differs from itself.
    let s = pair(&x, &x);
    assert!(!structural_equal(&lam(&x, &s), &lam(&y, &s)));
    // fn(x) { (x, C) } vs fn(y) { (y, C) }: the shared C has no variable.
    let c = pair(&var(), &var());
    assert!(structural_equal(
        &lam(&x, &pair(&x, &c)),
        &lam(&y, &pair(&y, &c))
    ));
    // Mapped free variables: (S, x) vs (S, y) binds x to itself inside S first.
    let map = StructuralOptions::new().map_free_vars(true);
    assert!(!structural_equal_with(&pair(&s, &x), &pair(&s, &y), &map));
    assert!(structural_equal_with(&pair(&s, &x), &pair(&s, &x), &map));
}
