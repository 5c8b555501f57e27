//! Layout arithmetic and the checks of a DLTensor description, shared by construction,
//! import and views: element sizes and alignment, devices, element counts, compact
//! strides, the memory span of a strided layout. All of it safe code on numbers and
//! slices; the modules that read raw descriptions ([`object`](super::object)) hand the
//! slices they read to [`check_description`].

use object_core::{DataType, Device};

use super::dlpack::DLTensor;
use super::error::NDArrayError;

/// The most dimensions an NDArray may have (as in NumPy 2); imports with more are
/// refused.
pub const MAX_NDIM: usize = 64;

/// The highest `DLDataTypeCode` with whole-byte elements (`kDLFloat8_e8m0fnu`); codes
/// above it are the sub-byte float6/float4 types.
const MAX_BYTE_TYPE_CODE: u8 = 14;

/// Bytes per element, if the data type is one an NDArray holds: every byte-addressable
/// DLPack type — bits a multiple of 8 (the float8 family exactly 8), at least one lane,
/// a fixed lane count. Refused: sub-byte types (`int4`, `uint1`, and the float6 and
/// float4 types, whose packing into bytes DLPack leaves to the producer, so that no
/// element has an address of its own), scalable vectors (their lane count is known
/// only at run time), `void`, and codes DLPack does not define.
#[inline]
pub(super) fn element_bytes(dtype: DataType) -> Result<usize, NDArrayError> {
    let ok = dtype.code <= MAX_BYTE_TYPE_CODE
        && dtype.bits > 0
        && dtype.bits % 8 == 0
        && (dtype.code < DataType::FLOAT8_E3M4 || dtype.bits == 8)
        && dtype.lanes > 0
        && dtype.vscale_factor().is_none()
        && (dtype.code != DataType::COMPLEX || dtype.bits % 16 == 0);
    if ok {
        Ok(dtype.bytes())
    } else {
        Err(NDArrayError::UnsupportedDataType(dtype))
    }
}

/// The alignment the first element needs on the host: the scalar's (a complex number's
/// part's) size, as a power of two, at most 8.
#[inline]
pub(super) fn element_align(dtype: DataType) -> usize {
    let mut scalar = dtype.bits as usize / 8;
    if dtype.code == DataType::COMPLEX {
        scalar /= 2;
    }
    let pow2 = scalar & scalar.wrapping_neg();
    pow2.clamp(1, 8)
}

/// Accepts the device types of `DLDeviceType` (v1.1: 1 to 4 and 7 to 18) with a
/// non-negative id.
#[inline]
pub(super) fn check_device(device: Device) -> Result<(), NDArrayError> {
    if matches!(device.device_type, 1..=4 | 7..=18) && device.device_id >= 0 {
        Ok(())
    } else {
        Err(NDArrayError::UnsupportedDevice(device))
    }
}

/// A checked size, or [`NDArrayError::TooLarge`] for an overflow. (A `match` rather
/// than `ok_or`, whose error value the optimizer kept building and dropping on the
/// success path of an import.)
#[inline(always)]
pub(super) fn fits<T>(v: Option<T>) -> Result<T, NDArrayError> {
    match v {
        Some(v) => Ok(v),
        None => Err(NDArrayError::TooLarge),
    }
}

/// The element count of a shape; checks the rank and each extent. A shape with a zero
/// extent has no elements, whatever the product of the others (`[1 << 62, 4, 0]` is
/// empty, not an overflow).
#[inline]
pub(super) fn numel_of(shape: &[i64]) -> Result<usize, NDArrayError> {
    if shape.len() > MAX_NDIM {
        return Err(NDArrayError::BadNdim {
            ndim: shape.len() as i64,
        });
    }
    if let Some((axis, &dim)) = shape.iter().enumerate().find(|(_, &d)| d < 0) {
        return Err(NDArrayError::NegativeDim { axis, dim });
    }
    if shape.contains(&0) {
        return Ok(0);
    }
    fits(
        shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d as usize)),
    )
}

/// Checks that compact row-major strides for `shape` fit in `i64` (rank already
/// checked). Axes of extent 0 or 1 count as 1, as in PyTorch. An empty layout always
/// passes: no element is ever addressed through its strides, so where the product
/// overflows [`write_compact_strides`] saturates instead.
#[inline]
pub(super) fn check_compact(shape: &[i64]) -> Result<(), NDArrayError> {
    if shape.contains(&0) {
        return Ok(());
    }
    let mut acc: i64 = 1;
    for &d in shape.iter().skip(1).rev() {
        acc = fits(acc.checked_mul(d.max(1)))?;
    }
    Ok(())
}

