//! Containers: `Array<T>` and `Map<K, V>` checked against plain Rust models by proptest
//! (random operation sequences, clones taken midway that must never change, exact
//! reference counts), heterogeneous arrays down-cast back, the checked zero-copy typed
//! view, bad input (clear errors, never a panic), copy-on-write and amortized growth.
//!
//! Every test starts with a [`LeakCheck`]: it serializes the tests of this binary and
//! checks that `live_objects()` is back to where it started when the test ends.

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};

use object_containers::{Array, ArrayError, ArrayObj, Map, MapObj, Shape, String};
use object_core::{
    live_objects, make_object, Any, AnyView, Object, ObjectPtr, ObjectRef, StringObj, TypeError,
};
use object_tests::{native_or_miri, scaled, DropCounter, Tracked};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

// ---------------------------------------------------------------------------------
// Leak guard.
// ---------------------------------------------------------------------------------

use object_tests::LeakCheck;

// ---------------------------------------------------------------------------------
// Expression nodes.
// ---------------------------------------------------------------------------------

#[derive(Object, Clone)]
#[repr(C)]
#[object(key = "ctest.Expr", slots = 4)]
struct Expr {
    base: Object,
    span: u32,
}

#[derive(Object, Clone)]
#[repr(C)]
#[object(key = "ctest.Var", parent = Expr, final)]
struct Var {
    base: Expr,
    name: std::string::String,
}

#[derive(Object, Clone)]
#[repr(C)]
#[object(key = "ctest.Add", parent = Expr, final)]
struct Add {
    base: Expr,
    lhs: ObjectPtr<Expr>,
    rhs: ObjectPtr<Expr>,
}

/// An object that counts its drops.
#[derive(Object)]
#[repr(C)]
#[object(key = "ctest.Tracked", final)]
struct TrackedObj {
    base: Object,
    #[object(skip)]
    _tracked: Tracked,
}

fn expr_base() -> Expr {
    Expr {
        base: Object::new(),
        span: 0,
    }
}

fn var(name: &str) -> ObjectPtr<Var> {
    make_object(Var {
        base: expr_base(),
        name: name.to_owned(),
    })
}

fn add(lhs: ObjectPtr<Expr>, rhs: ObjectPtr<Expr>) -> ObjectPtr<Add> {
    make_object(Add {
        base: expr_base(),
        lhs,
        rhs,
    })
}

fn tracked(counter: &'static DropCounter) -> ObjectPtr<TrackedObj> {
    make_object(TrackedObj {
        base: Object::new(),
        _tracked: counter.track(),
    })
}

fn proptest_config() -> Config {
    Config {
        cases: scaled(256, native_or_miri(8, 2)) as u32,
        failure_persistence: None,
        ..Config::default()
    }
}

/// Runs a proptest and turns a failure into a panic with the (shrunk) input.
fn run_proptest<S: Strategy>(strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>)
where
    S::Value: std::fmt::Debug,
{
    let mut runner = TestRunner::new(proptest_config());
    if let Err(e) = runner.run(&strategy, test) {
        panic!("{e}");
    }
}

// ---------------------------------------------------------------------------------
// Values for the models.
// ---------------------------------------------------------------------------------

/// The objects values may refer to, by index (made fresh for every case).
const POOL: usize = 4;

fn make_pool() -> Vec<ObjectRef> {
    vec![
        var("x").into_object_ref(),
        var("y").into_object_ref(),
        add(var("a").upcast(), var("b").upcast()).into_object_ref(),
        make_object(Object::new()),
    ]
}

/// A value in a model: what an `Any` slot should hold.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    None,
    Int(i64),
    Float(u64),
    /// `Any::from(&str)`: inline when at most 7 bytes, else an `ffi.String`.
    Str(std::string::String),
    /// `Any::from(String)`: always an `ffi.String` object.
    StrObj(std::string::String),
    /// `POOL[i]`.
    Obj(usize),
}

fn val() -> impl Strategy<Value = Val> {
    prop_oneof![
        1 => Just(Val::None),
        3 => any::<i64>().prop_map(Val::Int),
        1 => any::<u64>().prop_map(Val::Float),
        3 => "[a-zé]{0,8}".prop_map(Val::Str),
        2 => "[a-z ]{8,24}".prop_map(Val::Str),
        1 => "[a-z]{0,10}".prop_map(Val::StrObj),
        4 => (0..POOL).prop_map(Val::Obj),
    ]
}

fn make_any(v: &Val, pool: &[ObjectRef]) -> Any {
    match v {
        Val::None => Any::NONE,
        Val::Int(i) => Any::from(*i),
        Val::Float(bits) => Any::from(f64::from_bits(*bits)),
        Val::Str(s) => Any::from(s.as_str()),
        Val::StrObj(s) => Any::from(string_object(s)),
        Val::Obj(i) => Any::from(pool[*i].clone()),
    }
}

/// Whether `a` holds `v` (checked without `Any`'s own equality).
fn holds(a: &Any, v: &Val, pool: &[ObjectRef]) -> bool {
    match v {
        Val::None => a.is_none(),
        Val::Int(i) => a.type_key() == "int" && a.as_int() == Some(*i),
        Val::Float(bits) => {
            a.type_key() == "float" && a.as_float().map(f64::to_bits) == Some(*bits)
        }
        Val::Str(s) => {
            let key = if s.len() <= object_core::SMALL_STR_MAX {
                "ffi.SmallStr"
            } else {
                "ffi.String"
            };
            a.type_key() == key && a.as_str() == Some(s.as_str())
        }
        Val::StrObj(s) => a.type_key() == "ffi.String" && a.as_str() == Some(s.as_str()),
        Val::Obj(i) => a
            .as_object()
            .is_some_and(|o| ObjectPtr::ptr_eq(o, &pool[*i])),
    }
}

fn check_array(arr: &Array<Any>, model: &[Val], pool: &[ObjectRef]) -> Result<(), TestCaseError> {
    prop_assert_eq!(arr.len(), model.len());
    prop_assert_eq!(arr.is_empty(), model.is_empty());
    prop_assert!(arr.capacity() >= arr.len());
    prop_assert_eq!(arr.iter().len(), model.len());
    for (i, (a, v)) in arr.iter().zip(model).enumerate() {
        prop_assert!(holds(a, v, pool), "item {}: {:?} is not {:?}", i, a, v);
        prop_assert!(arr.get(i).is_some_and(|g| std::ptr::eq(g, a)));
    }
    for (a, v) in arr.iter().rev().zip(model.iter().rev()) {
        prop_assert!(holds(a, v, pool));
    }
    prop_assert!(arr.get(model.len()).is_none());
    prop_assert_eq!(arr.first().is_some(), !model.is_empty());
    prop_assert_eq!(arr.last().is_some(), !model.is_empty());
    if let (Some(a), Some(v)) = (arr.last(), model.last()) {
        prop_assert!(holds(a, v, pool));
    }
    Ok(())
}

