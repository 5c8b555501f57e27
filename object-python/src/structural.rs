//! Structural equality and hashing from Python: `structural_equal`, `structural_hash`
//! and `first_mismatch`, over anything that converts to a value (objects, containers,
//! Python lists and dicts, numbers, strings). `==` on objects stays identity.

use object_core::structural::{
    first_mismatch_with, structural_equal_with, structural_hash_with, StructuralOptions,
};
use pyo3::prelude::*;

use crate::convert::py_to_any;

fn options(map_free_vars: bool, skip_tensor_contents: bool) -> StructuralOptions {
    StructuralOptions::new()
        .map_free_vars(map_free_vars)
        .skip_tensor_contents(skip_tensor_contents)
}

/// Whether `a` and `b` are structurally equal: the same program up to the renaming of
/// bound variables, maps and dicts in any order, tensors by contents (unless
/// `skip_tensor_contents`), free variables by identity (unless `map_free_vars`).
/// The GIL is released while the graphs are compared.
#[pyfunction]
#[pyo3(signature = (a, b, *, map_free_vars = false, skip_tensor_contents = false))]
fn structural_equal(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    map_free_vars: bool,
    skip_tensor_contents: bool,
) -> PyResult<bool> {
    let (a, b) = (py_to_any(a)?, py_to_any(b)?);
    let o = options(map_free_vars, skip_tensor_contents);
    Ok(py.detach(|| structural_equal_with(&a, &b, &o)))
}

/// The structural hash of `value` (an int below 2**64): equal values (with the same
/// options) hash alike. Free variables and identity objects hash by identity (distinct
/// ones apart, in this process only); with `content_only`, by their content, and the
/// hash is the same in every process.
#[pyfunction]
#[pyo3(signature = (value, *, map_free_vars = false, skip_tensor_contents = false, content_only = false))]
fn structural_hash(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    map_free_vars: bool,
    skip_tensor_contents: bool,
    content_only: bool,
) -> PyResult<u64> {
    let v = py_to_any(value)?;
    let o = options(map_free_vars, skip_tensor_contents).content_only_hashes(content_only);
    Ok(py.detach(|| structural_hash_with(&v, &o)))
}

/// Where `a` and `b` first differ, as two printed access paths
/// (`("<root>.body.lhs", "<root>.body.lhs")`), or `None` if they are equal.
#[pyfunction]
#[pyo3(signature = (a, b, *, map_free_vars = false, skip_tensor_contents = false))]
fn first_mismatch(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    map_free_vars: bool,
    skip_tensor_contents: bool,
) -> PyResult<Option<(String, String)>> {
    let (a, b) = (py_to_any(a)?, py_to_any(b)?);
    let o = options(map_free_vars, skip_tensor_contents);
    Ok(py.detach(|| first_mismatch_with(&a, &b, &o).map(|(l, r)| (l.to_string(), r.to_string()))))
}

pub(crate) fn add_to_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(structural_equal, m)?)?;
    m.add_function(wrap_pyfunction!(structural_hash, m)?)?;
    m.add_function(wrap_pyfunction!(first_mismatch, m)?)?;
    Ok(())
}
