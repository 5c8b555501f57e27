//! Packed functions and modules: making functions from packed and typed callables (0 to
//! 8 arguments of every supported kind, every supported return kind), calling them
//! (`call`, `call_with`, the typed view), errors across the C ABI (argument count and
//! type errors, panics caught at the boundary, frames collected innermost first, the
//! thread-local error slot), the global registry (including races), functions as values
//! (in containers, an `Any`, a derived object's field, returned from functions), the
//! lifetime of what callables capture, many threads calling one function, and modules
//! with imports.
//!
//! Every test starts with a [`LeakCheck`]: it serializes the tests of this binary and
//! checks that `live_objects()` is back to where it started when the test ends.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};

use object_containers::{
    error_mark, get_global, list_globals, register_global, register_global_override, remove_global,
    set_last_error, take_error_since, take_last_error, Array, ArrayObj, Error, FromArg, Function,
    FunctionObj, Map, Module, String,
};
use object_core::{make_object, Any, AnyView, Object, ObjectPtr, TypeError};
use object_tests::{native_or_miri, scaled, DropCounter, Tracked};

// ---------------------------------------------------------------------------------
// Leak guard.
// ---------------------------------------------------------------------------------

use object_tests::LeakCheck;

// ---------------------------------------------------------------------------------
// Allocation counter (per thread), to check the typed view's "no allocation" promise.
// ---------------------------------------------------------------------------------

struct CountingAlloc;

std::thread_local! {
    static THREAD_ALLOCS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counter is a const-initialized
// thread-local without a destructor, so it never allocates.
unsafe impl std::alloc::GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let _ = THREAD_ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: the caller's contract is `System.alloc`'s.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from `System` with this layout.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new: usize) -> *mut u8 {
        let _ = THREAD_ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: as for `realloc` on `System`.
        unsafe { std::alloc::System.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// How many allocations `f` made on this thread.
fn allocations_in<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = THREAD_ALLOCS.with(std::cell::Cell::get);
    let v = f();
    (v, THREAD_ALLOCS.with(std::cell::Cell::get) - before)
}

// ---------------------------------------------------------------------------------
// Object types.
// ---------------------------------------------------------------------------------

/// A node type with a subtype, to pass as `ObjectPtr<Node>` arguments.
#[derive(Object, Clone)]
#[repr(C)]
#[object(key = "ftest.Node", slots = 2)]
struct Node {
    base: Object,
    value: i64,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "ftest.Leaf", parent = Node, final)]
struct Leaf {
    base: Node,
    label: std::string::String,
}

/// An unrelated object type, for type errors.
#[derive(Object)]
#[repr(C)]
#[object(key = "ftest.Other", final)]
struct Other {
    base: Object,
}

/// A derived object with a function field.
#[derive(Object)]
#[repr(C)]
#[object(key = "ftest.Holder", final)]
struct Holder {
    base: Object,
    f: Function,
}

/// An object that counts its drops.
#[derive(Object)]
#[repr(C)]
#[object(key = "ftest.Tracked", final)]
struct TrackedObj {
    base: Object,
    #[object(skip)]
    _tracked: Tracked,
}

fn node(value: i64) -> ObjectPtr<Node> {
    make_object(Node {
        base: Object::new(),
        value,
    })
}

fn leaf(value: i64, label: &str) -> ObjectPtr<Leaf> {
    make_object(Leaf {
        base: Node {
            base: Object::new(),
            value,
        },
        label: label.to_owned(),
    })
}

fn i64s(v: &[i64]) -> Array<i64> {
    v.to_vec().into()
}

fn str_map(entries: &[(&str, i64)]) -> Map<String, i64> {
    entries.iter().map(|&(k, v)| (String::from(k), v)).collect()
}

/// The error of a call that must fail.
#[track_caller]
fn fails(r: Result<Any, Error>) -> Error {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e,
    }
}

// ---------------------------------------------------------------------------------
// 1. Making and calling.
// ---------------------------------------------------------------------------------

