//! The type registry: link-time pre-order ranges, run-time registration with slots and
//! overflow, `is` against a reference ancestor walk on a random forest, and every error.

use std::collections::HashMap;

use object_core::registry::{
    self, is_instance_of_index, register_type, type_index_of, RegistryError, TypeOrigin, TypeSpec,
};
use object_core::{make_object, make_object_as, Object, ObjectPtr, ObjectRef, ObjectType};
use object_tests::{scaled, seed, Rng};

// --- the RFC's example -------------------------------------------------------------

#[derive(Object)]
#[repr(C)]
#[object(key = "rfc.A")]
struct A {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "rfc.BaseB", slots = 1)]
struct BaseB {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "rfc.C", parent = BaseB)]
struct C {
    base: BaseB,
}

#[test]
fn rfc_example() {
    let aptr: ObjectRef = make_object(A {
        base: Object::new(),
    })
    .into_object_ref();
    let cptr: ObjectRef = make_object(C {
        base: BaseB {
            base: Object::new(),
        },
    })
    .into_object_ref();
    // Easy: an exact type.
    assert!(aptr.is::<A>());
    assert!(!aptr.is::<C>());
    // Harder: an intermediate base class.
    assert!(cptr.is::<BaseB>());
    assert!(cptr.is::<C>());
    assert!(!cptr.is::<A>());
    assert!(!aptr.is::<BaseB>());
    assert!(aptr.is::<Object>() && cptr.is::<Object>());
    assert_eq!(cptr.type_key(), "rfc.C");
    assert_eq!(C::type_info().parent().unwrap().key(), "rfc.BaseB");
    assert_eq!(C::DEPTH, 2);
}

// --- link-time pre-order: every subtree range is exact -----------------------------

#[derive(Object)]
#[repr(C)]
#[object(key = "pre.Tree", slots = 3)]
struct Tree {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "pre.Tree.A", parent = Tree, slots = 2)]
struct TreeA {
    base: Tree,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "pre.Tree.A.A", parent = TreeA, final)]
struct TreeAA {
    base: TreeA,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "pre.Tree.B", parent = Tree)]
struct TreeB {
    base: Tree,
}

#[test]
fn link_time_ranges_are_exact_preorder() {
    let t = Tree::type_info();
    let a = TreeA::type_info();
    let aa = TreeAA::type_info();
    let b = TreeB::type_info();
    assert_eq!(t.origin(), TypeOrigin::LinkTime);
    // Pre-order: the parent first, then its subtree, then its reserved slots.
    assert_eq!(a.index(), t.index() + 1);
    assert_eq!(aa.index(), a.index() + 1);
    assert_eq!(a.range().len(), 1 + aa.range().len() + 2);
    assert_eq!(aa.range().len(), 1);
    assert_eq!(b.index(), a.range().end);
    assert_eq!(t.range().len(), 1 + a.range().len() + b.range().len() + 3);
    assert_eq!(t.range().end, b.range().end + 3);
    assert!(TreeAA::FINAL && aa.is_final());
    assert_eq!(aa.ancestors(), &[64, t.index(), a.index(), aa.index()]);
    assert_eq!(aa.depth(), 3);
    // Keys and indices map both ways.
    assert_eq!(type_index_of("pre.Tree.A.A"), Ok(aa.index()));
    assert_eq!(
        registry::type_info(aa.index()).unwrap().key(),
        "pre.Tree.A.A"
    );
    assert_eq!(aa.rust_name(), Some("registry::TreeAA"));
    let listed: Vec<_> = registry::types().into_iter().map(|i| i.key()).collect();
    assert!(listed.contains(&"pre.Tree.B") && listed.contains(&"ffi.Object"));
}

