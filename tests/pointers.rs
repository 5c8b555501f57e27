//! `ObjectPtr` / `ObjectRef`: sizes, counting, casts, unique access and copy-on-write.

use std::collections::HashSet;
use std::mem::size_of;

use object_core::{make_object, IntoObjectPtr, Object, ObjectPtr, ObjectRef, ObjectType};

#[derive(Object, Clone)]
#[repr(C)]
#[object(key = "ptr.Expr", slots = 4)]
struct Expr {
    base: Object,
    span: u32,
}

#[derive(Object, Clone)]
#[repr(C)]
#[object(key = "ptr.Int", parent = Expr, final)]
struct Int {
    base: Expr,
    value: i64,
}

#[derive(Object, Clone)]
#[repr(C)]
#[object(key = "ptr.Var", parent = Expr, final)]
struct Var {
    base: Expr,
    name: String,
}

fn int(v: i64) -> ObjectPtr<Int> {
    make_object(Int {
        base: Expr {
            base: Object::new(),
            span: 0,
        },
        value: v,
    })
}

#[test]
fn sizes() {
    assert_eq!(size_of::<Object>(), 16);
    assert_eq!(std::mem::align_of::<Object>(), 8);
    assert_eq!(size_of::<ObjectPtr<Int>>(), 8);
    assert_eq!(size_of::<Option<ObjectPtr<Int>>>(), 8);
    assert_eq!(size_of::<ObjectRef>(), 8);
    fn send_sync<T: Send + Sync>() {}
    send_sync::<ObjectRef>();
    send_sync::<ObjectPtr<Var>>();
}

#[test]
fn counting_and_identity() {
    let a = int(1);
    assert_eq!(ObjectPtr::strong_count(&a), 1);
    let b = a.clone();
    assert_eq!(ObjectPtr::strong_count(&a), 2);
    assert!(ObjectPtr::ptr_eq(&a, &b));
    assert_eq!(a, b);
    assert_ne!(a, int(1), "equality is identity");
    let set: HashSet<_> = [a.clone(), b.clone(), int(2)].into_iter().collect();
    assert_eq!(set.len(), 2);
    drop(set);
    drop(b);
    assert_eq!(ObjectPtr::strong_count(&a), 1);
    // Raw round trip keeps the count.
    let raw = ObjectPtr::into_raw(a);
    // SAFETY: `raw` came from `into_raw` and we own its one reference.
    let back = unsafe { ObjectPtr::from_raw(raw) };
    assert_eq!(back.value, 1);
    // SAFETY: `back` keeps the object alive during the call.
    let extra = unsafe { ObjectPtr::clone_from_raw(ObjectPtr::as_ptr(&back)) };
    assert_eq!(ObjectPtr::strong_count(&back), 2);
    drop(extra);
    assert_eq!(
        format!("{:p}", back),
        format!("{:p}", ObjectPtr::as_ptr(&back))
    );
}

#[test]
fn casts() {
    let i = int(42);
    // Up-casts are free and checked at compile time.
    let e: ObjectPtr<Expr> = i.clone().upcast();
    let r: ObjectRef = e.clone().into_object_ref();
    let r2: ObjectRef = i.clone().into_object_ptr();
    assert!(ObjectPtr::ptr_eq(&r, &r2));
    let e_ref: &ObjectPtr<Expr> = i.upcast_ref();
    assert_eq!(e_ref.span, 0);
    assert!(ObjectPtr::ptr_eq(i.as_object_ref(), &r));
    assert_eq!(ObjectPtr::strong_count(&i), 4); // i, e, r, r2

    // Down-casts are checked at run time.
    assert!(r.is::<Int>() && r.is::<Expr>() && r.is::<Object>());
    assert!(!r.is::<Var>());
    assert_eq!(r.downcast_ref::<Int>().map(|x| x.value), Some(42));
    assert!(r.downcast_ref::<Var>().is_none());
    assert_eq!(r.type_key(), "ptr.Int");
    assert_eq!(r.type_index(), Int::type_index());
    assert_eq!(r.type_info().key(), "ptr.Int");
    assert_eq!(r.header().type_key(), "ptr.Int");
    let r = match r.downcast::<Var>() {
        Ok(_) => panic!("not a Var"),
        Err(back) => back,
    };
    let as_int = r.downcast::<Int>().expect("an Int");
    assert_eq!(as_int.value, 42);
    let as_expr = e.downcast::<Int>().expect("an Int via Expr");
    assert!(ObjectPtr::ptr_eq(&as_expr, &i));
}

