//! NDArray and DLPack: construction (`empty`, `from_slice`, `from_vec`, `from_bytes`),
//! checked typed slices, views that share memory and keep their base alive, `copy_from`
//! across layouts, the uniqueness rule for writing, DLPack export and import in both
//! directions and both struct versions (zero copy, checked by pointer equality; deleters
//! called exactly once on either side), the read-only flag, bad input at import (each a
//! clear error; the refused tensor is still the caller's, its deleter not called),
//! arrays in `Any`, `Array`, `Map` and object fields, and arrays or raw `DLTensor*`s
//! passed through functions.
//!
//! Foreign tensors come from a small producer written here (`Foreign`), which owns its
//! data and shape in a box and counts its deleter's calls.
//!
//! Every test starts with a [`LeakCheck`]: it serializes the tests of this binary and
//! checks that `live_objects()` is back to where it started when the test ends.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use object_containers::dlpack::{
    DLManagedTensor, DLManagedTensorVersioned, DLPackVersion, DLTensor,
    DLPACK_FLAG_BITMASK_IS_COPIED, DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_MAJOR_VERSION,
    DLPACK_MINOR_VERSION,
};
use object_containers::{
    Array, Error, Function, Map, NDArray, NDArrayError, NDArrayObj, Shape, String, TensorView,
    ALIGNMENT, MAX_NDIM,
};
use object_core::{make_object, type_index, Any, AnyView, DataType, Device, Object, ObjectPtr};
use object_json::GraphErrorKind;
use object_tests::{scaled, LeakCheck};