#[test]
fn packed_function_receives_views_and_returns_values() {
    let _guard = LeakCheck::new();
    // Sums ints, counts strings, returns a description of what it saw.
    let describe = Function::from_packed(|args: &[AnyView<'_>]| {
        let mut sum = 0i64;
        let mut strs = Vec::new();
        let mut objects = Vec::new();
        for a in args {
            if let Some(i) = a.as_int() {
                sum += i;
            } else if let Some(s) = a.as_str() {
                strs.push(s.to_owned());
            } else if let Some(o) = a.as_object() {
                objects.push(o.type_key());
            }
        }
        Ok(Any::from(format!(
            "n={} sum={sum} strs={strs:?} objs={objects:?}",
            args.len()
        )))
    });
    assert!(describe.name().is_none());
    let n = node(1);
    let s = String::from("an ffi.String object");
    let out = describe
        .call(&[
            AnyView::from(40i64),
            AnyView::from("raw"),
            AnyView::from(&n),
            AnyView::from(2i32),
            AnyView::from(&s),
            AnyView::from(true),
        ])
        .unwrap();
    assert_eq!(
        out.as_str(),
        Some(r#"n=6 sum=42 strs=["raw", "an ffi.String object"] objs=["ftest.Node"]"#)
    );
    assert_eq!(
        describe.call(&[]).unwrap().as_str(),
        Some("n=0 sum=0 strs=[] objs=[]")
    );
    // The arguments are borrowed: no count change survives the call.
    assert_eq!(ObjectPtr::strong_count(&n), 1);
    assert_eq!(ObjectPtr::strong_count(s.as_heap_object().unwrap()), 1);

    // A packed function returning an object hands over one reference.
    let keep = n.clone();
    let get = Function::from_packed(move |_args: &[AnyView<'_>]| Ok(Any::from(keep.clone())));
    let r = get.call(&[]).unwrap();
    assert_eq!(ObjectPtr::strong_count(&n), 3, "n, the capture, the result");
    let back = ObjectPtr::<Node>::try_from(r).unwrap();
    assert!(ObjectPtr::ptr_eq(&back, &n));
    drop((back, get));
    assert_eq!(ObjectPtr::strong_count(&n), 1);

    // A packed function's own error passes through with its frame.
    let named = Function::from_packed_named(Some("checker"), |args: &[AnyView<'_>]| {
        if args.is_empty() {
            Err(Error::value_error("need something"))
        } else {
            Ok(Any::NONE)
        }
    });
    assert_eq!(named.name(), Some("checker"));
    assert!(named.call(&[AnyView::NONE]).unwrap().is_none());
    let e = fails(named.call(&[]));
    assert_eq!(
        (e.kind().as_str(), e.message(), e.frames()),
        ("ValueError", "need something", &["checker".to_owned()][..])
    );
    // An anonymous function still adds a frame.
    let anon = Function::from_packed(|_args: &[AnyView<'_>]| Err(Error::from("nope")));
    let e = fails(anon.call(&[]));
    assert_eq!(e.kind(), "Error");
    assert_eq!(e.frames(), ["<anonymous function>"]);
    assert_eq!(format!("{anon:?}"), "Function(<anonymous>)");
    assert_eq!(format!("{named:?}"), "Function(checker)");
}

#[test]
fn typed_closures_of_every_arity() {
    let _guard = LeakCheck::new();
    let n = node(5);
    let l = leaf(7, "seven");
    let s_obj = String::from("object string");
    let arr = i64s(&[1, 2, 3]);
    let map = str_map(&[("a", 10), ("b", 20)]);
    let arr_any = Any::from(arr.clone());
    let map_any = Any::from(map.clone());
    let inc = Function::from_typed(|x: i64| x + 1);

    let f0 = Function::from_typed(|| 42i64);
    let f1 = Function::from_typed(|s: std::string::String| s.len() as i64);
    let f2 = Function::from_typed(|a: i64, b: i32| a * i64::from(b));
    let f3 = Function::from_typed(|b: bool, x: f64, s: String| format!("{b} {x} {}", s.as_str()));
    let f4 = Function::from_typed(
        |e: ObjectPtr<Node>, a: Array<i64>, m: Map<String, i64>, any: Any| {
            let sum: i64 = a.iter().sum();
            let b = *m.get("b").unwrap_or(&0);
            e.value + sum + b + any.as_int().unwrap_or(1000)
        },
    );
    let f5 = Function::from_typed(
        |o: Option<i64>,
         f: Function,
         i: i64,
         s: std::string::String,
         flag: bool|
         -> Result<i64, Error> {
            let base = f.typed::<(i64,), i64>().call((i,))?;
            Ok(base + o.unwrap_or(-100) + s.len() as i64 + i64::from(flag))
        },
    );
    let f6 = Function::from_typed(
        |a: i32, b: i64, c: f64, d: bool, e: String, f: ObjectPtr<Node>| {
            format!("{a}|{b}|{c}|{d}|{}|{}", e.as_str(), f.value)
        },
    );
    let f7 = Function::from_typed(
        |a: Any, b: Option<i64>, c: Map<String, i64>, d: Array<i64>, e: i64, f: i32, g: bool| {
            let mut out: Array<i64> = Array::new();
            out.push(a.as_int().unwrap_or(-1));
            out.push(b.unwrap_or(-2));
            out.push(c.len() as i64);
            out.push(d.len() as i64);
            out.push(e);
            out.push(i64::from(f));
            out.push(i64::from(g));
            out
        },
    );
    let f8 = Function::from_typed(
        |a: i64,
         b: i32,
         c: bool,
         d: f64,
         e: std::string::String,
         f: String,
         g: ObjectPtr<Node>,
         h: Array<i64>| {
            format!("{a},{b},{c},{d},{e},{},{},{}", f.as_str(), g.value, h.len())
        },
    );

    assert_eq!(f0.call(&[]).unwrap(), Any::from(42));
    assert_eq!(f1.call(&[AnyView::from("four")]).unwrap(), Any::from(4));
    assert_eq!(f1.call(&[AnyView::from(&s_obj)]).unwrap(), Any::from(13));
    assert_eq!(
        f2.call(&[AnyView::from(-6i64), AnyView::from(7i32)])
            .unwrap(),
        Any::from(-42)
    );
    assert_eq!(
        f3.call(&[AnyView::from(true), AnyView::from(1.5), AnyView::from("s")])
            .unwrap()
            .as_str(),
        Some("true 1.5 s")
    );
    // A Leaf is a Node: sub-types pass for their parents.
    assert_eq!(
        f4.call(&[
            AnyView::from(&l),
            AnyView::from(&arr_any),
            AnyView::from(&map_any),
            AnyView::from(100i64)
        ])
        .unwrap(),
        Any::from(7 + 6 + 20 + 100)
    );
    assert_eq!(
        f4.call(&[
            AnyView::from(&n),
            AnyView::from(arr.as_object_ptr()),
            AnyView::from(map.as_object_ptr()),
            AnyView::from("not an int")
        ])
        .unwrap(),
        Any::from(5 + 6 + 20 + 1000)
    );
    assert_eq!(
        f5.call(&[
            AnyView::NONE,
            AnyView::from(&inc),
            AnyView::from(9i64),
            AnyView::from("abc"),
            AnyView::from(true)
        ])
        .unwrap(),
        Any::from(10 - 100 + 3 + 1)
    );
    assert_eq!(
        f5.call(&[
            AnyView::from(50i64),
            AnyView::from(&inc),
            AnyView::from(9i64),
            AnyView::from(""),
            AnyView::from(false)
        ])
        .unwrap(),
        Any::from(10 + 50)
    );
    assert_eq!(
        f6.call(&[
            AnyView::from(-1i32),
            AnyView::from(i64::MAX),
            AnyView::from(0.25),
            AnyView::from(false),
            AnyView::from(&s_obj),
            AnyView::from(&l)
        ])
        .unwrap()
        .as_str(),
        Some(format!("-1|{}|0.25|false|object string|7", i64::MAX).as_str())
    );
    let out = f7
        .call(&[
            AnyView::from(3i64),
            AnyView::from(4i64),
            AnyView::from(&map_any),
            AnyView::from(&arr_any),
            AnyView::from(5i64),
            AnyView::from(6i32),
            AnyView::from(true),
        ])
        .unwrap();
    let out = Array::<i64>::try_from(out).unwrap();
    assert_eq!(
        out.iter().copied().collect::<Vec<_>>(),
        [3, 4, 2, 3, 5, 6, 1]
    );
    let out = f8
        .call(&[
            AnyView::from(1i64),
            AnyView::from(2i32),
            AnyView::from(true),
            AnyView::from(0.5),
            AnyView::from("std"),
            AnyView::from("obj"),
            AnyView::from(&n),
            AnyView::from(&arr_any),
        ])
        .unwrap();
    assert_eq!(out.as_str(), Some("1,2,true,0.5,std,obj,5,3"));

    // The same through the typed view, arguments as a tuple.
    let t8 = f8.typed::<(
        i64,
        i32,
        bool,
        f64,
        &str,
        &String,
        &ObjectPtr<Leaf>,
        &ObjectPtr<ArrayObj>,
    ), std::string::String>();
    assert_eq!(
        t8.call((9, 8, false, -2.0, "a", &s_obj, &l, arr.as_object_ptr()))
            .unwrap(),
        "9,8,false,-2,a,object string,7,3"
    );
    assert_eq!(f0.typed::<(), i64>().call(()).unwrap(), 42);
    assert_eq!(f1.typed::<(&str,), i64>().call(("hello",)).unwrap(), 5);
    // `Option<i64>` has no view conversion; a view of None stands in for it.
    let t7 = f7.typed::<(i64, AnyView<'_>, &Any, &Any, i64, i32, bool), Array<i64>>();
    let out = t7
        .call((0, AnyView::NONE, &map_any, &arr_any, -5, -6, false))
        .unwrap();
    assert_eq!(
        out.iter().copied().collect::<Vec<_>>(),
        [0, -2, 2, 3, -5, -6, 0]
    );
    drop((f0, f1, f2, f3, f4, f5, f6, f7, f8, t8, inc));
    assert_eq!(ObjectPtr::strong_count(&n), 1);
    assert_eq!(ObjectPtr::strong_count(&l), 1);
    assert_eq!(ObjectPtr::strong_count(s_obj.as_heap_object().unwrap()), 1);
    drop((arr_any, map_any));
    assert_eq!(ObjectPtr::strong_count(arr.as_object_ptr()), 1);
    assert_eq!(ObjectPtr::strong_count(map.as_object_ptr()), 1);
}

#[test]
fn typed_argument_conversions() {
    let _guard = LeakCheck::new();
    // Option<T>: None for None, Some for a T, an error for anything else.
    let opt = Function::from_typed(|o: Option<i64>| o.map_or(-1, |v| v * 10));
    assert_eq!(opt.call(&[AnyView::NONE]).unwrap(), Any::from(-1));
    assert_eq!(opt.call(&[AnyView::from(4i64)]).unwrap(), Any::from(40));
    assert_eq!(
        fails(opt.call(&[AnyView::from("x")])).message(),
        "argument 0: expected int, got const char*"
    );
    // Option of an object.
    let opt_node = Function::from_typed(|o: Option<ObjectPtr<Node>>| o.map(|n| n.value));
    assert!(opt_node.call(&[AnyView::NONE]).unwrap().is_none());
    assert_eq!(
        opt_node.call(&[AnyView::from(&node(3))]).unwrap(),
        Any::from(3)
    );

    // i32 checks its range.
    let narrow = Function::from_typed(|x: i32| i64::from(x));
    assert_eq!(narrow.call(&[AnyView::from(-5i64)]).unwrap(), Any::from(-5));
    let e = fails(narrow.call(&[AnyView::from(i64::from(i32::MAX) + 1)]));
    assert_eq!(e.kind(), "TypeError");
    assert_eq!(
        e.message(),
        "argument 0: expected int32 (in range), got int"
    );

    // f64 accepts ints (widening); bool accepts only bools.
    let float = Function::from_typed(|x: f64| x * 2.0);
    assert_eq!(float.call(&[AnyView::from(3i64)]).unwrap(), Any::from(6.0));
    let flag = Function::from_typed(|b: bool| !b);
    assert_eq!(
        fails(flag.call(&[AnyView::from(1i64)])).message(),
        "argument 0: expected bool, got int"
    );

    // std::string::String and object String accept raw, inline and object strings.
    let long = String::from("a string long enough to be an object");
    let small = Any::from("tiny");
    assert_eq!(small.type_key(), "ffi.SmallStr");
    let std_len = Function::from_typed(|s: std::string::String| s.len() as i64);
    let obj_len = Function::from_typed(|s: String| s.as_str().len() as i64);
    for f in [&std_len, &obj_len] {
        assert_eq!(f.call(&[AnyView::from("raw")]).unwrap(), Any::from(3));
        assert_eq!(f.call(&[AnyView::from(&small)]).unwrap(), Any::from(4));
        assert_eq!(f.call(&[AnyView::from(&long)]).unwrap(), Any::from(36));
        assert_eq!(
            fails(f.call(&[AnyView::from(1i64)])).message(),
            "argument 0: expected ffi.String, got int"
        );
    }
    // An object String argument shares the caller's string object.
    let same = Function::from_typed({
        let long = long.clone();
        move |s: String| String::ptr_eq(&s, &long) && !s.is_inline()
    });
    assert_eq!(same.call(&[AnyView::from(&long)]).unwrap(), Any::from(true));

    // ObjectPtr<T>: subtypes pass, other types are named in the error.
    let value = Function::from_typed(|n: ObjectPtr<Node>| n.value);
    assert_eq!(
        value.call(&[AnyView::from(&leaf(8, "x"))]).unwrap(),
        Any::from(8)
    );
    let other = make_object(Other {
        base: Object::new(),
    });
    assert_eq!(
        fails(value.call(&[AnyView::from(&other)])).message(),
        "argument 0: expected ftest.Node, got ftest.Other"
    );
    let label = Function::from_typed(|l: ObjectPtr<Leaf>| l.label.clone());
    assert_eq!(
        fails(label.call(&[AnyView::from(&node(1))])).message(),
        "argument 0: expected ftest.Leaf, got ftest.Node"
    );

    // Containers are checked item by item.
    let sum = Function::from_typed(|a: Array<i64>| a.iter().sum::<i64>());
    assert_eq!(
        sum.call(&[AnyView::from(i64s(&[1, 2, 3]).as_object_ptr())])
            .unwrap(),
        Any::from(6)
    );
    let mixed: Array<Any> = vec![Any::from(1), Any::from("two")].into();
    let e = fails(sum.call(&[AnyView::from(mixed.as_object_ptr())]));
    assert_eq!(e.kind(), "TypeError");
    assert!(e.message().starts_with("argument 0: "), "{e}");
    let lookup = Function::from_typed(|m: Map<String, i64>, k: std::string::String| {
        m.get(k.as_str()).copied()
    });
    let m = str_map(&[("one", 1), ("two", 2)]);
    assert_eq!(
        lookup
            .call(&[AnyView::from(m.as_object_ptr()), AnyView::from("two")])
            .unwrap(),
        Any::from(2)
    );
    assert!(lookup
        .call(&[AnyView::from(m.as_object_ptr()), AnyView::from("three")])
        .unwrap()
        .is_none());
    assert_eq!(
        fails(lookup.call(&[AnyView::from(&node(0)), AnyView::from("x")])).message(),
        "argument 0: expected ffi.Map, got ftest.Node"
    );

    // Any takes everything, as an owned value (borrowed strings are copied).
    let kind = Function::from_typed(|a: Any| a.type_key());
    assert_eq!(
        kind.call(&[AnyView::from("raw str")]).unwrap().as_str(),
        Some("ffi.SmallStr")
    );
    assert_eq!(
        kind.call(&[AnyView::from("a longer raw str")])
            .unwrap()
            .as_str(),
        Some("ffi.String")
    );
    assert_eq!(
        kind.call(&[AnyView::from(1.0)]).unwrap().as_str(),
        Some("float")
    );
    assert_eq!(kind.call(&[AnyView::NONE]).unwrap().as_str(), Some("None"));

    // A Function argument is callable inside.
    let apply = Function::from_typed(|f: Function, x: i64| f.typed::<(i64,), i64>().call((x,)));
    let sq = Function::from_typed(|x: i64| x * x);
    assert_eq!(
        apply
            .call(&[AnyView::from(&sq), AnyView::from(12i64)])
            .unwrap(),
        Any::from(144)
    );
    assert_eq!(
        fails(apply.call(&[AnyView::from(12i64), AnyView::from(&sq)])).message(),
        "argument 0: expected ffi.Function, got int"
    );
    // An Error argument is a value, not a failure.
    let describe =
        Function::from_typed(|e: Error| format!("{}/{}", e.kind().as_str(), e.message()));
    let err_any = Any::from(Error::value_error("bad"));
    assert_eq!(
        describe.call(&[AnyView::from(&err_any)]).unwrap().as_str(),
        Some("ValueError/bad")
    );
}

#[test]
fn typed_return_kinds() {
    let _guard = LeakCheck::new();
    // Unit.
    let unit = Function::from_typed(|_x: i64| ());
    assert!(unit.call(&[AnyView::from(1i64)]).unwrap().is_none());
    unit.typed::<(i64,), ()>().call((1,)).unwrap();
    // Plain values.
    let float = Function::from_typed(|| 2.5f64);
    assert_eq!(float.typed::<(), f64>().call(()).unwrap(), 2.5);
    let flag = Function::from_typed(|| true);
    assert!(flag.typed::<(), bool>().call(()).unwrap());
    let narrow = Function::from_typed(|| -3i32);
    assert_eq!(narrow.typed::<(), i32>().call(()).unwrap(), -3);
    let text = Function::from_typed(|| "static str");
    assert_eq!(text.call(&[]).unwrap().as_str(), Some("static str"));
    let owned = Function::from_typed(|n: i64| "x".repeat(n as usize));
    assert_eq!(
        owned
            .typed::<(i64,), std::string::String>()
            .call((20,))
            .unwrap(),
        "x".repeat(20)
    );
    let obj_str = Function::from_typed(|| String::from("an object string"));
    assert_eq!(
        obj_str.typed::<(), String>().call(()).unwrap().as_str(),
        "an object string"
    );
    // Objects: a fresh one, and a captured one shared with the caller.
    let make = Function::from_typed(|v: i64| node(v));
    let made = make.typed::<(i64,), ObjectPtr<Node>>().call((11,)).unwrap();
    assert_eq!((made.value, ObjectPtr::strong_count(&made)), (11, 1));
    let make_leaf = Function::from_typed(|| leaf(2, "two"));
    let as_node = make_leaf.typed::<(), ObjectPtr<Node>>().call(()).unwrap();
    assert_eq!(as_node.type_key(), "ftest.Leaf");
    // Containers.
    let range = Function::from_typed(|n: i64| (0..n).collect::<Array<i64>>());
    let r = range.typed::<(i64,), Array<i64>>().call((4,)).unwrap();
    assert_eq!(r.iter().copied().collect::<Vec<_>>(), [0, 1, 2, 3]);
    let names = Function::from_typed(|n: i64| {
        (0..n)
            .map(|i| String::from(format!("name{i}")))
            .collect::<Array<String>>()
    });
    let r = names.typed::<(i64,), Array<String>>().call((2,)).unwrap();
    assert_eq!(r[1].as_str(), "name1");
    let counts = Function::from_typed(|s: std::string::String| {
        let mut m: Map<String, i64> = Map::new();
        for w in s.split_whitespace() {
            let c = m.get(w).copied().unwrap_or(0);
            m.insert(String::from(w), c + 1);
        }
        m
    });
    let m = counts
        .typed::<(&str,), Map<String, i64>>()
        .call(("a b a c a",))
        .unwrap();
    assert_eq!(
        (m.len(), m.get("a"), m.get("b"), m.get("z")),
        (3, Some(&3), Some(&1), None)
    );
    // Any.
    let pick = Function::from_typed(|i: i64| -> Any {
        match i {
            0 => Any::NONE,
            1 => Any::from(1.5),
            _ => Any::from(node(i)),
        }
    });
    let p = pick.typed::<(i64,), Any>();
    assert!(p.call((0,)).unwrap().is_none());
    assert_eq!(p.call((1,)).unwrap().as_float(), Some(1.5));
    assert_eq!(p.call((9,)).unwrap().type_key(), "ftest.Node");
    // Option.
    let half = Function::from_typed(|x: i64| (x % 2 == 0).then_some(x / 2));
    let h = half.typed::<(i64,), Option<i64>>();
    assert_eq!(h.call((10,)).unwrap(), Some(5));
    assert_eq!(h.call((7,)).unwrap(), None);
    assert!(half.call(&[AnyView::from(7i64)]).unwrap().is_none());
    let maybe_node = Function::from_typed(|x: i64| (x > 0).then(|| node(x)));
    let mn = maybe_node.typed::<(i64,), Option<ObjectPtr<Node>>>();
    assert_eq!(mn.call((3,)).unwrap().map(|n| n.value), Some(3));
    assert!(mn.call((-3,)).unwrap().is_none());
    // Result: Ok is the value, Err is the call's error (with the frame).
    let checked = Function::from_typed_named("checked_sqrt", |x: f64| -> Result<f64, Error> {
        if x < 0.0 {
            Err(Error::value_error(format!("negative input {x}")))
        } else {
            Ok(x.sqrt())
        }
    });
    let c = checked.typed::<(f64,), f64>();
    assert_eq!(c.call((16.0,)).unwrap(), 4.0);
    let e = c.call((-4.0,)).unwrap_err();
    assert_eq!(
        (e.kind().as_str(), e.message(), e.frames()),
        (
            "ValueError",
            "negative input -4",
            &["checked_sqrt".to_owned()][..]
        )
    );
    // Result with other error types converting into Error.
    let str_err = Function::from_typed(|ok: bool| if ok { Ok(1i64) } else { Err("plain message") });
    assert_eq!(str_err.call(&[AnyView::from(true)]).unwrap(), Any::from(1));
    let e = fails(str_err.call(&[AnyView::from(false)]));
    assert_eq!((e.kind().as_str(), e.message()), ("Error", "plain message"));
    let type_err = Function::from_typed(|| -> Result<i64, TypeError> {
        Err(TypeError::new("thing", "other"))
    });
    let e = fails(type_err.call(&[]));
    assert_eq!(
        (e.kind().as_str(), e.message()),
        ("TypeError", "expected thing, got other")
    );
    // Result<Option<T>, E> and Option<Result>-like nesting.
    let nested = Function::from_typed(|x: i64| -> Result<Option<ObjectPtr<Node>>, Error> {
        match x {
            0 => Ok(None),
            x if x > 0 => Ok(Some(node(x))),
            _ => Err(Error::new("RangeError", "negative")),
        }
    });
    assert!(nested.call(&[AnyView::from(0i64)]).unwrap().is_none());
    assert_eq!(
        nested.call(&[AnyView::from(2i64)]).unwrap().type_key(),
        "ftest.Node"
    );
    assert_eq!(
        fails(nested.call(&[AnyView::from(-1i64)])).kind(),
        "RangeError"
    );
    // Returning an Error (not a Result) is a value, not a failure.
    let as_value = Function::from_typed(|| Error::new("Note", "returned, not raised"));
    let v = as_value.call(&[]).unwrap();
    assert_eq!(v.type_key(), "ffi.Error");
    let e = as_value.typed::<(), Error>().call(()).unwrap();
    assert_eq!(e.message(), "returned, not raised");
    assert!(e.frames().is_empty());
    assert!(take_last_error().is_none());

    // A typed view whose return type does not match: a TypeError naming both types.
    let e = range.typed::<(i64,), bool>().call((2,)).unwrap_err();
    assert_eq!(e.kind(), "TypeError");
    assert_eq!(e.message(), "return value: expected bool, got ffi.Array");
    let e = float.typed::<(), i64>().call(()).unwrap_err();
    assert_eq!(e.message(), "return value: expected int, got float");
    let e = unit.typed::<(i64,), i64>().call((1,)).unwrap_err();
    assert_eq!(e.message(), "return value: expected int, got None");
    let e = make
        .typed::<(i64,), ObjectPtr<Leaf>>()
        .call((1,))
        .unwrap_err();
    assert_eq!(
        e.message(),
        "return value: expected ftest.Leaf, got ftest.Node"
    );
    let e = text.typed::<(), ()>().call(()).unwrap_err();
    assert_eq!(e.message(), "return value: expected None, got ffi.String");
}

#[test]
fn call_with_and_typed_view() {
    let _guard = LeakCheck::new();
    let add = Function::from_typed(|a: i64, b: i64| a + b);
    // `call`, `call_with` over several kinds of iterables, the typed view.
    assert_eq!(
        add.call(&[AnyView::from(1i64), AnyView::from(2i64)])
            .unwrap(),
        Any::from(3)
    );
    assert_eq!(add.call_with([1i64, 2]).unwrap(), Any::from(3));
    assert_eq!(add.call_with(vec![10i32, 20]).unwrap(), Any::from(30));
    let anys = vec![Any::from(100), Any::from(23)];
    assert_eq!(add.call_with(&anys).unwrap(), Any::from(123));
    assert_eq!(
        add.call_with((0..2i64).map(|i| i * 7)).unwrap(),
        Any::from(7)
    );
    let typed = add.typed::<(i64, i64), i64>();
    assert_eq!(typed.call((1, 2)).unwrap(), 3);
    assert_eq!(typed.call((i64::MAX, 0)).unwrap(), i64::MAX);
    assert!(Function::ptr_eq(typed.function(), &add));
    let typed2 = typed.clone();
    assert_eq!(typed2.call((-1, -2)).unwrap(), -3);
    assert!(format!("{typed:?}").contains("Function(<anonymous>)"));
    // A typed view with another signature is checked at the call.
    let wrong_arity = add.typed::<(i64,), i64>();
    assert_eq!(
        wrong_arity.call((1,)).unwrap_err().message(),
        "expected 2 arguments, got 1"
    );
    let wrong_type = add.typed::<(i64, &str), i64>();
    assert_eq!(
        wrong_type.call((1, "2")).unwrap_err().message(),
        "argument 1: expected int, got const char*"
    );
    // Mixed argument kinds through call_with: views.
    let concat =
        Function::from_typed(|a: std::string::String, n: i64, b: bool| format!("{a}{n}{b}"));
    let out = concat
        .call_with([AnyView::from("x"), AnyView::from(5), AnyView::from(false)])
        .unwrap();
    assert_eq!(out.as_str(), Some("x5false"));
    let out = concat
        .typed::<(&str, i64, bool), std::string::String>()
        .call(("y", 6, true))
        .unwrap();
    assert_eq!(out, "y6true");
    // The typed view keeps the function alive on its own.
    let n = node(4);
    let f = {
        let n = n.clone();
        Function::from_typed(move |x: i64| n.value * x)
    };
    let view = f.typed::<(i64,), i64>();
    drop(f);
    assert_eq!(view.call((10,)).unwrap(), 40);
    assert_eq!(ObjectPtr::strong_count(&n), 2);
    drop((view, typed, typed2, wrong_arity, wrong_type));
    assert_eq!(ObjectPtr::strong_count(&n), 1);
}

#[test]
fn plain_data_calls_do_not_allocate() {
    let _guard = LeakCheck::new();
    // Handles are thread-safe values.
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Function>();
    send_sync::<object_containers::TypedFunction<(i64, i64), i64>>();
    send_sync::<Error>();
    send_sync::<Module>();

    let add = Function::from_typed(|a: i64, b: i64| a + b);
    let typed = add.typed::<(i64, i64), i64>();
    let n = node(2);
    let value = Function::from_typed(
        |n: ObjectPtr<Node>, k: f64, b: bool| {
            if b {
                n.value as f64 * k
            } else {
                0.0
            }
        },
    );
    let typed_value = value.typed::<(&ObjectPtr<Node>, f64, bool), f64>();
    // Warm up (thread-locals, type caches).
    typed.call((1, 1)).unwrap();
    typed_value.call((&n, 1.0, true)).unwrap();
    let (sum, allocs) = allocations_in(|| {
        let mut sum = 0;
        for i in 0..100 {
            sum += typed.call((i, 1)).unwrap();
        }
        sum
    });
    assert_eq!((sum, allocs), (5050, 0), "typed calls of ints");
    let (r, allocs) = allocations_in(|| {
        add.call(&[AnyView::from(2i64), AnyView::from(3i64)])
            .unwrap()
    });
    assert_eq!((r, allocs), (Any::from(5), 0), "packed call of ints");
    let (r, allocs) = allocations_in(|| typed_value.call((&n, 1.5, true)).unwrap());
    assert_eq!((r, allocs), (3.0, 0), "an object argument is borrowed");
    // Failures allocate their error (and the frame), and that is all they leave behind.
    let short = add.typed::<(i64,), i64>();
    let (e, allocs) = allocations_in(|| short.call((1,)).unwrap_err());
    assert!(allocs > 0);
    assert_eq!(e.message(), "expected 2 arguments, got 1");
    assert_eq!(ObjectPtr::strong_count(&n), 1);
}

/// `TypedCallable` is implementable by hand (with `Fn` being a fundamental trait, a type
/// of one's own does not overlap the closures' impl), and its hidden `fast_entry` is a
/// trait method: one that returns the entry made for *another* callable type must not be
/// installed, since that entry would read this type's bytes as that type. The function
/// then calls through the packed entry, i.e. this type's own `call_typed`.
#[test]
fn a_fast_entry_of_another_callable_type_is_ignored() {
    use object_containers::TypedCallable;

    struct Seven;
    impl TypedCallable<(i64,), i64> for Seven {
        fn call_typed(&self, _: &[AnyView<'_>]) -> Result<Any, Error> {
            Ok(Any::from(7))
        }
        fn fast_entry() -> Option<object_containers::__private::FastEntry> {
            fn entry_of<F: TypedCallable<(i64,), i64>>(
                _: &F,
            ) -> Option<object_containers::__private::FastEntry> {
                F::fast_entry()
            }
            let captured = std::string::String::from("a capture");
            entry_of(&move |x: i64| x + captured.len() as i64)
        }
    }
    assert!(Seven::fast_entry().is_some(), "a closure's entry, offered");

    let _guard = LeakCheck::new();
    let f = Function::from_typed(Seven);
    assert_eq!(
        f.typed::<(i64,), i64>().call((1,)).unwrap(),
        7,
        "typed view"
    );
    assert_eq!(f.call_with([1]).unwrap(), Any::from(7), "packed call");
    // A closure keeps its own entry (the typed-call benches measure it).
    let add = Function::from_typed(|x: i64| x + 1);
    assert_eq!(add.typed::<(i64,), i64>().call((1,)).unwrap(), 2);
}

// ---------------------------------------------------------------------------------
// 2. Errors across the ABI.
// ---------------------------------------------------------------------------------

#[test]
fn wrong_argument_count_is_a_type_error() {
    let _guard = LeakCheck::new();
    let add = Function::from_typed_named("add", |a: i64, b: i64| a + b);
    let e = fails(add.call_with([1i64, 2, 3]));
    assert_eq!(e.kind(), "TypeError");
    assert_eq!(e.message(), "expected 2 arguments, got 3");
    assert_eq!(e.frames(), ["add"]);
    assert_eq!(
        fails(add.call(&[])).message(),
        "expected 2 arguments, got 0"
    );
    let one = Function::from_typed(|a: i64| a);
    assert_eq!(fails(one.call(&[])).message(), "expected 1 argument, got 0");
    assert_eq!(
        fails(one.call_with([1i64, 2])).message(),
        "expected 1 argument, got 2"
    );
    let zero = Function::from_typed(|| 0i64);
    assert_eq!(
        fails(zero.call_with([1i64])).message(),
        "expected 0 arguments, got 1"
    );
    let eight = Function::from_typed(
        |a: i64, b: i64, c: i64, d: i64, e: i64, f: i64, g: i64, h: i64| {
            a + b + c + d + e + f + g + h
        },
    );
    assert_eq!(eight.call_with([1i64; 8]).unwrap(), Any::from(8));
    assert_eq!(
        fails(eight.call_with([1i64; 9])).message(),
        "expected 8 arguments, got 9"
    );
    assert_eq!(
        fails(eight.call_with([1i64; 7])).message(),
        "expected 8 arguments, got 7"
    );
    // Counts are checked before any argument is converted.
    assert_eq!(
        fails(add.call_with(["a", "b", "c"])).message(),
        "expected 2 arguments, got 3"
    );
    assert!(take_last_error().is_none());
}

#[test]
fn wrong_argument_type_names_index_and_both_types() {
    let _guard = LeakCheck::new();
    let add = Function::from_typed_named("add", |a: i64, b: i64| a + b);
    let s = String::from("an ffi.String object");
    let e = fails(add.call(&[AnyView::from(1i64), AnyView::from(&s)]));
    assert_eq!(e.kind(), "TypeError");
    assert_eq!(e.message(), "argument 1: expected int, got ffi.String");
    assert_eq!(e.frames(), ["add"]);
    // Index 0, other actual kinds.
    for (arg, actual) in [
        (Any::from("small"), "ffi.String"),
        (Any::from(1.5), "float"),
        (Any::from(true), "bool"),
        (Any::NONE, "None"),
        (Any::from(node(1)), "ftest.Node"),
        (Any::from(i64s(&[1])), "ffi.Array"),
        (Any::from(add.clone()), "ffi.Function"),
    ] {
        let e = fails(add.call(&[AnyView::from(&arg), AnyView::from(2i64)]));
        assert_eq!(
            e.message(),
            format!("argument 0: expected int, got {actual}")
        );
    }
    // The first bad argument is reported.
    let e = fails(add.call(&[AnyView::from("x"), AnyView::from("y")]));
    assert_eq!(e.message(), "argument 0: expected int, got const char*");
    // Later positions in a long signature.
    let mixed = Function::from_typed(
        |_a: i64, _b: bool, _c: f64, _d: std::string::String, _e: ObjectPtr<Node>, _f: Function| {},
    );
    let n = node(0);
    let good: Vec<Any> = vec![
        Any::from(1),
        Any::from(true),
        Any::from(1.0),
        Any::from("s"),
        Any::from(n.clone()),
        Any::from(add.clone()),
    ];
    assert!(mixed.call_with(&good).unwrap().is_none());
    let expected = [
        "argument 0: expected int, got ffi.Function",
        "argument 1: expected bool, got ffi.Function",
        "argument 2: expected float, got ffi.Function",
        "argument 3: expected ffi.String, got ffi.Function",
        "argument 4: expected ftest.Node, got ffi.Function",
    ];
    for (i, want) in expected.iter().enumerate() {
        let mut args = good.clone();
        args[i] = Any::from(add.clone());
        assert_eq!(fails(mixed.call_with(&args)).message(), *want);
    }
    let mut args = good.clone();
    args[5] = Any::from(n.clone());
    assert_eq!(
        fails(mixed.call_with(&args)).message(),
        "argument 5: expected ffi.Function, got ftest.Node"
    );
    drop((good, args));
    assert_eq!(
        ObjectPtr::strong_count(&n),
        1,
        "failed conversions leak nothing"
    );
}

#[test]
fn panics_become_panic_errors() {
    let _guard = LeakCheck::new();
    static DROPS: DropCounter = DropCounter::new();
    let tracked = DROPS.track();
    let boom = Function::from_typed_named("boom", move |x: i64| -> i64 {
        let _keep = &tracked;
        if x > 0 {
            panic!("boom: x was {x}, limit {}", x - 1);
        }
        x
    });
    let e = fails(boom.call_with([7i64]));
    assert_eq!(e.kind(), "Panic");
    assert_eq!(e.message(), "boom: x was 7, limit 6");
    assert_eq!(e.frames(), ["boom"]);
    assert!(take_last_error().is_none());
    // The function (and the process) carry on.
    assert_eq!(boom.call_with([-1i64]).unwrap(), Any::from(-1));
    let e = boom.typed::<(i64,), i64>().call((2,)).unwrap_err();
    assert_eq!(e.message(), "boom: x was 2, limit 1");
    // A static message, and a payload that is not a string.
    let literal = Function::from_packed(|_args: &[AnyView<'_>]| panic!("a literal message"));
    assert_eq!(fails(literal.call(&[])).message(), "a literal message");
    let odd = Function::from_packed(|_args: &[AnyView<'_>]| std::panic::panic_any(42i32));
    let e = fails(odd.call(&[]));
    assert_eq!(
        (e.kind().as_str(), e.message()),
        ("Panic", "a panic with a non-string payload")
    );
    // A panic two calls deep arrives with both frames; objects on the unwound stack are
    // released.
    let n = node(1);
    let inner = {
        let n = n.clone();
        Function::from_typed_named("inner", move |x: i64| -> i64 {
            let _local = n.clone();
            assert!(x < 10, "inner: {x} is too big");
            x
        })
    };
    let outer = {
        let inner = inner.clone();
        Function::from_typed_named("outer", move |x: i64| -> Result<i64, Error> {
            inner.typed::<(i64,), i64>().call((x * 10,))
        })
    };
    let e = fails(outer.call_with([5i64]));
    assert_eq!(e.kind(), "Panic");
    assert_eq!(e.message(), "inner: 50 is too big");
    assert_eq!(e.frames(), ["inner", "outer"]);
    assert_eq!(ObjectPtr::strong_count(&n), 2, "n and inner's capture");
    // Panics on other threads too.
    let b2 = boom.clone();
    let msg = std::thread::spawn(move || {
        let e = fails(b2.call_with([3i64]));
        assert!(take_last_error().is_none());
        e.message().to_owned()
    })
    .join()
    .unwrap();
    assert_eq!(msg, "boom: x was 3, limit 2");
    drop((boom, e));
    assert_eq!(DROPS.get(), 1);
    drop((inner, outer));
    assert_eq!(ObjectPtr::strong_count(&n), 1);
}

/// f1 calls f2 calls f3; f3 fails.
fn three_deep() -> (Function, Function, Function) {
    let f3 = Function::from_typed_named("f3", |x: i64| -> Result<i64, Error> {
        if x < 0 {
            Err(Error::new("DepthError", format!("f3 got {x}")))
        } else {
            Ok(x + 3)
        }
    });
    let f2 = {
        let f3 = f3.clone();
        Function::from_packed_named(Some("f2"), move |args: &[AnyView<'_>]| {
            let r = f3.call(args)?;
            Ok(Any::from(r.as_int().unwrap_or(0) * 2))
        })
    };
    let f1 = {
        let f2 = f2.clone();
        Function::from_typed_named("f1", move |x: i64| -> Result<i64, Error> {
            let r = f2.typed::<(i64,), i64>().call((x,))?;
            Ok(r + 1)
        })
    };
    (f1, f2, f3)
}

#[test]
fn errors_collect_frames_innermost_first() {
    let _guard = LeakCheck::new();
    let (f1, f2, f3) = three_deep();
    assert_eq!(f1.typed::<(i64,), i64>().call((1,)).unwrap(), 9);
    let e = fails(f1.call_with([-5i64]));
    assert_eq!(e.kind(), "DepthError");
    assert_eq!(e.message(), "f3 got -5");
    assert_eq!(e.frames(), ["f3", "f2", "f1"]);
    assert!(take_last_error().is_none());
    // Entering in the middle gives the shorter chain.
    assert_eq!(fails(f2.call_with([-1i64])).frames(), ["f3", "f2"]);
    assert_eq!(fails(f3.call_with([-1i64])).frames(), ["f3"]);
    // A type error deep down also carries the frames.
    let e = fails(f2.call_with(["not an int"]));
    assert_eq!(e.kind(), "TypeError");
    assert_eq!(e.message(), "argument 0: expected int, got const char*");
    assert_eq!(e.frames(), ["f3", "f2"]);
    // Every call starts afresh: frames do not pile up across calls.
    for _ in 0..3 {
        assert_eq!(fails(f1.call_with([-1i64])).frames(), ["f3", "f2", "f1"]);
    }

    // Recursion through the global registry: one frame per level.
    let name = "ftest.countdown";
    register_global(
        name,
        Function::from_typed_named(name, |n: i64| -> Result<i64, Error> {
            if n == 0 {
                return Err(Error::new("Bottom", "reached zero"));
            }
            let me = get_global("ftest.countdown").expect("registered");
            me.typed::<(i64,), i64>().call((n - 1,))
        }),
    )
    .unwrap();
    let e = get_global(name)
        .unwrap()
        .typed::<(i64,), i64>()
        .call((20,))
        .unwrap_err();
    assert_eq!(e.kind(), "Bottom");
    assert_eq!(e.frames().len(), 21);
    assert!(e.frames().iter().all(|f| f == name));
    drop(remove_global(name));
}

#[test]
fn shared_error_is_copied_before_adding_a_frame() {
    let _guard = LeakCheck::new();
    // f3 raises a clone of a stored error each time; f2 keeps a clone of what it saw.
    let stored = Error::new("Stored", "the same error every time");
    let seen: Arc<Mutex<Vec<Error>>> = Arc::default();
    let f3 = {
        let stored = stored.clone();
        Function::from_typed_named("f3", move || -> Result<(), Error> { Err(stored.clone()) })
    };
    let f2 = {
        let seen = Arc::clone(&seen);
        Function::from_typed_named("f2", move || -> Result<(), Error> {
            let e = f3.call(&[]).unwrap_err();
            seen.lock().unwrap().push(e.clone());
            Err(e)
        })
    };
    for _ in 0..2 {
        let e = fails(f2.call(&[]));
        assert_eq!(e.frames(), ["f3", "f2"]);
        assert_eq!(e.message(), "the same error every time");
    }
    assert!(stored.frames().is_empty(), "the stored error never changes");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    for e in seen.iter() {
        assert_eq!(e.frames(), ["f3"], "a kept clone does not see later frames");
    }
    assert_eq!(seen[0], seen[1]);
    assert!(!ObjectPtr::ptr_eq(
        seen[0].as_object_ptr(),
        stored.as_object_ptr()
    ));
    // with_frame on a shared error leaves the other handle alone.
    let a = Error::new("K", "m");
    let b = a.clone().with_frame("x");
    assert!(a.frames().is_empty());
    assert_eq!(b.frames(), ["x"]);
    assert_ne!(a, b);
}

#[test]
fn error_display_debug_and_std_error() {
    let _guard = LeakCheck::new();
    let (f1, _f2, _f3) = three_deep();
    let e = fails(f1.call_with([-2i64]));
    assert_eq!(
        e.to_string(),
        "DepthError: f3 got -2\n  in f3\n  in f2\n  in f1"
    );
    let dbg = format!("{e:?}");
    assert!(
        dbg.contains("DepthError") && dbg.contains("f3 got -2") && dbg.contains("\"f1\""),
        "{dbg}"
    );
    assert_eq!(
        Error::new("Plain", "no frames").to_string(),
        "Plain: no frames"
    );
    // std::error::Error: boxes, `?` conversion, no source.
    fn run(f: &Function) -> Result<i64, Box<dyn std::error::Error + Send + Sync>> {
        let v = f.typed::<(i64,), i64>().call((-3,))?;
        Ok(v)
    }
    let boxed = run(&f1).unwrap_err();
    assert_eq!(
        boxed.to_string(),
        "DepthError: f3 got -3\n  in f3\n  in f2\n  in f1"
    );
    assert!(boxed.source().is_none());
    let back = boxed.downcast::<Error>().expect("an Error");
    assert_eq!(back.frames(), ["f3", "f2", "f1"]);
    // Errors are objects: into an Any and back, equal by content.
    let any = Any::from(e.clone());
    assert_eq!(any.type_key(), "ffi.Error");
    let e2 = Error::try_from(any).unwrap();
    assert!(ObjectPtr::ptr_eq(e.as_object_ptr(), e2.as_object_ptr()));
    assert_eq!(e, e2);
    assert_eq!(
        Error::try_from(Any::from(1)).unwrap_err().to_string(),
        "expected ffi.Error, got int"
    );
}

#[test]
fn error_slot_is_empty_after_handled_failures() {
    let _guard = LeakCheck::new();
    assert!(take_last_error().is_none());
    let (f1, _f2, _f3) = three_deep();
    let _ = fails(f1.call_with([-1i64]));
    assert!(take_last_error().is_none());
    let panicky = Function::from_packed(|_args: &[AnyView<'_>]| panic!("slot test"));
    let _ = fails(panicky.call(&[]));
    assert!(take_last_error().is_none());
    // An outer function that handles an inner failure succeeds with an empty slot.
    let recover = {
        let f1 = f1.clone();
        Function::from_typed(move |x: i64| match f1.typed::<(i64,), i64>().call((x,)) {
            Ok(v) => v,
            Err(e) => -(e.frames().len() as i64),
        })
    };
    assert_eq!(recover.call_with([-1i64]).unwrap(), Any::from(-3));
    assert!(take_last_error().is_none());
    // The slot itself: set, take once.
    set_last_error(Error::new("Manual", "set by hand"));
    let e = take_last_error().expect("the error just set");
    assert_eq!(e.kind(), "Manual");
    assert!(take_last_error().is_none());
    // A stale error left by someone else does not confuse the next successful call, and
    // a failing call replaces it with its own.
    set_last_error(Error::new("Stale", "left behind"));
    assert_eq!(f1.call_with([1i64]).unwrap(), Any::from(9));
    assert_eq!(fails(f1.call_with([-1i64])).kind(), "DepthError");
    assert!(take_last_error().is_none());
    // Slots are per thread.
    std::thread::spawn(move || {
        assert!(take_last_error().is_none());
        let _ = fails(f1.call_with([-1i64]));
        assert!(take_last_error().is_none());
    })
    .join()
    .unwrap();
}

/// `error_mark` / `take_error_since` (what a call out to C uses to tell its callee's
/// error from a stale one) on threads that raise errors all the time: a thread's own
/// error raised after its mark is always taken, an error of its own from before the
/// mark never is, whatever the other threads raise meanwhile (the numbers come from one
/// process-wide counter).
#[test]
fn error_marks_tell_a_threads_own_new_errors_from_stale_ones() {
    let _guard = LeakCheck::new();
    let rounds = scaled(20_000, 20);
    std::thread::scope(|s| {
        for t in 0..4 {
            s.spawn(move || {
                for i in 0..rounds {
                    // A stale error of this thread, then a mark.
                    set_last_error(Error::new("Stale", format!("{t}/{i}")));
                    let mark = error_mark();
                    assert!(take_error_since(mark).is_none(), "a stale error taken");
                    // The callee raises: taken, and the slot is empty after.
                    let mark = error_mark();
                    set_last_error(Error::new("Fresh", format!("{t}/{i}")));
                    let e = take_error_since(mark).expect("the error raised after the mark");
                    assert_eq!(
                        (e.kind().as_str(), e.message()),
                        ("Fresh", format!("{t}/{i}").as_str())
                    );
                    assert!(take_last_error().is_none());
                }
            });
        }
    });
}

/// Runs only in a child process started by [`failing_call_in_a_thread_local_destructor`]:
/// a thread whose thread-local value's destructor calls a failing function after the
/// error slot may already be gone.
#[test]
#[cfg_attr(
    not(miri),
    ignore = "helper: run in a child process by failing_call_in_a_thread_local_destructor"
)]
fn tls_destructor_child() {
    if !cfg!(miri) && std::env::var_os("FTEST_TLS_CHILD").is_none() {
        return;
    }
    struct CallsOnDrop(Function);
    impl Drop for CallsOnDrop {
        fn drop(&mut self) {
            let r = self.0.call_with([-1i64]);
            assert!(r.is_err());
            println!("destructor call returned an error");
        }
    }
    std::thread_local! {
        static GUARD: std::cell::RefCell<Option<CallsOnDrop>> = const { std::cell::RefCell::new(None) };
    }
    std::thread::spawn(|| {
        let (f1, _f2, _f3) = three_deep();
        // Registered first, so destroyed after the error slot (registered by the call
        // below).
        GUARD.with(|g| *g.borrow_mut() = Some(CallsOnDrop(f1.clone())));
        let _ = fails(f1.call_with([-1i64]));
    })
    .join()
    .unwrap();
}

#[test]
#[cfg_attr(
    miri,
    ignore = "spawns processes; under Miri its child scenario runs in-process"
)]
fn failing_call_in_a_thread_local_destructor() {
    let _guard = LeakCheck::new();
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            "tls_destructor_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("FTEST_TLS_CHILD", "1")
        .output()
        .unwrap();
    let stdout = std::string::String::from_utf8_lossy(&out.stdout);
    let stderr = std::string::String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("destructor call returned an error"),
        "child failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
}

// ---------------------------------------------------------------------------------
// 3. The global registry.
// ---------------------------------------------------------------------------------

#[test]
fn global_registry_register_get_list_remove() {
    let _guard = LeakCheck::new();
    let names = ["ftest.g.b", "ftest.g.a", "ftest.g.c"];
    let before = list_globals();
    for (i, name) in names.iter().enumerate() {
        let k = i as i64;
        register_global(name, Function::from_typed_named(name, move |x: i64| x + k)).unwrap();
    }
    let listed: Vec<_> = list_globals()
        .into_iter()
        .filter(|n| n.starts_with("ftest.g."))
        .collect();
    assert_eq!(listed, ["ftest.g.a", "ftest.g.b", "ftest.g.c"], "sorted");
    let all = list_globals();
    assert!(all.windows(2).all(|w| w[0] < w[1]), "sorted and unique");
    assert_eq!(all.len(), before.len() + 3);
    let b = get_global("ftest.g.b").unwrap();
    assert_eq!(b.name(), Some("ftest.g.b"));
    assert_eq!(b.typed::<(i64,), i64>().call((10,)).unwrap(), 10);
    assert!(
        Function::ptr_eq(&get_global("ftest.g.b").unwrap(), &b),
        "the same object"
    );
    assert!(get_global("ftest.g.missing").is_none());

    // Registering a taken name is a KeyError naming it; the original stays.
    let e = register_global("ftest.g.b", Function::from_typed(|x: i64| -x)).unwrap_err();
    assert_eq!(e.kind(), "KeyError");
    assert!(e.message().contains("ftest.g.b"), "{}", e.message());
    assert!(Function::ptr_eq(&get_global("ftest.g.b").unwrap(), &b));
    // Override replaces and returns the previous function.
    let replacement = Function::from_typed(|x: i64| x * 100);
    let prev = register_global_override("ftest.g.b", replacement.clone()).unwrap();
    assert!(Function::ptr_eq(&prev, &b));
    drop(prev);
    assert!(Function::ptr_eq(
        &get_global("ftest.g.b").unwrap(),
        &replacement
    ));
    assert_eq!(
        get_global("ftest.g.b")
            .unwrap()
            .typed::<(i64,), i64>()
            .call((2,))
            .unwrap(),
        200
    );
    // Override of a free name registers it and returns None.
    assert!(register_global_override("ftest.g.d", Function::from_typed(|| 4i64)).is_none());
    assert!(get_global("ftest.g.d").is_some());
    // Removal returns the function; the name is free again.
    let removed = remove_global("ftest.g.b").unwrap();
    assert!(Function::ptr_eq(&removed, &replacement));
    assert!(get_global("ftest.g.b").is_none());
    assert!(remove_global("ftest.g.b").is_none());
    register_global("ftest.g.b", b.clone()).unwrap();
    assert!(Function::ptr_eq(&get_global("ftest.g.b").unwrap(), &b));
    // The registry holds a reference.
    assert_eq!(ObjectPtr::strong_count(b.as_object_ptr()), 2);

    for name in names.iter().chain(&["ftest.g.d"]) {
        assert!(remove_global(name).is_some(), "{name}");
    }
    assert_eq!(list_globals(), before);
    assert_eq!(ObjectPtr::strong_count(b.as_object_ptr()), 1);

    // A function removed from the registry while it runs finishes normally, and is
    // dropped when its caller's handle goes.
    static RUN_DROPS: DropCounter = DropCounter::new();
    let running = Arc::new(Barrier::new(2));
    let finish = Arc::new(Barrier::new(2));
    {
        let (running, finish) = (Arc::clone(&running), Arc::clone(&finish));
        let tracked = RUN_DROPS.track();
        register_global(
            "ftest.g.running",
            Function::from_typed(move || {
                let _keep = &tracked;
                running.wait();
                finish.wait();
                7i64
            }),
        )
        .unwrap();
    }
    let caller = std::thread::spawn(|| {
        let f = get_global("ftest.g.running").unwrap();
        f.typed::<(), i64>().call(()).unwrap()
    });
    running.wait();
    drop(remove_global("ftest.g.running").unwrap());
    assert!(get_global("ftest.g.running").is_none());
    assert_eq!(RUN_DROPS.get(), 0, "still running");
    finish.wait();
    assert_eq!(caller.join().unwrap(), 7);
    assert_eq!(RUN_DROPS.get(), 1);
}

/// Reads the registry when dropped: proves no function is dropped while the registry's
/// lock is held (that would deadlock).
struct ReadsRegistryOnDrop(Arc<AtomicUsize>);

impl Drop for ReadsRegistryOnDrop {
    fn drop(&mut self) {
        assert!(!list_globals().is_empty() || get_global("ftest.lock.a").is_none());
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Runs `f` on another thread and fails (instead of hanging) if it takes too long.
fn within_timeout<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(30)) {
        Ok(v) => {
            h.join().unwrap();
            v
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("{what}: deadlocked"),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(h.join().unwrap_err())
        }
    }
}

#[test]
fn registry_never_drops_functions_under_its_lock() {
    let _guard = LeakCheck::new();
    let dropped = Arc::new(AtomicUsize::new(0));
    let make = |dropped: &Arc<AtomicUsize>| {
        let probe = ReadsRegistryOnDrop(Arc::clone(dropped));
        Function::from_typed(move || {
            let _keep = &probe;
        })
    };
    let d = Arc::clone(&dropped);
    within_timeout("registry drops", move || {
        register_global("ftest.lock.a", make(&d)).unwrap();
        // The rejected function is dropped by register_global.
        assert!(register_global("ftest.lock.a", make(&d)).is_err());
        // The replaced and the removed functions are handed back.
        drop(register_global_override("ftest.lock.a", make(&d)));
        drop(remove_global("ftest.lock.a"));
        // A function that registers and removes globals while it runs.
        let registrar = Function::from_typed(|name: std::string::String| -> Result<i64, Error> {
            register_global(&name, Function::from_typed(|| 1i64))?;
            let f = get_global(&name).unwrap();
            let v = f.typed::<(), i64>().call(())?;
            drop(remove_global(&name));
            Ok(v)
        });
        register_global("ftest.lock.registrar", registrar).unwrap();
        let r = get_global("ftest.lock.registrar")
            .unwrap()
            .typed::<(&str,), i64>()
            .call(("ftest.lock.made",))
            .unwrap();
        assert_eq!(r, 1);
        drop(remove_global("ftest.lock.registrar"));
    });
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        3,
        "the rejected, the replaced and the removed function"
    );
    assert!(!list_globals().iter().any(|n| n.starts_with("ftest.lock.")));
}

#[test]
fn global_registry_races() {
    let _guard = LeakCheck::new();
    static DROPS: DropCounter = DropCounter::new();
    // Fewer threads under Miri, which runs them one at a time.
    let writers_n = native_or_miri(8, 3);
    let readers_n = native_or_miri(4, 2);
    let distinct = scaled(200, 20);
    let same = scaled(100, 10);
    let drops_before = DROPS.get();
    let done = Arc::new(AtomicBool::new(false));
    let barrier = Arc::new(Barrier::new(writers_n + readers_n));
    // Each writer registers its own names and tries every shared name.
    let writers: Vec<_> = (0..writers_n)
        .map(|t| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                let mut won = Vec::new();
                for i in 0..distinct.max(same) {
                    if i < distinct {
                        let name = format!("ftest.race.d.{t}.{i}");
                        let tracked = DROPS.track();
                        let id = (t * 1_000_000 + i) as i64;
                        let f = Function::from_typed(move || {
                            let _keep = &tracked;
                            id
                        });
                        register_global(&name, f).expect("a distinct name is free");
                    }
                    if i < same {
                        let name = format!("ftest.race.s.{i}");
                        let tracked = DROPS.track();
                        let f = Function::from_typed(move || {
                            let _keep = &tracked;
                            t as i64
                        });
                        match register_global(&name, f) {
                            Ok(()) => won.push(i),
                            Err(e) => {
                                assert_eq!(e.kind(), "KeyError");
                                assert!(e.message().contains(&name), "{}", e.message());
                            }
                        }
                    }
                }
                won
            })
        })
        .collect();
    // Readers look names up while they are being registered: a name, once seen, always
    // resolves to the same function.
    let readers: Vec<_> = (0..readers_n)
        .map(|r| {
            let barrier = Arc::clone(&barrier);
            let done = Arc::clone(&done);
            std::thread::spawn(move || {
                barrier.wait();
                let mut seen_same: BTreeMap<usize, i64> = BTreeMap::new();
                let mut hits = 0usize;
                let mut k = r;
                loop {
                    // One more pass after the writers finish.
                    let finished = done.load(Ordering::Acquire);
                    k = k.wrapping_mul(2_654_435_761).wrapping_add(12345) % 1_000_003;
                    let i = k % same;
                    if let Some(f) = get_global(&format!("ftest.race.s.{i}")) {
                        let winner = f.typed::<(), i64>().call(()).unwrap();
                        let first = *seen_same.entry(i).or_insert(winner);
                        assert_eq!(first, winner, "a registered name was replaced");
                        hits += 1;
                    }
                    let t = k % writers_n;
                    let j = (k / writers_n) % distinct;
                    if let Some(f) = get_global(&format!("ftest.race.d.{t}.{j}")) {
                        let id = f.typed::<(), i64>().call(()).unwrap();
                        assert_eq!(id, (t * 1_000_000 + j) as i64);
                        hits += 1;
                    }
                    let _ = list_globals();
                    if cfg!(miri) {
                        // Let the writers run: Miri runs one thread at a time.
                        std::thread::yield_now();
                    }
                    if finished {
                        break;
                    }
                }
                (seen_same, hits)
            })
        })
        .collect();
    let mut winners: BTreeMap<usize, usize> = BTreeMap::new();
    for (t, w) in writers.into_iter().enumerate() {
        for i in w.join().unwrap() {
            assert!(
                winners.insert(i, t).is_none(),
                "two writers registered ftest.race.s.{i}"
            );
        }
    }
    done.store(true, Ordering::Release);
    let mut total_hits = 0;
    for r in readers {
        let (seen, hits) = r.join().unwrap();
        total_hits += hits;
        for (i, winner) in seen {
            assert_eq!(winner, winners[&i] as i64, "reader saw a loser for {i}");
        }
    }
    println!("global_registry_races: readers resolved {total_hits} names");
    assert_eq!(winners.len(), same, "exactly one winner per shared name");
    for (i, t) in &winners {
        let f = get_global(&format!("ftest.race.s.{i}")).unwrap();
        assert_eq!(f.typed::<(), i64>().call(()).unwrap(), *t as i64);
    }
    let listed = list_globals()
        .into_iter()
        .filter(|n| n.starts_with("ftest.race."))
        .count();
    assert_eq!(listed, writers_n * distinct + same);
    // The losers' functions are gone already.
    assert_eq!(DROPS.get() - drops_before, (writers_n - 1) * same);
    // Clean up everything registered, concurrently too.
    let removers: Vec<_> = (0..writers_n)
        .map(|t| {
            std::thread::spawn(move || {
                for i in 0..distinct {
                    assert!(remove_global(&format!("ftest.race.d.{t}.{i}")).is_some());
                }
                (t..same)
                    .step_by(writers_n)
                    .filter(|i| remove_global(&format!("ftest.race.s.{i}")).is_some())
                    .count()
            })
        })
        .collect();
    let removed_same: usize = removers.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(removed_same, same);
    assert!(!list_globals().iter().any(|n| n.starts_with("ftest.race.")));
    assert_eq!(
        DROPS.get() - drops_before,
        writers_n * distinct + writers_n * same,
        "every function made was dropped exactly once"
    );
}

// ---------------------------------------------------------------------------------
// 4. Functions as values.
// ---------------------------------------------------------------------------------

#[test]
fn functions_in_containers_and_any() {
    let _guard = LeakCheck::new();
    let add = Function::from_typed_named("add", |a: i64, b: i64| a + b);
    let mul = Function::from_typed_named("mul", |a: i64, b: i64| a * b);
    let sub = Function::from_typed_named("sub", |a: i64, b: i64| a - b);
    // Array<Function>.
    let ops: Array<Function> = vec![add.clone(), mul.clone(), sub.clone()].into();
    let results: Vec<i64> = ops
        .iter()
        .map(|f| f.typed::<(i64, i64), i64>().call((6, 3)).unwrap())
        .collect();
    assert_eq!(results, [9, 18, 3]);
    assert!(Function::ptr_eq(&ops[1], &mul));
    assert_eq!(ObjectPtr::strong_count(add.as_object_ptr()), 2);
    let names: Vec<_> = ops.iter().map(|f| f.name().unwrap()).collect();
    assert_eq!(names, ["add", "mul", "sub"]);
    // Map<String, Function>.
    let table: Map<String, Function> = [("+", &add), ("*", &mul), ("-", &sub)]
        .into_iter()
        .map(|(k, f)| (String::from(k), f.clone()))
        .collect();
    let eval = |op: &str, a: i64, b: i64| {
        table
            .get(op)
            .map(|f| f.typed::<(i64, i64), i64>().call((a, b)).unwrap())
    };
    assert_eq!(eval("*", 7, 6), Some(42));
    assert_eq!(eval("-", 7, 6), Some(1));
    assert_eq!(eval("/", 7, 6), None);
    // Any.
    let any = Any::from(add.clone());
    assert_eq!(any.type_key(), "ffi.Function");
    assert!(any.as_object_of::<FunctionObj>().is_some());
    let back = Function::try_from(any.clone()).unwrap();
    assert!(Function::ptr_eq(&back, &add));
    assert_eq!(
        Function::try_from(Any::from(5)).unwrap_err().to_string(),
        "expected ffi.Function, got int"
    );
    assert_eq!(
        Function::try_from(Any::from(node(1)))
            .unwrap_err()
            .to_string(),
        "expected ffi.Function, got ftest.Node"
    );
    // Heterogeneous arrays cast to Array<Function> only when every item is one.
    let mixed: Array<Any> = vec![any.clone(), Any::from(1)].into();
    assert!(mixed.cast::<Function>().is_err());
    let all_fns: Array<Any> = vec![any.clone(), Any::from(mul.clone())].into();
    let cast = all_fns.cast::<Function>().unwrap();
    assert!(Function::ptr_eq(&cast[1], &mul));
    // Containers of functions as arguments and results.
    let fold = Function::from_typed(|fs: Array<Function>, init: i64| -> Result<i64, Error> {
        let mut acc = init;
        for f in &fs {
            acc = f.typed::<(i64, i64), i64>().call((acc, 2))?;
        }
        Ok(acc)
    });
    assert_eq!(
        fold.call(&[AnyView::from(ops.as_object_ptr()), AnyView::from(5i64)])
            .unwrap(),
        Any::from((5 + 2) * 2 - 2)
    );
    let pick = {
        let table = table.clone();
        Function::from_typed(move |op: std::string::String| table.get(op.as_str()).cloned())
    };
    let got = pick
        .typed::<(&str,), Option<Function>>()
        .call(("+",))
        .unwrap()
        .unwrap();
    assert!(Function::ptr_eq(&got, &add));
    assert!(pick
        .typed::<(&str,), Option<Function>>()
        .call(("?",))
        .unwrap()
        .is_none());
    drop((ops, table, any, back, mixed, all_fns, cast, got, fold, pick));
    assert_eq!(ObjectPtr::strong_count(add.as_object_ptr()), 1);
    assert_eq!(ObjectPtr::strong_count(mul.as_object_ptr()), 1);
}

#[test]
fn function_field_in_a_derived_object() {
    let _guard = LeakCheck::new();
    let double = Function::from_typed_named("double", |x: i64| 2 * x);
    let holder = make_object(Holder {
        base: Object::new(),
        f: double.clone(),
    });
    assert_eq!(holder.type_key(), "ftest.Holder");
    assert_eq!(holder.f.typed::<(i64,), i64>().call((21,)).unwrap(), 42);
    assert_eq!(ObjectPtr::strong_count(double.as_object_ptr()), 2);
    // Through an Any and a function taking the holder.
    let any = Any::from(holder.clone());
    let call_held =
        Function::from_typed(|h: ObjectPtr<Holder>, x: i64| h.f.typed::<(i64,), i64>().call((x,)));
    assert_eq!(
        call_held
            .call(&[AnyView::from(&any), AnyView::from(5i64)])
            .unwrap(),
        Any::from(10)
    );
    // A holder whose function captures another holder: a chain, freed from the top.
    let inner = holder.clone();
    let outer = make_object(Holder {
        base: Object::new(),
        f: Function::from_typed(move |x: i64| -> Result<i64, Error> {
            Ok(inner.f.typed::<(i64,), i64>().call((x,))? + 1)
        }),
    });
    assert_eq!(outer.f.typed::<(i64,), i64>().call((4,)).unwrap(), 9);
    assert_eq!(
        ObjectPtr::strong_count(&holder),
        3,
        "holder, any, outer's capture"
    );
    drop((any, outer));
    assert_eq!(ObjectPtr::strong_count(&holder), 1);
    drop(holder);
    assert_eq!(ObjectPtr::strong_count(double.as_object_ptr()), 1);
}

#[test]
fn functions_returning_functions() {
    let _guard = LeakCheck::new();
    let make_adder = Function::from_typed_named("make_adder", |n: i64| {
        Function::from_typed_named("adder", move |x: i64| x + n)
    });
    let add5 = Function::try_from(make_adder.call_with([5i64]).unwrap()).unwrap();
    assert_eq!(add5.name(), Some("adder"));
    assert_eq!(add5.typed::<(i64,), i64>().call((10,)).unwrap(), 15);
    let typed = make_adder.typed::<(i64,), Function>();
    let adders: Vec<Function> = (0..10).map(|n| typed.call((n,)).unwrap()).collect();
    for (n, f) in adders.iter().enumerate() {
        assert_eq!(
            f.typed::<(i64,), i64>().call((100,)).unwrap(),
            100 + n as i64
        );
        assert!(!Function::ptr_eq(f, &add5), "a fresh function each time");
    }
    // Composition: compose(f, g) = f ∘ g.
    let compose = Function::from_typed(|f: Function, g: Function| {
        Function::from_typed(move |x: i64| -> Result<i64, Error> {
            let y = g.typed::<(i64,), i64>().call((x,))?;
            f.typed::<(i64,), i64>().call((y,))
        })
    });
    let double = Function::from_typed(|x: i64| x * 2);
    let c = compose
        .typed::<(&Function, &Function), Function>()
        .call((&double, &add5))
        .unwrap();
    assert_eq!(c.typed::<(i64,), i64>().call((1,)).unwrap(), 12);
    let cc = compose
        .typed::<(&Function, &Function), Function>()
        .call((&c, &c))
        .unwrap();
    assert_eq!(cc.typed::<(i64,), i64>().call((1,)).unwrap(), 34);
    // The composed function keeps its parts alive.
    assert_eq!(ObjectPtr::strong_count(double.as_object_ptr()), 2);
    assert_eq!(ObjectPtr::strong_count(c.as_object_ptr()), 3);
    drop(cc);
    assert_eq!(ObjectPtr::strong_count(c.as_object_ptr()), 1);
    drop(c);
    assert_eq!(ObjectPtr::strong_count(double.as_object_ptr()), 1);
    assert_eq!(ObjectPtr::strong_count(add5.as_object_ptr()), 1);
    // A returned function used on another thread.
    let add7 = typed.call((7,)).unwrap();
    let r = std::thread::spawn(move || add7.typed::<(i64,), i64>().call((1,)).unwrap())
        .join()
        .unwrap();
    assert_eq!(r, 8);
}

#[test]
fn captured_objects_live_exactly_as_long_as_the_function() {
    let _guard = LeakCheck::new();
    static DROPS: DropCounter = DropCounter::new();
    let n = node(3);
    let f = {
        let n = n.clone();
        Function::from_typed(move |x: i64| n.value * x)
    };
    assert_eq!(ObjectPtr::strong_count(&n), 2);
    let g = f.clone();
    assert_eq!(ObjectPtr::strong_count(&n), 2, "clones share the callable");
    assert_eq!(g.typed::<(i64,), i64>().call((5,)).unwrap(), 15);
    assert_eq!(
        ObjectPtr::strong_count(&n),
        2,
        "calls leave no references behind"
    );
    drop(f);
    assert_eq!(ObjectPtr::strong_count(&n), 2);
    drop(g);
    assert_eq!(ObjectPtr::strong_count(&n), 1);

    // A function returning its capture: each result is one more reference.
    let get = {
        let n = n.clone();
        Function::from_typed(move || n.clone())
    };
    let results: Vec<Any> = (0..5).map(|_| get.call(&[]).unwrap()).collect();
    assert_eq!(ObjectPtr::strong_count(&n), 7);
    drop(get);
    assert_eq!(
        ObjectPtr::strong_count(&n),
        6,
        "results outlive the function"
    );
    drop(results);
    assert_eq!(ObjectPtr::strong_count(&n), 1);

    // A tracked object captured: dropped with the last handle, not before.
    let obj = make_object(TrackedObj {
        base: Object::new(),
        _tracked: DROPS.track(),
    });
    let f = Function::from_typed(move || ObjectPtr::strong_count(&obj) as i64);
    assert_eq!(f.call(&[]).unwrap(), Any::from(1));
    let in_any = Any::from(f.clone());
    let in_array: Array<Function> = vec![f.clone(), f.clone()].into();
    drop(f);
    assert_eq!(DROPS.get(), 0);
    drop(in_any);
    assert_eq!(DROPS.get(), 0);
    drop(in_array);
    assert_eq!(DROPS.get(), 1);
}

#[test]
fn callable_is_dropped_exactly_once_in_any_order_on_any_thread() {
    let _guard = LeakCheck::new();
    static DROPS: DropCounter = DropCounter::new();
    const HANDLES: usize = 5;
    // Drop orders: forward, backward, middle out; handles with odd positions in the
    // order are dropped on another thread.
    let orders: [[usize; HANDLES]; 3] = [[0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [2, 0, 4, 1, 3]];
    for order in orders {
        let before = DROPS.get();
        let tracked = DROPS.track();
        let f = Function::from_typed(move |x: i64| {
            let _keep = &tracked;
            x
        });
        let mut handles: Vec<Option<Function>> = (0..HANDLES).map(|_| Some(f.clone())).collect();
        drop(f);
        for (step, &i) in order.iter().enumerate() {
            let h = handles[i].take().unwrap();
            assert_eq!(h.call_with([i as i64]).unwrap(), Any::from(i as i64));
            if step % 2 == 1 {
                std::thread::spawn(move || drop(h)).join().unwrap();
            } else {
                drop(h);
            }
            let expect = usize::from(step == HANDLES - 1);
            assert_eq!(DROPS.get() - before, expect, "order {order:?}, step {step}");
        }
    }
    // All at once from many threads, through different kinds of handles.
    for round in 0..scaled(50, 5) {
        let before = DROPS.get();
        let tracked = DROPS.track();
        let f = Function::from_typed(move || {
            let _keep = &tracked;
        });
        let barrier = Arc::new(Barrier::new(8));
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let handle: Any = match t % 3 {
                    0 => Any::from(f.clone()),
                    1 => Any::from(Array::<Function>::from(vec![f.clone()])),
                    _ => Any::from(f.typed::<(), ()>().function().clone()),
                };
                let barrier = Arc::clone(&barrier);
                std::thread::spawn(move || {
                    barrier.wait();
                    drop(handle);
                })
            })
            .collect();
        drop(f);
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(DROPS.get() - before, 1, "round {round}");
    }
}

// ---------------------------------------------------------------------------------
// 5. Many threads, one function.
// ---------------------------------------------------------------------------------

#[test]
fn eight_threads_call_one_function() {
    let _guard = LeakCheck::new();
    static DROPS: DropCounter = DropCounter::new();
    const THREADS: usize = 8;
    let calls = scaled(1_000_000, 1_000);
    let counted = Arc::new(AtomicUsize::new(0));
    let f = {
        let tracked = DROPS.track();
        let counted = Arc::clone(&counted);
        Function::from_typed(move |x: i64, t: i64| {
            let _keep = &tracked;
            counted.fetch_add(1, Ordering::Relaxed);
            x * 3 + t
        })
    };
    let barrier = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let f = f.clone();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                let mut sum: i64 = 0;
                if t % 2 == 0 {
                    let typed = f.typed::<(i64, i64), i64>();
                    for i in 0..calls as i64 {
                        sum += typed.call((i, t as i64)).unwrap();
                    }
                } else {
                    for i in 0..calls as i64 {
                        let r = f
                            .call(&[AnyView::from(i), AnyView::from(t as i64)])
                            .unwrap();
                        sum += r.as_int().unwrap();
                    }
                }
                sum
            })
        })
        .collect();
    let sums: Vec<i64> = threads.into_iter().map(|h| h.join().unwrap()).collect();
    let n = calls as i64;
    for (t, s) in sums.iter().enumerate() {
        assert_eq!(*s, 3 * n * (n - 1) / 2 + n * t as i64, "thread {t}");
    }
    let total: i64 = sums.iter().sum();
    let t_sum = (THREADS * (THREADS - 1) / 2) as i64;
    assert_eq!(total, THREADS as i64 * 3 * n * (n - 1) / 2 + n * t_sum);
    assert_eq!(counted.load(Ordering::Relaxed), THREADS * calls);
    assert_eq!(DROPS.get(), 0);
    assert_eq!(ObjectPtr::strong_count(f.as_object_ptr()), 1);
    drop(f);
    assert_eq!(DROPS.get(), 1);
    assert_eq!(Arc::strong_count(&counted), 1);
}

