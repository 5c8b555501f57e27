//! Deep graphs: releasing a chain of millions of objects, through every kind of edge
//! the library has, runs on a 2 MiB thread stack — the release path defers deleters
//! past a bounded nesting instead of recursing once per level (see ARCHITECTURE.md).
//!
//! Depth: 10,000,000 at full scale (`OBJECT_TEST_SCALE` shrinks it for valgrind and
//! Miri). Each test also checks that every object was freed exactly once.

use object_containers::{Array, Dict, Function, List, Map, String};
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
fn nested_lists() {
    drop_chain_on_small_stack(deep(), |_, prev| {
        Any::from([prev].into_iter().collect::<List<Any>>())
    });
}

#[test]
fn nested_dicts() {
    drop_chain_on_small_stack(deep() / 4, |_, prev| {
        let d: Dict<String, Any> = Dict::new();
        d.insert(String::from("next"), prev);
        Any::from(d)
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

/// The `transform` walkers on a chain `deep()` long, on a 2 MiB stack: the visitor
/// reaches every node; the identity rewrite returns the same chain; a rewrite of the
/// deepest node rebuilds every link above it (and drops the old and new chains).
#[test]
fn visiting_and_rewriting_a_deep_chain() {
    use object_core::transform::{mutate, walk, Rewriter, TransformError, Walk};
    use object_core::ObjectPtr;

    #[derive(Object)]
    #[repr(C)]
    #[object(key = "deep.Leaf")]
    struct Leaf {
        base: Object,
        value: i64,
    }

    struct Identity;
    impl Rewriter for Identity {
        type Error = TransformError;
    }
    struct BumpLeaf;
    impl Rewriter for BumpLeaf {
        type Error = TransformError;
        fn post(&mut self, n: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
            match n.downcast_ref::<Leaf>() {
                Some(l) => Ok(make_object(Leaf {
                    base: Object::new(),
                    value: l.value + 1,
                })
                .into_object_ref()),
                None => Ok(n),
            }
        }
    }

    let _leaks = LeakCheck::new();
    let n = deep();
    on_small_stack(move || {
        let leaf = make_object(Leaf {
            base: Object::new(),
            value: 1,
        })
        .into_object_ref();
        let head = (0..n).fold(leaf, |prev, _| link(Some(prev)));
        let mut count = 0usize;
        assert!(walk(&head, &mut |_: &ObjectRef| {
            count += 1;
            Walk::Continue
        }));
        assert_eq!(count, n + 1);

        let same = mutate(&head, &mut Identity).unwrap();
        assert!(ObjectPtr::ptr_eq(&same, &head));
        drop(same);

        let bumped = mutate(&head, &mut BumpLeaf).unwrap();
        assert!(!ObjectPtr::ptr_eq(&bumped, &head));
        // Down to the new leaf, iteratively.
        let mut cur = bumped.clone();
        let mut links = 0;
        while let Some(next) = cur.downcast_ref::<Link>().and_then(|l| l.next.clone()) {
            cur = next;
            links += 1;
        }
        assert_eq!(links, n);
        assert_eq!(cur.downcast_ref::<Leaf>().map(|l| l.value), Some(2));
        drop(cur);
        drop(bumped);
        drop(head);
    });
}

/// The same through nested arrays (container hooks), a tenth as deep.
#[test]
fn rewriting_deeply_nested_arrays() {
    use object_core::transform::{mutate, Rewriter, TransformError};

    struct IntsUp;
    impl Rewriter for IntsUp {
        type Error = TransformError;
        fn post(&mut self, n: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
            Ok(n)
        }
    }
    struct Swap(ObjectRef);
    impl Rewriter for Swap {
        type Error = TransformError;
        fn post(&mut self, n: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
            if n.type_key() == "ffi.Object" {
                return Ok(self.0.clone());
            }
            Ok(n)
        }
    }
    let _leaks = LeakCheck::new();
    let n = deep() / 10;
    on_small_stack(move || {
        let bottom = Any::from(make_object(Object::new()));
        let nested = (0..n).fold(bottom, |prev, _| Any::from(Array::<Any>::from(vec![prev])));
        let root = nested.as_object().unwrap().clone();
        let same = mutate(&root, &mut IntsUp).unwrap();
        assert!(object_core::ObjectPtr::ptr_eq(&same, &root));
        let other = make_object(Object::new());
        let swapped = mutate(&root, &mut Swap(other.clone())).unwrap();
        assert!(!object_core::ObjectPtr::ptr_eq(&swapped, &root));
        drop((same, swapped, root, nested, other));
    });
}
