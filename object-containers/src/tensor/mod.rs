//! Tensors: [`NDArray`] (`ffi.Tensor`, static index 70), an n-dimensional array that
//! is an object and whose description is a DLPack `DLTensor`, embedded at a fixed
//! offset; [`TensorView`], a borrowed view of an NDArray or of a raw `DLTensor*`; and
//! [`dlpack`], the C structs and zero-copy import and export.
//!
//! # Naming
//!
//! One thing, one name, in the API, the docs and the error messages:
//!
//! - **NDArray** is the Rust type and the object (its object struct is [`NDArrayObj`]);
//!   `ffi.Tensor` is its type key, the name on the wire and in type errors, which the
//!   tvm-ffi ecosystem fixed. Methods say `ndarray` (`TensorView::ndarray`,
//!   `to_ndarray`).
//! - **DLTensor** is the C description (DLPack's struct): embedded in every NDArray, or
//!   passed raw as a `DLTensor*`. A "managed tensor" is DLPack's `DLManagedTensor`.
//! - **Array** is [`Array`](crate::Array) (`ffi.Array`), the container, and never an
//!   NDArray.
//! - **tensor**, the plain word, is the general notion DLPack and the RFC use (a
//!   producer's tensor, a tensor argument), never the name of one of our types.
//!
//! # Layout
//!
//! `NDArrayObj` is `#[repr(C)] { header, DLTensor, storage, read_only }`, followed in the
//! same allocation by the shape and the strides (`2 * ndim` `i64`s, which the DLTensor's
//! `shape` and `strides` point at). The `DLTensor` sits at
//! [`NDArrayObj::DL_TENSOR_OFFSET`] (16, right after the header) in every NDArray, so an
//! object address and its DLTensor's address convert into each other by that offset: the
//! calling convention of the TVM RFC's "option 2", in which a tensor argument may be an
//! object or a raw `DLTensor*` ([`NDArray::as_dl_tensor_ptr`],
//! [`NDArray::from_dl_tensor_ptr`]).
//!
//! The data lives elsewhere, owned by the storage: a 64-byte-aligned CPU buffer
//! ([`NDArray::empty`], [`NDArray::from_slice`], [`NDArray::from_bytes`]), an adopted
//! `Vec` ([`NDArray::from_vec`]), the NDArray a view was made from
//! ([`NDArray::reshape`], [`NDArray::slice`]), or a DLPack producer's managed tensor
//! (imports, in [`dlpack`]).
//!
//! # Sharing and mutation
//!
//! Cloning shares the NDArray, as every handle does. Reading is always allowed
//! ([`NDArray::as_slice`]); writing ([`NDArray::as_slice_mut`], [`NDArray::copy_from`])
//! needs the NDArray to be writable and its memory reachable through this handle only:
//! no other handle to the object, no other view of the same memory, no export alive.
//!
//! # Files
//!
//! | file | holds | `unsafe` |
//! | --- | --- | --- |
//! | `object.rs` | the object, its allocation and deleter, the storage, raw reads | yes |
//! | `ndarray.rs` | the [`NDArray`] handle: construction, typed access, views | yes |
//! | `view.rs` | [`TensorView`] | yes |
//! | `copy.rs` | strided copies | yes |
//! | `dlpack/` | the C structs (`ffi.rs`), import and export | yes |
//! | `layout.rs` | shapes, strides, sizes, and the checks of a description | no |
//! | `error.rs` | [`NDArrayError`] | no |

#[allow(unsafe_code, reason = "strided copies between raw layouts")]
mod copy;
#[allow(unsafe_code, reason = "the C structs, zero-copy import and export")]
pub mod dlpack;
mod error;
mod layout;
#[allow(unsafe_code, reason = "NDArray construction, typed data access")]
mod ndarray;
#[allow(unsafe_code, reason = "allocation, deleter, storage, raw reads")]
mod object;
#[allow(unsafe_code, reason = "views of raw DLTensor* a caller passed")]
mod view;

pub use error::NDArrayError;
pub use layout::MAX_NDIM;
pub use ndarray::{ForeignWrite, NDArray, TensorLease};
pub use object::{Element, NDArrayObj, ALIGNMENT};
pub use view::TensorView;

// The static index is the one the tvm-ffi ecosystem gives `ffi.Tensor`.
const _: () = assert!(object_core::type_index::TENSOR == 70);