// ---------------------------------------------------------------------------------
// 6. Modules.
// ---------------------------------------------------------------------------------

/// A function returning `tag`.
fn tagged(tag: &str) -> Function {
    let tag = tag.to_owned();
    Function::from_typed_named(&tag.clone(), move || tag.clone())
}

fn tag_of(f: &Function) -> std::string::String {
    f.typed::<(), std::string::String>().call(()).unwrap()
}

#[test]
fn module_lookup_and_import_order() {
    let _guard = LeakCheck::new();
    // root imports [a, b]; a imports [c]; b imports [d].
    let c = Module::builder("c")
        .function("deep", tagged("c.deep"))
        .function("shared", tagged("c.shared"))
        .build();
    let d = Module::builder("d")
        .function("deeper_b", tagged("d.deeper_b"))
        .function("shared", tagged("d.shared"))
        .build();
    let a = Module::builder("a")
        .function("pair", tagged("a.pair"))
        .function("only_a", tagged("a.only_a"))
        .import(c.clone())
        .build();
    let b = Module::builder("b")
        .function("pair", tagged("b.pair"))
        .function("shared", tagged("b.shared"))
        .function("only_b", tagged("b.only_b"))
        .import(d.clone())
        .build();
    let root = Module::builder("root")
        .function("main", tagged("root.main"))
        .function("only_b", tagged("root.only_b"))
        .import(a.clone())
        .import(b.clone())
        .build();
    assert_eq!(root.name(), "root");
    let imports: Vec<_> = root.imports().iter().map(Module::name).collect();
    assert_eq!(imports, ["a", "b"]);

    let lookup = |name: &str, q: bool| root.get_function(name, q).map(|f| tag_of(&f));
    // Own functions, with or without imports.
    assert_eq!(lookup("main", false).as_deref(), Some("root.main"));
    assert_eq!(lookup("main", true).as_deref(), Some("root.main"));
    // Own functions shadow imports.
    assert_eq!(lookup("only_b", true).as_deref(), Some("root.only_b"));
    // Imports only when asked.
    assert_eq!(lookup("only_a", false), None);
    assert_eq!(lookup("only_a", true).as_deref(), Some("a.only_a"));
    // In two imports: the first import's.
    assert_eq!(lookup("pair", true).as_deref(), Some("a.pair"));
    // Depth-first: a's import c comes before root's second import b.
    assert_eq!(lookup("shared", true).as_deref(), Some("c.shared"));
    // Through two levels, on either branch.
    assert_eq!(lookup("deep", true).as_deref(), Some("c.deep"));
    assert_eq!(lookup("deeper_b", true).as_deref(), Some("d.deeper_b"));
    assert_eq!(lookup("deep", false), None);
    // From the middle of the tree.
    assert_eq!(
        b.get_function("shared", true)
            .map(|f| tag_of(&f))
            .as_deref(),
        Some("b.shared")
    );
    assert_eq!(
        d.get_function("shared", true)
            .map(|f| tag_of(&f))
            .as_deref(),
        Some("d.shared")
    );
    assert!(
        a.get_function("deeper_b", true).is_none(),
        "siblings are not imports"
    );
    assert_eq!(lookup("missing", true), None);
    assert_eq!(lookup("missing", false), None);
    // The function found is the module's object, not a copy.
    let f = root.get_function("deep", true).unwrap();
    assert!(Function::ptr_eq(
        &f,
        &c.get_function("deep", false).unwrap()
    ));
    assert_eq!(f.name(), Some("c.deep"));
    // Calls through a module work like any other.
    let add = Module::builder("math")
        .function("add", Function::from_typed(|a: i64, b: i64| a + b))
        .build();
    let app = Module::builder("app").import(add).build();
    assert_eq!(
        app.get_function("add", true)
            .unwrap()
            .typed::<(i64, i64), i64>()
            .call((2, 3))
            .unwrap(),
        5
    );

    // Function names: the module's own, sorted; a later definition replaces.
    let m = Module::builder("names")
        .function("zeta", tagged("z"))
        .function("alpha", tagged("a1"))
        .function("mid", tagged("m"))
        .function("alpha", tagged("a2"))
        .import(root.clone())
        .build();
    assert_eq!(
        m.function_names().collect::<Vec<_>>(),
        ["alpha", "mid", "zeta"]
    );
    assert_eq!(tag_of(&m.get_function("alpha", false).unwrap()), "a2");
    assert_eq!(
        root.function_names().collect::<Vec<_>>(),
        ["main", "only_b"]
    );
    assert_eq!(Module::builder("empty").build().function_names().count(), 0);

    // A module keeps its imports (and their functions) alive.
    assert_eq!(ObjectPtr::strong_count(c.as_object_ptr()), 2);
    drop((a, b, m, root));
    assert_eq!(ObjectPtr::strong_count(c.as_object_ptr()), 1);
    assert_eq!(ObjectPtr::strong_count(d.as_object_ptr()), 1);
    assert_eq!(ObjectPtr::strong_count(f.as_object_ptr()), 2, "f and c");
}

