//! A guided tour of the unified object protocol: a small expression language whose
//! nodes are objects, built, printed, evaluated and rewritten by matching on their
//! run-time types.
//!
//! Run it with `cargo run --release -p object-examples --bin tour`.

use std::mem::size_of;

use object_containers::dlpack::DLManagedTensorVersioned;
use object_containers::{
    get_global, list_globals, register_global, remove_global, Array, Error, Function as Func, Map,
    Module, NDArray, NDArrayObj, Shape, String, TensorView,
};
use object_core::prelude::*;
use object_core::reflection;
use object_core::registry::{self, register_type, TypeSpec};
use object_core::structural::{first_mismatch, structural_equal, structural_hash};
use object_core::{make_object_as, Any, AnyView, ObjectPool};
use object_examples::expr::{
    add, call, count_distinct, eval, fold_constants, function, int, mul, print, sub, var, Add,
    BinOp, Env, EvalError, Expr, Function, IntImm, Mul, Sub, Var,
};
use object_json::{from_json_graph, to_json_graph, to_json_graph_pretty};

fn section(title: &str) {
    println!("\n== {title}");
}

/// What a section returns: `?` turns any of the errors the sections meet into the box.
type Result<T = (), E = Box<dyn std::error::Error>> = std::result::Result<T, E>;

/// The tour: one function per section, in order; `x` and `f` are the objects the
/// first section builds and the later ones use.
fn main() -> Result {
    println!("A tour of the unified object protocol: an expression language built from objects.");
    let (x, f) = objects_and_handles();
    matching_on_run_time_types(&f)?;
    base_type_checks(&x, &f);
    type_registry()?;
    rewriting(&x)?;
    pooled_allocation();
    containers(&x, &f);
    packed_functions()?;
    reflection_and_json(&f)?;
    ndarray_and_dlpack()?;
    structural_equality();
    println!("\nDone.");
    Ok(())
}

/// Builds `fn(x, y) { (x + 3) * (y - x) }` and returns `x` and the function, which the
/// later sections use.
fn objects_and_handles() -> (ObjectPtr<Var>, ObjectPtr<Function>) {
    section("1. Objects and handles");
    println!(
        "Every object starts with a {}-byte header (type index, atomic count, deleter);",
        size_of::<Object>()
    );
    println!(
        "a handle is {} bytes, and Option<handle> is {} bytes too.",
        size_of::<ObjectRef>(),
        size_of::<Option<ObjectRef>>()
    );
    let x = var("x");
    let y = var("y");
    let body = mul(add(x.clone(), int(3)), sub(y.clone(), x.clone()));
    let f = function(vec![x.clone(), y.clone()], body);
    println!("built:  {}", print(&f.clone().upcast()));
    println!(
        "`x` is one object: the local, the parameter list and both uses hold {} handles to it",
        ObjectPtr::strong_count(&x)
    );
    (x, f)
}

fn matching_on_run_time_types(f: &ObjectPtr<Function>) -> Result {
    section("2. Matching on run-time types with downcast_ref");
    println!("print and eval are chains of `if let Some(n) = e.downcast_ref::<Var>() …`");
    println!("f(2, 10) = {}", call(f, &[2, 10])?);
    println!("f(2)     = {}", call(f, &[2]).unwrap_err());
    Ok(())
}

fn base_type_checks(x: &ObjectPtr<Var>, f: &ObjectPtr<Function>) {
    section("3. Checks against intermediate base types, without Rust's Any");
    let nodes: Vec<ObjectRef> = vec![
        int(7).into_object_ref(),
        x.clone().into_object_ref(),
        add(int(1), int(2)).into_object_ref(),
        f.clone().into_object_ref(),
    ];
    println!(
        "{:<16} {:>5}  {:>6} {:>5}  {:>9}",
        "type key", "index", "Expr?", "BinOp?", "IntImm?"
    );
    for n in &nodes {
        println!(
            "{:<16} {:>5}  {:>6} {:>5}  {:>9}",
            n.type_key(),
            n.type_index(),
            n.is::<Expr>(),
            n.is::<BinOp>(),
            n.is::<IntImm>()
        );
    }
}