#[test]
fn runtime_children_use_reserved_slots_then_overflow() {
    let t = Tree::type_info();
    // Tree has 3 reserved slots: three slot-less children fit in range...
    let mut kids = Vec::new();
    for i in 0..3 {
        let info = register_type(&TypeSpec::new(format!("pre.Tree.rt{i}"), "pre.Tree")).unwrap();
        assert!(
            t.range().contains(&info.index()),
            "child {i} should use a reserved slot"
        );
        kids.push(info);
    }
    assert!(!t.has_overflowed_descendants());
    // ...the fourth overflows, and `is` still sees it through the display.
    let over = register_type(&TypeSpec::new("pre.Tree.rt3", "pre.Tree")).unwrap();
    assert!(!t.range().contains(&over.index()));
    assert!(t.has_overflowed_descendants());
    let obj = make_object_as(
        Tree {
            base: Object::new(),
        },
        over.index(),
    )
    .unwrap();
    assert!(obj.is::<Tree>());
    assert!(!obj.is::<TreeA>());
    assert_eq!(obj.type_key(), "pre.Tree.rt3");
    // A grandchild of TreeA with one slot goes into TreeA's slots (2 free).
    let g = register_type(&TypeSpec::new("pre.Tree.A.rt", "pre.Tree.A").slots(1)).unwrap();
    assert!(TreeA::type_info().range().contains(&g.index()));
    assert_eq!(g.range().len(), 2);
    // Its child fits in its own slot.
    let gg = register_type(&TypeSpec::new("pre.Tree.A.rt.x", "pre.Tree.A.rt")).unwrap();
    assert!(g.range().contains(&gg.index()));
    let o = make_object_as(
        TreeA {
            base: Tree {
                base: Object::new(),
            },
        },
        gg.index(),
    )
    .unwrap();
    assert!(o.is::<TreeA>() && o.is::<Tree>() && !o.is::<TreeAA>());
}

// --- errors ----------------------------------------------------------------------------

#[derive(Object)]
#[repr(C)]
#[object(key = "err.Closed", overflow = false)]
struct Closed {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "err.Final", final)]
struct FinalNode {
    base: Object,
}