#[test]
fn modules_as_values_and_debug() {
    let _guard = LeakCheck::new();
    let lib = Module::builder("lib")
        .function("sq", Function::from_typed(|x: i64| x * x))
        .function("neg", Function::from_typed(|x: i64| -x))
        .build();
    let app = Module::builder("app")
        .function("main", Function::from_typed(|| 0i64))
        .import(lib.clone())
        .build();
    // Any.
    let any = Any::from(app.clone());
    assert_eq!(any.type_key(), "ffi.Module");
    let back = Module::try_from(any.clone()).unwrap();
    assert!(ObjectPtr::ptr_eq(back.as_object_ptr(), app.as_object_ptr()));
    assert_eq!(
        Module::try_from(Any::from(1.5)).unwrap_err().to_string(),
        "expected ffi.Module, got float"
    );
    // Array<Module> and Map<String, Module>.
    let mods: Array<Module> = vec![lib.clone(), app.clone()].into();
    let names: Vec<_> = mods.iter().map(Module::name).collect();
    assert_eq!(names, ["lib", "app"]);
    let by_name: Map<String, Module> = mods
        .iter()
        .map(|m| (String::from(m.name()), m.clone()))
        .collect();
    assert!(by_name
        .get("lib")
        .unwrap()
        .get_function("sq", false)
        .is_some());
    // A module as an argument and a result.
    let call_in = Function::from_typed(
        |m: Module, name: std::string::String, x: i64| -> Result<i64, Error> {
            let f = m.get_function(&name, true).ok_or_else(|| {
                Error::new(
                    "AttributeError",
                    format!("no function `{name}` in `{}`", m.name()),
                )
            })?;
            f.typed::<(i64,), i64>().call((x,))
        },
    );
    assert_eq!(
        call_in
            .call(&[
                AnyView::from(&any),
                AnyView::from("sq"),
                AnyView::from(9i64)
            ])
            .unwrap(),
        Any::from(81)
    );
    let e = fails(call_in.call(&[
        AnyView::from(&any),
        AnyView::from("cube"),
        AnyView::from(2i64),
    ]));
    assert_eq!(
        (e.kind().as_str(), e.message()),
        ("AttributeError", "no function `cube` in `app`")
    );
    let make = Function::from_typed(|name: std::string::String| {
        Module::builder(&name)
            .function("id", Function::from_typed(|x: i64| x))
            .build()
    });
    let made = make
        .typed::<(&str,), Module>()
        .call(("generated",))
        .unwrap();
    assert_eq!(made.name(), "generated");
    assert_eq!(made.function_names().collect::<Vec<_>>(), ["id"]);
    // A module used from several threads.
    let calls = native_or_miri(100, 10) as i64;
    let threads: Vec<_> = (0..4i64)
        .map(|t| {
            let app = app.clone();
            std::thread::spawn(move || {
                let sq = app.get_function("sq", true).unwrap().typed::<(i64,), i64>();
                (0..calls).map(|i| sq.call((i + t,)).unwrap()).sum::<i64>()
            })
        })
        .collect();
    for (t, h) in threads.into_iter().enumerate() {
        let t = t as i64;
        assert_eq!(
            h.join().unwrap(),
            (0..calls).map(|i| (i + t) * (i + t)).sum()
        );
    }
    // Debug: the name, the own function names (sorted) and the imports' names.
    let dbg = format!("{app:?}");
    for part in [r#""app""#, r#"["main"]"#, r#"["lib"]"#] {
        assert!(dbg.contains(part), "{part} in {dbg}");
    }
    let dbg = format!("{lib:?}");
    for part in [r#""lib""#, r#"["neg", "sq"]"#, "[]"] {
        assert!(dbg.contains(part), "{part} in {dbg}");
    }
}