/// The exact strong count of every pool object: the pool's own handle plus one per
/// occurrence in each distinct container object (clones that were never mutated share
/// one object, so count it once).
fn check_counts<'a, C: 'a>(
    pool: &[ObjectRef],
    containers: impl IntoIterator<Item = (&'a C, Vec<usize>)>,
    same: impl Fn(&C, &C) -> bool,
) -> Result<(), TestCaseError> {
    let mut seen: Vec<&C> = Vec::new();
    let mut expected = vec![1u32; pool.len()];
    for (c, objs) in containers {
        if seen.iter().any(|s| same(s, c)) {
            continue;
        }
        seen.push(c);
        for i in objs {
            expected[i] += 1;
        }
    }
    for (i, o) in pool.iter().enumerate() {
        prop_assert_eq!(ObjectPtr::strong_count(o), expected[i], "pool object {}", i);
    }
    Ok(())
}

fn objs_of<'a>(vals: impl IntoIterator<Item = &'a Val>) -> Vec<usize> {
    vals.into_iter()
        .filter_map(|v| match v {
            Val::Obj(i) => Some(*i),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------
// Array model test.
// ---------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum ArrOp {
    Push(Val),
    Pop,
    Insert(usize, Val),
    Remove(usize),
    Set(usize, Val),
    Get(usize),
    Clear,
    Extend(Vec<Val>),
    /// Keep a clone and a copy of the model: the clone must never change.
    Snapshot,
    DropSnapshot(usize),
    /// Mutate a clone; the original must not change.
    ForkAndMutate(Val),
}

fn arr_op() -> impl Strategy<Value = ArrOp> {
    let idx = || 0..40usize;
    prop_oneof![
        8 => val().prop_map(ArrOp::Push),
        2 => Just(ArrOp::Pop),
        3 => (idx(), val()).prop_map(|(i, v)| ArrOp::Insert(i, v)),
        3 => idx().prop_map(ArrOp::Remove),
        3 => (idx(), val()).prop_map(|(i, v)| ArrOp::Set(i, v)),
        2 => idx().prop_map(ArrOp::Get),
        1 => Just(ArrOp::Clear),
        2 => prop::collection::vec(val(), 0..10).prop_map(ArrOp::Extend),
        2 => Just(ArrOp::Snapshot),
        1 => any::<usize>().prop_map(ArrOp::DropSnapshot),
        1 => val().prop_map(ArrOp::ForkAndMutate),
    ]
}

fn run_array_ops(ops: Vec<ArrOp>) -> Result<(), TestCaseError> {
    let base = live_objects();
    {
        let pool = make_pool();
        let mut arr: Array<Any> = Array::new();
        let mut model: Vec<Val> = Vec::new();
        let mut snapshots: Vec<(Array<Any>, Vec<Val>)> = Vec::new();
        for op in ops {
            match op {
                ArrOp::Push(v) => {
                    arr.push(make_any(&v, &pool));
                    model.push(v);
                }
                ArrOp::Pop => {
                    let got = arr.pop();
                    match model.pop() {
                        Some(v) => prop_assert!(got.is_some_and(|a| holds(&a, &v, &pool))),
                        None => prop_assert!(got.is_none()),
                    }
                }
                ArrOp::Insert(i, v) => {
                    let len = model.len();
                    let r = arr.insert(i, make_any(&v, &pool));
                    if i <= len {
                        prop_assert_eq!(r, Ok(()));
                        model.insert(i, v);
                    } else {
                        prop_assert_eq!(r, Err(ArrayError::OutOfRange { index: i, len }));
                    }
                }
                ArrOp::Remove(i) => {
                    let len = model.len();
                    let r = arr.remove(i);
                    if i < len {
                        let v = model.remove(i);
                        prop_assert!(r.is_ok_and(|a| holds(&a, &v, &pool)));
                    } else {
                        prop_assert_eq!(r, Err(ArrayError::OutOfRange { index: i, len }));
                    }
                }
                ArrOp::Set(i, v) => {
                    let len = model.len();
                    let r = arr.set(i, make_any(&v, &pool));
                    if i < len {
                        let old = std::mem::replace(&mut model[i], v);
                        prop_assert!(r.is_ok_and(|a| holds(&a, &old, &pool)));
                    } else {
                        prop_assert_eq!(r, Err(ArrayError::OutOfRange { index: i, len }));
                    }
                }
                ArrOp::Get(i) => match model.get(i) {
                    Some(v) => prop_assert!(arr.get(i).is_some_and(|a| holds(a, v, &pool))),
                    None => prop_assert!(arr.get(i).is_none()),
                },
                ArrOp::Clear => {
                    arr.clear();
                    model.clear();
                }
                ArrOp::Extend(vs) => {
                    arr.extend(vs.iter().map(|v| make_any(v, &pool)));
                    model.extend(vs);
                }
                ArrOp::Snapshot => snapshots.push((arr.clone(), model.clone())),
                ArrOp::DropSnapshot(i) => {
                    if !snapshots.is_empty() {
                        let (a, m) = snapshots.remove(i % snapshots.len());
                        check_array(&a, &m, &pool)?;
                    }
                }
                ArrOp::ForkAndMutate(v) => {
                    let mut fork = arr.clone();
                    fork.push(make_any(&v, &pool));
                    if !model.is_empty() {
                        prop_assert!(fork.set(0, make_any(&v, &pool)).is_ok());
                        prop_assert!(fork.remove(model.len() / 2).is_ok());
                    }
                    prop_assert!(
                        !Array::ptr_eq(&fork, &arr),
                        "a mutated clone must be a copy"
                    );
                    let mut expect = model.clone();
                    expect.push(v.clone());
                    if !model.is_empty() {
                        expect[0] = v;
                        expect.remove(model.len() / 2);
                    }
                    check_array(&fork, &expect, &pool)?;
                    drop(fork);
                }
            }
            check_array(&arr, &model, &pool)?;
            let all = std::iter::once((&arr, objs_of(&model)))
                .chain(snapshots.iter().map(|(a, m)| (a, objs_of(m))));
            check_counts(&pool, all, Array::ptr_eq)?;
        }
        // Clones taken midway never changed.
        for (a, m) in &snapshots {
            check_array(a, m, &pool)?;
        }
        drop((arr, snapshots));
        for o in &pool {
            prop_assert_eq!(ObjectPtr::strong_count(o), 1);
        }
    }
    prop_assert_eq!(live_objects(), base, "a case leaked objects");
    Ok(())
}

#[test]
fn array_matches_vec_model() {
    let _guard = LeakCheck::new();
    run_proptest(
        prop::collection::vec(arr_op(), 0..native_or_miri(80, 12)),
        run_array_ops,
    );
}

// ---------------------------------------------------------------------------------
// Map<String, i64> model test.
// ---------------------------------------------------------------------------------

/// Keys: short (inline as `Any`), at the 7/8-byte boundary, long, and one non-ASCII.
const KEYS: &[&str] = &[
    "",
    "a",
    "b",
    "1",
    "abcdefg",
    "abcdefgh",
    "é",
    "a considerably longer key",
    "another long key, for the table",
    "ключ-длинный",
];

#[derive(Debug, Clone)]
enum StrMapOp {
    Insert(usize, i64),
    /// Remove, looking the key up in form `.1` (`&str`, `&String`, `&Any`).
    Remove(usize, u8),
    Get(usize, u8),
    Contains(usize, u8),
    Extend(Vec<(usize, i64)>),
    Snapshot,
    DropSnapshot(usize),
    ForkAndMutate(usize, i64),
}

fn key_idx() -> impl Strategy<Value = usize> {
    0..KEYS.len()
}

fn str_map_op() -> impl Strategy<Value = StrMapOp> {
    prop_oneof![
        8 => (key_idx(), any::<i64>()).prop_map(|(k, v)| StrMapOp::Insert(k, v)),
        5 => (key_idx(), 0..3u8).prop_map(|(k, f)| StrMapOp::Remove(k, f)),
        2 => (key_idx(), 0..3u8).prop_map(|(k, f)| StrMapOp::Get(k, f)),
        2 => (key_idx(), 0..3u8).prop_map(|(k, f)| StrMapOp::Contains(k, f)),
        1 => prop::collection::vec((key_idx(), any::<i64>()), 0..6).prop_map(StrMapOp::Extend),
        2 => Just(StrMapOp::Snapshot),
        1 => any::<usize>().prop_map(StrMapOp::DropSnapshot),
        1 => (key_idx(), any::<i64>()).prop_map(|(k, v)| StrMapOp::ForkAndMutate(k, v)),
    ]
}

/// An `ffi.String` object holding `text`, however short (a `String` handle keeps up to
/// 7 bytes inline).
fn string_object(text: &str) -> ObjectPtr<StringObj> {
    String::from(text).into_object_ptr()
}

/// Looks `key` up in one of three forms: a borrowed `&str`, a `String` object, or an
/// `Any` (inline when short).
fn with_str_key<R>(key: &str, form: u8, f: impl FnOnce(AnyView<'_>) -> R) -> R {
    match form {
        0 => f(AnyView::from(key)),
        1 => f(AnyView::from(&String::from_object_ptr(string_object(key)))),
        _ => f(Any::from(key).view()),
    }
}

fn model_insert<K: PartialEq, V>(model: &mut Vec<(K, V)>, k: K, v: V) -> Option<V> {
    match model.iter_mut().find(|(mk, _)| *mk == k) {
        Some((_, mv)) => Some(std::mem::replace(mv, v)),
        None => {
            model.push((k, v));
            None
        }
    }
}

fn model_remove<K: PartialEq, V>(model: &mut Vec<(K, V)>, k: &K) -> Option<V> {
    let pos = model.iter().position(|(mk, _)| mk == k)?;
    Some(model.remove(pos).1)
}

fn check_str_map(m: &Map<String, i64>, model: &[(&str, i64)]) -> Result<(), TestCaseError> {
    prop_assert_eq!(m.len(), model.len());
    prop_assert_eq!(m.is_empty(), model.is_empty());
    let got: Vec<(&str, i64)> = m.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    prop_assert_eq!(&got[..], model, "iteration follows insertion order");
    let rev: Vec<(&str, i64)> = m.iter().rev().map(|(k, v)| (k.as_str(), *v)).collect();
    prop_assert!(rev.iter().eq(model.iter().rev()));
    prop_assert!(m.keys().map(|k| k.as_str()).eq(model.iter().map(|e| e.0)));
    prop_assert!(m.values().copied().eq(model.iter().map(|e| e.1)));
    for (form, k) in KEYS.iter().enumerate() {
        let want = model.iter().find(|e| e.0 == *k).map(|e| e.1);
        prop_assert_eq!(with_str_key(k, form as u8 % 3, |v| m.get(v).copied()), want);
        prop_assert_eq!(m.contains_key(*k), want.is_some());
    }
    Ok(())
}

type StrModel = Vec<(&'static str, i64)>;

fn run_str_map_ops(ops: Vec<StrMapOp>) -> Result<(), TestCaseError> {
    let base = live_objects();
    {
        let mut m: Map<String, i64> = Map::new();
        let mut model: StrModel = Vec::new();
        let mut snapshots: Vec<(Map<String, i64>, StrModel)> = Vec::new();
        for op in ops {
            match op {
                StrMapOp::Insert(k, v) => {
                    let old = m.insert(String::from(KEYS[k]), v);
                    prop_assert_eq!(old, model_insert(&mut model, KEYS[k], v));
                }
                StrMapOp::Remove(k, form) => {
                    let old = with_str_key(KEYS[k], form, |key| m.remove(key));
                    prop_assert_eq!(old, model_remove(&mut model, &KEYS[k]));
                }
                StrMapOp::Get(k, form) => {
                    let got = with_str_key(KEYS[k], form, |key| m.get(key).copied());
                    let want = model.iter().find(|e| e.0 == KEYS[k]).map(|e| e.1);
                    prop_assert_eq!(got, want);
                }
                StrMapOp::Contains(k, form) => {
                    let got = with_str_key(KEYS[k], form, |key| m.contains_key(key));
                    prop_assert_eq!(got, model.iter().any(|e| e.0 == KEYS[k]));
                }
                StrMapOp::Extend(kvs) => {
                    m.extend(kvs.iter().map(|&(k, v)| (String::from(KEYS[k]), v)));
                    for (k, v) in kvs {
                        model_insert(&mut model, KEYS[k], v);
                    }
                }
                StrMapOp::Snapshot => snapshots.push((m.clone(), model.clone())),
                StrMapOp::DropSnapshot(i) => {
                    if !snapshots.is_empty() {
                        let (s, sm) = snapshots.remove(i % snapshots.len());
                        check_str_map(&s, &sm)?;
                    }
                }
                StrMapOp::ForkAndMutate(k, v) => {
                    let mut fork = m.clone();
                    let mut expect = model.clone();
                    fork.insert(String::from(KEYS[k]), v);
                    model_insert(&mut expect, KEYS[k], v);
                    if let Some(&(first, _)) = model.first() {
                        fork.remove(first);
                        model_remove(&mut expect, &first);
                    }
                    prop_assert!(!Map::ptr_eq(&fork, &m), "a mutated clone must be a copy");
                    check_str_map(&fork, &expect)?;
                }
            }
            check_str_map(&m, &model)?;
        }
        for (s, sm) in &snapshots {
            check_str_map(s, sm)?;
        }
        // Equality is by content, in any order.
        let rebuilt: Map<String, i64> = model
            .iter()
            .rev()
            .map(|&(k, v)| (String::from(k), v))
            .collect();
        prop_assert!(rebuilt == m);
    }
    prop_assert_eq!(live_objects(), base, "a case leaked objects");
    Ok(())
}

#[test]
fn string_map_matches_ordered_model() {
    let _guard = LeakCheck::new();
    run_proptest(
        prop::collection::vec(str_map_op(), 0..native_or_miri(100, 12)),
        run_str_map_ops,
    );
}

// ---------------------------------------------------------------------------------
// Map<Any, Any> model test.
// ---------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum KeyVal {
    Int(i64),
    Str(&'static str),
}

/// A key and the form it is passed in (inline or object string; `i64`, `i32` or `Any`
/// integer).
#[derive(Debug, Clone)]
struct Key(KeyVal, u8);

fn any_key() -> impl Strategy<Value = Key> {
    prop_oneof![
        (-3..8i64, 0..3u8).prop_map(|(i, f)| Key(KeyVal::Int(i), f)),
        (key_idx(), 0..3u8).prop_map(|(k, f)| Key(KeyVal::Str(KEYS[k]), f)),
    ]
}

impl Key {
    fn to_any(&self) -> Any {
        match (&self.0, self.1 % 2) {
            (KeyVal::Int(i), 0) => Any::from(*i),
            (KeyVal::Int(i), _) => Any::from(*i as i32),
            (KeyVal::Str(s), 0) => Any::from(*s),
            (KeyVal::Str(s), _) => Any::from(string_object(s)),
        }
    }

    fn with_view<R>(&self, f: impl FnOnce(AnyView<'_>) -> R) -> R {
        match &self.0 {
            KeyVal::Int(i) => match self.1 {
                0 => f(AnyView::from(*i)),
                1 => f(AnyView::from(*i as i32)),
                _ => f(Any::from(*i).view()),
            },
            KeyVal::Str(s) => with_str_key(s, self.1, f),
        }
    }
}

fn key_holds(a: &Any, k: &KeyVal) -> bool {
    match k {
        KeyVal::Int(i) => a.type_key() == "int" && a.as_int() == Some(*i),
        KeyVal::Str(s) => a.as_str() == Some(*s),
    }
}

#[derive(Debug, Clone)]
enum AnyMapOp {
    Insert(Key, Val),
    Remove(Key),
    Get(Key),
    Contains(Key),
    Snapshot,
    DropSnapshot(usize),
    ForkAndMutate(Key, Val),
}

fn any_map_op() -> impl Strategy<Value = AnyMapOp> {
    prop_oneof![
        8 => (any_key(), val()).prop_map(|(k, v)| AnyMapOp::Insert(k, v)),
        5 => any_key().prop_map(AnyMapOp::Remove),
        2 => any_key().prop_map(AnyMapOp::Get),
        2 => any_key().prop_map(AnyMapOp::Contains),
        2 => Just(AnyMapOp::Snapshot),
        1 => any::<usize>().prop_map(AnyMapOp::DropSnapshot),
        1 => (any_key(), val()).prop_map(|(k, v)| AnyMapOp::ForkAndMutate(k, v)),
    ]
}

type AnyModel = Vec<(KeyVal, Val)>;

fn check_any_map(m: &Map, model: &AnyModel, pool: &[ObjectRef]) -> Result<(), TestCaseError> {
    prop_assert_eq!(m.len(), model.len());
    prop_assert_eq!(m.iter().count(), model.len());
    for ((k, v), (mk, mv)) in m.iter().zip(model) {
        prop_assert!(key_holds(k, mk), "key {:?} is not {:?}", k, mk);
        prop_assert!(holds(v, mv, pool), "value {:?} is not {:?}", v, mv);
        prop_assert!(m.get(k).is_some_and(|g| std::ptr::eq(g, v)));
    }
    for ((k, v), (mk, mv)) in m.iter().rev().zip(model.iter().rev()) {
        prop_assert!(key_holds(k, mk) && holds(v, mv, pool));
    }
    for (mk, mv) in model {
        for form in 0..3 {
            let key = Key(mk.clone(), form);
            prop_assert!(key.with_view(|kv| m.get(kv).is_some_and(|g| holds(g, mv, pool))));
            prop_assert!(key.with_view(|kv| m.contains_key(kv)));
        }
    }
    Ok(())
}

fn run_any_map_ops(ops: Vec<AnyMapOp>) -> Result<(), TestCaseError> {
    let base = live_objects();
    {
        let pool = make_pool();
        let mut m: Map<Any, Any> = Map::new();
        let mut model: AnyModel = Vec::new();
        let mut snapshots: Vec<(Map, AnyModel)> = Vec::new();
        for op in ops {
            match op {
                AnyMapOp::Insert(k, v) => {
                    let old = m.insert(k.to_any(), make_any(&v, &pool));
                    match model_insert(&mut model, k.0, v) {
                        Some(mv) => prop_assert!(old.is_some_and(|o| holds(&o, &mv, &pool))),
                        None => prop_assert!(old.is_none()),
                    }
                }
                AnyMapOp::Remove(k) => {
                    let old = k.with_view(|kv| m.remove(kv));
                    match model_remove(&mut model, &k.0) {
                        Some(mv) => prop_assert!(old.is_some_and(|o| holds(&o, &mv, &pool))),
                        None => prop_assert!(old.is_none()),
                    }
                }
                AnyMapOp::Get(k) => {
                    let want = model.iter().find(|e| e.0 == k.0).map(|e| &e.1);
                    let ok = k.with_view(|kv| match (m.get(kv), want) {
                        (Some(g), Some(w)) => holds(g, w, &pool),
                        (None, None) => true,
                        _ => false,
                    });
                    prop_assert!(ok, "get {:?}", k);
                }
                AnyMapOp::Contains(k) => {
                    let got = k.with_view(|kv| m.contains_key(kv));
                    prop_assert_eq!(got, model.iter().any(|e| e.0 == k.0));
                }
                AnyMapOp::Snapshot => snapshots.push((m.clone(), model.clone())),
                AnyMapOp::DropSnapshot(i) => {
                    if !snapshots.is_empty() {
                        let (s, sm) = snapshots.remove(i % snapshots.len());
                        check_any_map(&s, &sm, &pool)?;
                    }
                }
                AnyMapOp::ForkAndMutate(k, v) => {
                    let mut fork = m.clone();
                    let mut expect = model.clone();
                    fork.insert(k.to_any(), make_any(&v, &pool));
                    model_insert(&mut expect, k.0.clone(), v);
                    if let Some((first, _)) = model.first() {
                        let first = Key(first.clone(), 0);
                        first.with_view(|kv| fork.remove(kv));
                        model_remove(&mut expect, &first.0);
                    }
                    prop_assert!(!Map::ptr_eq(&fork, &m), "a mutated clone must be a copy");
                    check_any_map(&fork, &expect, &pool)?;
                }
            }
            check_any_map(&m, &model, &pool)?;
            let all = std::iter::once((&m, objs_of(model.iter().map(|e| &e.1)))).chain(
                snapshots
                    .iter()
                    .map(|(s, sm)| (s, objs_of(sm.iter().map(|e| &e.1)))),
            );
            check_counts(&pool, all, Map::ptr_eq)?;
        }
        for (s, sm) in &snapshots {
            check_any_map(s, sm, &pool)?;
        }
        drop((m, snapshots));
        for o in &pool {
            prop_assert_eq!(ObjectPtr::strong_count(o), 1);
        }
    }
    prop_assert_eq!(live_objects(), base, "a case leaked objects");
    Ok(())
}

#[test]
fn any_map_matches_ordered_model() {
    let _guard = LeakCheck::new();
    run_proptest(
        prop::collection::vec(any_map_op(), 0..native_or_miri(100, 12)),
        run_any_map_ops,
    );
}

// ---------------------------------------------------------------------------------
// Heterogeneous containers and down-casts.
// ---------------------------------------------------------------------------------

#[test]
fn heterogeneous_array_downcasts_back() {
    let _guard = LeakCheck::new();
    let x = var("x");
    let y = var("y");
    let sum = add(x.clone().upcast(), y.clone().upcast());
    let mut attrs: Map<String, i64> = Map::new();
    attrs.insert(String::from("lanes"), 4);
    attrs.insert(String::from("a rather long attribute name"), -1);
    let dims: Array<i64> = vec![2, 3, 4].into();
    let names: Array<String> = ["p", "a longer name"]
        .into_iter()
        .map(String::from)
        .collect();

    // As type-erased object handles.
    let objs: Array<ObjectRef> = vec![
        x.clone().into_object_ref(),
        sum.clone().into_object_ref(),
        ObjectRef::from(String::from("text")),
        attrs.as_object_ptr().clone().into_object_ref(),
        dims.as_object_ptr().clone().into_object_ref(),
        Shape::from([1, 2])
            .as_object_ptr()
            .clone()
            .into_object_ref(),
    ]
    .into();
    let keys: Vec<&str> = objs.iter().map(|o| o.type_key()).collect();
    assert_eq!(
        keys,
        [
            "ctest.Var",
            "ctest.Add",
            "ffi.String",
            "ffi.Map",
            "ffi.Array",
            "ffi.Shape"
        ]
    );
    assert_eq!(
        objs[0].downcast_ref::<Var>().map(|v| v.name.as_str()),
        Some("x")
    );
    assert!(objs[0].is::<Expr>() && !objs[0].is::<Add>());
    let a = objs[1].downcast_ref::<Add>().expect("an Add");
    assert!(ObjectPtr::ptr_eq(&a.lhs, &x) && ObjectPtr::ptr_eq(&a.rhs, &y));
    assert!(objs[1].downcast_ref::<Var>().is_none());
    assert_eq!(
        objs[2].downcast_ref::<StringObj>().map(|s| s.as_str()),
        Some("text")
    );
    let m = objs[3].clone().downcast::<MapObj>().expect("a map");
    let back: Map<String, i64> = Map::try_from(Any::from(m)).expect("a Map<String, i64>");
    assert!(Map::ptr_eq(&back, &attrs), "no copy");
    assert_eq!(back.get("lanes"), Some(&4));
    let arr = objs[4].clone().downcast::<ArrayObj>().expect("an array");
    let back: Array<i64> = Array::from_object_ptr(arr).expect("an Array<i64>");
    assert!(Array::ptr_eq(&back, &dims));
    assert_eq!(back.iter().copied().collect::<Vec<_>>(), [2, 3, 4]);
    // The array of handles views as `Array<ObjectPtr<Expr>>` only up to its first item
    // that is not an expression.
    let e = objs.cast::<ObjectPtr<Expr>>().unwrap_err();
    assert_eq!(e.to_string(), "item 2: expected ctest.Expr, got ffi.String");

    // As `Any` values, with plain values mixed in.
    let all: Array<Any> = vec![
        Any::from(x.clone()),
        Any::from(sum.clone()),
        Any::from("short"),
        Any::from("a string too long to be inline"),
        Any::from(attrs.clone()),
        Any::from(dims.clone()),
        Any::from(names.clone()),
        Any::from(Shape::from([5, 6])),
        Any::from(7),
        Any::from(2.5),
        Any::NONE,
    ]
    .into();
    assert_eq!(all.len(), 11);
    assert_eq!(
        all[0].downcast_ref::<Var>().map(|v| v.name.as_str()),
        Some("x")
    );
    assert!(all[0].as_object_of::<Expr>().is_some());
    assert!(all[0].as_object_of::<Add>().is_none());
    let s = all[1].as_object_of::<Add>().expect("an Add");
    assert!(ObjectPtr::ptr_eq(s, &sum));
    assert_eq!(
        all[1].downcast_ref::<Expr>().map(|e| e.span),
        Some(0),
        "down-cast to the intermediate base"
    );
    assert_eq!(String::try_from(all[2].clone()).unwrap(), "short");
    let long = String::try_from(all[3].clone()).unwrap();
    assert_eq!(long, "a string too long to be inline");
    assert!(
        ObjectPtr::ptr_eq(long.as_heap_object().unwrap(), all[3].as_object().unwrap()),
        "string objects are shared, not copied"
    );
    let m: Map<String, i64> = Map::try_from(all[4].clone()).unwrap();
    assert!(Map::ptr_eq(&m, &attrs));
    assert_eq!(m.get("a rather long attribute name"), Some(&-1));
    let m_any: Map<Any, Any> = Map::try_from(all[4].clone()).unwrap();
    assert_eq!(m_any.get("lanes").and_then(Any::as_int), Some(4));
    let d: Array<i64> = Array::try_from(all[5].clone()).unwrap();
    assert!(Array::ptr_eq(&d, &dims));
    let n: Array<String> = Array::try_from(all[6].clone()).unwrap();
    assert_eq!(
        n.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        ["p", "a longer name"]
    );
    assert_eq!(&*Shape::try_from(all[7].clone()).unwrap(), &[5, 6]);
    assert_eq!(i64::try_from(all[8].clone()), Ok(7));
    assert_eq!(f64::try_from(all[9].clone()), Ok(2.5));
    assert!(all[10].is_none());

    // Wrong down-casts are `None` / errors.
    assert!(
        all[2].as_object().is_none(),
        "inline strings are not objects"
    );
    assert!(all[5].downcast_ref::<MapObj>().is_none());
    assert_eq!(
        Map::<String, i64>::try_from(all[5].clone())
            .unwrap_err()
            .to_string(),
        "expected ffi.Map, got ffi.Array"
    );
    assert_eq!(
        Array::<i64>::try_from(all[4].clone())
            .unwrap_err()
            .to_string(),
        "expected ffi.Array, got ffi.Map"
    );
    assert_eq!(
        String::try_from(all[0].clone()).unwrap_err().to_string(),
        "expected ffi.String, got ctest.Var"
    );

    // Nested typed containers.
    let nested: Array<Array<i64>> = vec![dims.clone(), Array::from(vec![9])].into();
    assert_eq!(nested[1][0], 9);
    let mut by_name: Map<String, Array<i64>> = Map::new();
    by_name.insert(String::from("dims"), dims.clone());
    assert!(by_name.get("dims").is_some_and(|a| Array::ptr_eq(a, &dims)));
    let by_name_any = Any::from(by_name);
    assert!(Map::<String, Array<String>>::try_from(by_name_any.clone()).is_err());
    assert!(Map::<String, Array<i64>>::try_from(by_name_any).is_ok());

    // Everything is shared, nothing copied: each element's count went up by one per
    // container holding it.
    assert_eq!(ObjectPtr::strong_count(&x), 4); // x, sum.lhs, objs[0], all[0]
    drop((objs, all, nested));
    assert_eq!(ObjectPtr::strong_count(&x), 2);
    assert_eq!(ObjectPtr::strong_count(dims.as_object_ptr()), 3); // dims, back, d
    drop((back, d));
    assert_eq!(ObjectPtr::strong_count(dims.as_object_ptr()), 1);
}

// ---------------------------------------------------------------------------------
// The checked zero-copy typed view.
// ---------------------------------------------------------------------------------

#[test]
fn typed_view_is_zero_copy_and_checked() {
    let _guard = LeakCheck::new();
    let n = 6;
    let vars: Array<ObjectRef> = (0..n)
        .map(|i| var(&format!("v{i}")).into_object_ref())
        .collect();
    let typed: Array<ObjectPtr<Var>> = vars.cast().expect("all Vars");
    assert!(Array::ptr_eq(&typed, &vars), "a view, not a copy");
    assert_eq!(ObjectPtr::strong_count(vars.as_object_ptr()), 2);
    for (i, v) in typed.iter().enumerate() {
        assert_eq!(v.name, format!("v{i}"));
        assert!(ObjectPtr::ptr_eq(v, &vars[i]));
        assert_eq!(ObjectPtr::strong_count(v), 1, "items were not cloned");
    }
    // Up to a base type too, and back to `Any`.
    let exprs: Array<ObjectPtr<Expr>> = typed.cast().unwrap();
    assert!(Array::ptr_eq(&exprs, &vars));
    let anys = typed.clone().into_any_array();
    assert!(Array::ptr_eq(&anys, &vars));
    let again: Array<ObjectPtr<Var>> = anys.cast().unwrap();
    assert!(Array::ptr_eq(&again, &vars));
    // The typed view is copy-on-write like any other handle.
    let mut grown = typed.clone();
    grown.push(var("extra"));
    assert!(!Array::ptr_eq(&grown, &vars));
    assert_eq!((grown.len(), vars.len(), typed.len()), (n + 1, n, n));
    drop((typed, exprs, anys, again, grown));
    assert_eq!(ObjectPtr::strong_count(vars.as_object_ptr()), 1);

    // One bad item: the error names the FIRST bad index, and nothing is shared.
    for bad in [0, 3, n] {
        let mut mixed = vars.clone();
        mixed
            .insert(
                bad,
                add(var("p").upcast(), var("q").upcast()).into_object_ref(),
            )
            .unwrap();
        mixed.push(make_object(Object::new()));
        let e = mixed.cast::<ObjectPtr<Var>>().unwrap_err();
        assert_eq!(
            e,
            ArrayError::WrongType {
                index: bad,
                error: TypeError::new("ctest.Var", "ctest.Add"),
            }
        );
        assert_eq!(
            e.to_string(),
            format!("item {bad}: expected ctest.Var, got ctest.Add")
        );
        assert_eq!(ObjectPtr::strong_count(mixed.as_object_ptr()), 1);
        // Viewing as the common base works: an Add is an Expr... until the plain
        // object at the end.
        let e = mixed.cast::<ObjectPtr<Expr>>().unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("item {}: expected ctest.Expr, got ffi.Object", n + 1)
        );
    }

    // `Array<Any>` → `Array<i64>` / `Array<f64>` / `Array<String>`.
    let ints: Array<Any> = (0..5).map(Any::from).collect();
    let as_i64: Array<i64> = ints.cast().unwrap();
    assert!(Array::ptr_eq(&as_i64, &ints));
    assert_eq!(as_i64.iter().sum::<i64>(), 10);
    assert_eq!(
        ints.cast::<f64>().unwrap_err().to_string(),
        "item 0: expected float, got int"
    );
    // Inline strings and string objects are both `String` items, read in place.
    let strs: Array<Any> = vec![
        Any::from(string_object("obj")),
        Any::from("a long string object"),
        Any::from("inline"),
    ]
    .into();
    let typed = strs.cast::<String>().unwrap();
    assert!(std::ptr::eq(
        typed.get(2).unwrap().as_any(),
        strs.get(2).unwrap()
    ));
    assert_eq!(typed.iter().map(|s| s.len()).sum::<usize>(), 29);
    assert!(typed.get(2).unwrap().is_inline());
    let mixed: Array<Any> = vec![Any::from("s"), Any::from(1)].into();
    assert_eq!(
        mixed.cast::<String>().unwrap_err(),
        ArrayError::WrongType {
            index: 1,
            error: TypeError::new("ffi.String", "int"),
        },
    );
    let empty: Array<Any> = Array::new();
    assert!(empty.cast::<ObjectPtr<Var>>().is_ok(), "vacuously typed");
}

// ---------------------------------------------------------------------------------
// Bad input.
// ---------------------------------------------------------------------------------

#[test]
fn out_of_range_is_an_error_naming_index_and_len() {
    let _guard = LeakCheck::new();
    let mut a: Array<Any> = vec![Any::from(1), Any::from(var("v")), Any::from("s")].into();
    let shared = a.clone();
    let oob = |index, len| ArrayError::OutOfRange { index, len };

    assert!(a.get(3).is_none());
    assert!(a.get(usize::MAX).is_none());
    let e = a.set(3, Any::from(var("dropped"))).unwrap_err();
    assert_eq!(e, oob(3, 3));
    assert_eq!(
        e.to_string(),
        "index 3 is out of range for an array of length 3"
    );
    assert_eq!(a.insert(4, Any::from(var("dropped"))), Err(oob(4, 3)));
    assert_eq!(
        a.insert(usize::MAX, Any::NONE).unwrap_err().to_string(),
        format!(
            "index {} is out of range for an array of length 3",
            usize::MAX
        )
    );
    assert_eq!(a.remove(3), Err(oob(3, 3)));
    assert_eq!(a.remove(usize::MAX), Err(oob(usize::MAX, 3)));
    assert!(Array::ptr_eq(&a, &shared), "failed operations do not copy");
    assert_eq!(a, shared);

    // Typed arrays, and the empty array.
    let mut t: Array<i64> = Array::new();
    assert_eq!(t.pop(), None);
    assert_eq!(t.remove(0), Err(oob(0, 0)));
    assert_eq!(t.set(0, 1), Err(oob(0, 0)));
    assert_eq!(t.insert(1, 1), Err(oob(1, 0)));
    assert_eq!((t.first(), t.last(), t.get(0)), (None, None, None));
    assert_eq!(t.insert(0, 5), Ok(()));
    assert_eq!(t.set(0, 6), Ok(5));
    assert_eq!(t.remove(0), Ok(6));
    assert!(t.is_empty());

    // Indexing past the end panics, saying where (`get` is the non-panicking form).
    let r = catch_unwind(AssertUnwindSafe(|| a[7].is_none()));
    let msg = r.expect_err("index panics");
    let msg = msg
        .downcast_ref::<std::string::String>()
        .map(|s| s.as_str())
        .unwrap_or_default();
    assert_eq!(msg, "index 7 is out of range for an array of length 3");
}

#[test]
fn wrong_types_are_clear_errors() {
    let _guard = LeakCheck::new();
    // `TryFrom<Any> for Array<i64>` of an array holding a string.
    let mixed: Array<Any> = vec![Any::from(1), Any::from("two"), Any::from(3)].into();
    let e = Array::<i64>::try_from(Any::from(mixed.clone())).unwrap_err();
    assert_eq!(e.expected, "ffi.Array of int (item 1 is ffi.String)");
    assert_eq!(
        e.to_string(),
        "expected ffi.Array of int (item 1 is ffi.String), got ffi.Array"
    );
    assert_eq!(
        mixed.cast::<i64>().unwrap_err().to_string(),
        "item 1: expected int, got ffi.String",
        "the view names the item"
    );
    assert_eq!(
        Array::<i64>::from_object_ptr(mixed.as_object_ptr().clone()).unwrap_err(),
        ArrayError::WrongType {
            index: 1,
            error: TypeError::new("int", "ffi.SmallStr"),
        }
    );
    // Not an array at all.
    assert_eq!(
        Array::<Any>::try_from(Any::from(5))
            .unwrap_err()
            .to_string(),
        "expected ffi.Array, got int"
    );
    assert_eq!(
        Array::<Any>::try_from(Any::from("a string object here"))
            .unwrap_err()
            .to_string(),
        "expected ffi.Array, got ffi.String"
    );
    // Nested: an array of arrays whose inner array holds a float.
    let inner: Array<Any> = vec![Any::from(1.5)].into();
    let outer: Array<Any> = vec![Any::from(Array::<i64>::new()), Any::from(inner)].into();
    assert_eq!(
        outer.cast::<Array<i64>>().unwrap_err().to_string(),
        "item 1: expected ffi.Array of int, got ffi.Array"
    );
    assert!(
        outer.cast::<Array<f64>>().is_ok(),
        "the empty array is vacuously typed"
    );
    assert!(outer.cast::<Array<Any>>().is_ok());
    assert_eq!(
        outer.cast::<Array<String>>().unwrap_err().to_string(),
        "item 1: expected ffi.Array of ffi.String, got ffi.Array"
    );

    // Maps: keys checked before values, in insertion order.
    let mut m: Map<Any, Any> = Map::new();
    m.insert(Any::from("k"), Any::from(1));
    m.insert(Any::from(2), Any::from("not an int"));
    assert_eq!(
        m.cast::<String, i64>().unwrap_err().to_string(),
        "expected ffi.String key, got int"
    );
    assert_eq!(
        m.cast::<Any, i64>().unwrap_err().to_string(),
        "expected int value, got ffi.String"
    );
    assert!(Map::ptr_eq(&m.cast::<Any, Any>().unwrap(), &m));
    assert_eq!(
        Map::<String, i64>::try_from(Any::from(5))
            .unwrap_err()
            .to_string(),
        "expected ffi.Map, got int"
    );
    assert_eq!(
        Map::<Any, i64>::try_from(Any::from(m.clone()))
            .unwrap_err()
            .to_string(),
        "expected int value, got ffi.String"
    );
    // And the elements of a typed view are what they claim.
    let ok: Map<Any, Any> = [(Any::from(1), Any::from(2))].into_iter().collect();
    let typed: Map<i64, i64> = Map::try_from(Any::from(ok.clone())).unwrap();
    assert!(Map::ptr_eq(&typed, &ok));
    assert_eq!(typed.get(1i64), Some(&2));
}

#[test]
fn map_missing_keys_are_none() {
    let _guard = LeakCheck::new();
    let mut m: Map<String, i64> = Map::new();
    assert_eq!(m.get("nothing"), None);
    assert_eq!(m.remove("nothing"), None);
    m.insert(String::from("a"), 1);
    m.insert(String::from("a long key of some kind"), 2);
    let shared = m.clone();
    for missing in ["b", "", "a long key of some kind!", "A"] {
        assert_eq!(m.get(missing), None, "{missing}");
        assert!(!m.contains_key(missing));
        assert_eq!(m.remove(missing), None);
    }
    // Keys of the wrong kind are simply absent.
    assert_eq!(m.get(1i64), None);
    assert_eq!(m.get(true), None);
    assert_eq!(m.get(&Any::NONE), None);
    assert_eq!(m.remove(1i64), None);
    assert!(
        Map::ptr_eq(&m, &shared),
        "removing a missing key does not copy"
    );
    assert_eq!(m.get("a"), Some(&1));

    // In an `Any` map, int 1, float 1.0, bool true and string "1" are four keys.
    let mut am: Map = Map::new();
    am.insert(Any::from(1), Any::from("int"));
    am.insert(Any::from(1.0), Any::from("float"));
    am.insert(Any::from(true), Any::from("bool"));
    am.insert(Any::from("1"), Any::from("str"));
    am.insert(Any::NONE, Any::from("none"));
    assert_eq!(am.len(), 5);
    assert_eq!(am.get(1i64).and_then(Any::as_str), Some("int"));
    assert_eq!(am.get(1.0).and_then(Any::as_str), Some("float"));
    assert_eq!(am.get(true).and_then(Any::as_str), Some("bool"));
    assert_eq!(am.get("1").and_then(Any::as_str), Some("str"));
    assert_eq!(am.get(AnyView::NONE).and_then(Any::as_str), Some("none"));
    assert_eq!(am.get(2i64), None);
    assert_eq!(am.get(false), None);
    assert_eq!(am.get(-0.0), None, "floats are keys by their bits");
    // Objects are keys by identity.
    let v = var("k");
    am.insert(Any::from(v.clone()), Any::from(1));
    assert_eq!(am.get(&v).and_then(Any::as_int), Some(1));
    assert_eq!(am.get(&var("k")), None);
}

// ---------------------------------------------------------------------------------
// Copy-on-write and growth.
// ---------------------------------------------------------------------------------

#[test]
fn mutating_an_array_clone_never_changes_the_original() {
    let _guard = LeakCheck::new();
    let o = var("o");
    let original: Array<Any> = vec![
        Any::from(1),
        Any::from(o.clone()),
        Any::from("a long string, an object"),
        Any::from("short"),
    ]
    .into();
    let snapshot: Vec<Any> = original.iter().cloned().collect();
    type Mutation = fn(&mut Array<Any>);
    let mutations: [(&str, Mutation); 9] = [
        ("push", |a| a.push(Any::from(9))),
        ("pop", |a| drop(a.pop())),
        ("insert", |a| a.insert(0, Any::NONE).unwrap()),
        ("remove", |a| drop(a.remove(1).unwrap())),
        ("set", |a| drop(a.set(1, Any::from(2)).unwrap())),
        ("clear", |a| a.clear()),
        ("extend", |a| a.extend([Any::from(1), Any::from(2)])),
        ("extend-empty", |a| a.extend(std::iter::empty())),
        ("push-many", |a| (0..100).for_each(|i| a.push(Any::from(i)))),
    ];
    for (name, mutate) in mutations {
        let mut copy = original.clone();
        mutate(&mut copy);
        assert_eq!(original.len(), 4, "{name}");
        assert!(
            original.iter().eq(snapshot.iter()),
            "{name} changed the original"
        );
        if name != "extend-empty" {
            assert!(!Array::ptr_eq(&copy, &original), "{name}");
        }
        drop(copy);
        assert_eq!(ObjectPtr::strong_count(original.as_object_ptr()), 1);
    }
    // A mutated unique array stays in its own object and does not touch others.
    let mut unique = Array::<Any>::with_capacity(8);
    unique.push(Any::from(1));
    let addr = ObjectPtr::as_ptr(unique.as_object_ptr());
    unique.set(0, Any::from(2)).unwrap();
    unique.insert(0, Any::from(0)).unwrap();
    unique.remove(1).unwrap();
    drop(unique.pop());
    assert_eq!(ObjectPtr::as_ptr(unique.as_object_ptr()), addr, "in place");
    drop(snapshot);
    assert_eq!(ObjectPtr::strong_count(&o), 2);
}

#[test]
fn mutating_a_map_clone_never_changes_the_original() {
    let _guard = LeakCheck::new();
    let mut original: Map<String, Any> = Map::new();
    original.insert(String::from("a"), Any::from(1));
    original.insert(String::from("b"), Any::from(var("b")));
    original.insert(String::from("a long key, c"), Any::from("c"));
    let before: Vec<(std::string::String, Any)> = original
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    type Mutation = fn(&mut Map<String, Any>);
    let mutations: [(&str, Mutation); 5] = [
        ("insert-new", |m| {
            drop(m.insert(String::from("d"), Any::NONE))
        }),
        ("replace", |m| {
            drop(m.insert(String::from("a"), Any::from(2)))
        }),
        ("remove", |m| drop(m.remove("b"))),
        ("extend", |m| {
            m.extend([(String::from("x"), Any::from(1))]);
        }),
        ("remove-reinsert", |m| {
            let v = m.remove("a").unwrap();
            m.insert(String::from("a"), v);
        }),
    ];
    for (name, mutate) in mutations {
        let mut copy = original.clone();
        mutate(&mut copy);
        assert!(!Map::ptr_eq(&copy, &original), "{name}");
        let now: Vec<(std::string::String, Any)> = original
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        assert_eq!(now, before, "{name} changed the original");
    }
    // Order: replacing keeps the place, remove + insert moves to the end.
    let mut m = original.clone();
    m.insert(String::from("a"), Any::from(10));
    let keys: Vec<&str> = m.keys().map(|k| k.as_str()).collect();
    assert_eq!(keys, ["a", "b", "a long key, c"]);
    let v = m.remove("a").unwrap();
    m.insert(String::from("a"), v);
    let keys: Vec<&str> = m.keys().map(|k| k.as_str()).collect();
    assert_eq!(keys, ["b", "a long key, c", "a"]);
    assert_eq!(m.get("a").and_then(Any::as_int), Some(10));
    assert_eq!(original.get("a").and_then(Any::as_int), Some(1));
}

#[test]
fn unique_push_grows_geometrically() {
    let _guard = LeakCheck::new();
    let n = 1000;
    let mut a: Array<Any> = Array::new();
    let mut caps = HashSet::new();
    let mut addrs = HashSet::new();
    let mut moves = 0;
    let mut last = ObjectPtr::as_ptr(a.as_object_ptr());
    for i in 0..n {
        let cap_before = a.capacity();
        a.push(Any::from(i as i64));
        if a.len() <= cap_before {
            assert_eq!(a.capacity(), cap_before, "no growth while there is room");
        }
        caps.insert(a.capacity());
        let p = ObjectPtr::as_ptr(a.as_object_ptr());
        addrs.insert(p);
        if p != last {
            moves += 1;
            last = p;
        }
    }
    assert_eq!(a.len(), n);
    let log2 = (n as f64).log2().ceil() as usize; // 10
    assert!(
        caps.len() <= log2 + 2,
        "{} distinct capacities for {n} pushes: {caps:?}",
        caps.len()
    );
    assert!(moves <= caps.len(), "the object moves only when it grows");
    assert!(a.capacity() < 4 * n, "capacity {} too large", a.capacity());
    assert!(a
        .iter()
        .enumerate()
        .all(|(i, v)| v.as_int() == Some(i as i64)));

    // Reserved room is used in place.
    let mut r: Array<i64> = Array::with_capacity(100);
    let addr = ObjectPtr::as_ptr(r.as_object_ptr());
    r.extend(0..100);
    assert_eq!((r.len(), r.capacity()), (100, 100));
    assert_eq!(ObjectPtr::as_ptr(r.as_object_ptr()), addr);
    // `extend` reserves once from the size hint.
    let mut e: Array<i64> = Array::new();
    e.extend(0..500);
    assert_eq!(e.capacity(), 500);
    // `clear` keeps the allocation for reuse.
    e.clear();
    assert_eq!((e.len(), e.capacity()), (0, 500));
}

// ---------------------------------------------------------------------------------
// Drops, equality, iteration, debug.
// ---------------------------------------------------------------------------------

#[test]
fn items_are_dropped_exactly_once() {
    let _guard = LeakCheck::new();
    static DROPS: DropCounter = DropCounter::new();
    let mut a: Array<ObjectPtr<TrackedObj>> = (0..10).map(|_| tracked(&DROPS)).collect();
    let shared = a.clone();
    drop(a.pop()); // copies; the popped item is still in `shared`
    assert_eq!(DROPS.get(), 0);
    drop(a.remove(0).unwrap());
    drop(a.set(0, tracked(&DROPS)).unwrap());
    assert_eq!(DROPS.get(), 0, "all still referenced by `shared`");
    drop(shared);
    assert_eq!(DROPS.get(), 3, "popped, removed and replaced");
    a.clear();
    assert_eq!(DROPS.get(), 11);
    // Through maps, an Any and a thread.
    let mut m: Map<i64, Any> = Map::new();
    for i in 0..20 {
        m.insert(i, Any::from(tracked(&DROPS)));
    }
    for i in 0..15 {
        drop(m.remove(i)); // enough removals to compact the entries
    }
    assert_eq!(DROPS.get(), 26);
    m.insert(3, Any::from(tracked(&DROPS)));
    drop(m.insert(3, Any::NONE));
    assert_eq!(DROPS.get(), 27);
    let any = Any::from(m);
    std::thread::spawn(move || drop(any)).join().unwrap();
    assert_eq!(DROPS.get(), 32);
}

#[test]
fn equality_iteration_and_debug() {
    let _guard = LeakCheck::new();
    let v = var("v");
    let a: Array<Any> = vec![
        Any::from(1),
        Any::from("two"),
        Any::from(String::from("three")),
        Any::NONE,
        Any::from(v.clone()),
    ]
    .into();
    let b: Array<Any> = vec![
        Any::from(1),
        Any::from(String::from("two")),
        Any::from("three"),
        Any::NONE,
        Any::from(v.clone()),
    ]
    .into();
    assert_eq!(a, b, "strings compare by value, objects by identity");
    let c: Array<Any> = a
        .iter()
        .take(4)
        .cloned()
        .chain([Any::from(var("v"))])
        .collect();
    assert_ne!(a, c, "another object with the same content");
    assert_ne!(a, Array::new());

    let dbg = format!("{a:?}");
    assert!(
        dbg.starts_with(r#"[1, "two", "three", None, ctest.Var { "#),
        "{dbg}"
    );
    let m: Map<String, i64> = [("x", 1), ("a longer key", 2)]
        .into_iter()
        .map(|(k, v)| (String::from(k), v))
        .collect();
    assert_eq!(format!("{m:?}"), r#"{"x": 1, "a longer key": 2}"#);
    assert_eq!(format!("{:?}", Array::<i64>::from(vec![3, 4])), "[3, 4]");
    assert_eq!(format!("{:?}", Map::<Any, Any>::new()), "{}");

    // Owning iteration clones items out; the array stays intact if shared.
    let keep = a.clone();
    let owned: Vec<Any> = a.into_iter().collect();
    assert_eq!(owned.len(), 5);
    assert_eq!(keep.len(), 5);
    let back: Array<Any> = owned.into_iter().collect();
    assert_eq!(back, keep);
    assert!(!Array::ptr_eq(&back, &keep));
    let mut it = keep.iter();
    assert_eq!(
        it.next_back()
            .and_then(Any::as_object)
            .map(|o| o.type_key()),
        Some("ctest.Var")
    );
    assert_eq!(it.len(), 4);
    assert_eq!(ObjectPtr::strong_count(&v), 4); // v, b, keep (a's object), back
}

#[test]
fn map_order_and_lookups_survive_compaction() {
    let _guard = LeakCheck::new();
    let n = 100i64;
    let mut m: Map<i64, String> = (0..n)
        .map(|i| (i, String::from(format!("value {i}"))))
        .collect();
    let shared = m.clone();
    // Remove most entries (the removed slots are compacted away along the way).
    for i in (0..n).filter(|i| i % 4 != 0) {
        assert_eq!(
            m.remove(i).map(|s| s.to_string()),
            Some(format!("value {i}"))
        );
        assert_eq!(m.get(i), None);
    }
    let keys: Vec<i64> = m.keys().copied().collect();
    assert_eq!(keys, (0..n).step_by(4).collect::<Vec<_>>());
    for k in (0..n).step_by(4) {
        assert_eq!(
            m.get(k).map(|s| s.as_str()),
            Some(format!("value {k}").as_str())
        );
    }
    // Re-inserting a removed key appends; replacing keeps the place.
    m.insert(1, String::from("one"));
    m.insert(0, String::from("zero"));
    let keys: Vec<i64> = m.keys().copied().collect();
    assert_eq!(keys.first(), Some(&0));
    assert_eq!(keys.last(), Some(&1));
    assert_eq!(m.len(), (n as usize).div_ceil(4) + 1);
    // The clone taken before is untouched.
    assert_eq!(shared.len(), n as usize);
    assert!(shared.keys().copied().eq(0..n));
    // Emptying and refilling.
    for k in keys {
        assert!(m.remove(k).is_some());
    }
    assert!(m.is_empty());
    assert_eq!(m.iter().count(), 0);
    m.insert(7, String::from("seven"));
    assert_eq!(m.keys().copied().collect::<Vec<_>>(), [7]);
}

#[test]
fn float_and_none_keys() {
    let _guard = LeakCheck::new();
    let mut m: Map = Map::new();
    m.insert(Any::from(f64::NAN), Any::from("nan"));
    m.insert(Any::from(0.0), Any::from("zero"));
    m.insert(Any::from(-0.0), Any::from("minus zero"));
    assert_eq!(
        m.len(),
        3,
        "keys by bits: NaN is one key, 0.0 and -0.0 are two"
    );
    assert_eq!(m.get(f64::NAN).and_then(Any::as_str), Some("nan"));
    assert_eq!(m.get(-0.0).and_then(Any::as_str), Some("minus zero"));
    assert_eq!(m.get(0i64), None, "an int is not a float key");
}

#[test]
fn shapes_in_containers() {
    let _guard = LeakCheck::new();
    let s = Shape::from([2, 3, 4]);
    let a: Array<Any> = vec![Any::from(s.clone()), Any::from(Shape::from(vec![]))].into();
    let back = Shape::try_from(a[0].clone()).unwrap();
    assert_eq!(back, s);
    assert!(ObjectPtr::ptr_eq(back.as_object_ptr(), s.as_object_ptr()));
    assert_eq!(back.numel(), Some(24));
    assert_eq!(Shape::try_from(a[1].clone()).unwrap().numel(), Some(1));
    assert_eq!(Shape::from([i64::MAX, 2]).numel(), None, "overflow");
    assert_eq!(Shape::from([-1, 2]).numel(), None);
    let typed: Array<Shape> = a.cast().unwrap();
    assert_eq!(&*typed[0], &[2, 3, 4]);
    assert_eq!(
        Shape::try_from(Any::from(1)).unwrap_err().to_string(),
        "expected ffi.Shape, got int"
    );
}

#[test]
fn fixed_size_items_refuse_to_resize() {
    let _guard = LeakCheck::new();
    // Shapes and strings are fixed at creation: even through a unique object handle,
    // their items cannot be resized or written (their InlineItems impls record nothing).
    let shape = Shape::new(&[2, 3, 4]);
    let mut p = shape.as_object_ptr().clone();
    drop(shape);
    assert_eq!(ObjectPtr::strong_count(&p), 1);
    assert!(!ObjectPtr::truncate_items(&mut p, 0));
    assert!(!ObjectPtr::grow_items(&mut p, 16));
    assert!(ObjectPtr::items_mut(&mut p).is_none());
    assert_eq!(ObjectPtr::push_item(&mut p, 5), Err(5));
    assert_eq!(ObjectPtr::pop_item(&mut p), None);
    assert_eq!(ObjectPtr::items(&p), &[2, 3, 4]);

    let s = String::from("a string long enough to be an object");
    let mut q = s.into_object_ptr();
    assert!(!ObjectPtr::truncate_items(&mut q, 1));
    assert!(ObjectPtr::items_mut(&mut q).is_none());
    assert_eq!(
        String::from_object_ptr(q).as_str(),
        "a string long enough to be an object"
    );
}