#[test]
fn registration_errors_name_the_key() {
    // Identical re-registration is idempotent.
    let a = register_type(&TypeSpec::new("err.X", "ffi.Object").slots(2)).unwrap();
    let b = register_type(&TypeSpec::new("err.X", "ffi.Object").slots(2)).unwrap();
    assert_eq!(a.index(), b.index());

    fn check<T: std::fmt::Debug>(r: Result<T, RegistryError>, want: &str) -> RegistryError {
        let e = r.expect_err("should be refused");
        let text = e.to_string();
        assert!(text.contains(want), "`{text}` should name `{want}`");
        e
    }
    // Duplicate key with a different parent, slots or finality.
    for spec in [
        TypeSpec::new("err.X", "err.Closed").slots(2),
        TypeSpec::new("err.X", "ffi.Object").slots(3),
        TypeSpec::new("err.X", "ffi.Object").final_type(true),
        TypeSpec::new("err.X", "ffi.Object")
            .slots(2)
            .overflow(false),
    ] {
        let e = check(register_type(&spec), "err.X");
        assert!(matches!(e, RegistryError::DuplicateKey { .. }), "{e:?}");
    }
    // A final parent.
    let e = check(
        register_type(&TypeSpec::new("err.UnderFinal", "err.Final")),
        "err.UnderFinal",
    );
    assert!(matches!(e, RegistryError::FinalParent { ref parent, .. } if parent == "err.Final"));
    // An unknown parent.
    let e = check(
        register_type(&TypeSpec::new("err.Orphan", "err.Nowhere")),
        "err.Orphan",
    );
    assert!(
        matches!(e, RegistryError::UnknownParent { ref parent, .. } if parent == "err.Nowhere")
    );
    // A value kind as parent.
    let e = check(
        register_type(&TypeSpec::new("err.UnderInt", "int")),
        "err.UnderInt",
    );
    assert!(matches!(e, RegistryError::ParentNotObject { .. }));
    // Slots exhausted where overflow is refused (Closed has no slots).
    let e = check(
        register_type(&TypeSpec::new("err.Full", "err.Closed")),
        "err.Full",
    );
    assert!(
        matches!(e, RegistryError::SlotsExhausted { ref ancestor, .. } if ancestor == "err.Closed")
    );
    // A final type with slots: its own error, not a bad static index.
    let e = check(
        register_type(
            &TypeSpec::new("err.FinalSlots", "ffi.Object")
                .final_type(true)
                .slots(3),
        ),
        "err.FinalSlots",
    );
    assert_eq!(
        e,
        RegistryError::FinalWithSlots {
            key: "err.FinalSlots".into(),
            slots: 3
        }
    );
    assert!(!e.to_string().contains("static index"), "{e}");
    // Unknown key look-ups.
    let e = check(type_index_of("err.NoSuchKey"), "err.NoSuchKey");
    assert!(matches!(e, RegistryError::UnknownKey { .. }));
    assert!(registry::type_info_by_key("err.NoSuchKey").is_none());
    assert!(registry::type_info(3_000_000).is_none());
    // Nothing half-registered.
    for k in [
        "err.UnderFinal",
        "err.Orphan",
        "err.UnderInt",
        "err.Full",
        "err.FinalSlots",
    ] {
        assert!(
            registry::type_info_by_key(k).is_none(),
            "{k} must not be registered"
        );
    }
    // `make_object_as` refuses a type that is not a descendant.
    let unrelated = register_type(&TypeSpec::new("err.Unrelated", "ffi.Object")).unwrap();
    let e = make_object_as(
        FinalNode {
            base: Object::new(),
        },
        unrelated.index(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("err.Unrelated"));
    // Nor a descendant declared by another Rust type (its layout may be larger).
    let e = make_object_as(Object::new(), FinalNode::type_index())
        .err()
        .unwrap();
    assert!(matches!(e, RegistryError::NotAnInstance { .. }));
    assert!(
        make_object_as(Object::new(), 1).is_err(),
        "a value kind is not an object type"
    );
    assert!(make_object_as(Object::new(), 3_000_000).is_err());
}

/// A derive on a value kind's key: refused at link time, the value kind keeps its key.
#[derive(Object)]
#[repr(C)]
#[object(key = "float")]
struct NotAFloat {
    base: Object,
}

/// A value kind's key (the types `Any` carries below 64) is never an object type:
/// registering it is refused whatever the spec says, and the value kind is unchanged.
#[test]
fn value_kind_keys_cannot_be_registered() {
    for key in ["int", "None", "bool", "float", "DLTensor*", "ffi.SmallStr"] {
        let index = type_index_of(key).unwrap();
        for spec in [
            TypeSpec::new(key, ""),
            TypeSpec::new(key, "").final_type(true).overflow(false),
            TypeSpec::new(key, "ffi.Object"),
            TypeSpec::new(key, "ffi.Object").slots(2),
        ] {
            assert_eq!(
                register_type(&spec).map(|i| i.key()),
                Err(RegistryError::ValueKindKey { key: key.into() }),
                "{spec:?}"
            );
        }
        assert_eq!(type_index_of(key), Ok(index));
        assert!(!registry::type_info(index).unwrap().is_object());
    }
    let e = register_type(&TypeSpec::new("int", "")).unwrap_err();
    assert!(e.to_string().contains("`int`"), "{e}");
    // At link time too.
    assert!(
        registry::link_errors().contains(&RegistryError::ValueKindKey {
            key: "float".into()
        })
    );
    assert_eq!(type_index_of("float"), Ok(3));
    assert_eq!(registry::type_info(3).unwrap().key(), "float");
    let first_use = std::panic::catch_unwind(NotAFloat::type_index).unwrap_err();
    let msg = first_use.downcast_ref::<std::string::String>().unwrap();
    assert!(
        msg.contains("`float`") && msg.contains("value kind"),
        "{msg}"
    );
}

// Two Rust types claiming one key: the registry refuses to give either an index
// (down-casts would confuse them) and reports the conflict, naming both.
mod first {
    #[derive(object_core::Object)]
    #[repr(C)]
    #[object(key = "err.Claimed")]
    pub struct Claimed {
        pub base: object_core::Object,
    }
}
mod second {
    #[derive(object_core::Object)]
    #[repr(C)]
    #[object(key = "err.Claimed")]
    pub struct Claimed {
        pub base: object_core::Object,
    }
}

#[test]
fn two_rust_types_on_one_key_is_a_loud_error() {
    let errors = registry::link_errors();
    let conflict = errors
        .iter()
        .find(|e| matches!(e, RegistryError::RustTypeConflict { key, .. } if key == "err.Claimed"))
        .expect("the conflict is reported");
    let text = conflict.to_string();
    assert!(
        text.contains("first::Claimed") && text.contains("second::Claimed"),
        "{text}"
    );
    // Neither claimant gets the key.
    assert!(registry::type_info_by_key("err.Claimed").is_none());
    assert!(std::panic::catch_unwind(first::Claimed::type_index).is_err());
    assert!(std::panic::catch_unwind(second::Claimed::type_index).is_err());
}

// --- the random forest -----------------------------------------------------------------

#[derive(Object)]
#[repr(C)]
#[object(key = "forest.RootWide", slots = 3000)]
struct RootWide {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "forest.RootNarrow", slots = 40)]
struct RootNarrow {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "forest.RootNone")]
struct RootNone {
    base: Object,
}

