//! The `data` of the nodes that are not containers, objects or tensors, both ways:
//! devices, integer lists (shapes), data types, the inline fields of reflected
//! objects, and the node type of a value.

use object_core::reflection::{FieldInfo, FieldKind};
use object_core::type_index as ti;
use object_core::{Any, AnyView, DataType, Device};

use crate::error::{GraphError, GraphErrorKind};
use crate::json::{self, Json};
use crate::text::push_i64;

/// How the text is laid out: the separators written between items and after keys, and
/// the break before each node and before the end of `nodes`.
#[derive(Clone, Copy)]
pub(crate) struct Style {
    /// Between array items and object members: `,` or `, `.
    pub(crate) comma: &'static str,
    /// After a member's key: `:` or `: `.
    pub(crate) colon: &'static str,
    /// Each node's start, up to its type: `{"type":`, after a new line and two spaces
    /// in the readable form (one literal: written a million times for a big graph).
    pub(crate) node_type: &'static str,
    /// After the type: `,"data":`.
    pub(crate) data: &'static str,
    /// Before the `]` that closes `nodes`: nothing, or a new line.
    pub(crate) end: &'static str,
}

impl Style {
    /// tvm-ffi's compact form (its `json::Stringify` without an indent): no white space.
    pub(crate) const COMPACT: Style = Style {
        comma: ",",
        colon: ":",
        node_type: "{\"type\":",
        data: ",\"data\":",
        end: "",
    };
    /// One node a line, a space after each `,` and `:`.
    pub(crate) const PRETTY: Style = Style {
        comma: ", ",
        colon: ": ",
        node_type: "\n  {\"type\": ",
        data: ", \"data\": ",
        end: "\n",
    };

    /// A reflected object's field key in a node's data, as `to_json_graph` writes it:
    /// `"name":`, after a comma unless it is the first.
    pub(crate) fn field_key(&self, out: &mut String, first: bool, name: &str) {
        if !first {
            out.push_str(self.comma);
        }
        json::write_str(out, name);
        out.push_str(self.colon);
    }

    /// `"key":` (the key needs no escaping).
    pub(crate) fn key(&self, out: &mut String, key: &str) {
        out.push('"');
        out.push_str(key);
        out.push('"');
        out.push_str(self.colon);
    }
}

/// The base64 of `ffi.Bytes` and `ffi.Tensor` data: the standard alphabet, padded.
pub(crate) const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// The node type of a value: its type key, with inline strings as `ffi.String`.
pub(crate) fn graph_key(v: &Any) -> &'static str {
    ti::canonical_key(v.type_key())
}

/// `None`, booleans, numbers and strings as JSON literals; `None` (the option) for any
/// other value.
pub(crate) fn write_literal(out: &mut String, v: AnyView<'_>) -> Option<()> {
    match v.type_index() {
        ti::NONE => out.push_str("null"),
        ti::BOOL => out.push_str(if v.as_bool()? { "true" } else { "false" }),
        ti::INT => push_i64(out, v.as_int()?),
        ti::FLOAT => json::write_f64(out, v.as_float()?),
        _ => json::write_str(out, v.as_str()?),
    }
    Some(())
}

/// Integers as a JSON array.
pub(crate) fn write_ints(out: &mut String, ints: &[i64], style: Style) {
    out.push('[');
    for (i, d) in ints.iter().enumerate() {
        if i > 0 {
            out.push_str(style.comma);
        }
        push_i64(out, *d);
    }
    out.push(']');
}

