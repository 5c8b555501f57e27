//! The mutable containers `List<T>` (`ffi.List`, 75) and `Dict<K, V>` (`ffi.Dict`, 76):
//! one shared object that every holder sees change, checked typed reads, `Any`,
//! reflected fields, function arguments and returns, the printer, threads, and cycles
//! (which leak until broken by hand, print as back-references, and never hang).
//!
//! Every test starts with a [`LeakCheck`].

use object_containers::{
    Array, ArrayError, Dict, DictObj, Function, List, ListObj, Map, String, TypeError,
};
use object_core::prelude::*;
use object_core::reflection::{create, get_attr};
use object_core::{type_index as ti, Any};
use object_tests::{native_or_miri, scaled, LeakCheck};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};

#[derive(Object)]
#[repr(C)]
#[object(key = "mut.Holder")]
struct Holder {
    base: Object,
    items: List<i64>,
    names: Dict<String, Any>,
}

#[test]
fn static_indices_and_keys() {
    let _leaks = LeakCheck::new();
    let l: List = List::new();
    let d: Dict = Dict::new();
    assert_eq!(Any::from(l).type_index(), ti::LIST);
    assert_eq!(Any::from(d).type_index(), ti::DICT);
    assert_eq!(<ListObj as ObjectType>::type_index(), 75);
    assert_eq!(<DictObj as ObjectType>::type_index(), 76);
    assert_eq!(<ListObj as ObjectType>::TYPE_KEY, "ffi.List");
    assert_eq!(<DictObj as ObjectType>::TYPE_KEY, "ffi.Dict");
}

#[test]
fn every_holder_sees_a_list_change() {
    let _leaks = LeakCheck::new();
    let a: List<i64> = List::new();
    let b = a.clone();
    a.push(1);
    b.push(2);
    assert_eq!(a.to_vec().unwrap(), [1, 2]);
    assert_eq!(b.set(0, 10).unwrap().as_int(), Some(1));
    assert_eq!(a.get(0), Ok(10));
    a.insert(1, 5).unwrap();
    assert_eq!(b.to_vec().unwrap(), [10, 5, 2]);
    assert_eq!(b.remove(1).unwrap().as_int(), Some(5));
    assert_eq!(a.pop().and_then(|v| v.as_int()), Some(2));
    assert_eq!(a.len(), 1);
    assert_eq!(a.get(3), Err(ArrayError::OutOfRange { index: 3, len: 1 }));
    assert_eq!(
        a.insert(9, 1),
        Err(ArrayError::OutOfRange { index: 9, len: 1 })
    );
    b.clear();
    assert!(a.is_empty());
    assert!(List::ptr_eq(&a, &b));

    // Through `Any` it is still the same object.
    let any = Any::from(a.clone());
    let back: List<i64> = List::try_from(any).unwrap();
    back.push(7);
    assert_eq!(a.to_vec().unwrap(), [7]);

    // An `Array` snapshot does not follow.
    let frozen: Array<Any> = a.to_array();
    a.push(8);
    assert_eq!((frozen.len(), a.len()), (1, 2));
}

#[test]
fn every_holder_sees_a_dict_change() {
    let _leaks = LeakCheck::new();
    let d: Dict<String, i64> = Dict::new();
    let alias = d.clone();
    assert_eq!(d.insert(String::from("b"), 1), None);
    alias.insert(String::from("a"), 2);
    assert_eq!(d.get("a").unwrap(), Some(2));
    assert_eq!(d.get("zz").unwrap(), None);
    assert!(d.contains_key("b"));
    // Replacing keeps the place; insertion order otherwise.
    assert_eq!(
        alias.insert(String::from("b"), 3).and_then(|v| v.as_int()),
        Some(1)
    );
    let entries: Vec<(std::string::String, i64)> = d
        .to_vec()
        .unwrap()
        .into_iter()
        .map(|(k, v)| (k.as_str().to_owned(), v))
        .collect();
    assert_eq!(entries, [("b".to_owned(), 3), ("a".to_owned(), 2)]);
    assert_eq!(d.remove("b").and_then(|v| v.as_int()), Some(3));
    assert_eq!(alias.len(), 1);
    let snapshot: Map<Any, Any> = d.to_map();
    d.clear();
    assert!(alias.is_empty());
    assert_eq!(snapshot.len(), 1);
}