fn type_registry() -> Result {
    section("4. The type registry: every subtree is one index range");
    for info in [
        Expr::type_info(),
        BinOp::type_info(),
        Add::type_info(),
        Sub::type_info(),
        Mul::type_info(),
        Var::type_info(),
        IntImm::type_info(),
        Function::type_info(),
    ] {
        println!(
            "{:<14} index {:>3}  range {:>3}..{:<3}  depth {}  {}",
            info.key(),
            info.index(),
            info.range().start,
            info.range().end,
            info.depth(),
            if info.is_final() { "final" } else { "" }
        );
    }
    println!("`is::<BinOp>()` is two compares: begin <= index < end. Final types are one.");

    println!("\nA plugin registers new operators at run time. BinOp reserved 2 slots:");
    let binop_range = BinOp::type_info().range();
    let mut plugin_nodes = Vec::new();
    for key in ["plugin.Div", "plugin.Mod", "plugin.Pow"] {
        let info = register_type(&TypeSpec::new(key, BinOp::TYPE_KEY))?;
        let placement = if binop_range.contains(&info.index()) {
            "in BinOp's reserved slots: `is::<BinOp>()` stays two compares".to_owned()
        } else if Expr::type_info().range().contains(&info.index()) {
            "BinOp is full, so it went to Expr's slots; `is::<BinOp>()` finds it through \
             the object's ancestor display (one look-up)"
                .to_owned()
        } else {
            "past every reserved range; found through the ancestor display".to_owned()
        };
        println!("  {key:<11} -> index {:>3}  {placement}", info.index());
        let node = make_object_as(BinOp::value(int(8), int(3)), info.index())?;
        plugin_nodes.push(node.upcast::<Expr>());
    }
    for n in &plugin_nodes {
        println!(
            "  a {} node: is::<BinOp>() = {}, is::<Add>() = {}, eval = {}",
            n.type_key(),
            n.is::<BinOp>(),
            n.is::<Add>(),
            match eval(n, &Env::new()) {
                Ok(v) => v.to_string(),
                Err(EvalError::Unknown(k)) => format!("error: cannot evaluate a `{k}`"),
                Err(e) => format!("error: {e}"),
            }
        );
    }
    match register_type(&TypeSpec::new("plugin.Bad", Var::TYPE_KEY)) {
        Ok(_) => println!("unexpected: a final parent was accepted"),
        Err(e) => println!("and misuse is an error, not a panic: {e}"),
    }
    println!("{} types are registered in all.", registry::types().len());
    Ok(())
}

fn rewriting(x: &ObjectPtr<Var>) -> Result {
    section("5. Rewriting: shared sub-trees stay shared, unique objects change in place");
    let e = add(mul(int(2), int(3)), x.clone());
    let folded = fold_constants(&e);
    println!("{}  folds to  {}", print(&e), print(&folded));
    let shared = add(x.clone(), x.clone());
    println!(
        "{} has {} distinct nodes; folding returns the very same object: {}",
        print(&shared),
        count_distinct(&shared),
        ObjectPtr::ptr_eq(&fold_constants(&shared), &shared)
    );
    let mut c = ObjectPtr::downcast::<IntImm>(int(41)).map_err(|_| "an IntImm")?;
    if let Some(fields) = ObjectPtr::get_mut(&mut c) {
        *fields.value += 1;
    }
    println!(
        "a unique IntImm changed in place through its field projection: {}",
        c.value
    );
    let keep = c.clone();
    *ObjectPtr::make_mut(&mut c).ok_or("exact type")?.value = 0;
    println!(
        "a shared one is copied on write: the copy says {}, the original still {}",
        c.value, keep.value
    );
    Ok(())
}

fn pooled_allocation() {
    section("6. Allocators pick the deleter: a pool of same-size chunks");
    let pool = ObjectPool::<IntImm>::new();
    let mut total = 0;
    for round in 0..3 {
        let consts: Vec<_> = (0..1000).map(|i| pool.make(IntImm::new_value(i))).collect();
        total += consts.iter().map(|c| c.value).sum::<i64>();
        let mixed: Vec<ObjectRef> = consts
            .into_iter()
            .map(ObjectPtr::into_object_ref)
            .chain([int(1).into_object_ref()])
            .collect();
        println!(
            "round {round}: 1000 pooled + 1 global IntImm in one Vec<ObjectRef>; pool capacity {}",
            pool.capacity()
        );
        drop(mixed);
    }
    println!(
        "sum of pooled constants over three rounds: {total}; chunks were reused, not reallocated"
    );
}

