//! Every valid `#[object(...)]` attribute, and the types they make actually work.

use object_core::{make_object, FieldsMut, Object, ObjectPtr, ObjectRef, ObjectType};

// `crate = path` for a renamed dependency.
use object_core as oc;

/// A base type with reserved slots that its descendants must fit in.
#[derive(Object)]
#[repr(C)]
#[object(key = "pass.Expr", slots = 4, overflow = false)]
struct Expr {
    base: Object,
    #[object(rename = "span_id")]
    span: u32,
}

/// A final leaf; the attributes may be split over several `#[object]`s.
#[derive(Object)]
#[repr(C)]
#[object(key = "pass.IntImm", parent = Expr)]
#[object(final)]
struct IntImm {
    base: Expr,
    value: i64,
    #[object(skip)]
    cache: Option<String>,
}

/// A static index (65..=73 are the core containers' own), through a renamed crate.
#[derive(Object)]
#[repr(C)]
#[object(key = "pass.Static", index = 100, crate = oc)]
struct Static {
    base: Object,
    tag: u8,
}

/// `crate` also takes a string.
#[derive(Object)]
#[repr(C)]
#[object(key = "pass.StrCrate", parent = oc::Object, crate = "::object_core")]
pub struct StrCrate {
    base: oc::Object,
}

fn main() {
    let e: ObjectRef = make_object(IntImm {
        base: Expr {
            base: Object::new(),
            span: 3,
        },
        value: 7,
        cache: None,
    })
    .into_object_ref();
    assert!(e.is::<Object>());
    assert!(e.is::<Expr>());
    assert!(e.is::<IntImm>());
    assert!(!e.is::<Static>());
    assert_eq!(e.type_key(), "pass.IntImm");
    assert_eq!(e.downcast_ref::<Expr>().map(|x| x.span), Some(3));
    let i = e.downcast_ref::<IntImm>().expect("an IntImm");
    assert_eq!(i.value, 7);
    assert!(i.cache.is_none());

    let s: ObjectPtr<Static> = make_object(Static {
        base: Object::new(),
        tag: 1,
    });
    assert_eq!(Static::type_index(), 100);
    assert_eq!(s.tag, 1);
    let s = s.into_object_ref();
    assert_eq!(s.type_index(), 100);
    assert_eq!(s.type_key(), "pass.Static");
    assert!(s.downcast_ref::<Expr>().is_none());

    const { assert!(IntImm::FINAL && !Expr::FINAL) };
    assert_eq!(IntImm::DEPTH, 2);
    assert_eq!(Expr::type_info().key(), "pass.Expr");
    assert!(Expr::type_index() >= 128);
    assert_eq!(StrCrate::TYPE_KEY, "pass.StrCrate");

    // The field projection.
    let mut p = make_object(IntImm {
        base: Expr {
            base: Object::new(),
            span: 0,
        },
        value: 1,
        cache: None,
    });
    let fields = ObjectPtr::get_mut(&mut p).expect("unique");
    let _: <Expr as FieldsMut>::Mut<'_> = fields.base;
    *fields.value = 2;
    *fields.cache = Some("x".to_owned());
    assert_eq!(p.value, 2);
}