/// Writes compact row-major strides for `shape` into `out` (as long as the shape),
/// after [`check_compact`] passed. The products saturate at `i64::MAX`, which only an
/// empty layout's strides can reach (`[0, i64::MAX, 7]` gets `[i64::MAX, 7, 1]`).
#[inline]
pub(super) fn write_compact_strides(shape: &[i64], out: &mut [i64]) {
    let mut acc: i64 = 1;
    for (o, &d) in out.iter_mut().zip(shape).rev() {
        *o = acc;
        acc = acc.saturating_mul(d.max(1));
    }
}

/// Compact row-major strides for `shape`, allocated (for the copying paths).
pub(super) fn compact_strides(shape: &[i64]) -> Result<Vec<i64>, NDArrayError> {
    check_compact(shape)?;
    let mut out = vec![0; shape.len()];
    write_compact_strides(shape, &mut out);
    Ok(out)
}

/// Whether `strides` describe a compact row-major layout of `shape` (axes of extent 1
/// may have any stride; an empty layout is contiguous).
#[inline]
pub(super) fn is_compact(shape: &[i64], strides: &[i64]) -> bool {
    if shape.contains(&0) {
        return true;
    }
    let mut expected: i64 = 1;
    for (&dim, &stride) in shape.iter().zip(strides).rev() {
        if dim != 1 && stride != expected {
            return false;
        }
        expected = expected.saturating_mul(dim);
    }
    true
}

/// The lowest and highest element offsets (in elements) a layout reaches: `Ok(None)`
/// for an empty layout, `Err` if they overflow `i128` (strides from a foreign producer
/// can be anything).
#[inline]
pub(super) fn element_span(
    shape: &[i64],
    strides: &[i64],
) -> Result<Option<(i128, i128)>, NDArrayError> {
    if shape.contains(&0) {
        return Ok(None);
    }
    let (mut lo, mut hi) = (0i128, 0i128);
    for (&dim, &stride) in shape.iter().zip(strides) {
        let reach = fits((dim as i128 - 1).checked_mul(stride as i128))?;
        if reach < 0 {
            lo = fits(lo.checked_add(reach))?;
        } else {
            hi = fits(hi.checked_add(reach))?;
        }
    }
    Ok(Some((lo, hi)))
}

/// A DLTensor description that passed [`check_description`]: its shape and strides as
/// slices, and its element count.
#[derive(Clone, Copy, Debug)]
pub(super) struct Checked<'a> {
    pub(super) shape: &'a [i64],
    /// `None`: compact row-major.
    pub(super) strides: Option<&'a [i64]>,
    pub(super) numel: usize,
}

/// Checks a DLTensor description whose rank was checked (at most [`MAX_NDIM`]) and
/// whose shape and strides were read into slices (`strides` is `None` for a null
/// pointer or no dimensions: compact row-major): shape, strides, sizes, data type,
/// device, null data, host alignment. Never reads the data.
#[inline]
pub(super) fn check_description<'a>(
    t: &DLTensor,
    shape: &'a [i64],
    strides: Option<&'a [i64]>,
) -> Result<Checked<'a>, NDArrayError> {
    let numel = numel_of(shape)?;
    let elem = element_bytes(t.dtype)?;
    check_device(t.device)?;
    let nbytes = fits(numel.checked_mul(elem))?;
    if nbytes > isize::MAX as usize {
        return Err(NDArrayError::TooLarge);
    }
    let checked = Checked {
        shape,
        strides,
        numel,
    };
    let span = match strides {
        Some(st) => element_span(shape, st)?,
        None => {
            check_compact(shape)?;
            (numel > 0).then(|| (0, numel as i128 - 1))
        }
    };
    let Some((lo, hi)) = span else {
        return Ok(checked);
    };
    // The bytes from the lowest to past the highest element must fit in `isize`; then
    // every offset below is bounded by it.
    let elem_i = elem as i128;
    let span = fits((hi - lo + 1).checked_mul(elem_i))?;
    if span > isize::MAX as i128 || t.byte_offset > isize::MAX as u64 {
        return Err(NDArrayError::TooLarge);
    }
    if t.data.is_null() {
        return Err(NDArrayError::NullData { numel });
    }
    if t.device.is_host_accessible() {
        // Every element's address must be a real address (no wrap-around).
        let first = t.data as usize as i128 + t.byte_offset as i128;
        if first + lo * elem_i < 0 || first + (hi + 1) * elem_i > usize::MAX as i128 {
            return Err(NDArrayError::TooLarge);
        }
        let align = element_align(t.dtype);
        if first as usize % align != 0 {
            return Err(NDArrayError::Misaligned {
                address: first as usize,
                align,
            });
        }
    }
    Ok(checked)
}