fn containers(x: &ObjectPtr<Var>, f: &ObjectPtr<Function>) {
    section("7. One set of containers for AST nodes and runtime values");
    let mut attrs: Map<String, Any> = Map::new();
    attrs.insert(String::from("name"), Any::from("f"));
    attrs.insert(String::from("arity"), Any::from(f.params.len() as i64));
    attrs.insert(String::from("shape"), Any::from(Shape::from([2, 3])));
    let mixed: Array<Any> = vec![
        Any::from(f.clone()),
        Any::from(x.clone()),
        Any::from(42),
        Any::from("short"),
        Any::from(String::from("an ffi.String object")),
        Any::from(attrs.clone()),
        Any::from(f.params.clone()),
    ]
    .into();
    for item in &mixed {
        let what = if let Some(func) = item.downcast_ref::<Function>() {
            format!("a Function with {} params", func.params.len())
        } else if let Some(e) = item.as_object_of::<Expr>() {
            format!("an expression: {}", print(e))
        } else if let Ok(vars) = Array::<ObjectPtr<Var>>::try_from(item.clone()) {
            format!("an Array of {} Vars (a zero-copy typed view)", vars.len())
        } else if let Ok(m) = Map::<String, Any>::try_from(item.clone()) {
            format!(
                "a Map with keys {:?}",
                m.keys().map(|k| k.as_str()).collect::<Vec<_>>()
            )
        } else if let Some(s) = item.as_str() {
            format!("the string {s:?}")
        } else {
            format!("the value {item:?}")
        };
        println!("  {:<14} {what}", item.type_key());
    }
    let params_any = mixed.cast::<ObjectRef>();
    println!(
        "viewing the whole array as Array<ObjectRef> fails, naming the first bad item: {}",
        params_any
            .map(|_| "ok".to_owned())
            .unwrap_or_else(|e| e.to_string())
    );
    let copy = mixed.clone();
    let mut changed = mixed;
    changed.push(Any::from("pushed"));
    println!(
        "copy-on-write: the clone still has {} items, the changed array {}",
        copy.len(),
        changed.len()
    );
}

fn packed_functions() -> Result {
    section("8. Packed functions: one C ABI for every callable");
    register_global(
        "tour.add",
        Func::from_typed_named("tour.add", |a: i64, b: i64| a + b),
    )?;
    register_global(
        "tour.make_adder",
        Func::from_typed_named("tour.make_adder", |n: i64| {
            // A function that returns a closure, itself a Function capturing `n`.
            Func::from_typed_named("adder", move |x: i64| x + n)
        }),
    )?;
    let add = get_global("tour.add").ok_or("tour.add is registered")?;
    println!(
        "globals: {:?}; tour.add(2, 3) = {:?}",
        list_globals()
            .into_iter()
            .filter(|n| n.starts_with("tour."))
            .collect::<Vec<_>>(),
        add.call_with([2, 3])?
    );
    let make_adder = get_global("tour.make_adder").ok_or("registered")?;
    let add10 = Func::try_from(make_adder.call_with([10])?)?;
    println!(
        "make_adder(10) returned {add10:?}; add10(32) = {}",
        add10.typed::<(i64,), i64>().call((32,))?
    );
    let typed = add.typed::<(i64, i64), i64>();
    println!(
        "a typed view calls with no allocation: {}",
        typed.call((40, 2))?
    );
    match add.call_with(["two", "three"]) {
        Ok(v) => println!("unexpected: {v:?}"),
        Err(e) => println!("a wrong argument is an error naming it:\n  {e}"),
    }
    let outer = {
        let add = add.clone();
        Func::from_typed_named(
            "tour.outer",
            move |s: std::string::String| -> Result<i64, Error> {
                let v = add.call_with([AnyView::from(s.as_str()), AnyView::from(1)])?;
                Ok(i64::try_from(v)?)
            },
        )
    };
    if let Err(e) = outer.call_with(["not a number"]) {
        println!(
            "an error from a nested call keeps the frames it crossed: {:?}",
            e.frames()
        );
    }
    let boom = Func::from_typed_named("tour.boom", |n: i64| -> i64 {
        if n > 0 {
            panic!("boom at {n}")
        }
        n
    });
    // Silence the default hook's message for this deliberate panic.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = boom.call_with([7]);
    std::panic::set_hook(hook);
    match result {
        Ok(_) => println!("unexpected: no panic"),
        Err(e) => println!(
            "a panic inside a callable is caught at the boundary: {} ({})",
            e.message(),
            e.kind()
        ),
    }
    let math = Module::builder("math")
        .function("add", add.clone())
        .function("make_adder", make_adder.clone())
        .build();
    let app = Module::builder("app")
        .function("add10", add10.clone())
        .import(math)
        .build();
    let found = app
        .get_function("make_adder", true)
        .ok_or("found through the import")?;
    println!(
        "module `{}` finds `make_adder` in its import `{}`: {}; and functions sit in containers too: {:?}",
        app.name(),
        app.imports()[0].name(),
        Func::ptr_eq(&found, &make_adder),
        Array::<Func>::from(vec![add.clone(), add10.clone()])
    );
    remove_global("tour.add");
    remove_global("tour.make_adder");
    Ok(())
}