#[test]
fn diamond_imports_are_searched_once_each() {
    let _guard = LeakCheck::new();
    // Level i imports level i - 1 twice (two paths to every lower module, a "diamond"
    // at each level): a search that does not remember visited modules makes 2^k visits.
    let levels = native_or_miri(64, 12);
    let bottom = Module::builder("m0")
        .function("found", tagged("m0.found"))
        .build();
    let mut top = bottom.clone();
    for i in 1..=levels {
        top = Module::builder(&format!("m{i}"))
            .function(&format!("own{i}"), tagged(&format!("m{i}.own")))
            .import(top.clone())
            .import(top)
            .build();
    }
    let (missing, found, own) = within_timeout("a search through shared imports", {
        let top = top.clone();
        move || {
            (
                top.get_function("missing", true).is_none(),
                top.get_function("found", true).map(|f| tag_of(&f)),
                top.get_function("own1", true).map(|f| tag_of(&f)),
            )
        }
    });
    assert!(missing);
    assert_eq!(found.as_deref(), Some("m0.found"));
    assert_eq!(own.as_deref(), Some("m1.own"));
    drop((top, bottom));
}

#[test]
fn import_search_order_with_shared_modules() {
    let _guard = LeakCheck::new();
    // root imports [a, b, s]; a imports [s, c]; b imports [s]; s is shared. Depth-first
    // in import order, each module once: root, a, s, c, b.
    let s = Module::builder("s").function("x", tagged("s.x")).build();
    let c = Module::builder("c")
        .function("x", tagged("c.x"))
        .function("y", tagged("c.y"))
        .build();
    let a = Module::builder("a")
        .import(s.clone())
        .import(c.clone())
        .build();
    let b = Module::builder("b")
        .function("y", tagged("b.y"))
        .function("z", tagged("b.z"))
        .import(s.clone())
        .build();
    let root = Module::builder("root")
        .import(a)
        .import(b)
        .import(s)
        .build();
    let lookup = |name: &str| root.get_function(name, true).map(|f| tag_of(&f));
    assert_eq!(
        lookup("x").as_deref(),
        Some("s.x"),
        "s (through a) before c"
    );
    assert_eq!(lookup("y").as_deref(), Some("c.y"), "a's subtree before b");
    assert_eq!(lookup("z").as_deref(), Some("b.z"));
    assert_eq!(lookup("w"), None);
}

