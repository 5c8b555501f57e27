//! Writing passes: dispatch by type (`TypeDispatch`), the reflection-driven visitor
//! (`for_each_child`, `walk`) and mutator (`mutate`, `RewriteTable`).

use std::sync::atomic::{AtomicUsize, Ordering};

use object_containers::{Array, Dict, List, Map, String};
use object_core::registry::{register_type, TypeSpec};
use object_core::transform::{
    for_each_child, for_each_child_field, map_children, mutate, walk, ChildField, ChildStep,
    DispatchErrorKind, RewriteTable, Rewriter, TransformError, TransformErrorKind, TypeDispatch,
    Visitor, Walk,
};
use object_core::{make_object, make_object_as, Any, Object, ObjectPtr, ObjectRef, ObjectType};
use object_tests::{on_small_stack, scaled, LeakCheck};

#[derive(Object)]
#[repr(C)]
#[object(key = "tr.Expr", slots = 2)]
struct Expr {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "tr.Int", parent = Expr, slots = 2)]
struct Int {
    base: Expr,
    value: i64,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "tr.BinOp", parent = Expr, slots = 4)]
struct BinOp {
    base: Expr,
    lhs: ObjectPtr<Expr>,
    rhs: ObjectPtr<Expr>,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "tr.Add", parent = BinOp)]
struct Add {
    base: BinOp,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "tr.Mul", parent = BinOp)]
struct Mul {
    base: BinOp,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "tr.Var", parent = Expr)]
struct Var {
    base: Expr,
    name: String,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "tr.Let", parent = Expr)]
struct Let {
    base: Expr,
    var: ObjectPtr<Var>,
    value: ObjectPtr<Expr>,
    body: ObjectPtr<Expr>,
    #[object(skip)]
    cache: u64,
}

/// A `let` whose binder is a definition site.
#[derive(Object)]
#[repr(C)]
#[object(key = "tr.Bind", parent = Expr)]
struct Bind {
    base: Expr,
    #[object(def)]
    var: ObjectPtr<Var>,
    value: ObjectPtr<Expr>,
    body: ObjectPtr<Expr>,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "tr.Call", parent = Expr)]
struct Call {
    base: Expr,
    args: Array<ObjectPtr<Expr>>,
    attrs: Map<String, Any>,
    extra: Option<ObjectRef>,
    anything: Any,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "tr.Stmt")]
struct Stmt {
    base: Object,
}

fn e() -> Expr {
    Expr {
        base: Object::new(),
    }
}
fn int(v: i64) -> ObjectPtr<Expr> {
    make_object(Int {
        base: e(),
        value: v,
    })
    .upcast()
}
fn var(n: &str) -> ObjectPtr<Expr> {
    make_object(Var {
        base: e(),
        name: n.into(),
    })
    .upcast()
}
fn bin(lhs: ObjectPtr<Expr>, rhs: ObjectPtr<Expr>) -> BinOp {
    BinOp {
        base: e(),
        lhs,
        rhs,
    }
}
fn add(l: ObjectPtr<Expr>, r: ObjectPtr<Expr>) -> ObjectPtr<Expr> {
    make_object(Add { base: bin(l, r) }).upcast()
}
fn mul(l: ObjectPtr<Expr>, r: ObjectPtr<Expr>) -> ObjectPtr<Expr> {
    make_object(Mul { base: bin(l, r) }).upcast()
}
fn r(p: &ObjectPtr<Expr>) -> &ObjectRef {
    p.as_object_ref()
}
fn ints(o: &ObjectRef) -> Vec<i64> {
    let mut out = Vec::new();
    walk(o, &mut |n: &ObjectRef| {
        if let Some(i) = n.downcast_ref::<Int>() {
            out.push(i.value);
        }
        Walk::Continue
    });
    out
}

// ---------------------------------------------------------------------------------
// TypeDispatch
// ---------------------------------------------------------------------------------

#[test]
fn dispatch_finds_the_type_or_its_nearest_ancestor() {
    let _leaks = LeakCheck::new();
    let mut t: TypeDispatch<&str> = TypeDispatch::new();
    assert!(t.is_empty());
    t.set_dispatch::<BinOp>("binop");
    t.set_dispatch::<Mul>("mul");
    t.set_dispatch::<Expr>("expr");
    assert_eq!(t.len(), 3);
    let a = add(int(1), int(2));
    let m = mul(int(1), int(2));
    assert_eq!(t.dispatch(r(&a)), Ok(&"binop"));
    assert_eq!(t.dispatch(r(&m)), Ok(&"mul"));
    assert_eq!(t.dispatch(r(&int(3))), Ok(&"expr"));
    // Twice: the second from the cache.
    assert_eq!(t.dispatch(r(&a)), Ok(&"binop"));
    let stmt = make_object(Stmt {
        base: Object::new(),
    })
    .into_object_ref();
    let err = t.dispatch(&stmt).unwrap_err();
    assert_eq!(err.kind(), DispatchErrorKind::NoEntry);
    assert_eq!(err.type_key(), "tr.Stmt");
    assert!(t.get(&stmt).is_none());
    assert!(t.contains::<Mul>() && !t.contains::<Add>());
}

#[test]
fn changing_entries_invalidates_the_cache() {
    let _leaks = LeakCheck::new();
    let mut t: TypeDispatch<u32> = TypeDispatch::new();
    t.set_dispatch::<Expr>(1);
    let a = add(int(1), int(2));
    assert_eq!(t.dispatch(r(&a)), Ok(&1));
    t.set_dispatch::<Add>(2);
    assert_eq!(t.dispatch(r(&a)), Ok(&2));
    assert_eq!(t.set_dispatch::<Add>(3), Some(2));
    assert_eq!(t.dispatch(r(&a)), Ok(&3));
    assert_eq!(t.remove::<Add>(), Some(3));
    assert_eq!(t.dispatch(r(&a)), Ok(&1));
    assert_eq!(t.remove::<Add>(), None);
}

#[test]
fn dispatch_by_key_and_index_and_their_errors() {
    let _leaks = LeakCheck::new();
    let mut t: TypeDispatch<&str> = TypeDispatch::new();
    let add_index = add(int(1), int(2)).type_index();
    t.set_dispatch_key("tr.Int", "int").unwrap();
    t.set_dispatch_index(add_index, "add").unwrap();
    assert_eq!(t.dispatch(r(&int(1))), Ok(&"int"));
    assert_eq!(t.dispatch_index(add_index), Ok(&"add"));
    let e = t.set_dispatch_key("tr.NoSuchType", "x").unwrap_err();
    assert_eq!(e.kind(), DispatchErrorKind::UnknownType);
    // Value kinds (index 1 = int) are not object types.
    assert_eq!(
        t.set_dispatch_index(1, "x").unwrap_err().kind(),
        DispatchErrorKind::UnknownType
    );
    assert_eq!(
        t.dispatch_index(u32::MAX - 7).unwrap_err().kind(),
        DispatchErrorKind::UnknownType
    );
    assert!(!format!("{t:?}").is_empty());
}

