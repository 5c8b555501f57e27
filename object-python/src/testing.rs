//! What the tests and the benchmarks call: a few Rust global functions (`testing.*`,
//! `tour.*`) and the plain pyo3 functions measured beside ours.
//!
//! Compiled only with the crate's `testing` feature, which `scripts/python.sh` turns on
//! for pytest (and `bench/bench.py` needs); the wheel a user installs has none of it.

use std::thread;

use object_containers::{
    register_global_override, Array, BigInt, Function, Map, NDArray, Signature,
};
use object_core::{Any, AnyView, Error, ErrorKind, ObjectPtr};
use object_examples::expr::{self, Env, Expr, Var};
use pyo3::prelude::*;

/// A plain pyo3 function that does nothing (the benchmarks' yardstick).
#[pyfunction]
fn _bench_plain_noop() {}

/// A plain pyo3 function that releases and retakes the GIL (what that costs alone).
#[pyfunction]
fn _bench_plain_detach(py: Python<'_>) {
    py.detach(|| ());
}

/// A plain pyo3 `add(int, int)` (the benchmarks' yardstick).
#[pyfunction]
fn _bench_plain_add(a: i64, b: i64) -> i64 {
    a + b
}

/// A plain pyo3 function returning a list of its three arguments (the yardstick of a
/// call returning a container: `testing.make_array` returns an `Array`).
#[pyfunction]
fn _bench_plain_list(a: i64, b: i64, c: i64) -> Vec<i64> {
    vec![a, b, c]
}

/// A plain pyo3 function reading a NumPy array's length through the buffer-free
/// `len()` (the least a call taking an array can do; printed beside the table).
#[pyfunction]
fn _bench_plain_len(a: &Bound<'_, PyAny>) -> PyResult<usize> {
    a.len()
}

/// A plain pyo3 function taking a `float32` array's data address through the buffer
/// protocol (`PyBuffer`, what pyo3 offers without rust-numpy): the yardstick of a call
/// taking an array, which does what `testing.tensor_data_ptr` does.
#[cfg(not(feature = "abi3"))]
#[pyfunction]
fn _bench_plain_buffer_ptr(a: &Bound<'_, PyAny>) -> PyResult<usize> {
    let buf = pyo3::buffer::PyBuffer::<f32>::get(a)?;
    Ok(buf.buf_ptr() as usize)
}

/// A plain pyo3 class with one integer field (the yardstick of construction and of a
/// field read).
#[pyclass(frozen, module = "object_python", name = "_BenchPlainPoint")]
struct BenchPlainPoint {
    #[pyo3(get)]
    value: i64,
}

#[pymethods]
impl BenchPlainPoint {
    #[new]
    #[pyo3(signature = (*, value))]
    fn new(value: i64) -> Self {
        BenchPlainPoint { value }
    }
}

/// Calls `f(t, i)` for `i` in `0..calls` on each of `threads` new Rust threads `t` and
/// sums the (integer) results. Every thread is joined before it returns (the first
/// thread's error, in thread order, is returned and the others dropped), so nothing it
/// started outlives the call.
fn call_in_threads(f: Function, threads: i64, calls: i64) -> Result<i64, Error> {
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let f = f.clone();
            thread::spawn(move || -> Result<i64, Error> {
                let mut sum = 0;
                for i in 0..calls {
                    let r = f.call(&[AnyView::from(t), AnyView::from(i)])?;
                    sum += r
                        .as_int()
                        .ok_or_else(|| Error::type_error("the callback must return an int"))?;
                }
                Ok(sum)
            })
        })
        .collect();
    let joined: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
    let mut total = 0;
    for r in joined {
        total +=
            r.map_err(|_| Error::new(ErrorKind::RuntimeError, "a calling thread panicked"))??;
    }
    Ok(total)
}