// ---------------------------------------------------------------------------------
// 6. Nothing a caller gives can abort the process.
// ---------------------------------------------------------------------------------

/// Runs the `#[ignore]`d test `name` of this binary in a child process (so that an abort
/// fails this test instead of killing the whole binary) and checks that it exited
/// normally and printed `"<name>: done"`.
fn run_child(name: &str) {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            name,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("FTEST_ABORT_CHILD", name)
        .output()
        .unwrap();
    let stdout = std::string::String::from_utf8_lossy(&out.stdout);
    let stderr = std::string::String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(&format!("{name}: done")),
        "child `{name}` failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
}

/// Whether this process is the child started by [`run_child`] for `name`.
fn is_child(name: &str) -> bool {
    // Under Miri, which cannot spawn processes, the child scenarios run in-process (the
    // fixed code does not abort) and the parents are ignored.
    cfg!(miri) || std::env::var("FTEST_ABORT_CHILD").is_ok_and(|v| v == name)
}

/// An argument type whose conversion panics on 13.
#[derive(Debug)]
struct PanicsOnThirteen(i64);

impl FromArg for PanicsOnThirteen {
    fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError> {
        let x = i64::from_arg(v)?;
        assert!(x != 13, "converting 13");
        Ok(PanicsOnThirteen(x))
    }
}