#[test]
fn run_time_types_registered_after_the_table_was_filled() {
    let _leaks = LeakCheck::new();
    let mut t: TypeDispatch<&str> = TypeDispatch::new();
    t.set_dispatch::<Int>("int");
    t.set_dispatch::<Expr>("expr");
    // Fill the cache for the link-time types first.
    assert_eq!(t.dispatch(r(&int(1))), Ok(&"int"));
    // Then register: inside `Int`'s reserved slots, beyond them (overflow), and a
    // grandchild of the overflowed one.
    let in_slots = register_type(&TypeSpec::new("tr.rt.IntA", "tr.Int")).unwrap();
    let overflow1 = register_type(&TypeSpec::new("tr.rt.IntB", "tr.Int")).unwrap();
    let overflow2 = register_type(&TypeSpec::new("tr.rt.IntC", "tr.Int")).unwrap();
    let deeper = register_type(&TypeSpec::new("tr.rt.IntD", "tr.rt.IntC")).unwrap();
    let plugin_expr = register_type(&TypeSpec::new("tr.rt.Plugin", "tr.Expr")).unwrap();
    for info in [in_slots, overflow1, overflow2, deeper] {
        let o = make_object_as(
            Int {
                base: e(),
                value: 5,
            },
            info.index(),
        )
        .unwrap();
        assert_eq!(o.type_key(), info.key());
        assert_eq!(
            t.dispatch(o.as_object_ref().as_object_ref()),
            Ok(&"int"),
            "{}",
            info.key()
        );
        // Cached or not, the same answer again.
        assert_eq!(t.dispatch(o.upcast_ref::<Object>()), Ok(&"int"));
    }
    let p = make_object_as(e(), plugin_expr.index()).unwrap();
    assert_eq!(t.dispatch(p.upcast_ref::<Object>()), Ok(&"expr"));
    // An entry for the run-time type itself, by key.
    t.set_dispatch_key("tr.rt.Plugin", "plugin").unwrap();
    assert_eq!(t.dispatch(p.upcast_ref::<Object>()), Ok(&"plugin"));
}

#[test]
fn a_shared_table_dispatches_from_many_threads() {
    let _leaks = LeakCheck::new();
    let mut t: TypeDispatch<fn(&ObjectRef) -> i64> = TypeDispatch::new();
    t.set_dispatch::<Int>(|o| o.downcast_ref::<Int>().unwrap().value);
    t.set_dispatch::<BinOp>(|_| -1);
    let t = std::sync::Arc::new(t);
    let handles: Vec<_> = (0..4)
        .map(|k| {
            let t = t.clone();
            std::thread::spawn(move || {
                let mut sum = 0;
                for i in 0..1000 {
                    let x = int(i + k);
                    sum += t.dispatch(r(&x)).unwrap()(r(&x));
                    let a = add(x.clone(), x);
                    sum += t.dispatch(r(&a)).unwrap()(r(&a));
                }
                sum
            })
        })
        .collect();
    for (k, h) in handles.into_iter().enumerate() {
        let k = k as i64;
        assert_eq!(h.join().unwrap(), (0..1000).map(|i| i + k - 1).sum::<i64>());
    }
}

// ---------------------------------------------------------------------------------
// Children and walks
// ---------------------------------------------------------------------------------

#[test]
fn children_of_fields_and_containers() {
    let _leaks = LeakCheck::new();
    let (a, b, c, d) = (int(1), int(2), int(3), int(4));
    let mut attrs: Map<String, Any> = Map::new();
    attrs.insert(String::from("k"), Any::from(c.clone()));
    attrs.insert(String::from("n"), Any::from(7));
    let call = make_object(Call {
        base: e(),
        args: Array::from(vec![a.clone(), b.clone()]),
        attrs: attrs.clone(),
        extra: None,
        anything: Any::from(d.clone()),
    })
    .into_object_ref();
    let mut kids = Vec::new();
    for_each_child(&call, |k| kids.push(k.clone()));
    // The array, the map, the `Any` (not the `None`).
    assert_eq!(kids.len(), 3);
    assert_eq!(kids[0].type_key(), "ffi.Array");
    assert_eq!(kids[1].type_key(), "ffi.Map");
    assert!(ObjectPtr::ptr_eq(&kids[2], &d));
    let mut items = Vec::new();
    for_each_child(&kids[0], |k| items.push(k.clone()));
    assert!(ObjectPtr::ptr_eq(&items[0], &a) && ObjectPtr::ptr_eq(&items[1], &b));
    // A map's string key is a value, not a child; its object value is.
    let mut entries = Vec::new();
    for_each_child(&kids[1], |k| entries.push(k.clone()));
    assert_eq!(entries.len(), 1);
    assert!(ObjectPtr::ptr_eq(&entries[0], &c));
    // A string held as an object field is a leaf.
    let s = ObjectRef::from(String::from("text"));
    let mut n = 0;
    for_each_child(&s, |_| n += 1);
    assert_eq!(n, 0);
    // Lists and dicts, from snapshots.
    let list: List<Any> = List::new();
    list.push(Any::from(a.clone()));
    list.push(Any::from(5));
    let dict: Dict<Any, Any> = Dict::new();
    dict.insert(Any::from(b.clone()), Any::from(c.clone()));
    let mut n = 0;
    for_each_child(list.as_object_ptr().as_object_ref(), |k| {
        assert!(ObjectPtr::ptr_eq(k, &a));
        n += 1;
    });
    assert_eq!(n, 1);
    let mut kv = Vec::new();
    for_each_child(dict.as_object_ptr().as_object_ref(), |k| kv.push(k.clone()));
    assert_eq!(kv.len(), 2);
    assert!(ObjectPtr::ptr_eq(&kv[0], &b) && ObjectPtr::ptr_eq(&kv[1], &c));
}

#[test]
fn walk_enters_each_shared_node_once_in_pre_order() {
    let _leaks = LeakCheck::new();
    let x = var("x");
    // (x + 1) * (x + 1), the sum shared.
    let s = add(x.clone(), int(1));
    let root = mul(s.clone(), s.clone());
    let mut entered = Vec::new();
    let mut left = Vec::new();
    struct V<'a>(&'a mut Vec<&'static str>, &'a mut Vec<&'static str>);
    impl object_core::transform::Visitor for V<'_> {
        fn enter(&mut self, n: &ObjectRef) -> Walk {
            self.0.push(n.type_key());
            Walk::Continue
        }
        fn leave(&mut self, n: &ObjectRef) {
            self.1.push(n.type_key());
        }
    }
    assert!(walk(r(&root), &mut V(&mut entered, &mut left)));
    assert_eq!(entered, ["tr.Mul", "tr.Add", "tr.Var", "tr.Int"]);
    assert_eq!(left, ["tr.Var", "tr.Int", "tr.Add", "tr.Mul"]);

    // Skip and stop.
    let mut seen = Vec::new();
    assert!(walk(r(&root), &mut |n: &ObjectRef| {
        seen.push(n.type_key());
        if n.is::<Add>() {
            Walk::SkipChildren
        } else {
            Walk::Continue
        }
    }));
    assert_eq!(seen, ["tr.Mul", "tr.Add"]);
    let mut count = 0;
    assert!(!walk(r(&root), &mut |_: &ObjectRef| {
        count += 1;
        if count == 2 {
            Walk::Stop
        } else {
            Walk::Continue
        }
    }));
    assert_eq!(count, 2);
}

// ---------------------------------------------------------------------------------
// The mutator
// ---------------------------------------------------------------------------------

struct Identity;
impl Rewriter for Identity {
    type Error = TransformError;
}

/// Adds one to every `Int` leaf, counting the rewrites.
struct Bump(usize);
impl Rewriter for Bump {
    type Error = TransformError;
    fn post(&mut self, node: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
        if let Some(i) = node.downcast_ref::<Int>() {
            self.0 += 1;
            return Ok(int(i.value + 1).into_object_ref());
        }
        Ok(node)
    }
}

/// Replaces `Var`s named `x` by `Int(10)`.
struct Subst;
impl Rewriter for Subst {
    type Error = TransformError;
    fn post(&mut self, node: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
        match node.downcast_ref::<Var>() {
            Some(v) if v.name == "x" => Ok(int(10).into_object_ref()),
            _ => Ok(node),
        }
    }
}

