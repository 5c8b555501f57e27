//! The `data` of an `ffi.Tensor` node (an `NDArray`): `{"dtype": …, "shape": […],
//! "device": [type, id], "data": base64}`, the bytes contiguous, row-major,
//! little-endian — the one node kind the C++ peer has no form for.
//!
//! The bytes are a host copy (only host-readable arrays — `cpu`, `cuda_host`,
//! `rocm_host`, any device id — give them), and loading makes a CPU array of them, as
//! `NDArray::deep_copy` does; so the device written is `cpu:0`, whatever the array's,
//! and saving what was loaded writes the same text.

use base64::Engine as _;
use std::borrow::Cow;

use object_core::builtin::{BuiltinError, BuiltinErrorKind, TensorContents, TensorParts};
use object_core::{DataType, Device};

use crate::data::{data_type_text, read_device, read_ints, write_device, write_ints, Style, B64};
use crate::error::{GraphError, GraphErrorKind};
use crate::json::{self, Json};

/// The type key of tensor nodes.
/// Writes `a`'s node data.
///
/// # Errors
///
/// [`Unsupported`](GraphErrorKind::Unsupported) for an array the host cannot read, a
/// data type without a text, or a big-endian target; [`Memory`](GraphErrorKind::Memory)
/// when the copy of the bytes or the text cannot be allocated.
pub(crate) fn write_tensor(
    out: &mut String,
    a: &TensorContents<'_>,
    key: &'static str,
    style: Style,
) -> Result<(), GraphError> {
    if cfg!(target_endian = "big") {
        return Err(GraphError::new(
            GraphErrorKind::Unsupported,
            "saving an ffi.Tensor writes little-endian bytes, which this big-endian target does not have",
        )
        .with_type_key(key));
    }
    let bytes = a.bytes().map_err(|e| saving_error(e, key))?;
    out.push('{');
    style.key(out, "dtype");
    json::write_str(out, &data_type_text(a.dtype)?);
    out.push_str(style.comma);
    style.key(out, "shape");
    write_ints(out, a.shape, style);
    out.push_str(style.comma);
    style.key(out, "device");
    write_device(out, Device::cpu(), style);
    out.push_str(style.comma);
    style.key(out, "data");
    // Base64 (no character of it needs escaping) straight into the text, after asking
    // for the room without aborting: the size comes from the array's shape.
    let too_large =
        |what: String| saving_error(BuiltinError::new(BuiltinErrorKind::Memory, what), key);
    let room = base64::encoded_len(bytes.len(), true)
        .and_then(|n| n.checked_add(2))
        .ok_or_else(|| too_large("the tensor is too large to save".into()))?;
    out.try_reserve(room)
        .map_err(|_| too_large(format!("cannot allocate {room} bytes")))?;
    out.push('"');
    B64.encode_string(&bytes, out);
    out.push('"');
    out.push('}');
    Ok(())
}

/// An array's error while saving: [`Memory`](GraphErrorKind::Memory) for a copy that
/// cannot be allocated, else [`Unsupported`](GraphErrorKind::Unsupported); it converts
/// into the `Error` the array's error converts into.
fn saving_error(e: BuiltinError, key: &'static str) -> GraphError {
    let kind = match e.kind() {
        BuiltinErrorKind::Memory => GraphErrorKind::Memory,
        _ => GraphErrorKind::Unsupported,
    };
    GraphError::builtin(kind, None, e).with_type_key(key)
}

pub(crate) fn read_tensor<'t>(
    data: Option<&'t Json<'_>>,
    key: &'static str,
) -> Result<TensorParts<'t>, GraphError> {
    let bad = |message: String| GraphError::new(GraphErrorKind::Data, message);
    let Some(data @ Json::Object(members)) = data else {
        return Err(bad(format!(
            "`data` must be an object with dtype, shape, device and data, got {}",
            data.map_or("nothing", Json::kind)
        )));
    };
    if let Some((k, _)) = members
        .iter()
        .find(|(k, _)| !matches!(k.as_ref(), "dtype" | "shape" | "device" | "data"))
    {
        return Err(bad(format!("unknown tensor member `{k}`")));
    }
    if let Some(name) = crate::json::first_duplicate(members.iter().map(|(k, _)| k.as_ref())) {
        return Err(GraphError::duplicate_member(name, "a tensor's data").with_type_key(key));
    }
    let dtype = match data.get("dtype") {
        Some(Json::Str(s)) => s.parse::<DataType>().map_err(|e| {
            GraphError::new(GraphErrorKind::Data, format!("dtype: {e}")).with_source(e)
        })?,
        _ => return Err(bad("`dtype` must be a data type string".into())),
    };
    let shape = data
        .get("shape")
        .and_then(read_ints)
        .ok_or_else(|| bad("`shape` must be an array of integers".into()))?;
    let device = data.get("device").and_then(read_device).ok_or_else(|| {
        bad("`device` must be [device_type, device_id] (in the i32 range)".into())
    })?;
    let bytes = match data.get("data") {
        Some(Json::Str(s)) => B64.decode(s.as_bytes()).map_err(|e| {
            GraphError::new(GraphErrorKind::Data, format!("bad base64: {e}")).with_source(e)
        })?,
        _ => return Err(bad("`data` must be a base64 string".into())),
    };
    if cfg!(target_endian = "big") {
        return Err(bad(
            "an ffi.Tensor holds little-endian bytes, which this big-endian target does not read"
                .into(),
        ));
    }
    Ok(TensorParts {
        dtype,
        shape: Cow::Owned(shape),
        device,
        bytes: Cow::Owned(bytes),
    })
}