/// An argument type whose drop panics when it holds a negative number.
#[derive(Debug)]
struct PanicsOnDrop(i64);

impl FromArg for PanicsOnDrop {
    fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError> {
        i64::from_arg(v).map(PanicsOnDrop)
    }
}

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        assert!(self.0 >= 0, "dropping {}", self.0);
    }
}

/// A return type whose conversion panics.
struct PanicsOnReturn;

impl object_containers::IntoRet for PanicsOnReturn {
    fn into_ret(self) -> Result<Any, Error> {
        panic!("returning")
    }
}

/// An argument type the quick conversion always leaves to the full one.
struct SlowOnly(i64);

impl FromArg for SlowOnly {
    fn from_arg(v: AnyView<'_>) -> Result<Self, TypeError> {
        i64::from_arg(v).map(SlowOnly)
    }
    fn from_arg_quick(_: AnyView<'_>) -> Option<Self> {
        None
    }
}

/// The `Panic` error of a call that must fail, with the function's frame.
#[track_caller]
fn panicked<T: std::fmt::Debug>(r: Result<T, Error>, message: &str, frame: &str) {
    let e = r.expect_err("the call must fail");
    assert_eq!((e.kind().as_str(), e.message()), ("Panic", message), "{e}");
    assert_eq!(e.frames(), [frame]);
    assert!(take_last_error().is_none());
}

