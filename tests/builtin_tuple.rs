//! A built-in defined only here: `test.Tuple`, a fixed sequence of values with a
//! representation of its own. Its type and one `BuiltinHooks` value are all it adds;
//! with no other change, it hashes and compares structurally, is walked and rewritten
//! by the transform walkers, saves to and loads from the JSON graph, and prints.

use std::fmt;

use object_containers::{Any, Array};
use object_core::builtin::{BuiltinError, BuiltinHooks, BuiltinShape, Contents, Parts};
use object_core::prelude::*;
use object_core::structural::{structural_equal, structural_hash};
use object_core::transform::{for_each_child, mutate, Rewriter, TransformError};

/// A tuple of values: `items` is set once, when the tuple is made.
#[derive(Object)]
#[repr(C)]
#[object(key = "test.Tuple", final, opaque, builtin = TUPLE)]
struct Tuple {
    base: Object,
    items: Box<[Any]>,
}

static TUPLE: BuiltinHooks = BuiltinHooks {
    shape: BuiltinShape::Items,
    mutable: false,
    contents: |obj| match obj.downcast_ref::<Tuple>() {
        Some(t) => Contents::Items(&t.items),
        None => Contents::Identity,
    },
    build: |parts| match parts {
        Parts::Items(items) => Ok(Any::from(tuple(items.collect::<Vec<_>>()))),
        other => Err(BuiltinError::wrong_shape(BuiltinShape::Items, &other)),
    },
};

impl fmt::Debug for Tuple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut t = f.debug_tuple("");
        for item in self.items.iter() {
            t.field(&item.view());
        }
        t.finish()
    }
}

fn tuple(items: impl Into<Box<[Any]>>) -> ObjectPtr<Tuple> {
    make_object(Tuple {
        base: Object::new(),
        items: items.into(),
    })
}

/// A reflected leaf to put in tuples.
#[derive(Object)]
#[repr(C)]
#[object(key = "test.tuple.Leaf")]
struct Leaf {
    base: Object,
    value: i64,
}

fn leaf(value: i64) -> Any {
    Any::from(make_object(Leaf {
        base: Object::new(),
        value,
    }))
}

/// `(1, "text", Leaf(2), (Leaf(3),))`.
fn sample(two: i64) -> ObjectRef {
    let inner = tuple(vec![leaf(3)]);
    tuple(vec![
        Any::from(1),
        Any::from("a string long enough to be an object"),
        leaf(two),
        Any::from(inner),
    ])
    .into_object_ref()
}

#[test]
fn a_test_only_builtin_hashes_and_compares_by_its_items() {
    let (a, b, c) = (sample(2), sample(2), sample(7));
    assert!(structural_equal(&a, &b));
    assert_eq!(structural_hash(&a), structural_hash(&b));
    assert!(!structural_equal(&a, &c));
    assert_ne!(structural_hash(&a), structural_hash(&c));
    // A tuple is not an array holding the same items.
    let items = a.downcast_ref::<Tuple>().unwrap().items.to_vec();
    let array = Array::<Any>::from(items)
        .into_object_ptr()
        .into_object_ref();
    assert!(!structural_equal(&a, &array));
}

#[test]
fn a_test_only_builtin_is_walked_and_rewritten() {
    let t = sample(2);
    let mut kids = Vec::new();
    for_each_child(&t, |c| kids.push(c.type_key()));
    assert_eq!(
        kids,
        ["test.tuple.Leaf", "test.Tuple"],
        "objects only, in order"
    );

    // Doubles every leaf.
    struct Double;
    impl Rewriter for Double {
        type Error = TransformError;
        fn post(&mut self, node: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
            Ok(match node.downcast_ref::<Leaf>() {
                Some(l) => make_object(Leaf {
                    base: Object::new(),
                    value: l.value * 2,
                })
                .into_object_ref(),
                None => node,
            })
        }
    }
    let doubled = mutate(&t, &mut Double).unwrap();
    let outer = doubled.downcast_ref::<Tuple>().expect("still a tuple");
    assert_eq!(outer.items[0].as_int(), Some(1));
    let leaf_value = |v: &Any| v.as_object().unwrap().downcast_ref::<Leaf>().unwrap().value;
    assert_eq!(leaf_value(&outer.items[2]), 4);
    let inner = outer.items[3]
        .as_object()
        .unwrap()
        .downcast_ref::<Tuple>()
        .unwrap();
    assert_eq!(leaf_value(&inner.items[0]), 6);

    // A rewrite that changes nothing keeps the very same tuple.
    struct Nothing;
    impl Rewriter for Nothing {
        type Error = TransformError;
    }
    let same = mutate(&t, &mut Nothing).unwrap();
    assert!(ObjectPtr::ptr_eq(&same, &t));
}

#[test]
fn a_test_only_builtin_saves_and_loads_through_the_json_graph() {
    let t = Any::from(sample(2));
    let text = object_json::to_json_graph(&t).unwrap();
    assert!(text.contains(r#""type":"test.Tuple""#), "{text}");
    let back = object_json::from_json_graph(&text).unwrap();
    let back_obj = back.as_object().unwrap();
    assert!(back_obj.is::<Tuple>());
    assert!(structural_equal(t.as_object().unwrap(), back_obj));
    // And the loaded one saves to the same text.
    assert_eq!(object_json::to_json_graph(&back).unwrap(), text);
}

#[test]
fn a_test_only_builtin_prints() {
    let printed = format!("{:?}", Any::from(sample(2)));
    assert!(printed.contains("test.tuple.Leaf"), "{printed}");
    assert!(printed.contains("value: 2"), "{printed}");
    assert!(printed.contains("(1, "), "{printed}");
}