#[test]
fn an_unchanged_graph_is_the_same_object() {
    let _leaks = LeakCheck::new();
    let root = add(mul(var("x"), int(2)), var("y"));
    let out = mutate(r(&root), &mut Identity).unwrap();
    assert!(ObjectPtr::ptr_eq(&out, &root));
    // Also through a table with hooks that change nothing.
    let mut t: RewriteTable<usize> = RewriteTable::new();
    t.post::<Int>(|n, i, _| {
        *n += 1;
        Ok(i.into_object_ref())
    });
    let mut n = 0;
    let out = t.run(r(&root), &mut n).unwrap();
    assert!(ObjectPtr::ptr_eq(&out, &root));
    assert_eq!(n, 1);
}

#[test]
fn only_the_path_to_a_change_is_rebuilt() {
    let _leaks = LeakCheck::new();
    let left = mul(var("y"), int(2));
    let right_x = add(var("z"), var("x"));
    let root = add(left.clone(), right_x.clone());
    let out = mutate(r(&root), &mut Subst).unwrap();
    assert!(!ObjectPtr::ptr_eq(&out, &root));
    let out_add = out.downcast_ref::<Add>().unwrap();
    // The untouched left operand is the very same object.
    assert!(ObjectPtr::ptr_eq(&out_add.base.lhs, &left));
    let new_right = out_add.base.rhs.downcast_ref::<Add>().unwrap();
    assert!(ObjectPtr::ptr_eq(
        &new_right.base.lhs,
        &right_x.downcast_ref::<Add>().unwrap().base.lhs
    ));
    assert_eq!(new_right.base.rhs.downcast_ref::<Int>().unwrap().value, 10);
    // The original is unchanged.
    assert!(right_x.downcast_ref::<Add>().unwrap().base.rhs.is::<Var>());
}

#[test]
fn a_shared_subtree_is_rewritten_once_and_stays_shared() {
    let _leaks = LeakCheck::new();
    let shared = add(int(1), int(2));
    let root = mul(shared.clone(), add(shared.clone(), shared.clone()));
    let mut bump = Bump(0);
    let out = mutate(r(&root), &mut bump).unwrap();
    // Two distinct ints under the shared sum: bumped once each.
    assert_eq!(bump.0, 2);
    let m = out.downcast_ref::<Mul>().unwrap();
    let inner = m.base.rhs.downcast_ref::<Add>().unwrap();
    assert!(ObjectPtr::ptr_eq(&m.base.lhs, &inner.base.lhs));
    assert!(ObjectPtr::ptr_eq(&inner.base.lhs, &inner.base.rhs));
    assert_eq!(ints(&out), [2, 3]);
    // A shared leaf (count > 1) is memoized too.
    let one = int(1);
    let root = add(one.clone(), one.clone());
    drop(one);
    let mut bump = Bump(0);
    let out = mutate(r(&root), &mut bump).unwrap();
    assert_eq!(bump.0, 1);
    let a = out.downcast_ref::<Add>().unwrap();
    assert!(ObjectPtr::ptr_eq(&a.base.lhs, &a.base.rhs));
}

#[test]
fn a_child_that_does_not_fit_its_field_is_an_error() {
    let _leaks = LeakCheck::new();
    struct ToStmt;
    impl Rewriter for ToStmt {
        type Error = TransformError;
        fn post(&mut self, node: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
            if node.is::<Int>() {
                return Ok(make_object(Stmt {
                    base: Object::new(),
                })
                .into_object_ref());
            }
            Ok(node)
        }
    }
    let root = add(var("x"), int(1));
    let err = mutate(r(&root), &mut ToStmt).unwrap_err();
    assert_eq!(err.kind(), TransformErrorKind::WrongChildType);
    assert_eq!(err.type_key(), "tr.Add");
    assert_eq!(err.field(), Some("rhs"));
    assert_eq!(err.type_error().unwrap().expected, "tr.Expr");
    assert!(err.to_string().contains("rhs"), "{err}");

    // A `Var` field given an `Int`: also refused (`ObjectPtr<Var>`).
    let l = make_object(Let {
        base: e(),
        var: var("x").downcast().ok().unwrap(),
        value: int(1),
        body: var("x"),
        cache: 9,
    })
    .into_object_ref();
    let err = mutate(&l, &mut Subst).unwrap_err();
    assert_eq!(
        (err.kind(), err.field()),
        (TransformErrorKind::WrongChildType, Some("var"))
    );
    // An array of expressions given a statement.
    let call = make_object(Call {
        base: e(),
        args: Array::from(vec![int(1)]),
        attrs: Map::new(),
        extra: None,
        anything: Any::NONE,
    })
    .into_object_ref();
    let err = mutate(&call, &mut ToStmt).unwrap_err();
    assert_eq!(err.kind(), TransformErrorKind::WrongChildType);
    assert_eq!(err.field(), Some("args"));
}

#[test]
fn map_children_rewrites_one_level_and_keeps_what_did_not_change() {
    let _leaks = LeakCheck::new();
    let inner = add(int(1), int(2));
    let root = mul(inner.clone(), var("x"));
    // Every child kept: the very same object, whatever the type.
    let same = map_children(r(&root), |c| c.clone()).unwrap();
    assert!(ObjectPtr::ptr_eq(&same, r(&root)));
    // One level only: `f` sees `inner` and `x`, not `inner`'s integers.
    let mut seen = Vec::new();
    let out = map_children(r(&root), |c| {
        seen.push(c.type_key());
        match c.downcast_ref::<Var>() {
            Some(_) => int(10).into_object_ref(),
            None => c.clone(),
        }
    })
    .unwrap();
    assert_eq!(seen, ["tr.Add", "tr.Var"]);
    let m = out.downcast_ref::<Mul>().expect("still a `Mul`");
    assert!(
        ObjectPtr::ptr_eq(&m.base.lhs, &inner),
        "the unchanged child is shared"
    );
    assert_eq!(ints(&out), [1, 2, 10]);
    assert_eq!(ints(r(&root)), [1, 2], "the original is untouched");

    // A container's items; a skipped field takes its `Default`, as in `mutate`.
    let call = make_object(Call {
        base: e(),
        args: Array::from(vec![int(1), var("y")]),
        attrs: Map::new(),
        extra: None,
        anything: Any::NONE,
    })
    .into_object_ref();
    let args = &call.downcast_ref::<Call>().unwrap().args;
    let out = map_children(args.as_object_ptr().as_object_ref(), |c| {
        match c.downcast_ref::<Int>() {
            Some(i) => int(i.value + 1).into_object_ref(),
            None => c.clone(),
        }
    })
    .unwrap();
    assert_eq!(ints(&out), [2]);
    let l = make_object(Let {
        base: e(),
        var: var("z").downcast().ok().unwrap(),
        value: int(1),
        body: var("z"),
        cache: 9,
    })
    .into_object_ref();
    let out = map_children(&l, |c| match c.downcast_ref::<Int>() {
        Some(_) => int(7).into_object_ref(),
        None => c.clone(),
    })
    .unwrap();
    assert_eq!(out.downcast_ref::<Let>().unwrap().cache, 0);

    // A child that does not fit its field: an error naming the field; a leaf has no
    // children to map.
    let err = map_children(r(&root), |_| {
        make_object(Stmt {
            base: Object::new(),
        })
        .into_object_ref()
    })
    .unwrap_err();
    assert_eq!(
        (err.kind(), err.type_key(), err.field()),
        (TransformErrorKind::WrongChildType, "tr.Mul", Some("lhs"))
    );
    let leaf = int(3);
    let out = map_children(r(&leaf), |_| unreachable!("a leaf has no children")).unwrap();
    assert!(ObjectPtr::ptr_eq(&out, r(&leaf)));
}

