//! The structural attributes: a kind per type (inherited by subtypes that say nothing),
//! `def` on fields holding objects (handles, containers, `Any`), `no_eq`.

use object_core::structural::{structural_equal, StructuralKind};
use object_core::{make_object, Any, Object, ObjectPtr, ObjectRef, ObjectType};

#[derive(Object)]
#[repr(C)]
#[object(key = "pass.st.Var", structural = "var", slots = 1)]
struct Var {
    base: Object,
    #[object(no_eq)]
    name: String,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "pass.st.SubVar", parent = Var)]
struct SubVar {
    base: Var,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "pass.st.Bind", structural = "dag")]
struct Bind {
    base: Object,
    #[object(def)]
    var: ObjectPtr<Var>,
    #[object(def)]
    more: Option<ObjectRef>,
    #[object(def)]
    any: Any,
    body: ObjectRef,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "pass.st.Id", structural = "identity")]
struct Id {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "pass.st.Tree", structural = "tree")]
struct Tree {
    base: Object,
}

fn main() {
    assert_eq!(SubVar::type_info().reflection().structural_kind(), StructuralKind::Var);
    assert_eq!(Bind::type_info().reflection().structural_kind(), StructuralKind::Dag);
    assert_eq!(Id::type_info().reflection().structural_kind(), StructuralKind::Identity);
    assert_eq!(Tree::type_info().reflection().structural_kind(), StructuralKind::Tree);
    let v = |n: &str| make_object(Var { base: Object::new(), name: n.into() });
    let bind = |x: ObjectPtr<Var>| {
        make_object(Bind {
            base: Object::new(),
            var: x.clone(),
            more: None,
            any: Any::NONE,
            body: x.into_object_ref(),
        })
    };
    assert!(structural_equal(&bind(v("a")), &bind(v("b"))));
}