fn tensor_sum(t: NDArray) -> Result<f64, Error> {
    let dtype = t.dtype().to_string();
    let err = |e: object_containers::NDArrayError| Error::value_error(e.to_string());
    match dtype.as_str() {
        "float64" => Ok(t.as_slice::<f64>().map_err(err)?.iter().sum()),
        "float32" => Ok(t
            .as_slice::<f32>()
            .map_err(err)?
            .iter()
            .map(|&x| f64::from(x))
            .sum()),
        "int64" => Ok(t
            .as_slice::<i64>()
            .map_err(err)?
            .iter()
            .map(|&x| x as f64)
            .sum()),
        "int32" => Ok(t
            .as_slice::<i32>()
            .map_err(err)?
            .iter()
            .map(|&x| f64::from(x))
            .sum()),
        _ => Err(Error::type_error(format!(
            "tensor_sum: unsupported dtype {dtype}"
        ))),
    }
}

/// Registers the globals (idempotent: a second import overrides with the same).
fn register_globals() {
    let globals: Vec<(&str, Function)> = vec![
        (
            "testing.noop",
            Function::from_typed_named("testing.noop", || {}),
        ),
        (
            "testing.add",
            Function::from_typed_named("testing.add", |a: i64, b: i64| a + b),
        ),
        (
            // A signature declared in Rust: names, a default, the doc; the types are the
            // closure's.
            "tour.add",
            Function::from_typed_named("tour.add", |x: i64, y: i64| x + y)
                .with_signature(
                    Signature::new()
                        .param("x")
                        .param_default("y", 1)
                        .doc("x + y; y is 1 unless given."),
                )
                .unwrap_or_else(|_| Function::from_typed_named("tour.add", |x: i64, y: i64| x + y)),
        ),
        (
            // An `Array` of its arguments (bench.py's container row; tvm-ffi's
            // `ffi.Array` beside it).
            "testing.make_array",
            Function::from_packed_named(Some("testing.make_array"), |args| {
                Ok(Any::from(
                    args.iter().map(AnyView::to_any).collect::<Array<Any>>(),
                ))
            }),
        ),
        (
            "testing.tensor_sum",
            Function::from_typed_named("testing.tensor_sum", tensor_sum),
        ),
        (
            "testing.tensor_data_ptr",
            Function::from_typed_named("testing.tensor_data_ptr", |t: NDArray| {
                t.data_ptr() as usize as i64
            }),
        ),
        (
            "testing.tensor_read_only",
            Function::from_typed_named("testing.tensor_read_only", |t: NDArray| t.is_read_only()),
        ),
        (
            "testing.call",
            Function::from_packed_named(Some("testing.call"), |args| {
                let (f, rest) = args
                    .split_first()
                    .ok_or_else(|| Error::type_error("testing.call(f, *args)"))?;
                let f = Function::try_from(f.to_any())?;
                f.call(rest)
            }),
        ),
        (
            "testing.call_in_threads",
            // It waits for threads that call back into Python: marked long-running, so
            // that a call lets the GIL go (held, it would deadlock).
            Function::from_typed_named("testing.call_in_threads", call_in_threads).long_running(),
        ),
        (
            "testing.raise",
            Function::from_typed_named("testing.raise", |kind: String, message: String| {
                Err::<(), Error>(Error::new(kind, message))
            }),
        ),
        (
            // The kind of the error `f()` fails with (None if it does not fail): what
            // Rust sees of an exception raised in Python.
            "testing.error_kind",
            Function::from_typed_named("testing.error_kind", |f: Function| {
                f.call(&[]).err().map(|e| e.kind().as_str().to_owned())
            }),
        ),
        (
            // A `BigInt` parameter, as decimal text (ints beyond 64 bits arrive as one).
            "testing.big_int_text",
            Function::from_typed_named("testing.big_int_text", |b: BigInt| b.to_string()),
        ),
        (
            "testing.echo",
            Function::from_packed_named(Some("testing.echo"), |args| {
                Ok(args.first().map(AnyView::to_any).unwrap_or_default())
            }),
        ),
        (
            "tour.print",
            Function::from_typed_named("tour.print", |e: ObjectPtr<Expr>| expr::print(&e)),
        ),
        (
            "tour.eval",
            Function::from_typed_named(
                "tour.eval",
                |e: ObjectPtr<Expr>, env: Map<ObjectPtr<Var>, i64>| -> Result<i64, Error> {
                    let env = env.iter().fold(Env::new(), |acc, (v, x)| acc.bind(v, *x));
                    expr::eval(&e, &env).map_err(|e| Error::value_error(e.to_string()))
                },
            ),
        ),
    ];
    for (name, f) in globals {
        drop(register_global_override(name, f));
    }
}