#[test]
fn rebuilt_nodes_keep_their_values_and_reset_skipped_fields() {
    let _leaks = LeakCheck::new();
    let l = make_object(Let {
        base: e(),
        var: var("y").downcast().ok().unwrap(),
        value: int(1),
        body: add(var("y"), int(5)),
        cache: 9,
    })
    .into_object_ref();
    let out = mutate(&l, &mut Bump(0)).unwrap();
    let new = out.downcast_ref::<Let>().unwrap();
    let old = l.downcast_ref::<Let>().unwrap();
    assert!(ObjectPtr::ptr_eq(&new.var, &old.var));
    assert_eq!(new.value.downcast_ref::<Int>().unwrap().value, 2);
    assert_eq!(new.cache, 0, "a skipped field takes its Default");
    assert_eq!(ints(&out), [2, 6]);
}

#[test]
fn containers_are_rebuilt_with_their_values() {
    let _leaks = LeakCheck::new();
    let mut attrs: Map<String, Any> = Map::new();
    attrs.insert(String::from("k"), Any::from(int(3)));
    attrs.insert(String::from("n"), Any::from(7));
    let list: List<Any> = List::new();
    list.push(Any::from(int(4)));
    list.push(Any::from("s"));
    let dict: Dict<Any, Any> = Dict::new();
    dict.insert(Any::from(int(5)), Any::from(int(6)));
    let holder: Array<Any> = Array::from(vec![Any::from(list.clone()), Any::from(dict.clone())]);
    let call = make_object(Call {
        base: e(),
        args: Array::from(vec![int(1), var("v")]),
        attrs,
        extra: Some(holder.into_object_ptr().into_object_ref()),
        anything: Any::from(int(2)),
    })
    .into_object_ref();
    let out = mutate(&call, &mut Bump(0)).unwrap();
    let c = out.downcast_ref::<Call>().unwrap();
    let old = call.downcast_ref::<Call>().unwrap();
    assert_eq!(c.args.len(), 2);
    assert_eq!(
        c.args.get(0).unwrap().downcast_ref::<Int>().unwrap().value,
        2
    );
    assert!(ObjectPtr::ptr_eq(
        c.args.get(1).unwrap(),
        old.args.get(1).unwrap()
    ));
    let k = c.attrs.get("k").unwrap().clone();
    assert_eq!(
        ObjectRef::try_from(k)
            .unwrap()
            .downcast_ref::<Int>()
            .unwrap()
            .value,
        4
    );
    assert_eq!(c.attrs.get("n").unwrap().as_int(), Some(7));
    assert_eq!(
        ObjectRef::try_from(c.anything.clone())
            .unwrap()
            .downcast_ref::<Int>()
            .unwrap()
            .value,
        3
    );
    let holder = Array::<Any>::try_from(Any::from(c.extra.clone().unwrap())).unwrap();
    let new_list = List::<Any>::try_from(holder.get(0).unwrap().clone()).unwrap();
    assert!(!List::ptr_eq(&new_list, &list), "a new list");
    assert_eq!(new_list.len(), 2);
    assert_eq!(new_list.get(1).unwrap().as_str(), Some("s"));
    let new_dict = Dict::<Any, Any>::try_from(holder.get(1).unwrap().clone()).unwrap();
    let (k, v) = new_dict.to_vec().unwrap().pop().unwrap();
    let k = ObjectRef::try_from(k).unwrap();
    assert_eq!(k.downcast_ref::<Int>().unwrap().value, 6);
    assert_eq!(
        ObjectRef::try_from(v)
            .unwrap()
            .downcast_ref::<Int>()
            .unwrap()
            .value,
        7
    );
    // The originals are untouched.
    assert_eq!(ints(&call), [1, 3, 4, 5, 6, 2]);
    assert_eq!(ints(&out), [2, 4, 5, 6, 7, 3]);
}

#[test]
fn run_time_types_keep_their_type_when_rebuilt() {
    let _leaks = LeakCheck::new();
    let info = register_type(&TypeSpec::new("tr.rt.Sub", "tr.BinOp")).unwrap();
    let node = make_object_as(bin(int(1), int(2)), info.index()).unwrap();
    let out = mutate(node.as_object_ref().upcast_ref::<Object>(), &mut Bump(0)).unwrap();
    assert_eq!(out.type_key(), "tr.rt.Sub");
    assert!(out.is::<BinOp>());
    assert_eq!(ints(&out), [2, 3]);
}

#[test]
fn pre_hooks_replace_without_descending_and_errors_stop_the_pass() {
    let _leaks = LeakCheck::new();
    static POSTS: AtomicUsize = AtomicUsize::new(0);
    let mut t: RewriteTable<Vec<&'static str>> = RewriteTable::new();
    t.pre::<Mul>(|log, _| {
        log.push("pre mul");
        Ok(Some(int(0).into_object_ref()))
    })
    .post::<BinOp>(|log, node, _| {
        POSTS.fetch_add(1, Ordering::Relaxed);
        log.push(node.type_key());
        Ok(node.into_object_ref())
    })
    .post::<Var>(|_, v, _| {
        if v.name == "bad" {
            return Err(TransformError::custom("tr.Var", "bad variable"));
        }
        Ok(v.into_object_ref())
    });
    let root = add(mul(int(1), int(2)), int(3));
    let mut log = Vec::new();
    let out = t.run(r(&root), &mut log).unwrap();
    assert_eq!(log, ["pre mul", "tr.Add"]);
    assert_eq!(POSTS.load(Ordering::Relaxed), 1);
    assert_eq!(ints(&out), [0, 3]);
    let bad = add(int(1), var("bad"));
    let err = t.run(r(&bad), &mut Vec::new()).unwrap_err();
    assert_eq!(err.kind(), TransformErrorKind::Custom);
}