#[test]
#[cfg_attr(
    not(miri),
    ignore = "helper: run in a child process by user_conversions_that_panic_are_errors"
)]
fn user_conversions_that_panic_child() {
    const NAME: &str = "user_conversions_that_panic_child";
    if !is_child(NAME) {
        return;
    }
    // Under Miri this runs in-process beside the other tests: it counts its objects.
    let _guard = LeakCheck::new();
    let one = Function::from_typed_named("one", |x: PanicsOnThirteen| x.0);
    let two = Function::from_typed_named("two", |x: i64, y: PanicsOnThirteen| x + y.0);
    let eight = Function::from_typed_named(
        "eight",
        |a: i64, b: i64, c: i64, d: i64, e: i64, f: i64, g: i64, h: PanicsOnThirteen| {
            a + b + c + d + e + f + g + h.0
        },
    );
    let dropper = Function::from_typed_named("dropper", |x: PanicsOnDrop, y: i64| x.0 + y);
    let ret = Function::from_typed_named("ret", |_: i64| PanicsOnReturn);
    // A `FromArg` that panics: through the C entry point and through the typed views'
    // fast entries alike.
    panicked(one.call_with([13i64]), "converting 13", "one");
    panicked(
        one.typed::<(i64,), i64>().call((13,)),
        "converting 13",
        "one",
    );
    panicked(
        two.typed::<(i64, i64), i64>().call((1, 13)),
        "converting 13",
        "two",
    );
    panicked(two.call_with([1i64, 13]), "converting 13", "two");
    panicked(
        eight
            .typed::<(i64, i64, i64, i64, i64, i64, i64, i64), i64>()
            .call((1, 2, 3, 4, 5, 6, 7, 13)),
        "converting 13",
        "eight",
    );
    // The drop of an argument that panics: after the call, and when a later argument
    // fails to convert (the earlier one is dropped before the full conversion).
    panicked(
        dropper.typed::<(i64, i64), i64>().call((-1, 1)),
        "dropping -1",
        "dropper",
    );
    panicked(
        dropper.typed::<(i64, &str), i64>().call((-2, "x")),
        "dropping -2",
        "dropper",
    );
    panicked(dropper.call_with([-3i64, 1]), "dropping -3", "dropper");
    // An `IntoRet` that panics.
    panicked(ret.typed::<(i64,), Any>().call((1,)), "returning", "ret");
    panicked(ret.call_with([1i64]), "returning", "ret");
    // The functions work on.
    assert_eq!(one.typed::<(i64,), i64>().call((12,)).unwrap(), 12);
    assert_eq!(two.typed::<(i64, i64), i64>().call((1, 2)).unwrap(), 3);
    assert_eq!(dropper.typed::<(i64, i64), i64>().call((1, 2)).unwrap(), 3);
    let e = dropper
        .typed::<(i64, &str), i64>()
        .call((1, "x"))
        .unwrap_err();
    assert_eq!(e.kind(), "TypeError");
    println!("{NAME}: done");
}

#[test]
#[cfg_attr(
    miri,
    ignore = "spawns processes; under Miri its child scenario runs in-process"
)]
fn user_conversions_that_panic_are_errors() {
    run_child("user_conversions_that_panic_child");
}

/// A panic payload whose drop panics, with a payload whose drop panics in turn.
struct LoudPayload(u32);

/// How many `LoudPayload`s were dropped.
static LOUD_DROPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Drop for LoudPayload {
    fn drop(&mut self) {
        LOUD_DROPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if self.0 > 0 {
            std::panic::panic_any(LoudPayload(self.0 - 1));
        }
    }
}

#[test]
#[cfg_attr(
    not(miri),
    ignore = "helper: run in a child process by panic_payloads_that_panic_on_drop_are_errors"
)]
fn panic_payload_drop_child() {
    const NAME: &str = "panic_payload_drop_child";
    if !is_child(NAME) {
        return;
    }
    // Under Miri this runs in-process beside the other tests: it counts its objects.
    let _guard = LeakCheck::new();
    let message = "a panic with a non-string payload";
    let packed = Function::from_packed_named(Some("packed"), |_: &[AnyView<'_>]| {
        std::panic::panic_any(LoudPayload(3))
    });
    let typed = Function::from_typed_named("typed", |x: i64| -> i64 {
        std::panic::panic_any(LoudPayload(x as u32))
    });
    let before = LOUD_DROPS.load(std::sync::atomic::Ordering::Relaxed);
    panicked(packed.call(&[]), message, "packed");
    // Each payload in the chain 3, 2, 1, 0 is dropped: none is leaked.
    assert_eq!(
        LOUD_DROPS.load(std::sync::atomic::Ordering::Relaxed) - before,
        4
    );
    panicked(typed.call_with([2i64]), message, "typed");
    panicked(typed.typed::<(i64,), i64>().call((2,)), message, "typed");
    // The slow paths (a conversion the quick one leaves to the full one): the C entry
    // point's, and the fast entry's way through the C entry point.
    let slow = Function::from_typed_named("slow", |x: SlowOnly| -> i64 {
        std::panic::panic_any(LoudPayload(x.0 as u32))
    });
    panicked(slow.call_with([2i64]), message, "slow");
    panicked(slow.typed::<(i64,), i64>().call((2,)), message, "slow");
    println!("{NAME}: done");
}

#[test]
#[cfg_attr(
    miri,
    ignore = "spawns processes; under Miri its child scenario runs in-process"
)]
fn panic_payloads_that_panic_on_drop_are_errors() {
    run_child("panic_payload_drop_child");
}

/// `call_with` keeps its arguments inline up to 8 and spills beyond: every count around
/// the boundary passes every argument, in order.
#[test]
fn call_with_passes_every_argument_around_the_inline_limit() {
    let _leaks = LeakCheck::new();
    let digits = Function::from_packed(|args| {
        let mut out = 0i64;
        for a in args {
            out = out * 10 + i64::try_from(*a).map_err(|e| Error::type_error(e.to_string()))?;
        }
        Ok(Any::from(out))
    });
    assert_eq!(Function::INLINE_ARGS, 8);
    for n in [0usize, 1, 7, 8, 9, 10, 17] {
        let args: Vec<i64> = (0..n as i64).map(|i| i % 9 + 1).collect();
        let want = args
            .iter()
            .fold(0i64, |acc, d| acc.wrapping_mul(10).wrapping_add(*d));
        let got = digits.call_with(args.iter().copied()).unwrap();
        assert_eq!(got.as_int(), Some(want), "{n} arguments");
    }
    // Object arguments beyond the limit stay alive for the call.
    let count = Function::from_packed(|args| {
        Ok(Any::from(
            args.iter()
                .filter(|a| a.as_str() == Some("long string argument"))
                .count() as i64,
        ))
    });
    let strings: Vec<Any> = (0..12).map(|_| Any::from("long string argument")).collect();
    assert_eq!(count.call_with(&strings).unwrap().as_int(), Some(12));
}
