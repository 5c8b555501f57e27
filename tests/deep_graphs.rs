//! Deep graphs (DESIGN §16): releasing a chain of millions of objects, through every
//! kind of edge the library has, runs on a 2 MiB thread stack — the release path defers
//! deleters past a bounded nesting instead of recursing once per level.
//!
//! Depth: 10,000,000 at full scale (`OBJECT_TEST_SCALE` shrinks it for valgrind and
//! Miri). Each test also checks that every object was freed exactly once.

use object_containers::{Array, Function, Map, String};
use object_core::{make_object, Any, AnyView, Object, ObjectRef};
use object_tests::{deep, on_small_stack, LeakCheck};

#[derive(Object)]
#[repr(C)]
#[object(key = "deep.Link")]
struct Link {
    base: Object,
    next: Option<ObjectRef>,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "deep.AnyLink")]
struct AnyLink {
    base: Object,
    next: Any,
}

fn link(next: Option<ObjectRef>) -> ObjectRef {
    make_object(Link {
        base: Object::new(),
        next,
    })
    .into_object_ref()
}

/// Builds a chain of `n` edges with `step` (given the edge's number and the chain so
/// far, starting from `None`), and drops it on a small stack.
fn drop_chain_on_small_stack(n: usize, step: fn(usize, Any) -> Any) {
    let _leaks = LeakCheck::new();
    let head = on_small_stack(move || {
        let mut head = Any::NONE;
        for i in 0..n {
            head = step(i, head);
        }
        head
    });
    assert!(head.is_object());
    // Dropped on another small stack than the one that built it.
    on_small_stack(move || drop(head));
}

#[test]
fn a_chain_of_object_fields() {
    drop_chain_on_small_stack(deep(), |_, prev| {
        Any::from(link(ObjectRef::try_from(prev).ok()))
    });
}

#[test]
fn a_chain_of_any_fields() {
    drop_chain_on_small_stack(deep(), |_, prev| {
        Any::from(make_object(AnyLink {
            base: Object::new(),
            next: prev,
        }))
    });
}

#[test]
fn nested_arrays() {
    drop_chain_on_small_stack(deep(), |_, prev| Any::from(Array::<Any>::from(vec![prev])));
}

#[test]
fn nested_maps() {
    drop_chain_on_small_stack(deep() / 4, |_, prev| {
        let mut m: Map<String, Any> = Map::new();
        m.insert(String::from("next"), prev);
        Any::from(m)
    });
}

#[test]
fn functions_capturing_functions() {
    drop_chain_on_small_stack(deep() / 4, |_, prev| {
        let f = Function::from_packed(move |_: &[AnyView<'_>]| Ok(prev.clone()));
        Any::from(f)
    });
}

#[test]
fn a_mixed_chain() {
    drop_chain_on_small_stack(deep() / 2, |i, prev| {
        // Every kind of edge under every other (the period is prime to 5).
        match (i * 7 / 3) % 5 {
            0 => Any::from(link(ObjectRef::try_from(prev).ok())),
            1 => Any::from(make_object(AnyLink {
                base: Object::new(),
                next: prev,
            })),
            2 => Any::from(Array::<Any>::from(vec![prev])),
            3 => {
                let mut m: Map<Any, Any> = Map::new();
                m.insert(Any::from(1), prev);
                Any::from(m)
            }
            _ => Any::from(Function::from_packed(move |_: &[AnyView<'_>]| {
                Ok(prev.clone())
            })),
        }
    });
}

/// A wide and deep graph: many chains hanging off one array, sharing tails.
#[test]
fn shared_tails_are_freed_once() {
    let _leaks = LeakCheck::new();
    let n = deep() / 10;
    let graph = on_small_stack(move || {
        let mut tail: Option<ObjectRef> = None;
        for _ in 0..n {
            tail = Some(link(tail));
        }
        let shared = tail.expect("n > 0");
        let heads: Vec<Any> = (0..8)
            .map(|_| {
                let mut h = shared.clone();
                for _ in 0..n / 8 {
                    h = link(Some(h));
                }
                Any::from(h)
            })
            .collect();
        Array::<Any>::from(heads)
    });
    on_small_stack(move || drop(graph));
}