#[test]
fn a_pass_with_its_own_error_type() {
    let _leaks = LeakCheck::new();
    #[derive(Debug)]
    enum PassError {
        Transform(TransformErrorKind),
        DivByZero,
    }
    impl From<TransformError> for PassError {
        fn from(e: TransformError) -> Self {
            PassError::Transform(e.kind())
        }
    }
    struct NoZero;
    impl Rewriter for NoZero {
        type Error = PassError;
        fn pre(&mut self, node: &ObjectRef) -> Result<Option<ObjectRef>, PassError> {
            match node.downcast_ref::<Int>() {
                Some(i) if i.value == 0 => Err(PassError::DivByZero),
                _ => Ok(None),
            }
        }
    }
    assert!(matches!(
        mutate(r(&add(int(1), int(0))), &mut NoZero),
        Err(PassError::DivByZero)
    ));
    assert!(mutate(r(&add(int(1), int(2))), &mut NoZero).is_ok());
    struct Bad;
    impl Rewriter for Bad {
        type Error = PassError;
        fn post(&mut self, n: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, PassError> {
            Ok(if n.is::<Int>() {
                make_object(Stmt {
                    base: Object::new(),
                })
                .into_object_ref()
            } else {
                n
            })
        }
    }
    assert!(matches!(
        mutate(r(&add(int(1), int(2))), &mut Bad),
        Err(PassError::Transform(TransformErrorKind::WrongChildType))
    ));
}

#[test]
fn cycles_through_lists_and_dicts_are_errors_not_endless_walks() {
    let _leaks = LeakCheck::new();
    // l = [1, l]: the mutator reports the cycle; the visitor sees `l` once.
    let l: List<Any> = List::new();
    l.push(Any::from(int(1)));
    l.push(Any::from(l.clone()));
    let root = l.clone().into_object_ptr().into_object_ref();
    let e = mutate(&root, &mut Identity).unwrap_err();
    assert_eq!(e.kind(), TransformErrorKind::Cycle, "{e}");
    assert_eq!(e.type_key(), "ffi.List");
    assert!(e.to_string().contains("cycle"), "{e}");
    let e = mutate(&root, &mut Bump(0)).unwrap_err();
    assert_eq!(e.kind(), TransformErrorKind::Cycle, "{e}");
    let mut seen = 0;
    assert!(walk(&root, &mut |_: &ObjectRef| {
        seen += 1;
        Walk::Continue
    }));
    assert_eq!(seen, 2, "the list and the Int, once each");

    // Through a Dict and a node: d = {"k": [add(1, 2), d]}, reached from a node's field.
    let d: Dict<String, Any> = Dict::new();
    let inner: List<Any> = List::new();
    inner.push(Any::from(add(int(1), int(2))));
    inner.push(Any::from(d.clone()));
    d.insert(String::from("k"), Any::from(inner.clone()));
    let e = mutate(&d.clone().into_object_ptr().into_object_ref(), &mut Bump(0)).unwrap_err();
    assert_eq!(e.kind(), TransformErrorKind::Cycle, "{e}");

    // The same container twice without a cycle is shared, not a cycle.
    let shared: List<Any> = List::new();
    shared.push(Any::from(int(5)));
    let twice = Array::<Any>::from(vec![Any::from(shared.clone()), Any::from(shared.clone())]);
    let out = mutate(
        &twice.clone().into_object_ptr().into_object_ref(),
        &mut Bump(0),
    )
    .unwrap();
    let out = Array::<Any>::try_from(Any::from(out)).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(
        out[0].as_object(),
        out[1].as_object(),
        "one rewrite of the shared list"
    );

    // Break the cycles, for the leak check.
    l.clear();
    d.clear();
    inner.clear();
}

// ---------------------------------------------------------------------------------
// Fields of children, and scoped rewrites (`Rewriter::child`, `RewriteTable::child`)
// ---------------------------------------------------------------------------------

fn v(n: &str) -> ObjectPtr<Var> {
    make_object(Var {
        base: e(),
        name: n.into(),
    })
}
fn bind(x: &ObjectPtr<Var>, value: ObjectPtr<Expr>, body: ObjectPtr<Expr>) -> ObjectPtr<Expr> {
    make_object(Bind {
        base: e(),
        var: x.clone(),
        value,
        body,
    })
    .upcast()
}
fn addr<T: ObjectType>(p: &ObjectPtr<T>) -> usize {
    ObjectPtr::as_ptr(p) as usize
}
/// A small tree as text (test trees are shallow).
fn show(n: &ObjectRef) -> std::string::String {
    if let Some(i) = n.downcast_ref::<Int>() {
        return i.value.to_string();
    }
    if let Some(x) = n.downcast_ref::<Var>() {
        return x.name.as_str().to_owned();
    }
    if let Some(b) = n.downcast_ref::<Bind>() {
        return format!(
            "let {} = {} in {}",
            b.var.name.as_str(),
            show(b.value.as_object_ref()),
            show(b.body.as_object_ref())
        );
    }
    if let Some(b) = n.downcast_ref::<BinOp>() {
        let op = if n.is::<Add>() { "+" } else { "*" };
        return format!(
            "({} {op} {})",
            show(b.lhs.as_object_ref()),
            show(b.rhs.as_object_ref())
        );
    }
    n.type_key().to_owned()
}

/// Folds `Int + Int` and `Int * Int`, and substitutes each `let` whose value folds to an
/// `Int` into its body (the `let` goes), in one walk; counts its hook calls. `careful`
/// opts out of the memo while a binding in scope rebinds a variable bound before
/// (shadowing).
#[derive(Default)]
struct FoldLets {
    /// The `let`s being visited: the variable, its constant, whether it rebinds.
    scope: Vec<(ObjectPtr<Var>, Option<ObjectRef>, bool)>,
    bound: std::collections::HashSet<usize>,
    rebinds: usize,
    careful: bool,
    pres: usize,
    posts: usize,
    children: usize,
    /// Fails at the child of a `let` of this name.
    fail_at: Option<std::string::String>,
}

fn fold_bin(node: ObjectRef) -> ObjectRef {
    if let Some(b) = node.downcast_ref::<BinOp>() {
        if let (Some(l), Some(r)) = (b.lhs.downcast_ref::<Int>(), b.rhs.downcast_ref::<Int>()) {
            let v = if node.is::<Add>() {
                l.value + r.value
            } else {
                l.value * r.value
            };
            return int(v).into_object_ref();
        }
    }
    node
}

impl Rewriter for FoldLets {
    type Error = TransformError;

    fn child(
        &mut self,
        parent: &ObjectRef,
        field: ChildField,
        _: &ObjectRef,
        earlier: &[ObjectRef],
    ) -> Result<ChildStep, TransformError> {
        self.children += 1;
        assert_eq!(earlier.len(), field.position());
        if field.is_definition() {
            return Ok(ChildStep::Keep);
        }
        if let (Some(b), Some("body")) = (parent.downcast_ref::<Bind>(), field.name()) {
            if self.fail_at.as_deref() == Some(b.var.name.as_str()) {
                return Err(TransformError::custom("tr.Bind", "failed at a body"));
            }
            let value = earlier.get(1).filter(|x| x.is::<Int>()).cloned();
            let rebind = !self.bound.insert(addr(&b.var));
            self.rebinds += usize::from(rebind);
            self.scope.push((b.var.clone(), value, rebind));
        }
        Ok(ChildStep::Visit)
    }

    fn pre(&mut self, node: &ObjectRef) -> Result<Option<ObjectRef>, TransformError> {
        self.pres += 1;
        if !node.is::<Var>() {
            return Ok(None);
        }
        let found = self
            .scope
            .iter()
            .rev()
            .find(|(x, ..)| ObjectPtr::ptr_eq(x, node));
        Ok(found.and_then(|(_, value, _)| value.clone()))
    }

    fn post(&mut self, node: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
        self.posts += 1;
        if let Some(b) = node.downcast_ref::<Bind>() {
            let Some((_, value, rebind)) = self.scope.pop() else {
                return Err(TransformError::custom("tr.Bind", "unbalanced scope"));
            };
            self.rebinds -= usize::from(rebind);
            return Ok(match value {
                Some(_) => b.body.clone().into_object_ref(),
                None => node,
            });
        }
        Ok(fold_bin(node))
    }

    fn memoize(&mut self, _: &ObjectRef) -> bool {
        !self.careful || self.rebinds == 0
    }
}

#[test]
fn child_fields_report_names_positions_definitions_and_items() {
    let _leaks = LeakCheck::new();
    let x = v("x");
    let b = bind(&x, int(1), var("y"));
    let mut seen = Vec::new();
    for_each_child_field(r(&b), |f, c| {
        seen.push((f.name(), f.position(), f.is_definition(), f.item_index()));
        assert_eq!(f.info().map(|i| i.name()), f.name());
        if f.position() == 0 {
            assert!(ObjectPtr::ptr_eq(c, &x));
        }
    });
    assert_eq!(
        seen,
        [
            (Some("var"), 0, true, None),
            (Some("value"), 1, false, None),
            (Some("body"), 2, false, None)
        ]
    );

    // A `None` field takes no position; an `Any` holding an object does.
    let (a, c, d, k) = (int(1), int(3), int(4), int(5));
    let mut attrs: Map<String, Any> = Map::new();
    attrs.insert(String::from("n"), Any::from(7));
    attrs.insert(String::from("k"), Any::from(c.clone()));
    let args = Array::<ObjectPtr<Expr>>::from(vec![a.clone()]);
    let call = make_object(Call {
        base: e(),
        args: args.clone(),
        attrs: attrs.clone(),
        extra: None,
        anything: Any::from(d.clone()),
    })
    .into_object_ref();
    let mut seen = Vec::new();
    for_each_child_field(&call, |f, _| seen.push((f.name(), f.position())));
    assert_eq!(
        seen,
        [(Some("args"), 0), (Some("attrs"), 1), (Some("anything"), 2)]
    );

    // An array's items: no name, the index counts the items that are not objects.
    let mixed = Array::<Any>::from(vec![
        Any::from(1),
        Any::from(a.clone()),
        Any::from(d.clone()),
    ]);
    let mut seen = Vec::new();
    for_each_child_field(mixed.as_object_ptr().as_object_ref(), |f, c| {
        assert!(f.name().is_none() && f.info().is_none() && !f.is_definition());
        seen.push((f.item_index(), f.position(), f.is_map_key(), c.clone()));
    });
    assert_eq!(seen.len(), 2);
    assert_eq!((seen[0].0, seen[0].1, seen[0].2), (Some(1), 0, false));
    assert_eq!((seen[1].0, seen[1].1), (Some(2), 1));
    assert!(ObjectPtr::ptr_eq(&seen[1].3, &d));

    // A map's object value (the string keys are values, not children).
    let mut seen = Vec::new();
    for_each_child_field(attrs.as_object_ptr().as_object_ref(), |f, c| {
        seen.push((f.is_map_key(), f.item_index(), f.position(), c.clone()));
    });
    assert_eq!(seen.len(), 1);
    assert!(!seen[0].0 && seen[0].1.is_some_and(|i| i < 2) && seen[0].2 == 0);
    assert!(ObjectPtr::ptr_eq(&seen[0].3, &c));

    // Object keys and values of a map, and the snapshots of a list and a dict.
    let mut keyed: Map<Any, Any> = Map::new();
    keyed.insert(Any::from(k.clone()), Any::from(a.clone()));
    let mut seen = Vec::new();
    for_each_child_field(keyed.as_object_ptr().as_object_ref(), |f, c| {
        seen.push((f.is_map_key(), f.item_index(), f.position(), c.clone()));
    });
    assert_eq!(seen.len(), 2);
    assert_eq!((seen[0].0, seen[0].1, seen[0].2), (true, Some(0), 0));
    assert_eq!((seen[1].0, seen[1].1, seen[1].2), (false, Some(0), 1));
    assert!(ObjectPtr::ptr_eq(&seen[0].3, &k) && ObjectPtr::ptr_eq(&seen[1].3, &a));
    let list: List<Any> = List::new();
    list.push(Any::from("text"));
    list.push(Any::from(a.clone()));
    let mut seen = Vec::new();
    for_each_child_field(list.as_object_ptr().as_object_ref(), |f, _| {
        seen.push((f.item_index(), f.position()));
    });
    assert_eq!(seen, [(Some(1), 0)]);
    let dict: Dict<Any, Any> = Dict::new();
    dict.insert(Any::from(k.clone()), Any::from(c.clone()));
    let mut seen = Vec::new();
    for_each_child_field(dict.as_object_ptr().as_object_ref(), |f, _| {
        seen.push((f.is_map_key(), f.item_index(), f.position()));
    });
    assert_eq!(seen, [(true, Some(0), 0), (false, Some(0), 1)]);

    // Equality and Debug.
    let mut fields = Vec::new();
    for_each_child_field(r(&b), |f, _| fields.push(f));
    assert_eq!(fields[0], fields[0]);
    assert_ne!(fields[0], fields[1]);
    let text = format!("{:?}", fields[0]);
    assert!(
        text.contains("\"var\"") && text.contains("definition: true"),
        "{text}"
    );
}

#[test]
fn walk_reports_every_edge_with_its_field() {
    let _leaks = LeakCheck::new();
    #[derive(Default)]
    struct Edges {
        edges: Vec<std::string::String>,
        entered: Vec<&'static str>,
        skip_rhs: bool,
        stop_at_value: bool,
    }
    impl Visitor for Edges {
        fn enter(&mut self, n: &ObjectRef) -> Walk {
            self.entered.push(n.type_key());
            Walk::Continue
        }
        fn child(&mut self, parent: &ObjectRef, f: ChildField, c: &ObjectRef) -> Walk {
            let what = match c.downcast_ref::<Var>() {
                Some(x) if f.is_definition() => format!("def {}", x.name.as_str()),
                Some(x) => format!("use {}", x.name.as_str()),
                None => c.type_key().to_owned(),
            };
            let name = f.name().unwrap_or("item");
            self.edges.push(format!(
                "{}.{name}#{}: {what}",
                parent.type_key(),
                f.position()
            ));
            if self.stop_at_value && f.name() == Some("value") {
                return Walk::Stop;
            }
            if self.skip_rhs && f.name() == Some("rhs") {
                return Walk::SkipChildren;
            }
            Walk::Continue
        }
    }
    // let x = 2 in x * x: `x` entered once, each of its three edges reported.
    let x = v("x");
    let body = mul(x.clone().upcast(), x.clone().upcast());
    let prog = bind(&x, int(2), body);
    let mut e = Edges::default();
    assert!(walk(r(&prog), &mut e));
    assert_eq!(
        e.edges,
        [
            "tr.Bind.var#0: def x",
            "tr.Bind.value#1: tr.Int",
            "tr.Bind.body#2: tr.Mul",
            "tr.Mul.lhs#0: use x",
            "tr.Mul.rhs#1: use x"
        ]
    );
    assert_eq!(e.entered, ["tr.Bind", "tr.Var", "tr.Int", "tr.Mul"]);

    // Skipping an edge: the child is not entered from there.
    let y = var("y");
    let sum = add(int(1), y.clone());
    let mut e = Edges {
        skip_rhs: true,
        ..Edges::default()
    };
    assert!(walk(r(&sum), &mut e));
    assert_eq!(e.entered, ["tr.Add", "tr.Int"]);
    // ... but it is through another edge.
    let both = mul(sum.clone(), y.clone());
    let mut e = Edges::default();
    assert!(walk(r(&both), &mut e));
    assert_eq!(e.entered, ["tr.Mul", "tr.Add", "tr.Int", "tr.Var"]);
    assert_eq!(e.edges.len(), 4, "{:?}", e.edges);

    // Stopping from an edge.
    let mut e = Edges {
        stop_at_value: true,
        ..Edges::default()
    };
    assert!(!walk(r(&prog), &mut e));
    assert_eq!(e.entered, ["tr.Bind", "tr.Var"]);

    // Items of a container: no name, positions in order.
    let arr = Array::<ObjectPtr<Expr>>::from(vec![int(1), int(2)]);
    let mut e = Edges::default();
    assert!(walk(arr.as_object_ptr().as_object_ref(), &mut e));
    assert_eq!(
        e.edges,
        ["ffi.Array.item#0: tr.Int", "ffi.Array.item#1: tr.Int"]
    );
}

#[test]
fn child_hook_substitutes_lets_in_one_pass() {
    let _leaks = LeakCheck::new();
    // let x = 1 + 2 in let z = x * 4 in let w = y in (z + w) + x
    let (x, z, w) = (v("x"), v("z"), v("w"));
    let prog = bind(
        &x,
        add(int(1), int(2)),
        bind(
            &z,
            mul(x.clone().upcast(), int(4)),
            bind(
                &w,
                var("y"),
                add(
                    add(z.clone().upcast(), w.clone().upcast()),
                    x.clone().upcast(),
                ),
            ),
        ),
    );
    let mut f = FoldLets::default();
    let out = mutate(r(&prog), &mut f).unwrap();
    assert_eq!(show(&out), "let w = y in ((12 + w) + 3)");
    assert!(f.scope.is_empty() && f.rebinds == 0);
    // One visit per node reached (the binders are kept, not visited), each child asked
    // about once: 3 lets (3 children each), 4 binary operations (2 each).
    assert_eq!(f.children, 3 * 3 + 4 * 2);
    assert_eq!(f.pres, 14);
    // The binders are the very same objects.
    let kept = out.downcast_ref::<Bind>().unwrap();
    assert!(ObjectPtr::ptr_eq(&kept.var, &w));
    // An unchanged program is the very same object.
    let plain = bind(&x, var("y"), add(x.clone().upcast(), int(1)));
    let out = mutate(r(&plain), &mut FoldLets::default()).unwrap();
    assert!(ObjectPtr::ptr_eq(&out, &plain));
}

#[test]
fn a_shared_subtree_under_a_substituted_let_is_rewritten_once() {
    let _leaks = LeakCheck::new();
    // let x = 5 in (x + 1) * ((x + 1) + (x + 1)), the sum one object.
    let x = v("x");
    let s = add(x.clone().upcast(), int(1));
    let prog = bind(&x, int(5), mul(s.clone(), add(s.clone(), s.clone())));
    let mut f = FoldLets::default();
    let out = mutate(r(&prog), &mut f).unwrap();
    assert_eq!(show(&out), "72");
    // The let, its value, the two operations, the shared sum once, its `x` and `1`.
    assert_eq!(f.pres, 7);
    // Substituted but not folded (a variable stays): the new sum is shared as the old.
    let y = var("y");
    let s = add(x.clone().upcast(), y.clone());
    let prog = bind(&x, int(5), mul(s.clone(), add(s.clone(), s.clone())));
    let mut f = FoldLets::default();
    let out = mutate(r(&prog), &mut f).unwrap();
    assert_eq!(show(&out), "((5 + y) * ((5 + y) + (5 + y)))");
    let m = out.downcast_ref::<Mul>().unwrap();
    let inner = m.base.rhs.downcast_ref::<Add>().unwrap();
    assert!(ObjectPtr::ptr_eq(&m.base.lhs, &inner.base.lhs));
    assert!(ObjectPtr::ptr_eq(&inner.base.lhs, &inner.base.rhs));
    assert_eq!(
        f.posts, 6,
        "the value `5`, the shared sum once and its `y`, the two operations, the let"
    );
}

#[test]
fn shadowing_a_variable_needs_the_memo_opt_out() {
    let _leaks = LeakCheck::new();
    // let x = 1 in x + (let x = y in x + 2): the inner `let` binds the same object.
    let x = v("x");
    let prog = bind(
        &x,
        int(1),
        add(
            x.clone().upcast(),
            bind(&x, var("y"), add(x.clone().upcast(), int(2))),
        ),
    );
    let mut careful = FoldLets {
        careful: true,
        ..FoldLets::default()
    };
    let out = mutate(r(&prog), &mut careful).unwrap();
    assert_eq!(show(&out), "(1 + let x = y in (x + 2))");
    assert!(careful.scope.is_empty() && careful.rebinds == 0);
    // Without it, the memo gives the inner `x` the outer scope's result: the documented
    // rule (each variable bound once) does not hold for this program.
    let out = mutate(r(&prog), &mut FoldLets::default()).unwrap();
    assert_eq!(show(&out), "(1 + let x = y in 3)");

    // Sibling scopes of one variable over a shared body: each gets its own result.
    let s = add(x.clone().upcast(), int(10));
    let prog = add(bind(&x, int(1), s.clone()), bind(&x, int(2), s.clone()));
    let mut careful = FoldLets {
        careful: true,
        ..FoldLets::default()
    };
    let out = mutate(r(&prog), &mut careful).unwrap();
    assert_eq!(show(&out), "23");
}

#[test]
fn the_memo_opt_out_rewrites_each_occurrence() {
    let _leaks = LeakCheck::new();
    struct Count {
        memo: bool,
        posts: usize,
        asked: usize,
    }
    impl Rewriter for Count {
        type Error = TransformError;
        fn post(&mut self, n: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
            self.posts += 1;
            Ok(fold_bin(n))
        }
        fn memoize(&mut self, n: &ObjectRef) -> bool {
            self.asked += 1;
            // Only the `Int`s opt out.
            self.memo || !n.is::<Int>()
        }
    }
    let one = int(1);
    let s = add(one.clone(), var("y"));
    let root = mul(s.clone(), s.clone());
    drop(one);
    let mut on = Count {
        memo: true,
        posts: 0,
        asked: 0,
    };
    let a = mutate(r(&root), &mut on).unwrap();
    assert!(ObjectPtr::ptr_eq(&a, &root));
    // Mul, the sum once, its two leaves.
    assert_eq!(on.posts, 4);
    // Asked only about the shared sum, at each of its two occurrences: never about a
    // node held once (its `1` and `y`, the root).
    assert_eq!(on.asked, 2);
    let mut off = Count {
        memo: false,
        posts: 0,
        asked: 0,
    };
    let b = mutate(r(&root), &mut off).unwrap();
    assert!(ObjectPtr::ptr_eq(&b, &root));
    assert_eq!(
        off.posts, 4,
        "the `Int` is held once: never memoized anyway"
    );
    // A shared `Int` that opts out is visited at each occurrence.
    let two = int(2);
    let root = add(mul(two.clone(), two.clone()), two.clone());
    let mut off = Count {
        memo: false,
        posts: 0,
        asked: 0,
    };
    let out = mutate(r(&root), &mut off).unwrap();
    assert_eq!(show(&out), "6");
    assert_eq!(off.posts, 5, "three visits of `2`, the product, the sum");
    let mut on = Count {
        memo: true,
        posts: 0,
        asked: 0,
    };
    mutate(r(&root), &mut on).unwrap();
    assert_eq!(on.posts, 3);
}

#[test]
fn child_hook_keeps_and_replaces_children_without_visiting_them() {
    let _leaks = LeakCheck::new();
    struct KeepLhs {
        posts: usize,
        with: ObjectRef,
    }
    impl Rewriter for KeepLhs {
        type Error = TransformError;
        fn child(
            &mut self,
            parent: &ObjectRef,
            f: ChildField,
            _: &ObjectRef,
            _: &[ObjectRef],
        ) -> Result<ChildStep, TransformError> {
            Ok(match (parent.is::<Add>(), f.name(), f.item_index()) {
                (true, Some("lhs"), _) => ChildStep::Keep,
                (true, Some("rhs"), _) => ChildStep::Replace(self.with.clone()),
                (false, None, Some(1)) => ChildStep::Replace(self.with.clone()),
                _ => ChildStep::Visit,
            })
        }
        fn post(&mut self, n: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
            self.posts += 1;
            Ok(match n.downcast_ref::<Int>() {
                Some(i) => int(i.value + 100).into_object_ref(),
                None => n,
            })
        }
    }
    let lhs = int(1);
    let root = mul(add(lhs.clone(), int(2)), int(3));
    let mut p = KeepLhs {
        posts: 0,
        with: int(42).into_object_ref(),
    };
    let out = mutate(r(&root), &mut p).unwrap();
    // `1` kept (not bumped), `2` replaced by `42` (not bumped), `3` bumped.
    assert_eq!(show(&out), "((1 + 42) * 103)");
    let a = out.downcast_ref::<Mul>().unwrap().base.lhs.clone();
    assert!(ObjectPtr::ptr_eq(
        &a.downcast_ref::<Add>().unwrap().base.lhs,
        &lhs
    ));
    assert_eq!(p.posts, 3, "the sum, `3`, the product");
    // Replacing with what is there already changes nothing.
    let same = add(lhs.clone(), int(7));
    let mut p = KeepLhs {
        posts: 0,
        with: same
            .downcast_ref::<Add>()
            .unwrap()
            .base
            .rhs
            .clone()
            .into_object_ref(),
    };
    let out = mutate(r(&same), &mut p).unwrap();
    assert!(ObjectPtr::ptr_eq(&out, &same));

    // In a container (the explicit-stack path), borrowed and from a snapshot.
    let arr = Array::<ObjectPtr<Expr>>::from(vec![int(1), int(2), int(3)]);
    let mut p = KeepLhs {
        posts: 0,
        with: int(42).into_object_ref(),
    };
    let out = mutate(arr.as_object_ptr().as_object_ref(), &mut p).unwrap();
    let out = Array::<ObjectPtr<Expr>>::try_from(Any::from(out)).unwrap();
    let values: Vec<i64> = out
        .iter()
        .map(|i| i.downcast_ref::<Int>().unwrap().value)
        .collect();
    assert_eq!(values, [101, 42, 103]);
    let list: List<Any> = List::new();
    for i in 1..=3 {
        list.push(Any::from(int(i)));
    }
    let out = mutate(list.as_object_ptr().as_object_ref(), &mut p).unwrap();
    assert_eq!(ints(&out), [101, 42, 103]);

    // A replacement that does not fit its field is an error.
    let mut p = KeepLhs {
        posts: 0,
        with: make_object(Stmt {
            base: Object::new(),
        })
        .into_object_ref(),
    };
    let err = mutate(r(&add(int(1), int(2))), &mut p).unwrap_err();
    assert_eq!(
        (err.kind(), err.field()),
        (TransformErrorKind::WrongChildType, Some("rhs"))
    );
}

/// `let v0 = 0 in let v1 = v0 + 1 in … let vn = v(n-1) + 1 in vn`.
fn let_chain(n: usize) -> (ObjectPtr<Expr>, Vec<ObjectPtr<Var>>) {
    let vars: Vec<ObjectPtr<Var>> = (0..=n).map(|i| v(&format!("v{i}"))).collect();
    let mut body: ObjectPtr<Expr> = vars[n].clone().upcast();
    for i in (1..=n).rev() {
        body = bind(&vars[i], add(vars[i - 1].clone().upcast(), int(1)), body);
    }
    (bind(&vars[0], int(0), body), vars)
}

#[test]
fn child_hook_on_a_deep_chain_of_lets_on_a_small_stack() {
    let _leaks = LeakCheck::new();
    let n = scaled(200_000, 1_000);
    on_small_stack(move || {
        let (prog, vars) = let_chain(n);
        let mut f = FoldLets::default();
        let out = mutate(r(&prog), &mut f).unwrap();
        assert_eq!(out.downcast_ref::<Int>().map(|i| i.value), Some(n as i64));
        // Every child asked about once, in both the recursive top and the explicit
        // stack below it: three per `let`, two per sum.
        assert_eq!(f.children, 3 * (n + 1) + 2 * n);
        assert!(f.scope.is_empty());

        // The same through a table.
        let mut t = fold_table();
        let out = t.run(r(&prog), &mut Vec::new()).unwrap();
        assert_eq!(out.downcast_ref::<Int>().map(|i| i.value), Some(n as i64));

        // An error deep down (past the recursion, natively; the chain is shorter under
        // Miri) stops the pass.
        let mut f = FoldLets {
            fail_at: Some(format!("v{}", n.min(190))),
            ..FoldLets::default()
        };
        let err = mutate(r(&prog), &mut f).unwrap_err();
        assert_eq!(err.kind(), TransformErrorKind::Custom);
        assert!(err.to_string().contains("failed at a body"), "{err}");
        t.child::<Bind>(|_, _, _, _, _| Err(TransformError::custom("tr.Bind", "table hook")));
        let err = t.run(r(&prog), &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("table hook"), "{err}");
        drop((prog, vars, out));
    });
}

#[test]
fn errors_from_the_child_hook_stop_the_pass() {
    let _leaks = LeakCheck::new();
    #[derive(Debug, PartialEq)]
    enum PassError {
        Transform(TransformErrorKind),
        Refused(&'static str),
    }
    impl From<TransformError> for PassError {
        fn from(e: TransformError) -> Self {
            PassError::Transform(e.kind())
        }
    }
    struct Refuse(&'static str);
    impl Rewriter for Refuse {
        type Error = PassError;
        fn child(
            &mut self,
            _: &ObjectRef,
            f: ChildField,
            _: &ObjectRef,
            _: &[ObjectRef],
        ) -> Result<ChildStep, PassError> {
            if f.name() == Some(self.0) {
                return Err(PassError::Refused(self.0));
            }
            Ok(ChildStep::Visit)
        }
    }
    let prog = bind(&v("x"), int(1), add(int(2), int(3)));
    assert_eq!(
        mutate(r(&prog), &mut Refuse("rhs")).unwrap_err(),
        PassError::Refused("rhs")
    );
    // In a container's items (the explicit stack from the start).
    let arr = Array::<ObjectPtr<Expr>>::from(vec![int(1), prog.clone()]);
    assert_eq!(
        mutate(arr.as_object_ptr().as_object_ref(), &mut Refuse("body")).unwrap_err(),
        PassError::Refused("body")
    );
    assert!(mutate(r(&prog), &mut Refuse("nothing")).is_ok());
}

/// The fold as a table: the state is the scope.
fn fold_table() -> RewriteTable<Vec<(ObjectPtr<Var>, Option<ObjectRef>)>> {
    let mut t: RewriteTable<Vec<(ObjectPtr<Var>, Option<ObjectRef>)>> = RewriteTable::new();
    t.child::<Bind>(|scope, b, f, _, earlier| {
        if f.is_definition() {
            return Ok(ChildStep::Keep);
        }
        if f.name() == Some("body") {
            let value = earlier.get(1).filter(|x| x.is::<Int>()).cloned();
            scope.push((b.var.clone(), value));
        }
        Ok(ChildStep::Visit)
    })
    .pre::<Var>(|scope, x| {
        let found = scope.iter().rev().find(|(y, _)| ObjectPtr::ptr_eq(y, x));
        Ok(found.and_then(|(_, value)| value.clone()))
    })
    .post::<Bind>(|scope, b, _| match scope.pop() {
        Some((_, Some(_))) => Ok(b.body.clone().into_object_ref()),
        Some((_, None)) => Ok(b.into_object_ref()),
        None => Err(TransformError::custom("tr.Bind", "unbalanced scope")),
    })
    .post::<BinOp>(|_, b, _| Ok(fold_bin(b.into_object_ref())));
    t
}

#[test]
fn rewrite_table_child_hooks_substitute_through_binders() {
    let _leaks = LeakCheck::new();
    let t = fold_table();
    let x = v("x");
    let s = add(x.clone().upcast(), var("y"));
    let prog = bind(&x, add(int(2), int(3)), mul(s.clone(), s.clone()));
    let mut scope = Vec::new();
    let out = t.run(r(&prog), &mut scope).unwrap();
    assert!(scope.is_empty());
    assert_eq!(show(&out), "((5 + y) * (5 + y))");
    let m = out.downcast_ref::<Mul>().unwrap();
    assert!(ObjectPtr::ptr_eq(&m.base.lhs, &m.base.rhs), "one memo");
    assert!(format!("{t:?}").contains("child"));

    // A hook for a parent type applies to its descendants; the memo test of the table.
    let mut t: RewriteTable<usize> = RewriteTable::new();
    t.child::<BinOp>(|n, _, f, _, _| {
        *n += 1;
        Ok(if f.name() == Some("lhs") {
            ChildStep::Replace(int(0).into_object_ref())
        } else {
            ChildStep::Visit
        })
    })
    .memoize(|_, _| false);
    let two = int(2);
    let prog = mul(add(int(1), two.clone()), two.clone());
    let mut n = 0;
    let out = t.run(r(&prog), &mut n).unwrap();
    assert_eq!(show(&out), "(0 * 2)");
    assert_eq!(n, 2, "the product's two children; the sum was replaced");
}