/// 10,000 types registered at run time under derive-registered roots with random slots
/// (some exhausted, so descendants overflow); at least 1,000,000 sampled (object type,
/// target type) pairs agree with a plain ancestor walk over the reference parent map.
#[test]
fn random_forest_agrees_with_reference_walk() {
    let seed = seed("random_forest", 0x05EE_D0FF_0E57);
    let mut rng = Rng::new(seed);
    let n_types = scaled(10_000, 300);
    let n_pairs = scaled(1_000_000, 20_000);

    let roots = [
        RootWide::type_index(),
        RootNarrow::type_index(),
        RootNone::type_index(),
    ];
    // Reference model: parent of each index, built from what we asked for.
    let mut parent_of: HashMap<u32, u32> = HashMap::new();
    let mut root_of: HashMap<u32, usize> = HashMap::new();
    for (i, &r) in roots.iter().enumerate() {
        parent_of.insert(r, 64);
        root_of.insert(r, i);
    }
    parent_of.insert(64, u32::MAX);
    let mut all: Vec<u32> = roots.to_vec();
    let mut chains: HashMap<u32, Vec<u32>> = roots
        .iter()
        .map(|&r| (r, ref_chain(&parent_of, r)))
        .collect();
    let mut refused = 0usize;
    for i in 0..n_types {
        // Prefer recent types so the forest gets deep as well as wide.
        let p = if rng.chance(0.4) && all.len() > 8 {
            all[all.len() - 1 - rng.below(all.len().min(16))]
        } else {
            all[rng.below(all.len())]
        };
        let slots = [0, 0, 0, 1, 2, 3, 8, 16][rng.below(8)];
        let allow_overflow = !rng.chance(0.05);
        let pkey = registry::type_info(p).unwrap().key();
        let spec = TypeSpec::new(format!("forest.t{i}"), pkey)
            .slots(slots)
            .overflow(allow_overflow);
        match register_type(&spec) {
            Ok(info) => {
                assert_eq!(info.parent_index(), Some(p));
                assert_eq!(info.range().len(), slots as usize + 1);
                // Every ancestor whose range misses it must allow overflow.
                let mut a = Some(p);
                while let Some(ai) = a.filter(|&x| x != 64) {
                    let at = registry::type_info(ai).unwrap();
                    if !at.range().contains(&info.index()) {
                        assert!(
                            at.allows_overflow(),
                            "{} overflowed a refusing {}",
                            info.key(),
                            at.key()
                        );
                        assert!(at.has_overflowed_descendants());
                    }
                    a = at.parent_index();
                }
                parent_of.insert(info.index(), p);
                root_of.insert(info.index(), root_of[&p]);
                let chain = ref_chain(&parent_of, info.index());
                chains.insert(info.index(), chain);
                all.push(info.index());
            }
            Err(RegistryError::SlotsExhausted { ancestor, .. }) => {
                let at = registry::type_info_by_key(&ancestor).unwrap();
                assert!(!at.allows_overflow());
                assert!(is_ref_ancestor(&parent_of, p, at.index()));
                refused += 1;
            }
            Err(e) => panic!("unexpected error: {e}"),
        }
    }
    let overflowed = all
        .iter()
        .filter(|&&x| {
            let p = parent_of[&x];
            p != 64 && !registry::type_info(p).unwrap().range().contains(&x)
        })
        .count();
    let max_depth = chains.values().map(Vec::len).max().unwrap_or(0);
    println!(
        "random_forest: {} types ({} refused), {} placed outside their parent's range, max depth {}",
        all.len(),
        refused,
        overflowed,
        max_depth
    );
    assert!(
        overflowed > 0 && overflowed < all.len(),
        "the forest must mix in-range and overflowed types"
    );

    // Sampled pairs through the run-time check.
    let mut positives = 0usize;
    for _ in 0..n_pairs {
        let x = all[rng.below(all.len())];
        let y = if rng.chance(0.5) {
            // One of x's reference ancestors (or x itself), so positives are common.
            let chain = &chains[&x];
            chain[rng.below(chain.len())]
        } else {
            all[rng.below(all.len())]
        };
        let want = chains[&x].contains(&y);
        positives += want as usize;
        assert_eq!(
            is_instance_of_index(x, y),
            want,
            "is({x} -> {y}), seed {seed}"
        );
    }
    assert!(positives > n_pairs / 3);

    // And through the typed `is::<T>()` on real objects of every type.
    for &x in &all {
        let obj: ObjectRef = match root_of[&x] {
            0 => make_object_as(
                RootWide {
                    base: Object::new(),
                },
                x,
            )
            .unwrap()
            .into_object_ref(),
            1 => make_object_as(
                RootNarrow {
                    base: Object::new(),
                },
                x,
            )
            .unwrap()
            .into_object_ref(),
            _ => make_object_as(
                RootNone {
                    base: Object::new(),
                },
                x,
            )
            .unwrap()
            .into_object_ref(),
        };
        assert_eq!(obj.is::<RootWide>(), root_of[&x] == 0);
        assert_eq!(obj.is::<RootNarrow>(), root_of[&x] == 1);
        assert_eq!(obj.is::<RootNone>(), root_of[&x] == 2);
        assert!(obj.is::<Object>());
        assert!(!obj.is::<Tree>());
        assert_eq!(obj.type_index(), x);
        assert_eq!(obj.downcast_ref::<RootNone>().is_some(), root_of[&x] == 2);
        assert_eq!(ObjectPtr::strong_count(&obj), 1);
    }
}