#[test]
fn typed_reads_are_checked_when_another_view_stores_anything() {
    let _leaks = LeakCheck::new();
    let ints: List<i64> = [1, 2].into_iter().collect();
    let any: List<Any> = ints.cast().unwrap();
    any.push(Any::from("three"));
    match ints.get(2) {
        Err(ArrayError::WrongType { index: 2, error }) => {
            assert_eq!(error, TypeError::new("int", "ffi.String"))
        }
        other => panic!("expected a wrong-type error, got {other:?}"),
    }
    assert!(ints.to_vec().is_err());
    assert!(any.cast::<i64>().is_err());
    assert!(List::<i64>::try_from(Any::from(any.clone())).is_err());

    let d: Dict<String, i64> = Dict::new();
    let loose: Dict<Any, Any> = d.cast().unwrap();
    loose.insert(Any::from(String::from("x")), Any::from(1.5));
    assert!(d.get("x").is_err());
    assert!(loose.cast::<String, i64>().is_err());
}

#[test]
fn reflected_fields_functions_and_create() {
    let _leaks = LeakCheck::new();
    let items: List<i64> = [1].into_iter().collect();
    let names: Dict<String, Any> = Dict::new();
    let h = make_object(Holder {
        base: Object::new(),
        items: items.clone(),
        names: names.clone(),
    });
    // The field is the same list: a change through the handle shows in the object.
    items.push(2);
    assert_eq!(h.items.to_vec().unwrap(), [1, 2]);
    let field = get_attr(h.as_object_ref(), "items").unwrap();
    assert_eq!(field.type_key(), "ffi.List");
    let built = create(
        "mut.Holder",
        [("items", field), ("names", Any::from(names.clone()))],
    )
    .unwrap();
    let built = built.downcast_ref::<Holder>().unwrap();
    assert!(List::ptr_eq(&built.items, &items));

    // Arguments and returns: the callee mutates the caller's list.
    let push = Function::from_typed(|l: List<i64>, v: i64| {
        l.push(v);
        l
    });
    let (arg, three) = (Any::from(items.clone()), Any::from(3));
    let back = push.call(&[arg.view(), three.view()]).unwrap();
    assert_eq!(items.to_vec().unwrap(), [1, 2, 3]);
    assert!(List::ptr_eq(&List::<i64>::try_from(back).unwrap(), &items));
    let set = Function::from_typed(|d: Dict<String, Any>| {
        d.insert(String::from("k"), Any::from(1));
    });
    set.call_with([&names]).unwrap();
    assert_eq!(names.get("k").unwrap().and_then(|v| v.as_int()), Some(1));
}