/// The common checks before reading a DLTensor's data as `dtype` elements.
#[inline]
pub(super) fn readable(t: &DLTensor, dtype: DataType) -> Result<(), NDArrayError> {
    if t.dtype != dtype {
        return Err(NDArrayError::DataTypeMismatch {
            expected: dtype,
            actual: t.dtype,
        });
    }
    if !t.device.is_host_accessible() {
        return Err(NDArrayError::NotHostAccessible(t.device));
    }
    Ok(())
}

/// `data + byte_offset`, with wrapping arithmetic (only dereferenced after checks).
#[inline]
pub(super) fn first_element(t: &DLTensor) -> *mut u8 {
    (t.data as *mut u8).wrapping_add(t.byte_offset as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strides_and_contiguity() {
        assert_eq!(compact_strides(&[2, 3, 4]).unwrap(), &[12, 4, 1]);
        assert_eq!(compact_strides(&[]).unwrap(), &[] as &[i64]);
        assert_eq!(compact_strides(&[0, 5]).unwrap(), &[5, 1]);
        assert!(
            compact_strides(&[1 << 40, 1 << 40, 0]).is_ok(),
            "the first extent is never multiplied"
        );
        assert_eq!(
            compact_strides(&[2, 1 << 40, 1 << 40, 0]).unwrap(),
            &[i64::MAX, 1 << 40, 1, 1],
            "an empty array's strides saturate instead of overflowing"
        );
        assert!(compact_strides(&[2, 1 << 40, 1 << 40, 1]).is_err());
        assert_eq!(numel_of(&[1 << 62, 4, 0]), Ok(0));
        assert_eq!(numel_of(&[1 << 62, 4, 1]), Err(NDArrayError::TooLarge));
        assert_eq!(
            numel_of(&[0, -2]),
            Err(NDArrayError::NegativeDim { axis: 1, dim: -2 })
        );
        assert!(is_compact(&[2, 3], &[3, 1]));
        assert!(!is_compact(&[2, 3], &[1, 2]));
        assert!(
            is_compact(&[2, 1, 3], &[3, 99, 1]),
            "extent-1 axes may have any stride"
        );
        assert!(is_compact(&[2, 0], &[7, 7]), "empty arrays are contiguous");
        assert!(is_compact(&[], &[]));
    }

    #[test]
    fn element_sizes_and_alignment() {
        assert_eq!(element_bytes(DataType::float(32)), Ok(4));
        assert_eq!(element_bytes("float32x4".parse().unwrap()), Ok(16));
        assert_eq!(element_bytes(DataType::bool()), Ok(1));
        assert!(element_bytes(DataType::int(4)).is_err(), "sub-byte");
        assert!(element_bytes(DataType::new(15, 6, 1)).is_err(), "float6");
        for fp8 in DataType::FLOAT8_E3M4..=DataType::FLOAT8_E8M0FNU {
            assert_eq!(element_bytes(DataType::new(fp8, 8, 1)), Ok(1));
            assert_eq!(element_bytes(DataType::new(fp8, 8, 4)), Ok(4));
            assert!(element_bytes(DataType::new(fp8, 16, 1)).is_err());
        }
        for sub_byte in [
            "float4_e2m1fn",
            "float4_e2m1fnx2",
            "float6_e2m3fn",
            "float6_e3m2fnx4",
        ] {
            assert!(
                element_bytes(sub_byte.parse().unwrap()).is_err(),
                "{sub_byte}"
            );
        }
        assert!(
            element_bytes("float32xvscalex4".parse().unwrap()).is_err(),
            "scalable"
        );
        assert!(element_bytes(DataType::void()).is_err(), "void");
        assert!(
            element_bytes(DataType::new(99, 8, 1)).is_err(),
            "unknown code"
        );
        assert!(
            element_bytes(DataType::new(DataType::FLOAT, 32, 0)).is_err(),
            "no lanes"
        );
        assert_eq!(element_align(DataType::float(64)), 8);
        assert_eq!(element_align(DataType::new(DataType::COMPLEX, 64, 1)), 4);
        assert_eq!(element_align(DataType::new(DataType::INT, 24, 1)), 1);
        assert_eq!(element_align(DataType::new(DataType::INT, 128, 1)), 8);
    }

    #[test]
    fn spans() {
        assert_eq!(element_span(&[2, 3], &[3, 1]), Ok(Some((0, 5))));
        assert_eq!(element_span(&[2, 3], &[-3, 1]), Ok(Some((-3, 2))));
        assert_eq!(element_span(&[2, 0], &[3, 1]), Ok(None));
        assert_eq!(
            element_span(&[i64::MAX, 2], &[i64::MAX, i64::MAX]).map(|s| s.is_some()),
            Ok(true),
            "fits in i128"
        );
        let big = [i64::MAX; 4];
        assert_eq!(element_span(&big, &big), Err(NDArrayError::TooLarge));
    }
}