fn f32s(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

// ---------------------------------------------------------------------------------
// A foreign DLPack producer.
// ---------------------------------------------------------------------------------

/// What a foreign producer keeps alive behind a managed tensor: the managed struct first
/// (so its address is the box's), then the memory it describes.
#[repr(C)]
struct Foreign<M> {
    managed: M,
    _shape: Vec<i64>,
    _strides: Option<Vec<i64>>,
    _data: Vec<f32>,
    deleted: Arc<AtomicUsize>,
}

unsafe extern "C" fn foreign_deleter_versioned(p: *mut DLManagedTensorVersioned) {
    // SAFETY: installed only on boxed `Foreign<DLManagedTensorVersioned>`s.
    let b = unsafe { Box::from_raw(p as *mut Foreign<DLManagedTensorVersioned>) };
    b.deleted.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn foreign_deleter(p: *mut DLManagedTensor) {
    // SAFETY: installed only on boxed `Foreign<DLManagedTensor>`s.
    let b = unsafe { Box::from_raw(p as *mut Foreign<DLManagedTensor>) };
    b.deleted.fetch_add(1, Ordering::SeqCst);
}

/// The description of `data` with this shape (and strides, or null), `f32`, on the CPU.
fn describe(shape: &mut [i64], strides: Option<&mut Vec<i64>>, data: &mut [f32]) -> DLTensor {
    DLTensor {
        data: if data.is_empty() {
            std::ptr::null_mut()
        } else {
            data.as_mut_ptr() as *mut c_void
        },
        device: Device::cpu(),
        ndim: shape.len() as i32,
        dtype: DataType::float(32),
        shape: shape.as_mut_ptr(),
        strides: strides.map_or(std::ptr::null_mut(), |s| s.as_mut_ptr()),
        byte_offset: 0,
    }
}

/// A versioned managed tensor from a foreign producer, after `tweak` edits it.
fn foreign_versioned(
    shape: &[i64],
    strides: Option<&[i64]>,
    data: Vec<f32>,
    flags: u64,
    tweak: impl FnOnce(&mut DLManagedTensorVersioned),
) -> (*mut DLManagedTensorVersioned, Arc<AtomicUsize>) {
    let deleted = Arc::new(AtomicUsize::new(0));
    let mut shape = shape.to_vec();
    let mut strides = strides.map(<[i64]>::to_vec);
    let mut data = data;
    let dl_tensor = describe(&mut shape, strides.as_mut(), &mut data);
    let mut b = Box::new(Foreign {
        managed: DLManagedTensorVersioned {
            version: DLPackVersion {
                major: DLPACK_MAJOR_VERSION,
                minor: 0,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(foreign_deleter_versioned),
            flags,
            dl_tensor,
        },
        _shape: shape,
        _strides: strides,
        _data: data,
        deleted: deleted.clone(),
    });
    tweak(&mut b.managed);
    (Box::into_raw(b) as *mut DLManagedTensorVersioned, deleted)
}

/// A legacy managed tensor from a foreign producer.
fn foreign_legacy(
    shape: &[i64],
    strides: Option<&[i64]>,
    data: Vec<f32>,
    tweak: impl FnOnce(&mut DLManagedTensor),
) -> (*mut DLManagedTensor, Arc<AtomicUsize>) {
    let deleted = Arc::new(AtomicUsize::new(0));
    let mut shape = shape.to_vec();
    let mut strides = strides.map(<[i64]>::to_vec);
    let mut data = data;
    let dl_tensor = describe(&mut shape, strides.as_mut(), &mut data);
    let mut b = Box::new(Foreign {
        managed: DLManagedTensor {
            dl_tensor,
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(foreign_deleter),
        },
        _shape: shape,
        _strides: strides,
        _data: data,
        deleted: deleted.clone(),
    });
    tweak(&mut b.managed);
    (Box::into_raw(b) as *mut DLManagedTensor, deleted)
}

/// Imports a foreign versioned tensor.
fn import_versioned(m: *mut DLManagedTensorVersioned) -> Result<NDArray, NDArrayError> {
    // SAFETY: `m` is a fresh foreign tensor that nobody else owns or writes.
    unsafe { NDArray::from_dlpack_versioned(m) }
}

/// Imports a foreign legacy tensor.
fn import_legacy(m: *mut DLManagedTensor) -> Result<NDArray, NDArrayError> {
    // SAFETY: as above.
    unsafe { NDArray::from_dlpack(m) }
}

/// Calls an exported tensor's deleter, as a consumer does when done.
fn consume_versioned(m: *mut DLManagedTensorVersioned) {
    // SAFETY: `m` is a live export that this call gives back, once.
    unsafe { ((*m).deleter.expect("our exports have a deleter"))(m) }
}

fn consume_legacy(m: *mut DLManagedTensor) {
    // SAFETY: as above.
    unsafe { ((*m).deleter.expect("our exports have a deleter"))(m) }
}

// ---------------------------------------------------------------------------------
// Construction and reading.
// ---------------------------------------------------------------------------------

#[test]
fn empty_is_zeroed_aligned_and_described() {
    let _leaks = LeakCheck::new();
    for (shape, dtype) in [
        (vec![2i64, 3, 4], DataType::float(32)),
        (vec![7], DataType::int(8)),
        (vec![3, 1, 5], DataType::uint(16)),
        (vec![1000], DataType::float(64)),
        (vec![2, 2], "float32x4".parse().unwrap()),
        (vec![4], DataType::bool()),
    ] {
        let a = NDArray::empty(&shape, dtype, Device::cpu()).unwrap();
        assert_eq!(a.shape(), &shape[..]);
        assert_eq!(a.ndim(), shape.len());
        assert_eq!(a.dtype(), dtype);
        assert_eq!(a.device(), Device::cpu());
        assert_eq!(a.byte_offset(), 0);
        assert!(a.is_contiguous() && !a.is_view() && !a.is_read_only());
        let numel: i64 = shape.iter().product();
        assert_eq!(a.numel(), numel as usize);
        assert_eq!(a.nbytes(), numel as usize * dtype.bytes());
        let mut expect = 1;
        for (i, &s) in a.strides().iter().enumerate().rev() {
            assert_eq!(s, expect, "stride {i} of {shape:?}");
            expect *= shape[i];
        }
        assert_eq!(a.data_ptr() as usize % ALIGNMENT, 0, "64-byte aligned");
        assert!(a.as_bytes().unwrap().iter().all(|&b| b == 0), "zeroed");
        assert_eq!(a.as_object_ptr().type_key(), "ffi.Tensor");
        assert_eq!(a.as_object_ptr().type_index(), 70);
    }
    // A scalar: no dimensions, one element.
    let s = NDArray::empty(&[], DataType::float(64), Device::cpu()).unwrap();
    assert_eq!((s.ndim(), s.numel()), (0, 1));
    assert_eq!(s.as_slice::<f64>().unwrap(), &[0.0]);
    // No elements: a null data pointer, as DLPack asks, and empty slices.
    let e = NDArray::empty(&[0, 3], DataType::float(32), Device::cpu()).unwrap();
    assert!(e.as_dl_tensor().data.is_null());
    assert_eq!(e.as_slice::<f32>().unwrap(), &[] as &[f32]);
    assert_eq!(e.as_bytes().unwrap(), &[] as &[u8]);
    assert_eq!(e.to_bytes().unwrap(), Vec::<u8>::new());
    assert_eq!(e.strides(), &[3, 1]);
}

#[test]
fn construction_errors() {
    let _leaks = LeakCheck::new();
    let cpu = Device::cpu();
    let f32t = DataType::float(32);
    assert_eq!(
        NDArray::empty(&[2, -1], f32t, cpu).unwrap_err(),
        NDArrayError::NegativeDim { axis: 1, dim: -1 }
    );
    assert_eq!(
        NDArray::empty(&[i64::MAX, i64::MAX], f32t, cpu).unwrap_err(),
        NDArrayError::TooLarge
    );
    assert_eq!(
        NDArray::empty(&[i64::MAX / 2], f32t, cpu).unwrap_err(),
        NDArrayError::TooLarge
    );
    assert_eq!(
        NDArray::empty(&vec![1; MAX_NDIM + 1], f32t, cpu).unwrap_err(),
        NDArrayError::BadNdim {
            ndim: MAX_NDIM as i64 + 1
        }
    );
    assert!(NDArray::empty(&vec![1; MAX_NDIM], f32t, cpu).is_ok());
    assert!(matches!(
        NDArray::empty(&[2], DataType::int(4), cpu),
        Err(NDArrayError::UnsupportedDataType(_))
    ));
    assert_eq!(
        NDArray::empty(&[2], f32t, Device::new(Device::CUDA, 0)).unwrap_err(),
        NDArrayError::UnsupportedDevice(Device::new(Device::CUDA, 0))
    );
    assert_eq!(
        NDArray::from_slice(&[2, 2], &[1.0f32; 3]).unwrap_err(),
        NDArrayError::LengthMismatch {
            expected: 4,
            actual: 3
        }
    );
    assert!(NDArray::from_vec(&[5], vec![1u8; 4]).is_err());
    assert_eq!(
        NDArray::from_bytes(&[2], DataType::int(32), cpu, &[0; 7]).unwrap_err(),
        NDArrayError::LengthMismatch {
            expected: 8,
            actual: 7
        }
    );
    // Every error is a std error with a message, and converts into `Error`.
    let e = NDArray::empty(&[-3], f32t, cpu).unwrap_err();
    let dyn_e: &dyn std::error::Error = &e;
    assert_eq!(dyn_e.to_string(), "axis 0 has a negative extent (-3)");
    let err = Error::from(e);
    assert_eq!(err.kind(), "ValueError");
    let mismatch = NDArray::from_slice(&[1], &[1u8])
        .unwrap()
        .as_slice::<f32>()
        .unwrap_err();
    assert_eq!(
        mismatch.to_string(),
        "expected data type float32, the data is uint8"
    );
    assert_eq!(Error::from(mismatch).kind(), "TypeError");
}

#[test]
fn from_slice_vec_and_bytes() {
    let _leaks = LeakCheck::new();
    let a = NDArray::from_slice(&[2, 3], &[1i32, 2, 3, 4, 5, 6]).unwrap();
    assert_eq!(a.dtype(), DataType::int(32));
    assert_eq!(a.as_slice::<i32>().unwrap(), &[1, 2, 3, 4, 5, 6]);
    assert_eq!(a.data_ptr() as usize % ALIGNMENT, 0);

    // `from_vec` adopts the buffer: no copy.
    let v: Vec<f64> = (0..12).map(f64::from).collect();
    let p = v.as_ptr();
    let b = NDArray::from_vec(&[3, 4], v).unwrap();
    assert_eq!(b.data_ptr() as *const f64, p);
    assert_eq!(b.as_slice::<f64>().unwrap()[11], 11.0);
    let empty = NDArray::from_vec::<u16>(&[0], Vec::with_capacity(8)).unwrap();
    assert_eq!(empty.numel(), 0);

    // Bytes out and back, for every element type.
    macro_rules! bytes_round_trip {
        ($($t:ty),*) => {$(
            let data: Vec<$t> = (0..6i8).map(|i| i as $t).collect();
            let x = NDArray::from_slice(&[3, 2], &data).unwrap();
            let bytes = x.to_bytes().unwrap();
            assert_eq!(bytes, x.as_bytes().unwrap());
            assert_eq!(bytes.len(), 6 * std::mem::size_of::<$t>());
            let y = NDArray::from_bytes(x.shape(), x.dtype(), x.device(), &bytes).unwrap();
            assert_eq!(y.as_slice::<$t>().unwrap(), &data[..]);
            assert!(!NDArray::ptr_eq(&y, &x));
        )*};
    }
    bytes_round_trip!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
    // A data type without a Rust element type travels as bytes too.
    let vec4: DataType = "float32x4".parse().unwrap();
    let raw: Vec<u8> = (0..32).collect();
    let z = NDArray::from_bytes(&[2], vec4, Device::cpu(), &raw).unwrap();
    assert_eq!(z.to_bytes().unwrap(), raw);
    assert!(z.as_slice::<f32>().is_err(), "float32x4 is not f32");
    let scalar =
        NDArray::from_bytes(&[], DataType::int(64), Device::cpu(), &7i64.to_ne_bytes()).unwrap();
    assert_eq!(scalar.as_slice::<i64>().unwrap(), &[7]);
}

#[test]
fn typed_slices_are_checked() {
    let _leaks = LeakCheck::new();
    let a = NDArray::from_slice(&[4], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    assert_eq!(
        a.as_slice::<i32>().unwrap_err(),
        NDArrayError::DataTypeMismatch {
            expected: DataType::int(32),
            actual: DataType::float(32)
        }
    );
    assert!(a.as_slice::<f64>().is_err());
    // A column-major (strided) tensor from a producer: not contiguous, but readable
    // as bytes (gathered) and copyable.
    let (m, _) = foreign_versioned(&[2, 3], Some(&[1, 2]), f32s(6), 0, |_| {});
    let t = import_versioned(m).unwrap();
    assert!(!t.is_contiguous());
    assert_eq!(t.strides(), &[1, 2]);
    assert_eq!(
        t.as_slice::<f32>().unwrap_err(),
        NDArrayError::NotContiguous
    );
    assert_eq!(
        t.as_slice::<i8>().unwrap_err(),
        NDArrayError::DataTypeMismatch {
            expected: DataType::int(8),
            actual: DataType::float(32)
        },
        "the data type is checked first"
    );
    assert_eq!(t.as_bytes().unwrap_err(), NDArrayError::NotContiguous);
    let row_major = t.deep_copy().unwrap();
    // Element (i, j) is data[i + 2 j].
    assert_eq!(
        row_major.as_slice::<f32>().unwrap(),
        &[0.0, 2.0, 4.0, 1.0, 3.0, 5.0]
    );
    let bytes = t.to_bytes().unwrap();
    assert_eq!(bytes, row_major.as_bytes().unwrap());
    assert!(format!("{t:?}").contains("strides: [1, 2]"));
}

#[test]
fn writing_needs_the_only_handle() {
    let _leaks = LeakCheck::new();
    let mut a = NDArray::from_slice(&[2, 2], &[0u32; 4]).unwrap();
    a.as_slice_mut::<u32>().unwrap()[3] = 9;
    assert_eq!(a.as_slice::<u32>().unwrap(), &[0, 0, 0, 9]);
    assert_eq!(
        a.as_slice_mut::<i32>().unwrap_err(),
        NDArrayError::DataTypeMismatch {
            expected: DataType::int(32),
            actual: DataType::uint(32)
        }
    );

    // Another handle.
    let b = a.clone();
    assert_eq!(a.as_slice_mut::<u32>().unwrap_err(), NDArrayError::Shared);
    drop(b);
    assert!(a.as_slice_mut::<u32>().is_ok());

    // A view: neither side may write while both exist.
    let mut v = a.reshape(&[4]).unwrap();
    assert_eq!(a.as_slice_mut::<u32>().unwrap_err(), NDArrayError::Shared);
    assert_eq!(v.as_slice_mut::<u32>().unwrap_err(), NDArrayError::Shared);
    // The view alone reaches the memory once the base handle is gone.
    drop(a);
    v.as_slice_mut::<u32>().unwrap()[0] = 5;
    assert_eq!(v.as_slice::<u32>().unwrap(), &[5, 0, 0, 9]);
    // Two views of one base.
    let w = v.slice(1..).unwrap();
    assert_eq!(v.as_slice_mut::<u32>().unwrap_err(), NDArrayError::Shared);
    drop(w);
    assert!(v.as_slice_mut::<u32>().is_ok());

    // An export shares the memory until the consumer is done.
    let m = v.to_dlpack_versioned();
    assert_eq!(v.as_slice_mut::<u32>().unwrap_err(), NDArrayError::Shared);
    consume_versioned(m);
    assert!(v.as_slice_mut::<u32>().is_ok());

    // copy_from follows the same rule.
    let src = NDArray::from_slice(&[4], &[1u32, 2, 3, 4]).unwrap();
    let keep = v.clone();
    assert_eq!(v.copy_from(&src).unwrap_err(), NDArrayError::Shared);
    drop(keep);
    v.copy_from(&src).unwrap();
    assert_eq!(v.as_slice::<u32>().unwrap(), &[1, 2, 3, 4]);
}

#[test]
fn views_share_memory_and_keep_their_base_alive() {
    let leaks = LeakCheck::new();
    let a = NDArray::from_slice(&[4, 3], &f32s(12)).unwrap();
    let base_ptr = a.data_ptr() as usize;

    let r = a.reshape(&[2, 6]).unwrap();
    assert!(r.is_view());
    assert_eq!((r.shape(), r.strides()), (&[2i64, 6][..], &[6i64, 1][..]));
    assert_eq!(r.data_ptr() as usize, base_ptr, "same memory");

    let rows = a.slice(1..3).unwrap();
    assert_eq!(rows.shape(), &[2, 3]);
    assert_eq!(rows.data_ptr() as usize, base_ptr + 3 * 4);
    assert_eq!(
        rows.byte_offset(),
        0,
        "host views fold the offset into the pointer"
    );
    assert_eq!(rows.as_slice::<f32>().unwrap(), &[3., 4., 5., 6., 7., 8.]);
    let last = rows.slice(1..=1).unwrap();
    assert_eq!(last.as_slice::<f32>().unwrap(), &[6., 7., 8.]);
    assert_eq!(a.slice(..).unwrap().shape(), &[4, 3]);
    let none = a.slice(4..).unwrap();
    assert_eq!(
        (none.numel(), none.as_slice::<f32>().unwrap().len()),
        (0, 0)
    );

    // Views of views refer to the root array, which they keep alive: 4 views + `a`.
    assert_eq!(ObjectPtr::strong_count(a.as_object_ptr()), 5);
    let live_before = leaks.live();
    drop(a);
    assert_eq!(leaks.live(), live_before, "the views keep the base alive");
    assert_eq!(last.as_slice::<f32>().unwrap(), &[6., 7., 8.]);
    assert_eq!(r.as_slice::<f32>().unwrap(), &f32s(12)[..]);
    drop((r, rows, none));
    assert_eq!(last.as_slice::<f32>().unwrap(), &[6., 7., 8.]);
    drop(last);

    // Errors.
    let b = NDArray::from_slice(&[2, 2], &[1i8, 2, 3, 4]).unwrap();
    assert_eq!(
        b.reshape(&[3]).unwrap_err(),
        NDArrayError::ShapeMismatch {
            expected: vec![2, 2],
            actual: vec![3]
        }
    );
    assert!(b.reshape(&[-4]).is_err());
    assert_eq!(
        b.slice(1..3).unwrap_err(),
        NDArrayError::OutOfRange {
            start: 1,
            end: 3,
            len: 2
        }
    );
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = b.slice(2..1);
    assert!(reversed.is_err());
    let s = NDArray::from_slice(&[], &[1i8]).unwrap();
    assert_eq!(s.slice(..).unwrap_err(), NDArrayError::BadNdim { ndim: 0 });
    // A strided array cannot be reshaped without a copy.
    let (m, _) = foreign_versioned(&[2, 3], Some(&[1, 2]), f32s(6), 0, |_| {});
    let t = import_versioned(m).unwrap();
    assert_eq!(t.reshape(&[6]).unwrap_err(), NDArrayError::NotContiguous);
    // Slicing a strided array keeps its strides.
    let col = t.slice(1..2).unwrap();
    assert_eq!(col.strides(), &[1, 2]);
    assert_eq!(col.to_bytes().unwrap().len(), 12);
    assert_eq!(
        col.deep_copy().unwrap().as_slice::<f32>().unwrap(),
        &[1.0, 3.0, 5.0]
    );
}

#[test]
fn copy_from_any_layout() {
    let _leaks = LeakCheck::new();
    let (m, deleted) = foreign_versioned(&[2, 3], Some(&[1, 2]), f32s(6), 0, |_| {});
    let strided = import_versioned(m).unwrap();
    let mut dst = NDArray::empty(&[2, 3], DataType::float(32), Device::cpu()).unwrap();
    dst.copy_from(&strided).unwrap();
    assert_eq!(
        dst.as_slice::<f32>().unwrap(),
        &[0.0, 2.0, 4.0, 1.0, 3.0, 5.0]
    );
    // Into a strided destination (the imported array is the only handle to its memory).
    let mut strided = strided;
    let src = NDArray::from_slice(&[2, 3], &[10.0f32, 11., 12., 13., 14., 15.]).unwrap();
    strided.copy_from(&src).unwrap();
    assert_eq!(
        strided.deep_copy().unwrap().as_slice::<f32>().unwrap(),
        src.as_slice::<f32>().unwrap()
    );
    // From a borrowed view.
    dst.copy_from(src.view()).unwrap();
    assert_eq!(
        dst.as_slice::<f32>().unwrap(),
        src.as_slice::<f32>().unwrap()
    );
    // Errors.
    let wrong_shape = NDArray::from_slice(&[3, 2], &[0f32; 6]).unwrap();
    assert_eq!(
        dst.copy_from(&wrong_shape).unwrap_err(),
        NDArrayError::ShapeMismatch {
            expected: vec![2, 3],
            actual: vec![3, 2]
        }
    );
    let wrong_type = NDArray::from_slice(&[2, 3], &[0f64; 6]).unwrap();
    assert!(matches!(
        dst.copy_from(&wrong_type),
        Err(NDArrayError::DataTypeMismatch { .. })
    ));
    drop(strided);
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
}

// ---------------------------------------------------------------------------------
// DLPack.
// ---------------------------------------------------------------------------------

#[test]
fn export_then_import_is_the_same_array() {
    let _leaks = LeakCheck::new();
    let a = NDArray::from_slice(&[2, 3], &f32s(6)).unwrap();
    let m = a.to_dlpack_versioned();
    // SAFETY: a live export; only read here.
    let managed = unsafe { &*m };
    assert_eq!(
        managed.version,
        DLPackVersion {
            major: DLPACK_MAJOR_VERSION,
            minor: DLPACK_MINOR_VERSION
        }
    );
    assert_eq!(
        managed.flags, DLPACK_FLAG_BITMASK_READ_ONLY,
        "shared with `a`: read-only for the consumer"
    );
    assert_eq!(managed.dl_tensor.data, a.as_dl_tensor().data, "zero copy");
    assert_eq!(managed.dl_tensor.shape, a.as_dl_tensor().shape);
    assert_eq!(
        managed.manager_ctx,
        ObjectPtr::as_ptr(a.as_object_ptr()) as *mut c_void
    );
    assert_eq!(
        ObjectPtr::strong_count(a.as_object_ptr()),
        2,
        "the export holds one"
    );
    // Exported read-only, it comes back as a read-only view of the same memory.
    let b = import_versioned(m).unwrap();
    assert!(b.is_read_only() && b.is_view() && b.data_ptr() == a.data_ptr());
    assert_eq!(b.as_slice::<f32>().unwrap(), a.as_slice::<f32>().unwrap());
    drop(b);
    assert_eq!(ObjectPtr::strong_count(a.as_object_ptr()), 1);

    // Given up by its only handle, it exports writable and comes back as itself.
    let address = ObjectPtr::as_ptr(a.as_object_ptr());
    let m = a.into_dlpack_versioned();
    // SAFETY: a live export.
    assert_eq!(unsafe { (*m).flags }, 0, "the only handle: writable");
    let a = import_versioned(m).unwrap();
    assert_eq!(
        ObjectPtr::as_ptr(a.as_object_ptr()),
        address,
        "our own export comes back as the same object"
    );
    assert_eq!(ObjectPtr::strong_count(a.as_object_ptr()), 1);

    // Legacy: only the only handle to writable memory.
    let other = a.clone();
    let (a, e) = a.into_dlpack().unwrap_err();
    assert_eq!(e, NDArrayError::Shared);
    drop(other);
    let data = a.as_dl_tensor().data;
    let m = a.into_dlpack().unwrap();
    // SAFETY: a live export.
    assert_eq!(unsafe { (*m).dl_tensor.data }, data, "zero copy");
    let a = import_legacy(m).unwrap();
    assert_eq!(ObjectPtr::as_ptr(a.as_object_ptr()), address);
    assert_eq!(ObjectPtr::strong_count(a.as_object_ptr()), 1);

    // A consumer that changed the description gets the general path: a new array over
    // the same memory, and the export's deleter still runs once (when it goes).
    let m = a.to_dlpack_versioned();
    // SAFETY: a live export we own; the shape is narrowed to the first row.
    let first_row = unsafe {
        (*m).dl_tensor.ndim = 1;
        (*m).dl_tensor.shape = (*m).dl_tensor.shape.add(1);
        (*m).dl_tensor.strides = (*m).dl_tensor.strides.add(1);
        import_versioned(m).unwrap()
    };
    assert!(!NDArray::ptr_eq(&first_row, &a));
    assert_eq!(first_row.shape(), &[3]);
    assert_eq!(first_row.data_ptr(), a.data_ptr());
    assert_eq!(first_row.as_slice::<f32>().unwrap(), &[0.0, 1.0, 2.0]);
    assert_eq!(ObjectPtr::strong_count(a.as_object_ptr()), 2);
    drop(first_row);
    assert_eq!(ObjectPtr::strong_count(a.as_object_ptr()), 1);
}

/// The lending rule: an NDArray's data is either shared (Rust may borrow it, no foreign
/// code writes it) or lent writable to foreign code (no Rust code can borrow it), never
/// both.
#[test]
fn lent_data_is_never_read_from_rust() {
    let _leaks = LeakCheck::new();
    let mut a = NDArray::from_slice(&[4], &[1.0f64, 2.0, 3.0, 4.0]).unwrap();
    assert!(!a.is_lent() && !a.is_lent_writable());
    {
        let lease = a.lend_mut().unwrap();
        // Every handle a callee can make from the argument refuses to lend the data.
        let b = NDArray::try_from(lease.arg().to_any()).unwrap();
        assert!(b.is_lent() && b.is_lent_writable());
        assert_eq!(b.as_slice::<f64>().unwrap_err(), NDArrayError::Lent);
        assert_eq!(b.as_bytes().unwrap_err(), NDArrayError::Lent);
        assert_eq!(b.view().as_slice::<f64>().unwrap_err(), NDArrayError::Lent);
        assert_eq!(b.as_raw_view().unwrap_err(), NDArrayError::Lent);
        assert_eq!(b.to_bytes().unwrap_err(), NDArrayError::Lent);
        assert_eq!(b.deep_copy().unwrap_err(), NDArrayError::Lent);
        assert_eq!(b.reshape(&[2, 2]).unwrap_err(), NDArrayError::Lent);
        assert_eq!(b.slice(1..).unwrap_err(), NDArrayError::Lent);
        let mut dst = NDArray::from_slice(&[4], &[0.0f64; 4]).unwrap();
        assert_eq!(dst.copy_from(&b).unwrap_err(), NDArrayError::Lent);
        let args = [lease.arg()];
        assert_eq!(
            TensorView::try_from(args[0])
                .unwrap()
                .as_slice::<f64>()
                .unwrap_err(),
            NDArrayError::Lent
        );
        // A read-only export, imported back, is a view that follows the lease too.
        let back = import_versioned(b.to_dlpack_versioned()).unwrap();
        assert_eq!(back.as_slice::<f64>().unwrap_err(), NDArrayError::Lent);
        // A foreign call that started during the lease keeps reads refused until it
        // returns, even if the lease ends first.
        let write = b.foreign_write().expect("lent: a foreign call may write");
        drop(lease);
        assert!(
            b.foreign_write().is_none(),
            "the lease is over: no new writes"
        );
        assert_eq!(b.as_slice::<f64>().unwrap_err(), NDArrayError::Lent);
        drop(write);
        assert_eq!(b.as_slice::<f64>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(back.as_slice::<f64>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
    }
    // Only the only handle to writable memory is lent.
    let shared = a.clone();
    assert_eq!(a.lend_mut().unwrap_err(), NDArrayError::Shared);
    drop(shared);
    let view = a.slice(..).unwrap();
    assert_eq!(a.lend_mut().unwrap_err(), NDArrayError::Shared);
    drop(view);
    let (m, _deleted) =
        foreign_versioned(&[1], None, f32s(1), DLPACK_FLAG_BITMASK_READ_ONLY, |_| {});
    let mut ro = import_versioned(m).unwrap();
    assert_eq!(ro.lend_mut().unwrap_err(), NDArrayError::ReadOnly);
    // A lease never ended only keeps Rust from reading.
    a.start_lease().unwrap();
    assert_eq!(a.as_slice::<f64>().unwrap_err(), NDArrayError::Lent);
    a.end_lease();
    assert!(a.as_slice::<f64>().is_ok());
}

#[test]
fn export_keeps_the_array_alive_until_the_deleter() {
    let leaks = LeakCheck::new();
    let a = NDArray::from_slice(&[3], &[1.5f64, 2.5, 3.5]).unwrap();
    let view = a.slice(1..).unwrap();
    let m = view.to_dlpack_versioned();
    let l = a.to_dlpack_versioned();
    drop((a, view));
    assert_eq!(
        leaks.live(),
        2,
        "the view and its base, kept by the exports"
    );
    // The consumer reads the memory through the managed tensor.
    // SAFETY: live exports of f64 data with 2 and 3 elements.
    unsafe {
        let t = &(*m).dl_tensor;
        assert_eq!(*t.shape, 2);
        let data = (t.data as *const u8).add(t.byte_offset as usize) as *const f64;
        assert_eq!(std::slice::from_raw_parts(data, 2), &[2.5, 3.5]);
        assert_eq!(*((*l).dl_tensor.data as *const f64), 1.5);
    }
    consume_versioned(m);
    assert_eq!(leaks.live(), 1, "the other export still holds the base");
    consume_versioned(l);
    assert_eq!(leaks.live(), 0);
}

#[test]
fn foreign_import_is_zero_copy_and_deletes_once() {
    let leaks = LeakCheck::new();
    for legacy in [false, true] {
        let data = f32s(24);
        let data_ptr = data.as_ptr() as usize;
        let (a, deleted) = if legacy {
            let (m, d) = foreign_legacy(&[2, 3, 4], None, data, |_| {});
            (import_legacy(m).unwrap(), d)
        } else {
            let (m, d) = foreign_versioned(&[2, 3, 4], None, data, 0, |_| {});
            (import_versioned(m).unwrap(), d)
        };
        assert_eq!(a.data_ptr() as usize, data_ptr, "zero copy");
        assert_eq!(a.shape(), &[2, 3, 4]);
        assert_eq!(
            a.strides(),
            &[12, 4, 1],
            "null strides mean compact row-major"
        );
        assert_eq!(a.as_slice::<f32>().unwrap()[23], 23.0);
        assert!(!a.is_read_only());
        let clone = a.clone();
        let view = a.slice(1..).unwrap();
        let any = Any::from(a.clone());
        drop(a);
        drop(clone);
        drop(any);
        assert_eq!(deleted.load(Ordering::SeqCst), 0, "the view keeps it");
        assert_eq!(view.as_slice::<f32>().unwrap()[0], 12.0);
        // Exporting an import, and importing that back: the chain holds.
        let m = view.to_dlpack_versioned();
        drop(view);
        assert_eq!(deleted.load(Ordering::SeqCst), 0, "the export keeps it");
        let back = import_versioned(m).unwrap();
        assert_eq!(back.as_slice::<f32>().unwrap()[11], 23.0);
        drop(back);
        assert_eq!(deleted.load(Ordering::SeqCst), 1, "exactly once");
        assert_eq!(leaks.live(), 0);
    }

    // A byte offset is honoured; the producer's data pointer is kept.
    let (m, deleted) = foreign_versioned(&[2], None, f32s(4), 0, |m| {
        m.dl_tensor.byte_offset = 8;
    });
    let a = import_versioned(m).unwrap();
    assert_eq!(a.byte_offset(), 8);
    assert_eq!(a.as_slice::<f32>().unwrap(), &[2.0, 3.0]);
    drop(a);
    assert_eq!(deleted.load(Ordering::SeqCst), 1);

    // A writable import can be written (this is the only handle).
    let (m, deleted) =
        foreign_versioned(&[3], None, f32s(3), DLPACK_FLAG_BITMASK_IS_COPIED, |_| {});
    let mut a = import_versioned(m).unwrap();
    a.as_slice_mut::<f32>().unwrap()[0] = 42.0;
    assert_eq!(a.as_slice::<f32>().unwrap(), &[42.0, 1.0, 2.0]);
    drop(a);
    assert_eq!(deleted.load(Ordering::SeqCst), 1);

    // A null deleter is allowed and never called.
    let (m, deleted) = foreign_versioned(&[1], None, f32s(1), 0, |m| m.deleter = None);
    let a = import_versioned(m).unwrap();
    drop(a);
    assert_eq!(deleted.load(Ordering::SeqCst), 0);
    // SAFETY: the import did not own the box after all (no deleter): free it here.
    drop(unsafe { Box::from_raw(m as *mut Foreign<DLManagedTensorVersioned>) });
}

#[test]
fn read_only_flag_is_respected() {
    let _leaks = LeakCheck::new();
    let (m, deleted) = foreign_versioned(
        &[2, 2],
        None,
        f32s(4),
        DLPACK_FLAG_BITMASK_READ_ONLY,
        |_| {},
    );
    let mut a = import_versioned(m).unwrap();
    assert!(a.is_read_only());
    assert_eq!(a.as_slice::<f32>().unwrap(), &[0.0, 1.0, 2.0, 3.0]);
    assert_eq!(a.as_slice_mut::<f32>().unwrap_err(), NDArrayError::ReadOnly);
    let src = NDArray::from_slice(&[2, 2], &[0f32; 4]).unwrap();
    assert_eq!(a.copy_from(&src).unwrap_err(), NDArrayError::ReadOnly);
    assert!(format!("{a:?}").contains("read_only: true"));
    // Views inherit it.
    let mut v = a.slice(..1).unwrap();
    assert!(v.is_read_only());
    drop(a);
    assert_eq!(v.as_slice_mut::<f32>().unwrap_err(), NDArrayError::ReadOnly);
    // Versioned exports carry it; the legacy struct cannot, so it refuses.
    let e = v.to_dlpack_versioned();
    // SAFETY: a live export.
    assert_eq!(unsafe { (*e).flags }, DLPACK_FLAG_BITMASK_READ_ONLY);
    let v2 = v.slice(..).unwrap();
    let (v2, err) = v2.into_dlpack().unwrap_err();
    assert_eq!(err, NDArrayError::ReadOnly);
    drop(v2);
    // A consumer that clears the flag does not get our array back writable.
    // SAFETY: a live export we own.
    unsafe { (*e).flags = 0 };
    let w = import_versioned(e).unwrap();
    assert!(!NDArray::ptr_eq(&w, &v));
    drop((v, w));
    assert_eq!(deleted.load(Ordering::SeqCst), 1);

    // Our read-only export comes back as the same read-only array.
    let (m, _deleted) =
        foreign_versioned(&[1], None, f32s(1), DLPACK_FLAG_BITMASK_READ_ONLY, |_| {});
    let a = import_versioned(m).unwrap();
    let back = import_versioned(a.to_dlpack_versioned()).unwrap();
    assert!(NDArray::ptr_eq(&back, &a) && back.is_read_only());
}

#[test]
fn bad_input_is_an_error_and_the_tensor_stays_the_callers() {
    let leaks = LeakCheck::new();
    // SAFETY: null is allowed and is an error; nothing to delete.
    let null = unsafe { NDArray::from_dlpack_versioned(std::ptr::null_mut()) };
    assert_eq!(
        null.unwrap_err(),
        NDArrayError::NullPointer("managed tensor")
    );
    // SAFETY: as above.
    assert!(unsafe { NDArray::from_dlpack(std::ptr::null_mut()) }.is_err());

    type Tweak = Box<dyn Fn(&mut DLTensor)>;
    let cases: Vec<(&str, Tweak, NDArrayError)> = vec![
        (
            "null data with elements",
            Box::new(|t| t.data = std::ptr::null_mut()),
            NDArrayError::NullData { numel: 6 },
        ),
        (
            "negative extent",
            // SAFETY: the producer's own shape array (2 entries).
            Box::new(|t| unsafe { *t.shape.add(1) = -3 }),
            NDArrayError::NegativeDim { axis: 1, dim: -3 },
        ),
        (
            "element count overflow",
            // SAFETY: as above.
            Box::new(|t| unsafe {
                *t.shape = i64::MAX;
                *t.shape.add(1) = i64::MAX;
            }),
            NDArrayError::TooLarge,
        ),
        (
            "byte size overflow",
            // SAFETY: as above.
            Box::new(|t| unsafe { *t.shape = i64::MAX / 4 }),
            NDArrayError::TooLarge,
        ),
        (
            "strides reaching past the address space",
            // SAFETY: the producer's own strides array (2 entries).
            Box::new(|t| unsafe { *t.strides = i64::MAX }),
            NDArrayError::TooLarge,
        ),
        (
            "negative strides below address zero",
            // SAFETY: as above.
            Box::new(|t| unsafe { *t.strides = i64::MIN / 2 }),
            NDArrayError::TooLarge,
        ),
        (
            "ndim above the bound",
            Box::new(|t| t.ndim = MAX_NDIM as i32 + 1),
            NDArrayError::BadNdim {
                ndim: MAX_NDIM as i64 + 1,
            },
        ),
        (
            "negative ndim",
            Box::new(|t| t.ndim = -1),
            NDArrayError::BadNdim { ndim: -1 },
        ),
        (
            "null shape",
            Box::new(|t| t.shape = std::ptr::null_mut()),
            NDArrayError::NullPointer("shape"),
        ),
        (
            "sub-byte data type",
            Box::new(|t| t.dtype = DataType::int(4)),
            NDArrayError::UnsupportedDataType(DataType::int(4)),
        ),
        (
            "unknown type code",
            Box::new(|t| t.dtype = DataType::new(99, 32, 1)),
            NDArrayError::UnsupportedDataType(DataType::new(99, 32, 1)),
        ),
        (
            "zero lanes",
            Box::new(|t| t.dtype = DataType::new(DataType::FLOAT, 32, 0)),
            NDArrayError::UnsupportedDataType(DataType::new(DataType::FLOAT, 32, 0)),
        ),
        (
            "unknown device type",
            Box::new(|t| t.device = Device::new(99, 0)),
            NDArrayError::UnsupportedDevice(Device::new(99, 0)),
        ),
        (
            "negative device id",
            Box::new(|t| t.device = Device::new(Device::CPU, -1)),
            NDArrayError::UnsupportedDevice(Device::new(Device::CPU, -1)),
        ),
        (
            "misaligned data",
            Box::new(|t| t.byte_offset = 2),
            NDArrayError::Misaligned {
                address: 0, // replaced below: the address is run-dependent
                align: 4,
            },
        ),
        (
            "byte offset past isize",
            Box::new(|t| t.byte_offset = u64::MAX - 3),
            NDArrayError::TooLarge,
        ),
    ];
    let n_cases = cases.len();
    for (name, tweak, expected) in cases {
        for legacy in [false, true] {
            // A refused tensor is still ours: the import calls nothing, and we release
            // it (once) after looking.
            let (got, deleted, release): (_, _, Box<dyn FnOnce()>) = if legacy {
                let (m, d) =
                    foreign_legacy(&[2, 3], Some(&[3, 1]), f32s(6), |m| tweak(&mut m.dl_tensor));
                (import_legacy(m), d, Box::new(move || consume_legacy(m)))
            } else {
                let (m, d) = foreign_versioned(&[2, 3], Some(&[3, 1]), f32s(6), 0, |m| {
                    tweak(&mut m.dl_tensor)
                });
                (
                    import_versioned(m),
                    d,
                    Box::new(move || consume_versioned(m)),
                )
            };
            let err = got.expect_err(name);
            match (&err, &expected) {
                (
                    NDArrayError::Misaligned { align, .. },
                    NDArrayError::Misaligned { align: want, .. },
                ) => assert_eq!(align, want, "{name}"),
                _ => assert_eq!(err, expected, "{name} (legacy: {legacy})"),
            }
            assert!(!err.to_string().is_empty());
            assert_eq!(
                deleted.load(Ordering::SeqCst),
                0,
                "{name} (legacy: {legacy}): a refused import calls no deleter"
            );
            release();
            assert_eq!(deleted.load(Ordering::SeqCst), 1, "{name}: deleter once");
        }
        drop(tweak);
    }
    assert!(n_cases >= 15);

    // Another major version: nothing but the version is read, nothing is called; the
    // owner (still us) calls the deleter, as dlpack.h asks.
    for major in [0, 2, u32::MAX] {
        let (m, deleted) = foreign_versioned(&[2], None, f32s(2), 0, |m| {
            m.version = DLPackVersion { major, minor: 7 };
            m.dl_tensor.ndim = -12345; // garbage the consumer must not look at
            m.dl_tensor.shape = std::ptr::null_mut();
        });
        assert_eq!(
            import_versioned(m).unwrap_err(),
            NDArrayError::UnsupportedVersion { major, minor: 7 }
        );
        assert_eq!(deleted.load(Ordering::SeqCst), 0, "major {major}");
        consume_versioned(m);
        assert_eq!(deleted.load(Ordering::SeqCst), 1);
    }
    // Our own export, changed so that it is refused: still the caller's, and its
    // deleter (ours) gives the NDArray's handle back.
    let a = NDArray::from_slice(&[2], &[1.0f32, 2.0]).unwrap();
    for legacy in [false, true] {
        let refused = if legacy {
            // The legacy export takes the only handle: an array of its own, which the
            // leak check at the end sees freed by the export's deleter.
            let only = NDArray::from_slice(&[2], &[1.0f32, 2.0]).unwrap();
            let m = only.into_dlpack().unwrap();
            // SAFETY: a live export, ours to change (it is not the NDArray's own tensor).
            let e = unsafe {
                (*m).dl_tensor.ndim = -1;
                import_legacy(m).unwrap_err()
            };
            consume_legacy(m);
            e
        } else {
            let m = a.to_dlpack_versioned();
            // SAFETY: as above.
            unsafe { (*m).dl_tensor.dtype = DataType::int(4) };
            let e = import_versioned(m).unwrap_err();
            assert_eq!(
                ObjectPtr::strong_count(a.as_object_ptr()),
                2,
                "held by the export"
            );
            consume_versioned(m);
            e
        };
        assert!(matches!(
            refused,
            NDArrayError::BadNdim { ndim: -1 } | NDArrayError::UnsupportedDataType(_)
        ));
        assert_eq!(ObjectPtr::strong_count(a.as_object_ptr()), 1);
    }
    drop(a);
    // A newer minor version is fine.
    let (m, deleted) = foreign_versioned(&[2], None, f32s(2), 0, |m| m.version.minor = 99);
    drop(import_versioned(m).unwrap());
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
    // Device memory imports (zero copy, nothing read) but cannot be read on the host.
    let (m, deleted) = foreign_versioned(&[2], None, f32s(2), 0, |m| {
        m.dl_tensor.device = Device::new(Device::CUDA, 1);
    });
    let gpu = import_versioned(m).unwrap();
    assert_eq!(
        gpu.as_slice::<f32>().unwrap_err(),
        NDArrayError::NotHostAccessible(Device::new(Device::CUDA, 1))
    );
    assert!(gpu.to_bytes().is_err() && gpu.deep_copy().is_err());
    let v = gpu.slice(1..).unwrap();
    assert_eq!(
        v.byte_offset(),
        4,
        "device views keep the pointer and grow the offset"
    );
    drop((gpu, v));
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
    // An empty tensor may have a null data pointer.
    let (m, deleted) = foreign_versioned(&[0, 3], None, Vec::new(), 0, |_| {});
    let e = import_versioned(m).unwrap();
    assert_eq!((e.numel(), e.as_slice::<f32>().unwrap().len()), (0, 0));
    drop(e);
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
    assert_eq!(leaks.live(), 0);
}

// ---------------------------------------------------------------------------------
// Raw DLTensor* views.
// ---------------------------------------------------------------------------------

#[test]
fn raw_tensor_views_are_checked() {
    let _leaks = LeakCheck::new();
    let mut data = f32s(6);
    let mut shape = vec![2i64, 3];
    let mut t = describe(&mut shape, None, &mut data);
    // SAFETY: `t`, its shape and data outlive the view and are not written meanwhile.
    let v = unsafe { TensorView::from_raw(&t) }.unwrap();
    assert_eq!(
        (v.shape(), v.strides(), v.numel()),
        (&[2i64, 3][..], None, 6)
    );
    assert!(v.is_contiguous() && v.ndarray().is_none());
    assert_eq!(v.as_slice::<f32>().unwrap()[5], 5.0);
    let copy = v.to_ndarray().unwrap();
    assert_eq!(copy.as_slice::<f32>().unwrap(), &data[..]);
    assert_ne!(copy.data_ptr() as *const f32, data.as_ptr());
    t.ndim = 100;
    // SAFETY: as above; the check refuses the rank before reading the shape.
    let bad = unsafe { TensorView::from_raw(&t) };
    assert_eq!(bad.unwrap_err(), NDArrayError::BadNdim { ndim: 100 });
    // SAFETY: null is refused.
    assert!(unsafe { TensorView::from_raw(std::ptr::null()) }.is_err());
    // A raw view in an AnyView: borrowed only; its owned copy keeps just the address.
    t.ndim = 2;
    // SAFETY: `t` is valid (as above) for the view's lifetime.
    let av = unsafe { AnyView::from_dl_tensor_ptr(&mut t as *mut DLTensor as *mut c_void) };
    assert_eq!(av.type_index(), type_index::DL_TENSOR_PTR);
    assert_eq!(TensorView::try_from(av).unwrap().numel(), 6);
    assert_eq!(av.to_any().type_key(), "void*");
    assert_eq!(
        TensorView::try_from(AnyView::from(1)).unwrap_err(),
        NDArrayError::WrongType(object_core::TypeError::new(
            "ffi.Tensor or DLTensor*",
            "int"
        ))
    );
}

// ---------------------------------------------------------------------------------
// In the object system.
// ---------------------------------------------------------------------------------

#[derive(Object)]
#[repr(C)]
#[object(key = "ndtest.Layer", final)]
struct Layer {
    base: Object,
    name: std::string::String,
    weight: NDArray,
    bias: Option<NDArray>,
}

#[test]
fn arrays_in_any_containers_and_fields() {
    let _leaks = LeakCheck::new();
    let w = NDArray::from_slice(&[2, 2], &[1.0f32, 0.0, 0.0, 1.0]).unwrap();
    let any = Any::from(w.clone());
    assert_eq!((any.type_key(), any.type_index()), ("ffi.Tensor", 70));
    assert_eq!(any, Any::from(w.clone()), "by identity");
    let back = NDArray::try_from(any.clone()).unwrap();
    assert!(NDArray::ptr_eq(&back, &w));
    assert!(NDArray::try_from(Any::from(1)).is_err());
    assert!(any.downcast_ref::<NDArrayObj>().is_some());

    let arr: Array<NDArray> = vec![w.clone(), w.slice(..1).unwrap()].into();
    assert_eq!(arr[1].shape(), &[1, 2]);
    let mixed: Array<Any> = vec![Any::from(w.clone()), Any::from(3), Any::from("x")].into();
    assert!(mixed.cast::<NDArray>().is_err());
    assert_eq!(
        Array::<NDArray>::try_from(Any::from(arr.clone())).unwrap()[0],
        w
    );

    let mut params: Map<String, NDArray> = Map::new();
    params.insert(String::from("weight"), w.clone());
    assert!(NDArray::ptr_eq(params.get("weight").unwrap(), &w));

    let layer = make_object(Layer {
        base: Object::new(),
        name: "dense".into(),
        weight: w.clone(),
        bias: None,
    });
    let erased = Any::from(layer.clone());
    assert_eq!(
        erased
            .downcast_ref::<Layer>()
            .unwrap()
            .weight
            .as_slice::<f32>()
            .unwrap(),
        &[1.0, 0.0, 0.0, 1.0]
    );
    // w, any, back, arr[0], arr[1] (a view: it holds its base), mixed[0], params and
    // the layer's field.
    assert_eq!(ObjectPtr::strong_count(w.as_object_ptr()), 8);
    drop((any, back, arr, mixed, params, layer, erased));
    assert_eq!(ObjectPtr::strong_count(w.as_object_ptr()), 1);
    assert_eq!(
        format!("{w:?}"),
        "NDArray { shape: [2, 2], dtype: float32, device: cpu:0 }"
    );
}

#[test]
fn functions_take_arrays_objects_or_raw_tensors() {
    let _leaks = LeakCheck::new();
    let a = NDArray::from_slice(&[4], &[1.0f64, 2.0, 3.0, 4.0]).unwrap();

    // Typed, NDArray parameter: objects only.
    let total = Function::from_typed_named("total", |x: NDArray| -> Result<f64, Error> {
        Ok(x.as_slice::<f64>()?.iter().sum())
    });
    assert_eq!(total.typed::<(&NDArray,), f64>().call((&a,)).unwrap(), 10.0);
    assert_eq!(total.call_with([&a]).unwrap(), Any::from(10.0));
    let err = total.call(&[a.as_raw_view().unwrap()]).unwrap_err();
    assert_eq!(
        err.message(),
        "argument 0: expected ffi.Tensor, got DLTensor*"
    );
    // A failure inside names the problem.
    let ints = NDArray::from_slice(&[1], &[1i64]).unwrap();
    let err = total.call_with([&ints]).unwrap_err();
    assert_eq!(
        (err.kind().as_str(), err.frames()),
        ("TypeError", &["total".to_owned()][..])
    );

    // Packed, TensorView: both kinds.
    let sum = Function::from_packed(|args| {
        let t = TensorView::try_from(args[0])?;
        let from_object = t.ndarray().is_some();
        Ok(Any::from(
            t.as_slice::<f64>()?.iter().sum::<f64>() + if from_object { 0.5 } else { 0.0 },
        ))
    });
    assert_eq!(sum.call_with([&a]).unwrap(), Any::from(10.5));
    assert_eq!(
        sum.call(&[a.as_raw_view().unwrap()]).unwrap(),
        Any::from(10.0)
    );
    assert!(sum.call_with([1]).is_err());

    // Typed, `*mut DLTensor` parameter: both kinds, as a raw pointer for the call.
    let ndim = Function::from_typed(|p: *mut DLTensor| -> Result<i64, Error> {
        // SAFETY: the argument is valid for the call.
        let t = unsafe { TensorView::from_raw(p) }?;
        Ok(t.ndim() as i64 * 100 + t.numel() as i64)
    });
    assert_eq!(ndim.call_with([&a]).unwrap(), Any::from(104));
    assert_eq!(
        ndim.call(&[a.as_raw_view().unwrap()]).unwrap(),
        Any::from(104)
    );
    assert!(ndim.call_with(["x"]).is_err());

    // The object address and the tensor address convert into each other.
    let p = a.as_dl_tensor_ptr();
    assert_eq!(
        p as usize - ObjectPtr::as_ptr(a.as_object_ptr()) as usize,
        NDArrayObj::DL_TENSOR_OFFSET
    );
    // SAFETY: `p` is `a`'s embedded tensor.
    let same = unsafe { NDArray::from_dl_tensor_ptr(p) };
    assert!(NDArray::ptr_eq(&same, &a));

    // Returning arrays.
    let double = Function::from_typed(|x: NDArray| -> Result<NDArray, Error> {
        let v: Vec<f64> = x.as_slice::<f64>()?.iter().map(|v| v * 2.0).collect();
        Ok(NDArray::from_vec(x.shape(), v)?)
    });
    let d = double.typed::<(&NDArray,), NDArray>().call((&a,)).unwrap();
    assert_eq!(d.as_slice::<f64>().unwrap(), &[2.0, 4.0, 6.0, 8.0]);
    let id = Function::from_typed(|x: NDArray| x);
    let r = id.typed::<(&NDArray,), NDArray>().call((&a,)).unwrap();
    assert!(NDArray::ptr_eq(&r, &a));
    assert!(id.typed::<(i64,), NDArray>().call((1,)).is_err());
}

#[test]
fn arrays_cross_threads() {
    let _leaks = LeakCheck::new();
    let a = NDArray::from_slice(&[1000], &f32s(1000)).unwrap();
    let handles: Vec<_> = (0..4)
        .map(|k| {
            let a = a.clone();
            std::thread::spawn(move || {
                let s: f32 = a
                    .slice(k * 250..(k + 1) * 250)
                    .unwrap()
                    .as_slice::<f32>()
                    .unwrap()
                    .iter()
                    .sum();
                s
            })
        })
        .collect();
    let total: f32 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(total, (0..1000).sum::<i32>() as f32);
    // An export's deleter may run on another thread.
    let m = a.to_dlpack_versioned() as usize;
    drop(a);
    std::thread::spawn(move || consume_versioned(m as *mut DLManagedTensorVersioned))
        .join()
        .unwrap();
}

#[test]
fn many_round_trips() {
    let leaks = LeakCheck::new();
    let n = scaled(20_000, 50);
    let mut a = NDArray::from_slice(&[4, 4], &f32s(16)).unwrap();
    let address = ObjectPtr::as_ptr(a.as_object_ptr());
    for i in 0..n {
        // Given up by the only handle, an export comes back as the same array.
        let b = if i % 2 == 0 {
            import_versioned(a.into_dlpack_versioned()).unwrap()
        } else {
            import_legacy(a.into_dlpack().unwrap()).unwrap()
        };
        assert_eq!(ObjectPtr::as_ptr(b.as_object_ptr()), address);
        a = b;
        let (m, deleted) = foreign_versioned(&[2, 2], None, f32s(4), 0, |_| {});
        let f = import_versioned(m).unwrap();
        let v = f.reshape(&[4]).unwrap();
        drop(f);
        assert_eq!(v.as_slice::<f32>().unwrap()[3], 3.0);
        drop(v);
        assert_eq!(deleted.load(Ordering::SeqCst), 1);
    }
    drop(a);
    assert_eq!(leaks.live(), 0);
}

#[test]
fn arrays_round_trip_through_the_json_graph() {
    let _leaks = LeakCheck::new();
    let w = NDArray::from_slice(&[2, 3], &[1.5f32, -2.0, 0.25, 4.0, 5.0, f32::MAX]).unwrap();
    // A strided view is written contiguous.
    let col = NDArray::from_slice(&[3, 2], &[1i64, 2, 3, 4, 5, 6])
        .unwrap()
        .slice(1..3)
        .unwrap();
    let layer = make_object(Layer {
        base: Object::new(),
        name: "dense".into(),
        weight: w.clone(),
        bias: Some(w.clone()),
    });
    let root = Any::from(Array::<Any>::from(vec![
        Any::from(layer),
        Any::from(col.clone()),
    ]));
    let text = object_json::to_json_graph(&root).unwrap();
    assert!(
        text.contains(
            r#""type":"ffi.Tensor","data":{"dtype":"float32","shape":[2,3],"device":[1,0],"data":""#
        ),
        "{text}"
    );
    let pretty = object_json::to_json_graph_pretty(&root).unwrap();
    assert!(pretty.contains(r#""type": "ffi.Tensor", "data": {"dtype": "float32", "shape": [2, 3], "device": [1, 0], "data": ""#), "{pretty}");
    let back = object_json::from_json_graph(&text).unwrap();
    let items = Array::<Any>::try_from(back).unwrap();
    let layer = items[0].downcast_ref::<Layer>().unwrap();
    assert_eq!(layer.weight.shape(), &[2, 3]);
    assert_eq!(layer.weight.dtype(), DataType::float(32));
    assert_eq!(
        layer.weight.as_slice::<f32>().unwrap(),
        w.as_slice::<f32>().unwrap()
    );
    // One array reached twice is one node, and one array again after loading.
    assert!(NDArray::ptr_eq(layer.bias.as_ref().unwrap(), &layer.weight));
    assert!(
        !NDArray::ptr_eq(&layer.weight, &w),
        "loading copies the bytes into a new array"
    );
    let col_back = NDArray::try_from(items[1].clone()).unwrap();
    assert_eq!(col_back.as_slice::<i64>().unwrap(), &[3, 4, 5, 6]);
    assert_eq!(object_json::to_json_graph(&Any::from(items)).unwrap(), text);

    // Bad tensor nodes are errors naming the node.
    for (data, want) in [
        (
            r#"{"dtype": "float32", "shape": [2], "device": [1, 0], "data": "AAAA"}"#,
            "length",
        ),
        (
            r#"{"dtype": "float32", "shape": [-1], "device": [1, 0], "data": ""}"#,
            "negative",
        ),
        (
            r#"{"dtype": "nope", "shape": [1], "device": [1, 0], "data": "AAAAAA=="}"#,
            "dtype",
        ),
        (
            r#"{"dtype": "float32", "shape": [1], "device": [1, 0], "data": "!!"}"#,
            "base64",
        ),
        (
            r#"{"dtype": "float32", "shape": [1], "device": [2, 0], "data": "AAAAAA=="}"#,
            "unsupported device",
        ),
        (
            r#"{"dtype": "float32", "shape": [1], "device": [1, 0]}"#,
            "base64 string",
        ),
        (
            r#"{"dtype": "float32", "shape": [1], "device": [1, 0], "data": "AAAAAA==", "x": 1}"#,
            "unknown tensor member",
        ),
        (r#"[1, 2]"#, "must be an object"),
    ] {
        let text =
            format!(r#"{{"root_index": 0, "nodes": [{{"type": "ffi.Tensor", "data": {data}}}]}}"#);
        let e = object_json::from_json_graph(&text).unwrap_err();
        assert_eq!(e.kind(), GraphErrorKind::Data, "{e}");
        assert_eq!(
            (e.node(), e.type_key()),
            (Some(0), Some("ffi.Tensor")),
            "{e}"
        );
        assert!(e.message().starts_with("node 0 (`ffi.Tensor`)"), "{e}");
        assert!(e.message().to_lowercase().contains(want), "{want}: {e}");
        assert_eq!(Error::from(e).kind(), "ValueError");
    }
}

// ---------------------------------------------------------------------------------
// Edge cases: host-readable devices, empty arrays with huge extents, device views
// with negative strides, copies too large for memory (issue 10 §3).
// ---------------------------------------------------------------------------------

#[test]
fn host_readable_devices_save_and_load_through_the_json_graph() {
    let _leaks = LeakCheck::new();
    const ROCM_HOST: i32 = 11; // kDLROCMHost
    for device in [
        Device::new(Device::CUDA_HOST, 0),
        Device::new(Device::CUDA_HOST, 3),
        Device::new(ROCM_HOST, 0),
        Device::new(Device::CPU, 1),
    ] {
        let (m, deleted) =
            foreign_versioned(&[2, 2], None, f32s(4), 0, |m| m.dl_tensor.device = device);
        let a = import_versioned(m).unwrap();
        assert_eq!(a.device(), device);
        assert_eq!(a.as_slice::<f32>().unwrap(), &[0.0, 1.0, 2.0, 3.0]);
        assert_eq!(a.deep_copy().unwrap().device(), Device::cpu());
        // Saved as the CPU copy of its bytes that loading makes (as `deep_copy` does).
        let text = object_json::to_json_graph(&Any::from(a.clone()))
            .unwrap_or_else(|e| panic!("{device}: {e}"));
        assert!(text.contains(r#""device":[1,0]"#), "{device}: {text}");
        let back = object_json::from_json_graph(&text).unwrap_or_else(|e| panic!("{device}: {e}"));
        let back = NDArray::try_from(back).unwrap();
        assert_eq!(back.device(), Device::cpu());
        assert_eq!((back.shape(), back.dtype()), (a.shape(), a.dtype()));
        assert_eq!(
            back.as_slice::<f32>().unwrap(),
            a.as_slice::<f32>().unwrap()
        );
        assert_eq!(
            object_json::to_json_graph(&Any::from(back)).unwrap(),
            text,
            "{device}: save, load, save is a fixed point"
        );
        drop(a);
        assert_eq!(deleted.load(Ordering::SeqCst), 1);
    }
    // Text that names a host-readable device loads as a CPU array; devices the host
    // cannot read, unknown ones and negative ids are still refused.
    let node = |device: &str| {
        format!(
            r#"{{"root_index": 0, "nodes": [{{"type": "ffi.Tensor", "data": {{"dtype": "int8", "shape": [2], "device": {device}, "data": "AQI="}}}}]}}"#
        )
    };
    for device in ["[1, 0]", "[1, 5]", "[3, 0]", "[3, 7]", "[11, 0]"] {
        let a = object_json::from_json_graph(&node(device))
            .map(NDArray::try_from)
            .unwrap_or_else(|e| panic!("{device}: {e}"))
            .unwrap();
        assert_eq!(a.device(), Device::cpu(), "{device}");
        assert_eq!(a.as_slice::<i8>().unwrap(), &[1, 2], "{device}");
    }
    for device in [
        "[2, 0]", "[10, 0]", "[4, 0]", "[99, 0]", "[1, -1]", "[3, -1]",
    ] {
        let e = object_json::from_json_graph(&node(device)).unwrap_err();
        assert_eq!(e.kind(), GraphErrorKind::Data, "{e}");
        assert_eq!(
            (e.node(), e.type_key()),
            (Some(0), Some("ffi.Tensor")),
            "{e}"
        );
        assert!(e.message().starts_with("node 0 (`ffi.Tensor`)"), "{e}");
        // The array's own error is the source.
        let source = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<NDArrayError>());
        assert!(
            matches!(source, Some(NDArrayError::UnsupportedDevice(_))),
            "{device}: {e}"
        );
    }
}

#[test]
fn empty_arrays_with_huge_extents_work_everywhere() {
    let _leaks = LeakCheck::new();
    let f32t = DataType::float(32);
    let cpu = Device::cpu();
    // Shapes with a zero extent whose other extents overflow any product, and the
    // compact strides they get (extents 0 and 1 count as 1; saturated at i64::MAX).
    let cases: [(&[i64], &[i64]); 5] = [
        (&[0, i64::MAX, 7], &[i64::MAX, 7, 1]),
        (&[1 << 62, 4, 0], &[4, 1, 1]),
        (&[i64::MAX, i64::MAX, 0], &[i64::MAX, 1, 1]),
        (
            &[3, 0, i64::MAX, i64::MAX],
            &[i64::MAX, i64::MAX, i64::MAX, 1],
        ),
        (&[2, 3, 0], &[3, 1, 1]),
    ];
    for (shape, strides) in cases {
        let check = |a: &NDArray, what: &str| {
            assert_eq!(a.shape(), shape, "{what} {shape:?}");
            assert_eq!((a.numel(), a.nbytes()), (0, 0), "{what} {shape:?}");
            assert!(a.is_contiguous(), "{what} {shape:?}");
            assert_eq!(a.as_slice::<f32>().unwrap(), &[] as &[f32]);
            assert_eq!(a.as_bytes().unwrap(), &[] as &[u8]);
            assert_eq!(a.to_bytes().unwrap(), Vec::<u8>::new());
            assert_eq!(a.view().numel(), 0);
        };
        // Made here, in every way.
        let e = NDArray::empty(shape, f32t, cpu).unwrap_or_else(|e| panic!("{shape:?}: {e}"));
        check(&e, "empty");
        assert_eq!(e.strides(), strides, "{shape:?}");
        assert!(e.as_dl_tensor().data.is_null());
        check(
            &NDArray::from_bytes(shape, f32t, cpu, &[]).unwrap(),
            "from_bytes",
        );
        check(
            &NDArray::from_slice::<f32>(shape, &[]).unwrap(),
            "from_slice",
        );
        check(
            &NDArray::from_vec::<f32>(shape, Vec::new()).unwrap(),
            "from_vec",
        );
        assert_eq!(
            NDArray::from_bytes(shape, f32t, cpu, &[0; 4]).unwrap_err(),
            NDArrayError::LengthMismatch {
                expected: 0,
                actual: 4
            }
        );
        // Copies, views and reshapes.
        check(&e.deep_copy().unwrap(), "deep_copy");
        check(&e.view().to_ndarray().unwrap(), "to_ndarray");
        check(&e.slice(..).unwrap(), "slice");
        let r = NDArray::empty(&[0], f32t, cpu)
            .unwrap()
            .reshape(shape)
            .unwrap();
        check(&r, "reshape");
        assert_eq!(e.reshape(&[0, 5]).unwrap().shape(), &[0, 5]);
        // The JSON graph.
        let text = object_json::to_json_graph(&Any::from(e.clone())).unwrap();
        let back = object_json::from_json_graph(&text)
            .unwrap_or_else(|err| panic!("{shape:?}: {err}\n{text}"));
        let back = NDArray::try_from(back).unwrap();
        check(&back, "loaded");
        assert_eq!(object_json::to_json_graph(&Any::from(back)).unwrap(), text);
        // DLPack: our (read-only) export comes back as a read-only view of itself.
        let again = import_versioned(e.to_dlpack_versioned()).unwrap();
        assert!(again.is_read_only() && again.shape() == e.shape());
        // Imported, with and without strides, both struct versions.
        for given in [None, Some(vec![1i64; shape.len()])] {
            let (m, deleted) = foreign_versioned(shape, given.as_deref(), Vec::new(), 0, |_| {});
            let a = import_versioned(m).unwrap_or_else(|e| panic!("{shape:?} {given:?}: {e}"));
            check(&a, "import");
            check(&a.deep_copy().unwrap(), "deep_copy of an import");
            let text = object_json::to_json_graph(&Any::from(a.clone())).unwrap();
            let back = NDArray::try_from(object_json::from_json_graph(&text).unwrap());
            check(&back.unwrap(), "import, saved and loaded");
            drop(a);
            assert_eq!(deleted.load(Ordering::SeqCst), 1);
            let (m, deleted) = foreign_legacy(shape, given.as_deref(), Vec::new(), |_| {});
            check(&import_legacy(m).unwrap(), "legacy import");
            assert_eq!(deleted.load(Ordering::SeqCst), 1);
        }
        // A raw DLTensor*.
        let mut dims = shape.to_vec();
        let t = describe(&mut dims, None, &mut []);
        // SAFETY: `t` and its shape outlive the view; there is no data.
        let v = unsafe { TensorView::from_raw(&t) }.unwrap();
        assert_eq!(v.numel(), 0);
        check(&v.to_ndarray().unwrap(), "to_ndarray of a raw tensor");
    }
    // Slicing keeps the zero extent.
    let e = NDArray::empty(&[1 << 62, 4, 0], f32t, cpu).unwrap();
    assert_eq!(e.slice(5..9).unwrap().shape(), &[4, 4, 0]);
    // With elements, the same extents still overflow.
    assert_eq!(
        NDArray::empty(&[1 << 62, 4, 1], f32t, cpu).unwrap_err(),
        NDArrayError::TooLarge
    );
    assert_eq!(
        NDArray::empty(&[1, i64::MAX, 7], f32t, cpu).unwrap_err(),
        NDArrayError::TooLarge
    );
    // A negative extent is refused even next to a zero one.
    assert_eq!(
        NDArray::empty(&[0, -1], f32t, cpu).unwrap_err(),
        NDArrayError::NegativeDim { axis: 1, dim: -1 }
    );
    // `Shape::numel` agrees: a zero extent makes 0, whatever the others.
    let s = Shape::from(vec![1 << 62, 4, 0]);
    assert_eq!(s.numel(), Some(0));
    assert_eq!(Shape::from(vec![1 << 62, 4, 1]).numel(), None);
    assert_eq!(Shape::from(vec![0, -1]).numel(), None);
}

#[test]
fn device_views_with_negative_strides() {
    let _leaks = LeakCheck::new();
    // Three rows of two, last row first: the first element is row 2 of the buffer and
    // the first stride is -2. The producer puts the first element at `data +
    // byte_offset` with a byte offset smaller than the step back to the next row.
    for device in [
        Device::cpu(),
        Device::new(Device::CUDA, 0),
        Device::new(Device::ROCM, 1),
    ] {
        for byte_offset in [0u64, 4, 8, 16] {
            let mut first = 0usize;
            let (m, deleted) = foreign_versioned(&[3, 2], Some(&[-2, 1]), f32s(6), 0, |m| {
                let t = &mut m.dl_tensor;
                first = t.data as usize + 16;
                t.data = (t.data as *mut u8)
                    .wrapping_add(16 - byte_offset as usize)
                    .cast();
                t.byte_offset = byte_offset;
                t.device = device;
            });
            let a = import_versioned(m).unwrap();
            assert_eq!(a.data_ptr() as usize, first);
            for start in 0..3 {
                for end in start + 1..=3 {
                    let v = a.slice(start..end).unwrap_or_else(|e| {
                        panic!("{device}, byte offset {byte_offset}, {start}..{end}: {e}")
                    });
                    assert_eq!(v.shape(), &[(end - start) as i64, 2]);
                    assert_eq!(v.strides(), &[-2, 1]);
                    assert_eq!(
                        v.data_ptr() as usize,
                        first - 8 * start,
                        "{device}, byte offset {byte_offset}, {start}..{end}"
                    );
                    // And a view of the view.
                    let w = v.slice(end - start - 1..).unwrap();
                    assert_eq!(w.data_ptr() as usize, first - 8 * (end - 1));
                    if device == Device::cpu() {
                        let rows: Vec<f32> = (start..end)
                            .flat_map(|r| [(4 - 2 * r) as f32, (5 - 2 * r) as f32])
                            .collect();
                        assert_eq!(v.to_bytes().unwrap(), bytes_of(&rows));
                    }
                }
            }
            // Positive steps on a device keep the pointer and grow the offset.
            if device != Device::cpu() {
                let v = a.slice(2..).unwrap();
                let back = v.slice(..).unwrap();
                assert_eq!(back.data_ptr(), v.data_ptr());
            }
            drop(a);
            assert_eq!(deleted.load(Ordering::SeqCst), 1);
        }
    }
    // A device array whose rows go forward keeps its data pointer (the offset grows).
    let (m, _) = foreign_versioned(&[3, 2], None, f32s(6), 0, |m| {
        m.dl_tensor.device = Device::new(Device::CUDA, 0);
        m.dl_tensor.byte_offset = 4;
    });
    let a = import_versioned(m).unwrap();
    let v = a.slice(2..).unwrap();
    assert_eq!(
        (v.as_dl_tensor().data, v.byte_offset()),
        (a.as_dl_tensor().data, 4 + 16)
    );
    // A view's byte offset stays one an import accepts (at most isize::MAX): past it,
    // the pointer moves instead, so the view's description checks like an import.
    let (m, _) = foreign_versioned(&[3], None, f32s(3), 0, |m| {
        m.dl_tensor.device = Device::new(Device::CUDA, 0);
        m.dl_tensor.byte_offset = isize::MAX as u64 - 3;
    });
    let a = import_versioned(m).unwrap();
    let v = a.slice(2..).unwrap();
    assert!(v.byte_offset() <= isize::MAX as u64);
    assert_eq!(v.data_ptr(), a.data_ptr().wrapping_byte_add(8));
    // SAFETY: `v`'s description, valid while `v` lives; its data is never read.
    let raw = unsafe { TensorView::from_raw(v.as_dl_tensor()) };
    assert_eq!(raw.unwrap().numel(), 1);
}

fn bytes_of(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

#[test]
#[cfg_attr(
    miri,
    ignore = "asks the allocator for 2^60 bytes, which Miri reports as resource exhaustion"
)]
fn copies_too_large_for_memory_are_errors_not_aborts() {
    let _leaks = LeakCheck::new();
    // A valid broadcast (stride 0, as `expand` exports): 2^58 f32 elements, 2^60 bytes
    // when copied (past any address space), over one element of memory.
    let n = 1i64 << 58;
    let want = NDArrayError::AllocationFailed { bytes: 1 << 60 };
    let (m, deleted) = foreign_versioned(&[n], Some(&[0]), vec![1.5], 0, |_| {});
    let a = import_versioned(m).unwrap();
    assert_eq!((a.numel(), a.nbytes()), (1 << 58, 1 << 60));
    assert_eq!(a.as_bytes().unwrap_err(), NDArrayError::NotContiguous);
    assert_eq!(a.to_bytes().unwrap_err(), want);
    assert_eq!(a.deep_copy().unwrap_err(), want);
    assert_eq!(a.view().to_ndarray().unwrap_err(), want);
    let e = Error::from(want.clone());
    assert_eq!(e.kind(), "MemoryError");
    assert_eq!(
        e.message(),
        "cannot allocate 1152921504606846976 bytes of NDArray data"
    );
    // The JSON graph reports it, at the root and inside a container.
    let err = object_json::to_json_graph(&Any::from(a.clone())).unwrap_err();
    assert_eq!(err.kind(), GraphErrorKind::Memory, "{err}");
    assert_eq!(err.type_key(), Some("ffi.Tensor"));
    let source = std::error::Error::source(&err).and_then(|s| s.downcast_ref::<NDArrayError>());
    assert_eq!(source, Some(&want));
    assert_eq!(
        Error::from(err),
        e,
        "a packed call sees the array's own error"
    );
    let list = Any::from(Array::<Any>::from(vec![Any::from(1), Any::from(a.clone())]));
    let err = object_json::to_json_graph(&list).unwrap_err();
    assert_eq!(err.kind(), GraphErrorKind::Memory, "{err}");
    assert_eq!(Error::from(err).kind(), "MemoryError");
    // Views of it, 2-D broadcasts, and raw DLTensor*s of the same description.
    let tail = a.slice(1..).unwrap();
    assert_eq!(
        tail.to_bytes().unwrap_err(),
        NDArrayError::AllocationFailed {
            bytes: ((1 << 58) - 1) * 4
        }
    );
    let (m, _) = foreign_versioned(&[1 << 29, 1 << 29], Some(&[0, 0]), vec![2.0], 0, |_| {});
    let b = import_versioned(m).unwrap();
    assert_eq!(b.deep_copy().unwrap_err(), want);
    let mut shape = vec![n];
    let mut strides = vec![0i64];
    let mut one = vec![1.5f32];
    let t = describe(&mut shape, Some(&mut strides), &mut one);
    // SAFETY: `t`, its shape, strides and data outlive the view and are not written.
    let v = unsafe { TensorView::from_raw(&t) }.unwrap();
    assert_eq!(v.to_ndarray().unwrap_err(), want);
    drop((a, tail, list));
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
    // New arrays of an impossible size: an error, not an abort.
    assert_eq!(
        NDArray::empty(&[1 << 60], DataType::uint(8), Device::cpu()).unwrap_err(),
        want
    );
    assert_eq!(
        NDArray::empty(&[1 << 27, 1 << 30], DataType::float(64), Device::cpu()).unwrap_err(),
        want
    );
    let v = NDArray::from_slice(&[2], &[1u8, 2]).unwrap();
    assert!(v.deep_copy().is_ok(), "the error left nothing behind");
    // A small broadcast copies.
    let (m, _) = foreign_versioned(&[3, 2], Some(&[0, 1]), vec![7.0, 8.0], 0, |_| {});
    let c = import_versioned(m).unwrap();
    assert_eq!(
        c.to_bytes().unwrap(),
        bytes_of(&[7.0, 8.0, 7.0, 8.0, 7.0, 8.0])
    );
    assert_eq!(
        c.deep_copy().unwrap().as_slice::<f32>().unwrap(),
        &[7.0, 8.0, 7.0, 8.0, 7.0, 8.0]
    );
}

/// Every byte-addressable data type tvm-ffi names makes an NDArray (the float8 family,
/// one byte an element), saves to a JSON graph and loads back; the sub-byte float6 and
/// float4 types, scalable vectors and `void` are refused.
#[test]
fn float8_arrays_and_refused_sub_byte_types() {
    let _leaks = LeakCheck::new();
    let cpu = Device::cpu();
    for name in [
        "float8_e3m4",
        "float8_e4m3",
        "float8_e4m3b11fnuz",
        "float8_e4m3fn",
        "float8_e4m3fnuz",
        "float8_e5m2",
        "float8_e5m2fnuz",
        "float8_e8m0fnu",
        "float8_e5m2x4",
    ] {
        let dt: DataType = name.parse().unwrap();
        let lanes = usize::from(dt.lanes);
        let bytes: Vec<u8> = (0..6 * lanes as u8).collect();
        let a = NDArray::from_bytes(&[2, 3], dt, cpu, &bytes).unwrap();
        assert_eq!(a.to_bytes().unwrap(), bytes, "{name}");
        let text = object_json::to_json_graph(&Any::from(a.clone())).unwrap();
        assert!(text.contains(&format!(r#""dtype":"{name}""#)), "{text}");
        let back = NDArray::try_from(object_json::from_json_graph(&text).unwrap()).unwrap();
        assert_eq!((back.dtype(), back.to_bytes().unwrap()), (dt, bytes));
    }
    for name in [
        "float4_e2m1fn",
        "float4_e2m1fnx2",
        "float6_e2m3fn",
        "float6_e3m2fn",
        "float32xvscalex4",
        "",
    ] {
        let dt: DataType = name.parse().unwrap();
        assert_eq!(
            NDArray::empty(&[2], dt, cpu).unwrap_err(),
            NDArrayError::UnsupportedDataType(dt),
            "{name:?}"
        );
    }
}

/// Counts its drops (an owner for `from_dl_tensor_owned_by`).
struct DropCounter(Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn import_with_a_rust_owner_drops_it_once() {
    let _leaks = LeakCheck::new();
    let drops = Arc::new(AtomicUsize::new(0));
    let mut data = f32s(6);
    let mut shape = [2i64, 3];
    let mut strides = vec![1i64, 2]; // column-major
    let t = describe(&mut shape, Some(&mut strides), &mut data);
    // SAFETY: `data` outlives every handle below and nothing else touches it meanwhile.
    let a =
        unsafe { NDArray::from_dl_tensor_owned_by(&t, false, DropCounter(drops.clone())) }.unwrap();
    // Shape and strides were copied: the description's own arrays may go.
    shape = [0, 0];
    strides.clear();
    assert_eq!((a.shape(), a.strides()), (&[2i64, 3][..], &[1i64, 2][..]));
    assert_eq!(a.data_ptr(), data.as_mut_ptr().cast::<c_void>());
    assert!(!a.is_read_only());
    let view = a.slice(1..2).unwrap();
    drop(a);
    assert_eq!(drops.load(Ordering::SeqCst), 0, "a view keeps the owner");
    drop(view);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    // A description the import refuses: the owner goes at once.
    let mut bad_shape = [-1i64];
    let bad = describe(&mut bad_shape, None, &mut data);
    // SAFETY: as above.
    let err = unsafe { NDArray::from_dl_tensor_owned_by(&bad, true, DropCounter(drops.clone())) };
    assert!(err.is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 2);
    let _ = shape;
}

/// An owner larger than a pointer (boxed by the import).
struct BigOwner(
    #[allow(dead_code, reason = "held for its drop")] DropCounter,
    [u64; 4],
);

/// An owner of no size (kept in the import's slot); counts in a static.
struct EmptyOwner;
static EMPTY_OWNER_DROPS: AtomicUsize = AtomicUsize::new(0);

impl Drop for EmptyOwner {
    fn drop(&mut self) {
        EMPTY_OWNER_DROPS.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn import_drops_owners_of_every_size_once() {
    let _leaks = LeakCheck::new();
    let drops = Arc::new(AtomicUsize::new(0));
    let mut data = f32s(4);
    let mut shape = [4i64];
    let t = describe(&mut shape, None, &mut data);
    // A pointer-sized owner is kept in place, a larger one boxed: each dropped once,
    // when the last handle goes.
    // SAFETY: `data` outlives every handle below and nothing else touches it meanwhile.
    let small =
        unsafe { NDArray::from_dl_tensor_owned_by(&t, true, DropCounter(drops.clone())) }.unwrap();
    let owner = BigOwner(DropCounter(drops.clone()), [7; 4]);
    assert_eq!(owner.1.len(), 4);
    // SAFETY: as above.
    let big = unsafe { NDArray::from_dl_tensor_owned_by(&t, true, owner) }.unwrap();
    assert_eq!(
        big.as_slice::<f32>().unwrap(),
        small.as_slice::<f32>().unwrap()
    );
    let small2 = small.clone();
    drop(small);
    drop(big);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "the boxed owner went with its NDArray"
    );
    drop(small2);
    assert_eq!(drops.load(Ordering::SeqCst), 2);
    let before = EMPTY_OWNER_DROPS.load(Ordering::SeqCst);
    // SAFETY: as above.
    let empty = unsafe { NDArray::from_dl_tensor_owned_by(&t, true, EmptyOwner) }.unwrap();
    assert_eq!(EMPTY_OWNER_DROPS.load(Ordering::SeqCst), before);
    drop(empty);
    assert_eq!(EMPTY_OWNER_DROPS.load(Ordering::SeqCst), before + 1);
    let _ = shape;
}