fn reflection_and_json(f: &ObjectPtr<Function>) -> Result {
    section("9. Reflection and the JSON graph: any object graph, no per-type code");
    let info = Function::type_info();
    println!(
        "the derive recorded {}'s fields, parents first: {}",
        info.key(),
        info.reflection()
            .reflected_fields()
            .map(|fi| format!(
                "{} ({}, offset {})",
                fi.name(),
                fi.static_type_key(),
                fi.offset()
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let f_ref = f.clone().into_object_ref();
    println!(
        "generic access on an ObjectRef: field_names = {:?}, get_attr(\"body\") is a {}",
        reflection::field_names(&f_ref),
        reflection::get_attr(&f_ref, "body")?.type_key()
    );
    let made = reflection::create("tour.IntImm", [("value", Any::from(7))])?;
    let wrong = reflection::create("tour.IntImm", [("value", Any::from("seven"))]).unwrap_err();
    println!(
        "create(\"tour.IntImm\", value = 7) builds {made:?}; a wrong field is an error ({:?}): {wrong}",
        wrong.kind()
    );
    println!("the reflection-driven Debug shows `x`, shared, once (#1):\n{f:#?}");
    let text = to_json_graph(&Any::from(f.clone()))?;
    println!(
        "saved as a JSON graph of {} nodes ({} bytes, compact); the first lines of the readable form:",
        text.matches("\"type\"").count(),
        text.len()
    );
    for line in to_json_graph_pretty(&Any::from(f.clone()))?.lines().take(6) {
        println!("  {line}");
    }
    let loaded = from_json_graph(&text)?;
    let g = loaded
        .as_object_of::<Function>()
        .ok_or("the root is a Function")?;
    println!("reloaded:  {}", print(&g.body));
    println!(
        "f(2, 10) = {} after the round trip; the parameter `x` and both of its uses are still one object: {}",
        call(g, &[2, 10])?,
        count_distinct(&g.clone().upcast()) == count_distinct(&f.clone().upcast())
    );
    let e = from_json_graph(
        r#"{"root_index": 0, "nodes": [{"type": "tour.IntImm", "data": {"value": "7"}}]}"#,
    )
    .unwrap_err();
    println!(
        "and bad input is an error, with its kind, node and field as data ({:?}, node {:?}, field {:?}): {e}",
        e.kind(),
        e.node(),
        e.field()
    );
    Ok(())
}

fn structural_equality() {
    section("11. Structural equality and hashing, from the derive's declarations");
    let (x, y) = (var("x"), var("y"));
    let f = function([x.clone()], add(x.clone(), int(1)));
    let g = function([y.clone()], add(y.clone(), int(1)));
    let h = function([y.clone()], add(x.clone(), int(1)));
    println!(
        "fn(x) {{ x + 1 }} == fn(y) {{ y + 1 }}: {} (hashes equal: {})",
        structural_equal(&f, &g),
        structural_hash(&f) == structural_hash(&g)
    );
    let (at, _) = first_mismatch(&f, &h).expect("they differ");
    println!("fn(x) {{ x + 1 }} vs fn(y) {{ x + 1 }} first differ at {at}");
    println!("(see the `cse` example for StructuralKey in a HashMap)");
}

/// A stand-in for a DLPack consumer in another library (NumPy's `from_dlpack`, say):
/// it reads the tensor it was given, then calls the deleter once, when done.
fn foreign_consumer_sum(managed: *mut DLManagedTensorVersioned) -> f32 {
    // SAFETY: the caller hands over a live export of a compact f32 CPU tensor, which
    // this consumer owns from here on and releases once.
    unsafe {
        let t = &(*managed).dl_tensor;
        let n: i64 = (0..t.ndim as usize).map(|i| *t.shape.add(i)).product();
        let first = (t.data as *const u8).add(t.byte_offset as usize) as *const f32;
        let sum = std::slice::from_raw_parts(first, n as usize).iter().sum();
        if let Some(deleter) = (*managed).deleter {
            deleter(managed);
        }
        sum
    }
}

fn ndarray_and_dlpack() -> Result {
    section("10. NDArray and DLPack");
    let weights = NDArray::from_slice(&[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    println!(
        "{weights:?}: an object ({}, index {}) whose DLTensor sits {} bytes after its address; data 64-byte aligned: {}",
        weights.as_object_ptr().type_key(),
        weights.as_object_ptr().type_index(),
        NDArrayObj::DL_TENSOR_OFFSET,
        weights.data_ptr() as usize % 64 == 0
    );
    let row = weights.slice(1..2)?;
    println!(
        "a view of row 1 shares the memory: {:?} at {:p} (the NDArray's data at {:p})",
        row.as_slice::<f32>()?,
        row.data_ptr(),
        weights.data_ptr()
    );

    // Through functions: a typed one takes the NDArray object...
    let row_sums =
        Func::from_typed_named("tour.row_sums", |t: NDArray| -> Result<NDArray, Error> {
            let cols = t.shape()[1] as usize;
            let sums: Vec<f32> = t
                .as_slice::<f32>()?
                .chunks(cols)
                .map(|r| r.iter().sum())
                .collect();
            Ok(NDArray::from_vec(&t.shape()[..1], sums)?)
        });
    let sums = row_sums.typed::<(&NDArray,), NDArray>().call((&weights,))?;
    println!("tour.row_sums(weights) = {:?}", sums.as_slice::<f32>()?);
    // ...and a packed one with a TensorView takes the object or a raw DLTensor* (the
    // RFC's calling convention for tensors that C code owns).
    let numel = Func::from_packed(|args| {
        let t = TensorView::try_from(args[0])?;
        Ok(Any::from(t.numel() as i64))
    });
    println!(
        "numel as an object: {:?}, as a raw DLTensor*: {:?}; a typed NDArray parameter refuses the raw pointer: {}",
        numel.call_with([&weights])?,
        numel.call(&[weights.as_raw_view()?])?,
        row_sums.call(&[weights.as_raw_view()?]).unwrap_err().message()
    );
    let mut params: Map<String, NDArray> = Map::new();
    params.insert(String::from("dense.weight"), weights.clone());
    println!("and NDArrays sit in containers like any object: {params:?}");

    // DLPack, both directions, no copy.
    let managed = weights.to_dlpack_versioned();
    println!(
        "exported as DLManagedTensorVersioned: the export holds the NDArray ({} handles now)",
        ObjectPtr::strong_count(weights.as_object_ptr())
    );
    println!(
        "a foreign consumer sums it in place: {} (and calls the deleter: {} handles)",
        foreign_consumer_sum(managed),
        ObjectPtr::strong_count(weights.as_object_ptr())
    );
    let managed = row.to_dlpack_versioned();
    // SAFETY: a fresh export, handed over to the import (as a consumer would).
    let back = unsafe { NDArray::from_dlpack_versioned(managed) }?;
    println!(
        "exported and imported back: the same object: {}, the same data pointer: {}",
        NDArray::ptr_eq(&back, &row),
        back.data_ptr() == row.data_ptr()
    );
    let before = ObjectPtr::strong_count(weights.as_object_ptr());
    let mut shape = [2i64, 2];
    let bad = weights.to_dlpack_versioned();
    // SAFETY: our own fresh export, changed the way a broken producer might describe a
    // tensor (2 × 2 elements of 4 bits), then offered to the import, which refuses it and
    // takes nothing: the export is still ours, and we release it (once) below.
    let err = unsafe {
        (*bad).dl_tensor.ndim = 2;
        (*bad).dl_tensor.shape = shape.as_mut_ptr();
        (*bad).dl_tensor.strides = std::ptr::null_mut();
        (*bad).dl_tensor.dtype = object_core::DataType::int(4);
        NDArray::from_dlpack_versioned(bad)
    }
    .unwrap_err();
    let held = ObjectPtr::strong_count(weights.as_object_ptr());
    // SAFETY: the refused export is still ours; its deleter is called once, here.
    unsafe { ((*bad).deleter.expect("our exports have a deleter"))(bad) };
    println!(
        "bad input is an error, never UB: {err}; the refused tensor stays the caller's, which calls its deleter ({} handles before the export, {} after the refusal, {} after the deleter)",
        before,
        held,
        ObjectPtr::strong_count(weights.as_object_ptr())
    );
    Ok(())
}