#[test]
fn printing() {
    let _leaks = LeakCheck::new();
    let l: List<Any> = [Any::from(1), Any::from("x")].into_iter().collect();
    assert_eq!(format!("{l:?}"), r#"[1, "x"]"#);
    let d: Dict<String, Any> = Dict::new();
    d.insert(String::from("l"), Any::from(l.clone()));
    assert_eq!(format!("{d:?}"), r#"{"l": [1, "x"]}"#);
}

#[test]
fn cycles_print_compare_and_leak_until_broken() {
    let _leaks = LeakCheck::new();
    let l: List<Any> = List::new();
    l.push(Any::from(1));
    l.push(Any::from(l.clone()));
    assert_eq!(format!("{l:?}"), "ffi.List #1 [1, #1]");
    assert!(l == l.clone());
    let other: List<Any> = List::new();
    assert!(l != other);

    let d: Dict<Any, Any> = Dict::new();
    d.insert(Any::from("self"), Any::from(d.clone()));
    d.insert(Any::from(d.clone()), Any::from("key"));
    assert_eq!(format!("{d:?}"), r#"ffi.Dict #1 {"self": #1, #1: "key"}"#);

    // Through each other.
    let a: List<Any> = List::new();
    let b: Dict<String, Any> = Dict::new();
    a.push(Any::from(b.clone()));
    b.insert(String::from("a"), Any::from(a.clone()));
    assert_eq!(format!("{a:?}"), r#"ffi.List #1 [{"a": #1}]"#);

    // Broken by hand, everything is freed (the leak check would fail otherwise).
    l.clear();
    d.clear();
    b.clear();
}

/// An object whose `Debug` makes a dict hold itself, once: printed inside that dict,
/// it changes the dict between the printer's counting pass and its printing pass.
#[derive(Object)]
#[repr(C)]
#[object(key = "mut.SelfInserter", opaque)]
struct SelfInserter {
    base: Object,
    dict: Mutex<Option<Dict<Any, Any>>>,
}

impl core::fmt::Debug for SelfInserter {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let dict = self
            .dict
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(d) = dict {
            d.insert(Any::from("self"), Any::from(d.clone()));
        }
        f.write_str("inserter")
    }
}

/// What is printed is what was counted: each container's contents are copied once per
/// print, so a dict that comes to hold itself while it is printed is printed as it was
/// (and as a back-reference the next time), never unfolded.
#[test]
fn a_dict_changed_while_printed_prints_as_counted() {
    let _leaks = LeakCheck::new();
    let d: Dict<Any, Any> = Dict::new();
    let inserter = make_object(SelfInserter {
        base: Object::new(),
        dict: Mutex::new(Some(d.clone())),
    });
    d.insert(Any::from("i"), Any::from(inserter));
    // The first print's counting pass makes the dict hold itself.
    assert_eq!(format!("{d:?}"), r#"{"i": inserter}"#);
    assert_eq!(d.len(), 2);
    assert_eq!(
        format!("{d:?}"),
        r#"ffi.Dict #1 {"i": inserter, "self": #1}"#
    );
    d.clear();
}

/// An object whose `Debug` shows itself as its child from its second call on, reading
/// its contents without `print_snapshot`: the printer's two walks see different graphs.
#[derive(Object)]
#[repr(C)]
#[object(key = "mut.Shifty", opaque)]
struct Shifty {
    base: Object,
    calls: AtomicU32,
    me: Mutex<Option<ObjectRef>>,
}

impl core::fmt::Debug for Shifty {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.calls.fetch_add(1, Ordering::Relaxed) == 0 {
            return f.write_str("shifty");
        }
        let me = self
            .me
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        f.debug_list().entries(me.iter()).finish()
    }
}

/// An object the printing walk reaches again although the counting walk saw it once
/// (a type whose `Debug` changed its mind) is printed in full once, then elided.
#[test]
fn an_object_is_printed_in_full_at_most_once() {
    let _leaks = LeakCheck::new();
    let s = make_object(Shifty {
        base: Object::new(),
        calls: AtomicU32::new(0),
        me: Mutex::new(None),
    });
    *s.me.lock().unwrap() = Some(s.clone().into_object_ref());
    assert_eq!(format!("{s:?}"), "[mut.Shifty { … }]");
    s.me.lock().unwrap().take();
}

/// Whether `text`, a print of a dict of at most `max_entries` entries that may hold
/// itself, is consistent: the dict printed once (labelled if it holds itself, every
/// other occurrence `#1`), and its length bounded by its entries.
fn consistent_dict_text(text: &str, max_entries: usize) -> bool {
    let holds_itself = text.contains(r#""self""#);
    let label_ok = if holds_itself {
        text.starts_with("ffi.Dict #1 {") && text.contains(r#""self": #1"#)
    } else {
        text.starts_with('{')
    };
    // An entry prints as at most `"self": #1, ` or `63: 123456789, `.
    label_ok && text.matches("ffi.Dict").count() <= 1 && text.len() <= 16 + 32 * max_entries
}

/// Another thread makes a dict hold itself and lets go again, and grows it, while this
/// one prints it: every text is consistent with one state of the dict (before the fix,
/// a print whose counting pass saw the dict without itself and whose printing pass saw
/// it with itself unfolded the dict 96 levels deep).
#[test]
fn printing_a_dict_another_thread_changes() {
    let _leaks = LeakCheck::new();
    let rounds = scaled(20_000, 20);
    let d: Dict<Any, Any> = Dict::new();
    let stop = AtomicBool::new(false);
    let bad = std::thread::scope(|s| {
        s.spawn(|| {
            let mut i = 0i64;
            while !stop.load(Ordering::Relaxed) {
                d.insert(Any::from("self"), Any::from(d.clone()));
                d.insert(Any::from(i % 64), Any::from(i));
                drop(d.remove("self"));
                i += 1;
            }
        });
        let bad = (0..rounds)
            .map(|_| format!("{d:?}"))
            .find(|text| !consistent_dict_text(text, 65));
        stop.store(true, Ordering::Relaxed);
        bad
    });
    d.clear();
    if let Some(text) = bad {
        panic!(
            "an inconsistent print ({} bytes): {}…",
            text.len(),
            text.chars().take(300).collect::<std::string::String>()
        );
    }
}

#[test]
fn threads_share_one_list() {
    let _leaks = LeakCheck::new();
    let n = scaled(2_000, 50);
    let l: List<i64> = List::new();
    let d: Dict<i64, i64> = Dict::new();
    std::thread::scope(|s| {
        for t in 0..4i64 {
            let (l, d) = (l.clone(), d.clone());
            s.spawn(move || {
                for i in 0..n as i64 {
                    l.push(t);
                    d.insert(t * 1_000_000 + i, i);
                    let _ = l.get(0);
                    if i % 7 == 0 {
                        let _ = format!("{l:?}");
                    }
                }
            });
        }
    });
    assert_eq!(l.len(), 4 * n);
    assert_eq!(d.len(), 4 * n);
    let mut counts = [0usize; 4];
    for v in l.to_vec().unwrap() {
        counts[v as usize] += 1;
    }
    assert_eq!(counts, [n; 4]);
}

#[test]
fn nested_typed_views() {
    let _leaks = LeakCheck::new();
    let inner: List<i64> = [1].into_iter().collect();
    let outer: List<List<i64>> = List::new();
    outer.push(inner.clone());
    outer.get(0).unwrap().push(2);
    assert_eq!(inner.to_vec().unwrap(), [1, 2]);
    // An `Array` of lists reads them as handles to the same objects.
    let arr: Array<List<i64>> = vec![inner.clone()].into();
    arr[0].push(3);
    assert_eq!(inner.len(), 3);
    // A list that contains itself can be viewed (the item check reads a snapshot).
    let selfish: List<Any> = List::new();
    selfish.push(Any::from(selfish.clone()));
    assert!(selfish.cast::<List<Any>>().is_ok());
    selfish.clear();
}

// ---------------------------------------------------------------------------------
// Models: random operation sequences against `Vec` and an ordered association list,
// applied through two handles of the same object (which must agree at every step).
// ---------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum ListOp {
    Push(i64),
    Pop,
    Set(usize, i64),
    Insert(usize, i64),
    Remove(usize),
    Clear,
}

fn list_op() -> impl Strategy<Value = ListOp> {
    prop_oneof![
        4 => any::<i64>().prop_map(ListOp::Push),
        1 => Just(ListOp::Pop),
        2 => (0usize..12, any::<i64>()).prop_map(|(i, v)| ListOp::Set(i, v)),
        2 => (0usize..12, any::<i64>()).prop_map(|(i, v)| ListOp::Insert(i, v)),
        2 => (0usize..12).prop_map(ListOp::Remove),
        1 => Just(ListOp::Clear),
    ]
}

#[derive(Debug, Clone)]
enum DictOp {
    Insert(i64, i64),
    Remove(i64),
    Clear,
}

fn dict_op() -> impl Strategy<Value = DictOp> {
    prop_oneof![
        5 => (0i64..10, any::<i64>()).prop_map(|(k, v)| DictOp::Insert(k, v)),
        2 => (0i64..10).prop_map(DictOp::Remove),
        1 => Just(DictOp::Clear),
    ]
}

fn config() -> Config {
    Config {
        cases: scaled(128, native_or_miri(8, 2)) as u32,
        failure_persistence: None,
        ..Config::default()
    }
}

#[test]
fn list_matches_vec_model_through_two_handles() {
    let _leaks = LeakCheck::new();
    let ops = prop::collection::vec((list_op(), any::<bool>()), 0..native_or_miri(40, 8));
    let mut runner = TestRunner::new(config());
    let result = runner.run(&ops, |ops| {
        let a: List<i64> = List::new();
        let b = a.clone();
        let mut model: Vec<i64> = Vec::new();
        for (op, via_b) in ops {
            let l = if via_b { &b } else { &a };
            match op {
                ListOp::Push(v) => {
                    l.push(v);
                    model.push(v);
                }
                ListOp::Pop => {
                    prop_assert_eq!(l.pop().and_then(|v| v.as_int()), model.pop());
                }
                ListOp::Set(i, v) => {
                    let got = l.set(i, v).map(|old| old.as_int());
                    if i < model.len() {
                        prop_assert_eq!(got, Ok(Some(std::mem::replace(&mut model[i], v))));
                    } else {
                        prop_assert!(got.is_err());
                    }
                }
                ListOp::Insert(i, v) => {
                    let got = l.insert(i, v);
                    if i <= model.len() {
                        prop_assert!(got.is_ok());
                        model.insert(i, v);
                    } else {
                        prop_assert!(got.is_err());
                    }
                }
                ListOp::Remove(i) => {
                    let got = l.remove(i).map(|v| v.as_int());
                    if i < model.len() {
                        prop_assert_eq!(got, Ok(Some(model.remove(i))));
                    } else {
                        prop_assert!(got.is_err());
                    }
                }
                ListOp::Clear => {
                    l.clear();
                    model.clear();
                }
            }
            prop_assert_eq!(a.to_vec().unwrap(), model.clone());
            prop_assert_eq!(b.len(), model.len());
        }
        // A JSON graph round trip gives an equal (new) list.
        let text = object_json::to_json_graph(&Any::from(a.clone())).unwrap();
        let back = List::<i64>::try_from(object_json::from_json_graph(&text).unwrap()).unwrap();
        prop_assert_eq!(back.to_vec().unwrap(), model);
        prop_assert!(!List::ptr_eq(&back, &a));
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn dict_matches_ordered_model_through_two_handles() {
    let _leaks = LeakCheck::new();
    let ops = prop::collection::vec((dict_op(), any::<bool>()), 0..native_or_miri(40, 8));
    let mut runner = TestRunner::new(config());
    let result = runner.run(&ops, |ops| {
        let a: Dict<i64, i64> = Dict::new();
        let b = a.clone();
        let mut model: Vec<(i64, i64)> = Vec::new();
        for (op, via_b) in ops {
            let d = if via_b { &b } else { &a };
            match op {
                DictOp::Insert(k, v) => {
                    let old = d.insert(k, v).and_then(|x| x.as_int());
                    let expected = match model.iter_mut().find(|(mk, _)| *mk == k) {
                        Some(slot) => Some(std::mem::replace(&mut slot.1, v)),
                        None => {
                            model.push((k, v));
                            None
                        }
                    };
                    prop_assert_eq!(old, expected);
                }
                DictOp::Remove(k) => {
                    let old = d.remove(k).and_then(|x| x.as_int());
                    let expected = model
                        .iter()
                        .position(|(mk, _)| *mk == k)
                        .map(|i| model.remove(i).1);
                    prop_assert_eq!(old, expected);
                }
                DictOp::Clear => {
                    d.clear();
                    model.clear();
                }
            }
            prop_assert_eq!(a.to_vec().unwrap(), model.clone());
            for &(k, v) in &model {
                prop_assert_eq!(b.get(k).unwrap(), Some(v));
            }
        }
        let text = object_json::to_json_graph(&Any::from(a.clone())).unwrap();
        let back =
            Dict::<i64, i64>::try_from(object_json::from_json_graph(&text).unwrap()).unwrap();
        prop_assert_eq!(back.to_vec().unwrap(), model);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// An object whose `Drop` uses the containers it was in.
#[derive(Object)]
#[repr(C)]
#[object(key = "mut.Reentrant")]
struct Reentrant {
    base: Object,
    #[object(skip)]
    list: Option<List<Any>>,
    #[object(skip)]
    dict: Option<Dict<Any, Any>>,
}

impl Drop for Reentrant {
    fn drop(&mut self) {
        if let Some(l) = &self.list {
            l.push(Any::from(l.len() as i64));
        }
        if let Some(d) = &self.dict {
            d.insert(Any::from("dropped"), Any::from(d.len() as i64));
        }
    }
}

fn reentrant(list: Option<&List<Any>>, dict: Option<&Dict<Any, Any>>) -> Any {
    Any::from(make_object(Reentrant {
        base: Object::new(),
        list: list.cloned(),
        dict: dict.cloned(),
    }))
}

/// Removed items are released after the lock is: an item whose `Drop` uses the same
/// container (as the last reference goes) neither deadlocks nor panics.
#[test]
fn removed_items_are_released_outside_the_lock() {
    let _leaks = LeakCheck::new();
    let l: List<Any> = List::new();
    l.push(reentrant(Some(&l), None));
    l.clear(); // the item's Drop pushes into `l`
    assert_eq!(l.to_vec().unwrap(), [Any::from(0)]);
    l.push(reentrant(Some(&l), None));
    drop(l.pop()); // dropped by us, after the lock
    l.push(reentrant(Some(&l), None));
    drop(l.set(1, Any::from(5)));
    drop(l.remove(1));
    l.push(reentrant(Some(&l), None));
    l.clear();

    let d: Dict<Any, Any> = Dict::new();
    d.insert(Any::from("k"), reentrant(None, Some(&d)));
    d.clear();
    assert_eq!(d.get("dropped").unwrap().and_then(|v| v.as_int()), Some(0));
    d.insert(Any::from("k"), reentrant(None, Some(&d)));
    drop(d.insert(Any::from("k"), Any::from(1))); // the replaced value
    d.insert(Any::from("k2"), reentrant(None, Some(&d)));
    drop(d.remove("k2"));
    d.clear();
}
