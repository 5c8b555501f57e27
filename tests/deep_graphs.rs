//! Deep graphs: releasing a chain of millions of objects, through every kind of edge
//! the library has, runs on a 2 MiB thread stack — the release path defers deleters
//! past a bounded nesting instead of recursing once per level (see ARCHITECTURE.md).
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

/// The printer descends a bounded number of levels (then elides), and the reflection
/// walks are one level at a time: printing or visiting the head of a 10,000,000-deep
/// chain works on a 2 MiB stack.
#[test]
fn printing_and_visiting_deep_chains() {
    use object_core::reflection::{
        field_names, get_attr, visit_object_attrs, AttrVisitor, FieldInfo,
    };

    let _leaks = LeakCheck::new();
    let n = deep();
    on_small_stack(move || {
        let mut head: Option<ObjectRef> = None;
        for _ in 0..n {
            head = Some(link(head));
        }
        let head = head.expect("n > 0");
        let text = format!("{head:?}");
        assert!(
            text.starts_with("deep.Link { next: deep.Link { next: "),
            "{text:.80}"
        );
        assert!(
            text.contains("deep.Link { … }"),
            "elided past the print depth"
        );
        assert!(text.len() < 10_000, "{} bytes", text.len());
        // (Pretty printing nests a padding adapter per level: slow under Miri.)
        if !cfg!(miri) {
            let pretty = format!("{head:#?}");
            assert!(pretty.contains("deep.Link { … }"));
        }

        struct Count(usize);
        impl AttrVisitor for Count {
            fn visit_any(&mut self, _: &FieldInfo, _: AnyView<'_>) {
                self.0 += 1;
            }
        }
        let mut count = Count(0);
        visit_object_attrs(&head, &mut count);
        assert_eq!(count.0, 1);
        assert_eq!(field_names(&head), ["next"]);
        assert!(get_attr(&head, "next").unwrap().is_object());

        let nested = (0..n).fold(Any::NONE, |prev, _| {
            Any::from(Array::<Any>::from(vec![prev]))
        });
        let text = format!("{nested:?}");
        assert!(text.contains("ffi.Array { … }"), "{text:.200}");
        drop(nested);
        drop(head);
    });
}