/// Whether `obj` is imported by reading its C struct in place (an exact
/// `numpy.ndarray` the fast path takes) rather than through `__dlpack__`.
#[pyfunction]
fn _numpy_read_in_place(obj: &Bound<'_, PyAny>) -> bool {
    crate::numpy_struct::import(obj).is_some()
}

pub(crate) fn add_to_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    register_globals();
    m.add_function(wrap_pyfunction!(_numpy_read_in_place, m)?)?;
    m.add_function(wrap_pyfunction!(_bench_plain_noop, m)?)?;
    m.add_function(wrap_pyfunction!(_bench_plain_add, m)?)?;
    m.add_function(wrap_pyfunction!(_bench_plain_detach, m)?)?;
    m.add_function(wrap_pyfunction!(_bench_plain_len, m)?)?;
    m.add_function(wrap_pyfunction!(_bench_plain_list, m)?)?;
    #[cfg(not(feature = "abi3"))]
    m.add_function(wrap_pyfunction!(_bench_plain_buffer_ptr, m)?)?;
    m.add_class::<BenchPlainPoint>()?;
    Ok(())
}

/// A built-in defined only for the tests, `testing.Tuple` (a fixed sequence of values):
/// one type and one hooks value, which Python's classes and conversions read by its
/// shape alone (`tests/test_builtin_shapes.py`).
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "testing.Tuple", final, opaque, builtin = TUPLE_HOOKS)]
struct TestTuple {
    base: object_core::Object,
    items: Box<[object_core::Any]>,
}

impl std::fmt::Debug for TestTuple {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut t = f.debug_tuple("");
        for item in self.items.iter() {
            t.field(&item.view());
        }
        t.finish()
    }
}

static TUPLE_HOOKS: object_core::builtin::BuiltinHooks = object_core::builtin::BuiltinHooks {
    shape: object_core::builtin::BuiltinShape::Items,
    mutable: false,
    contents: |obj| match obj.downcast_ref::<TestTuple>() {
        Some(t) => object_core::builtin::Contents::Items(&t.items),
        None => object_core::builtin::Contents::Identity,
    },
    build: |parts| match parts {
        object_core::builtin::Parts::Items(items) => Ok(object_core::Any::from(
            object_core::make_object(TestTuple {
                base: object_core::Object::new(),
                items: items.collect(),
            }),
        )),
        other => Err(object_core::builtin::BuiltinError::wrong_shape(
            object_core::builtin::BuiltinShape::Items,
            &other,
        )),
    },
};

/// An enum with a `repr`, an explicit value and a renamed variant, for
/// `tests/test_enums.py`: `testing.Paint`'s colors.
#[derive(object_core::ObjectEnum, Clone, Copy, Debug, PartialEq)]
#[repr(u8)]
#[object_enum(key = "testing.Color")]
enum Color {
    Red,
    Green = 5,
    #[object_enum(rename = "blue")]
    Blue,
}

/// An enum without a `repr`, with a negative value.
#[derive(object_core::ObjectEnum, Clone, Copy, Debug, PartialEq)]
#[object_enum(key = "testing.Sign")]
enum Sign {
    Minus = -1,
    Plus = 1,
}

/// A type with enum fields (plain, optional and defaulted), for `tests/test_enums.py`.
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "testing.Paint")]
struct Paint {
    base: object_core::Object,
    color: Color,
    sign: Sign,
    accent: Option<Color>,
    #[object(default = Color::Red)]
    under: Color,
}