/// An array of integers.
pub(crate) fn read_ints(v: &Json<'_>) -> Option<Vec<i64>> {
    match v {
        Json::Array(items) => items
            .iter()
            .map(|d| match d {
                Json::Int(d) => Some(*d),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// A device as `[device_type, device_id]`.
pub(crate) fn write_device(out: &mut String, d: Device, style: Style) {
    out.push('[');
    push_i64(out, d.device_type.into());
    out.push_str(style.comma);
    push_i64(out, d.device_id.into());
    out.push(']');
}

/// A device from `[device_type, device_id]` (both in `i32`).
pub(crate) fn read_device(v: &Json<'_>) -> Option<Device> {
    match v {
        Json::Array(v) => match v.as_slice() {
            [Json::Int(t), Json::Int(i)] => Some(Device::new(
                i32::try_from(*t).ok()?,
                i32::try_from(*i).ok()?,
            )),
            _ => None,
        },
        _ => None,
    }
}

/// A data type's text, if it reads back as the same type (custom type codes, zero
/// bits or lanes have no such text).
///
/// # Errors
///
/// [`Unsupported`](GraphErrorKind::Unsupported) for a data type without such a text.
pub(crate) fn data_type_text(d: DataType) -> Result<String, GraphError> {
    let text = d.to_string();
    if text.parse::<DataType>() == Ok(d) {
        Ok(text)
    } else {
        Err(GraphError::new(
            GraphErrorKind::Unsupported,
            format!(
                "cannot save the DataType {{ code: {}, bits: {}, lanes: {} }}: its text `{text}` does not read back as it",
                d.code, d.bits, d.lanes
            ),
        )
        .with_type_key("DataType"))
    }
}

/// A data type from its text.
///
/// # Errors
///
/// [`Data`](GraphErrorKind::Data) for a text that is not a data type.
pub(crate) fn read_data_type(s: &str) -> Result<DataType, GraphError> {
    s.parse::<DataType>()
        .map_err(|e| GraphError::new(GraphErrorKind::Data, e.to_string()).with_source(e))
}

/// A field written inline (see `FieldInfo::is_inline_pod`): its literal.
///
/// # Errors
///
/// As [`data_type_text`], for a `DataType` field.
pub(crate) fn write_inline(
    out: &mut String,
    field: &FieldInfo,
    value: AnyView<'_>,
) -> Result<(), GraphError> {
    match field.kind() {
        FieldKind::Int if value.type_index() == ti::INT => {
            push_i64(out, value.as_int().unwrap_or(0));
        }
        FieldKind::DataType => {
            let d = value.as_data_type().unwrap_or(DataType::new(0, 0, 0));
            json::write_str(out, &data_type_text(d)?);
        }
        // An enum by its variant's name (an integer no variant has, which its Rust type
        // cannot hold, would be written as it is).
        FieldKind::Enum => match (field.enum_info(), value.as_int()) {
            (Some(e), Some(v)) => match e.name_of(v) {
                Some(name) => json::write_str(out, name),
                None => push_i64(out, v),
            },
            _ => {
                write_literal(out, value);
            }
        },
        _ => {
            write_literal(out, value);
        }
    }
    Ok(())
}

/// A field written inline: its literal, checked against the field's kind.
///
/// # Errors
///
/// [`Field`](GraphErrorKind::Field) for a literal of another kind, a `DataType`
/// field whose text is not a data type, or an enum field's name or value that no
/// variant has; the caller names the field and node.
pub(crate) fn inline_value(field: &FieldInfo, value: &Json<'_>) -> Result<Any, GraphError> {
    match (field.kind(), value) {
        (FieldKind::Bool, Json::Bool(b)) => Ok(Any::from(*b)),
        (FieldKind::Int, Json::Int(v)) => Ok(Any::from(*v)),
        (FieldKind::Float, Json::Float(v)) => Ok(Any::from(*v)),
        (FieldKind::Float, Json::Int(v)) => Ok(Any::from(*v as f64)),
        (FieldKind::DataType, Json::Str(s)) => s
            .parse::<DataType>()
            .map(Any::from)
            .map_err(|e| GraphError::new(GraphErrorKind::Field, e.to_string()).with_source(e)),
        // An enum by name (as written), or by value; either checked against its variants.
        (FieldKind::Enum, Json::Str(_) | Json::Int(_)) => {
            let Some(info) = field.enum_info() else {
                return Err(GraphError::new(
                    GraphErrorKind::Field,
                    "an enum field without its variants",
                ));
            };
            let view = match value {
                Json::Str(s) => AnyView::from(&**s),
                Json::Int(v) => AnyView::from(*v),
                _ => AnyView::NONE,
            };
            match info.position(view) {
                Ok(at) => Ok(Any::from(info.variants()[at].value())),
                Err(e) => Err(GraphError::new(GraphErrorKind::Field, e.to_string()).with_source(e)),
            }
        }
        (_, other) => Err(GraphError::new(
            GraphErrorKind::Field,
            format!("expected {}, got {}", field.static_type_key(), other.kind()),
        )),
    }
}