#[test]
fn process_expr_pattern() {
    fn process(e: &ObjectRef) -> String {
        if let Some(i) = e.downcast_ref::<Int>() {
            format!("int {}", i.value)
        } else if let Some(v) = e.downcast_ref::<Var>() {
            format!("var {}", v.name)
        } else if e.is::<Expr>() {
            "some expr".to_owned()
        } else {
            format!("not an expr: {}", e.type_key())
        }
    }
    let v = make_object(Var {
        base: Expr {
            base: Object::new(),
            span: 3,
        },
        name: "x".into(),
    });
    let items: Vec<ObjectRef> = vec![
        int(7).into_object_ref(),
        v.into_object_ref(),
        make_object(Expr {
            base: Object::new(),
            span: 0,
        })
        .into_object_ref(),
        make_object(Object::new()),
    ];
    let out: Vec<_> = items.iter().map(process).collect();
    assert_eq!(
        out,
        ["int 7", "var x", "some expr", "not an expr: ffi.Object"]
    );
}

#[test]
fn unique_access_is_a_field_projection() {
    let mut a = int(1);
    {
        let f = ObjectPtr::get_mut(&mut a).expect("unique");
        *f.value = 5;
        // The parent part is the parent's projection; its own fields are reachable
        // through it, its header is not.
        let (): () = f.base.base;
        *f.base.span = 9;
    }
    assert_eq!(a.value, 5);
    assert_eq!(a.base.span, 9);
    // Still a valid object with its header intact.
    assert_eq!(a.type_key(), "ptr.Int");

    let b = a.clone();
    assert!(
        ObjectPtr::get_mut(&mut a).is_none(),
        "shared objects are not mutable"
    );
    drop(b);
    assert!(ObjectPtr::get_mut(&mut a).is_some());
}

#[test]
fn copy_on_write() {
    let mut a = int(1);
    let b = a.clone();
    {
        let f = ObjectPtr::make_mut(&mut a).expect("exact type: cloned");
        *f.value = 2;
    }
    assert!(!ObjectPtr::ptr_eq(&a, &b));
    assert_eq!(
        (a.value, b.value),
        (2, 1),
        "the clone never sees the change"
    );
    assert_eq!(a.type_key(), "ptr.Int");
    assert_eq!(ObjectPtr::strong_count(&a), 1);
    // Unique: mutated in place.
    let before = ObjectPtr::as_ptr(&a);
    *ObjectPtr::make_mut(&mut a).unwrap().value = 3;
    assert_eq!(ObjectPtr::as_ptr(&a), before);

    // A shared object seen through a base type cannot be cloned as that base.
    let mut e: ObjectPtr<Expr> = b.clone().upcast();
    assert!(ObjectPtr::make_mut(&mut e).is_none());
    drop(b);
    // Once unique it can be changed in place.
    assert!(ObjectPtr::make_mut(&mut e).is_some());
    assert_eq!(e.type_key(), "ptr.Int");
}

#[test]
fn debug_output() {
    let i = int(3);
    let s = format!("{i:?}");
    assert!(s.contains("value: 3"), "{s}");
    assert!(
        s.contains("ptr.Int"),
        "the header shows the dynamic type: {s}"
    );
    let o: ObjectRef = make_object(Object::new());
    assert!(format!("{o:?}").contains("ffi.Object"));
}

#[test]
fn unique_access_says_why_not() {
    use object_core::{NotUniqueReason, String as ObjString};

    let mut a = int(1);
    assert!(ObjectPtr::try_get_mut(&mut a).is_ok());
    let b = a.clone();
    let c = a.clone();
    let e = ObjectPtr::try_get_mut(&mut a).unwrap_err();
    assert_eq!(e.reason(), NotUniqueReason::Shared);
    assert_eq!(e.strong_count(), 3);
    assert_eq!(e.type_key(), "ptr.Int");
    assert_eq!(
        e.to_string(),
        "no unique access to a `ptr.Int`: 3 handles share it"
    );
    drop(c);

    // Copy-on-write through the exact type copies; through a base it cannot.
    let mut same = b.clone();
    assert!(ObjectPtr::try_make_mut(&mut same).is_ok());
    assert!(!same.same_as(&b));
    let mut base: ObjectPtr<Expr> = b.clone().upcast();
    let e = ObjectPtr::try_make_mut(&mut base).unwrap_err();
    assert_eq!(e.reason(), NotUniqueReason::SharedSubtype);
    assert_eq!(e.type_key(), "ptr.Int");
    assert!(e.to_string().contains("would lose its type"), "{e}");
    assert!(base.same_as(&b), "left as it was");

    // `same_as` is identity where `==` compares values.
    let s1 = ObjString::from("a string long enough to be an object");
    let s2 = ObjString::from("a string long enough to be an object");
    assert!(s1 == s2 && !s1.same_as(&s2));
    assert!(s1.same_as(&s1.clone()));
}