fn ref_chain(parent_of: &HashMap<u32, u32>, mut x: u32) -> Vec<u32> {
    let mut v = vec![x];
    while let Some(&p) = parent_of.get(&x) {
        if p == u32::MAX {
            break;
        }
        v.push(p);
        x = p;
    }
    v
}

fn is_ref_ancestor(parent_of: &HashMap<u32, u32>, x: u32, y: u32) -> bool {
    ref_chain(parent_of, x).contains(&y)
}

// --- `is` on a type whose cache is not filled yet -------------------------------------

#[derive(Object)]
#[repr(C)]
#[object(key = "unfilled.Final", final)]
struct UnfilledFinal {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "unfilled.Base", slots = 1)]
struct UnfilledBase {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "unfilled.Base2")]
struct UnfilledBase2 {
    base: Object,
    value: i64,
}

/// The first `is::<T>()` of a type (its cache not filled: the word matches nothing)
/// must fill the cache and answer as a filled one would, negative or positive. Each
/// type here is used by this test only, and first through `is`.
#[test]
fn first_check_of_a_type_fills_its_cache() {
    let a: ObjectRef = make_object(A {
        base: Object::new(),
    })
    .into_object_ref();
    // Negative first checks: a final type, a base type.
    assert!(!a.is::<UnfilledFinal>());
    assert!(!a.is::<UnfilledBase>());
    assert!(a.downcast_ref::<UnfilledFinal>().is_none());
    // Filled now, and right.
    let f: ObjectRef = make_object(UnfilledFinal {
        base: Object::new(),
    })
    .into_object_ref();
    assert!(f.is::<UnfilledFinal>() && !f.is::<UnfilledBase>());
    assert_eq!(f.type_index(), UnfilledFinal::type_index());
    // A positive first check: a run-time child of a type no Rust code used yet, made
    // with `make_object_as` (whose check is that type's first `is`).
    let child = register_type(&TypeSpec::new("unfilled.Base2.Child", "unfilled.Base2"))
        .expect("registering a child of unfilled.Base2");
    let c: ObjectRef = make_object_as(
        UnfilledBase2 {
            base: Object::new(),
            value: 7,
        },
        child.index(),
    )
    .expect("a child of unfilled.Base2 is one")
    .into_object_ref();
    assert!(c.is::<UnfilledBase2>());
    assert_eq!(c.downcast_ref::<UnfilledBase2>().map(|b| b.value), Some(7));
    assert!(!c.is::<UnfilledFinal>() && !c.is::<UnfilledBase>());
}
