//! The NDArray object and its memory: [`NDArrayObj`] (header, embedded `DLTensor`,
//! storage, read-only flag, then the shape and strides in the same block), its
//! allocation and deleter, the storage that keeps the data alive, and the few raw reads
//! every other file builds on.
//!
//! The rest of `tensor/` reaches the object through this small interface:
//!
//! - [`new_object`] assembles an object from a checked description ([`Parts`]);
//! - [`import`] checks a foreign description and, only if it passes, assembles an
//!   object around a [`ForeignOwner`] (what [`dlpack`](super::dlpack) imports with);
//! - [`check_dl_tensor`] reads a raw description's shape and strides and checks it
//!   (what [`TensorView::from_raw`](super::TensorView::from_raw) and [`import`] use);
//! - [`NDArrayObj::shape`], [`NDArrayObj::strides`] and [`typed_slice`] read our own
//!   objects and checked descriptions.

use core::alloc::Layout;
use core::ffi::c_void;
use core::fmt;
use core::mem::{align_of, offset_of, size_of, ManuallyDrop, MaybeUninit};
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicU32, Ordering};
use std::alloc::{alloc, alloc_zeroed, dealloc, handle_alloc_error};

use object_core::{Allocator, DataType, Deleter, Device, Object, ObjectPtr};

use super::dlpack::DLTensor;
use super::error::NDArrayError;
use super::layout::{self, Checked, MAX_NDIM};
use super::NDArray;

/// The alignment of the data of NDArrays this crate allocates.
pub const ALIGNMENT: usize = 64;

// ---------------------------------------------------------------------------------
// Element types.
// ---------------------------------------------------------------------------------

/// A Rust type that is the element of one DLPack data type, for typed slices
/// ([`NDArray::as_slice`]) and construction ([`NDArray::from_slice`]).
///
/// Implemented for `i8`…`i64`, `u8`…`u64`, `f32` and `f64`. (Not for `bool`: DLPack's
/// 8-bit booleans may hold bytes other than 0 and 1, which a Rust `bool` may not.)
///
/// # Safety
///
/// Every bit pattern of `size_of::<Self>()` bytes is a valid `Self`, the type has no
/// padding, and `size_of::<Self>() == DTYPE.bytes()`.
pub unsafe trait Element: Copy + Send + Sync + 'static {
    /// The data type of NDArrays of `Self`.
    const DTYPE: DataType;
}

macro_rules! element {
    ($($t:ty => $dt:expr),*) => {$(
        // SAFETY: a primitive number: every bit pattern valid, no padding, and its size
        // is the data type's (checked below).
        unsafe impl Element for $t {
            const DTYPE: DataType = $dt;
        }
        const _: () = assert!(size_of::<$t>() == <$t as Element>::DTYPE.bytes());
    )*};
}
element!(
    i8 => DataType::int(8), i16 => DataType::int(16), i32 => DataType::int(32), i64 => DataType::int(64),
    u8 => DataType::uint(8), u16 => DataType::uint(16), u32 => DataType::uint(32), u64 => DataType::uint(64),
    f32 => DataType::float(32), f64 => DataType::float(64)
);

/// The bytes of a slice of elements.
#[inline]
pub(super) fn bytes_of<T: Element>(data: &[T]) -> &[u8] {
    // SAFETY: `Element`s have no padding, so their bytes are initialized.
    unsafe { core::slice::from_raw_parts(data.as_ptr() as *const u8, size_of_val(data)) }
}

/// A typed slice of a DLTensor's data, after every check.
///
/// # Safety
///
/// `t` passed [`check_description`](layout::check_description) with `numel` elements,
/// and its data (if on a host device) is readable for `'a` and not written while the
/// slice lives.
pub(super) unsafe fn typed_slice<'a, T: Element>(
    t: &DLTensor,
    numel: usize,
) -> Result<&'a [T], NDArrayError> {
    layout::readable(t, T::DTYPE)?;
    if numel == 0 {
        return Ok(&[]);
    }
    let p = layout::first_element(t) as *const T;
    if (p as usize) % align_of::<T>() != 0 {
        return Err(NDArrayError::Misaligned {
            address: p as usize,
            align: align_of::<T>(),
        });
    }
    // SAFETY: a compact layout of `numel` elements of `T` (checked: data type and
    // contiguity) at an aligned, non-null address; readability is the caller's contract.
    Ok(unsafe { core::slice::from_raw_parts(p, numel) })
}

/// Reads a raw DLTensor's shape and strides and checks the description (see
/// [`check_description`](layout::check_description)). Never reads the data.
///
/// # Safety
///
/// If `t.ndim` is in `1..=MAX_NDIM` and `t.shape` (resp. `t.strides`) is not null, it
/// must point to `ndim` readable `i64`s that stay unchanged for `'a`.
#[inline]
pub(super) unsafe fn check_dl_tensor<'a>(t: &'a DLTensor) -> Result<Checked<'a>, NDArrayError> {
    let Some(ndim) = usize::try_from(t.ndim).ok().filter(|&n| n <= MAX_NDIM) else {
        return Err(NDArrayError::BadNdim {
            ndim: t.ndim as i64,
        });
    };
    let shape: &[i64] = if ndim == 0 {
        &[]
    } else if t.shape.is_null() {
        return Err(NDArrayError::NullPointer("shape"));
    } else {
        // SAFETY: the caller's contract: `ndim` readable extents.
        unsafe { core::slice::from_raw_parts(t.shape, ndim) }
    };
    let strides = if ndim == 0 || t.strides.is_null() {
        None
    } else {
        // SAFETY: the caller's contract: `ndim` readable strides.
        Some(unsafe { core::slice::from_raw_parts(t.strides, ndim) })
    };
    layout::check_description(t, shape, strides)
}

// ---------------------------------------------------------------------------------
// Storage: what keeps the data alive.
// ---------------------------------------------------------------------------------

/// What keeps an NDArray's data alive.
pub(super) enum Storage {
    /// No data (no elements).
    None,
    /// A buffer from the global allocator (`block` with `layout`; the data may start
    /// after `block`, at the first 64-byte boundary).
    Aligned { block: NonNull<u8>, layout: Layout },
    /// An adopted `Vec<T>`'s buffer, freed by `free(ptr, capacity)`.
    Vec {
        ptr: NonNull<u8>,
        capacity: usize,
        free: unsafe fn(NonNull<u8>, usize),
    },
    /// A view: the NDArray whose memory it shares (never itself a view).
    View(NDArray),
    /// A foreign producer's tensor (an import), released when the storage drops.
    Foreign(#[allow(dead_code, reason = "held for its `Drop`, which releases it")] ForeignOwner),
}

impl Drop for Storage {
    fn drop(&mut self) {
        match *self {
            // A view's base and a foreign owner drop (and release) themselves.
            Storage::None | Storage::View(_) | Storage::Foreign(_) => {}
            // SAFETY: the block was allocated with this layout and is freed once, here.
            Storage::Aligned { block, layout } => unsafe { dealloc(block.as_ptr(), layout) },
            Storage::Vec {
                ptr,
                capacity,
                free,
            } => {
                // SAFETY: `free` is `free_vec::<T>` for the `Vec<T>` this buffer came from.
                unsafe { free(ptr, capacity) }
            }
        }
    }
}

impl Storage {
    /// Takes over a `Vec<T>`'s buffer (non-empty), and its data pointer.
    #[inline]
    pub(super) fn adopt_vec<T: Element>(data: Vec<T>) -> (*mut c_void, Storage) {
        debug_assert!(!data.is_empty());
        let mut v = ManuallyDrop::new(data);
        let p = v.as_mut_ptr() as *mut u8;
        // SAFETY: a vector with elements has a non-null buffer.
        let ptr = unsafe { NonNull::new_unchecked(p) };
        let storage = Storage::Vec {
            ptr,
            capacity: v.capacity(),
            free: free_vec::<T>,
        };
        (p as *mut c_void, storage)
    }
}

/// Frees an adopted `Vec<T>` buffer.
///
/// # Safety
///
/// `ptr` and `capacity` are those of a `Vec<T>` whose ownership was given up; called
/// once.
unsafe fn free_vec<T>(ptr: NonNull<u8>, capacity: usize) {
    // SAFETY: the caller's contract; length 0, as `Element`s need no drop.
    drop(unsafe { Vec::from_raw_parts(ptr.as_ptr() as *mut T, 0, capacity) });
}

/// Allocates the data of a new CPU NDArray: `nbytes` (nonzero) bytes starting at a
/// 64-byte boundary, owned by the returned storage. Zeroed memory comes from a
/// 16-aligned block with room to skip to the boundary (the system allocator's `calloc`
/// path: fresh pages, free until touched); otherwise the block is 64-aligned and
/// uninitialized, for the caller to write in full before anyone reads it.
///
/// Never aborts: the sizes come from shapes and strides a caller or a producer chose,
/// so a refusal is [`NDArrayError::AllocationFailed`].
pub(super) fn allocate_data(
    nbytes: usize,
    zeroed: bool,
) -> Result<(*mut u8, Storage), NDArrayError> {
    debug_assert!(nbytes > 0);
    let (size, align) = if zeroed {
        (nbytes.checked_add(ALIGNMENT), 16)
    } else {
        (Some(nbytes), ALIGNMENT)
    };
    let layout = size
        .and_then(|size| Layout::from_size_align(size, align).ok())
        .ok_or(NDArrayError::TooLarge)?;
    // SAFETY: a nonzero size.
    let block = unsafe {
        if zeroed {
            alloc_zeroed(layout)
        } else {
            alloc(layout)
        }
    };
    let block = NonNull::new(block).ok_or(NDArrayError::AllocationFailed { bytes: nbytes })?;
    let skip = (ALIGNMENT - block.as_ptr() as usize % ALIGNMENT) % ALIGNMENT;
    debug_assert!(zeroed || skip == 0);
    // SAFETY: `skip < ALIGNMENT`, and a skip is only needed in a zeroed block, which has
    // `ALIGNMENT` bytes beyond `nbytes`: the data is inside the block.
    let data = unsafe { block.as_ptr().add(skip) };
    Ok((data, Storage::Aligned { block, layout }))
}

/// A foreign producer's hold on imported data, released once, when the last NDArray (and
/// view) using the data goes, from whichever thread that is.
pub(super) struct ForeignOwner {
    /// The hold: a pointer (a producer's managed tensor, a boxed owner), or an owner of
    /// at most a pointer's size kept in place (a reference-counted handle, say), which
    /// saves an allocation per import.
    slot: OwnerSlot,
    /// Releases the hold, given the slot.
    release: unsafe fn(*mut OwnerSlot),
}

/// Room for a pointer, or for any value of at most its size and alignment.
pub(super) type OwnerSlot = MaybeUninit<*mut c_void>;

impl ForeignOwner {
    /// A hold through a pointer (a producer's managed tensor).
    ///
    /// # Safety
    ///
    /// Calling `release` once, from any thread, at any time from now on, with a slot
    /// holding `ptr`, is sound; until then the data it keeps alive stays valid.
    pub(super) unsafe fn new(ptr: NonNull<c_void>, release: unsafe fn(*mut OwnerSlot)) -> Self {
        ForeignOwner {
            slot: MaybeUninit::new(ptr.as_ptr()),
            release,
        }
    }

    /// A hold that is `owner` itself, dropped on release: kept in the slot if it fits,
    /// else boxed.
    pub(super) fn of<O: Send + 'static>(owner: O) -> Self {
        let mut slot = OwnerSlot::uninit();
        if size_of::<O>() <= size_of::<OwnerSlot>() && align_of::<O>() <= align_of::<OwnerSlot>() {
            // SAFETY: `O` fits the slot's size and alignment (checked just now); the
            // slot owns the value from here on, and `drop_in_slot::<O>` drops it once.
            unsafe { slot.as_mut_ptr().cast::<O>().write(owner) };
            ForeignOwner {
                slot,
                release: drop_in_slot::<O>,
            }
        } else {
            slot.write(Box::into_raw(Box::new(owner)).cast());
            ForeignOwner {
                slot,
                release: drop_boxed::<O>,
            }
        }
    }
}

/// Drops the owner [`ForeignOwner::of`] kept in the slot.
///
/// # Safety
///
/// `slot` holds that owner, an `O`; called once.
unsafe fn drop_in_slot<O>(slot: *mut OwnerSlot) {
    // SAFETY: the caller's contract.
    unsafe { ptr::drop_in_place(slot.cast::<O>()) }
}

/// Drops the owner [`ForeignOwner::of`] boxed.
///
/// # Safety
///
/// `slot` holds that box's pointer, with that `O`; called once.
unsafe fn drop_boxed<O>(slot: *mut OwnerSlot) {
    // SAFETY: the caller's contract: the box leaked by `ForeignOwner::of`.
    drop(unsafe { Box::from_raw((*slot).assume_init().cast::<O>()) });
}

impl Drop for ForeignOwner {
    fn drop(&mut self) {
        // SAFETY: `new`'s and `of`'s contracts; a value is dropped once.
        unsafe { (self.release)(&mut self.slot) }
    }
}

// ---------------------------------------------------------------------------------
// The object.
// ---------------------------------------------------------------------------------

/// The object behind [`NDArray`]: the header, the DLPack description, what owns the
/// data, and whether the NDArray is read-only; shape and strides follow in the same
/// allocation.
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "ffi.Tensor", index = 70, final, opaque, builtin = super::ndarray::NDARRAY_HOOKS)]
pub struct NDArrayObj {
    base: Object,
    tensor: DLTensor,
    storage: Storage,
    read_only: bool,
    /// The lease ([`NDArray::lend_mut`]): bit 0 while lent writable to foreign code,
    /// plus two per foreign call writing it right now. While nonzero, no Rust code may
    /// borrow the data (every read refuses with [`NDArrayError::Lent`]).
    lease: AtomicU32,
}

const LENT: u32 = 1;
const WRITER: u32 = 2;

// SAFETY: the object owns its data (or shares it with a view base, or holds a DLPack
// producer's tensor, whose deleter DLPack allows on any thread); shared access only
// reads, and writing needs unique access to the memory (`NDArray::as_slice_mut`). The
// raw pointers point into the object's own block or at that data.
unsafe impl Send for NDArrayObj {}
// SAFETY: as above.
unsafe impl Sync for NDArrayObj {}

/// The DLTensor is right after the header: the fixed offset of the calling convention.
const _: () = assert!(offset_of!(NDArrayObj, tensor) == size_of::<Object>());

impl NDArrayObj {
    /// The offset of the embedded `DLTensor` from the object's address (16).
    pub const DL_TENSOR_OFFSET: usize = offset_of!(NDArrayObj, tensor);

    /// The embedded DLPack description.
    #[inline]
    pub fn dl_tensor(&self) -> &DLTensor {
        &self.tensor
    }

    /// The extents.
    #[inline]
    pub(super) fn shape(&self) -> &[i64] {
        // SAFETY: our objects' shape points at `ndim` `i64`s in their own block (written
        // by `new_object`), unchanged after construction.
        unsafe { dims(self.tensor.shape, self.tensor.ndim) }
    }

    /// The strides, in elements (always present, whatever a producer gave).
    #[inline]
    pub(super) fn strides(&self) -> &[i64] {
        // SAFETY: as in `shape`.
        unsafe { dims(self.tensor.strides, self.tensor.ndim) }
    }

    /// Whether the NDArray is read-only.
    #[inline]
    pub(super) fn read_only(&self) -> bool {
        self.read_only
    }

    /// Whether the NDArray (or the NDArray it is a view of) is lent writable to
    /// foreign code, or written by a foreign call, right now.
    #[inline]
    pub(super) fn is_lent(&self) -> bool {
        // Acquire: a lease's end and a foreign call's end (Release) follow the foreign
        // writes, so a reader that sees both ended sees what was written.
        self.lease.load(Ordering::Acquire) != 0
            || self
                .view_base()
                .is_some_and(|b| b.obj().lease.load(Ordering::Acquire) != 0)
    }

    /// Refuses while the data is lent writable to foreign code or a foreign call
    /// writes it: every path that lends the data to Rust (a slice, a view, a copy, a
    /// new view object) checks this first.
    #[inline]
    pub(super) fn check_not_lent(&self) -> Result<(), NDArrayError> {
        if self.is_lent() {
            return Err(NDArrayError::Lent);
        }
        Ok(())
    }

    /// Whether foreign code may write the data now (lent).
    #[inline]
    pub(super) fn is_lent_writable(&self) -> bool {
        self.lease.load(Ordering::Acquire) & LENT != 0
    }

    /// Starts a lease (see [`NDArray::lend_mut`]); the caller has checked that it alone
    /// reaches the memory.
    #[inline]
    pub(super) fn start_lease(&self) {
        self.lease.fetch_or(LENT, Ordering::AcqRel);
    }

    /// Ends a lease. Foreign calls still writing keep reads refused until they end.
    #[inline]
    pub(super) fn end_lease(&self) {
        self.lease.fetch_and(!LENT, Ordering::Release);
    }

    /// Records a foreign call about to write the data: refused unless the NDArray is
    /// lent now. [`NDArrayObj::end_foreign_write`] must follow, once.
    pub(super) fn begin_foreign_write(&self) -> bool {
        let mut cur = self.lease.load(Ordering::Acquire);
        loop {
            if cur & LENT == 0 || cur > u32::MAX - WRITER {
                return false;
            }
            match self.lease.compare_exchange_weak(
                cur,
                cur + WRITER,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// The end of a foreign call's write.
    pub(super) fn end_foreign_write(&self) {
        self.lease.fetch_sub(WRITER, Ordering::Release);
    }

    /// The NDArray whose memory this one is a view of, if it is one.
    #[inline]
    pub(super) fn view_base(&self) -> Option<&NDArray> {
        match &self.storage {
            Storage::View(base) => Some(base),
            _ => None,
        }
    }
}

/// `ndim` dimensions at `p` (none for `ndim == 0`).
///
/// # Safety
///
/// If `ndim > 0`, `p` points to `ndim` `i64`s that stay unchanged for `'a`.
#[inline]
unsafe fn dims<'a>(p: *const i64, ndim: i32) -> &'a [i64] {
    if ndim <= 0 {
        return &[];
    }
    // SAFETY: the caller's contract.
    unsafe { core::slice::from_raw_parts(p, ndim as usize) }
}

impl fmt::Debug for NDArrayObj {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NDArrayObj")
            .field("ndim", &self.tensor.ndim)
            .field("dtype", &format_args!("{}", self.tensor.dtype))
            .field("device", &format_args!("{}", self.tensor.device))
            .finish()
    }
}

/// Where the shape and strides start, from the object's address.
const DIMS_OFFSET: usize = size_of::<NDArrayObj>();
const _: () = assert!(DIMS_OFFSET % align_of::<i64>() == 0);

/// The block of an NDArray object with `ndim` dimensions.
fn block_layout(ndim: usize) -> Layout {
    // `ndim <= MAX_NDIM`, so the size is a few hundred bytes.
    match Layout::from_size_align(
        DIMS_OFFSET + 2 * ndim * size_of::<i64>(),
        align_of::<NDArrayObj>(),
    ) {
        Ok(l) => l,
        Err(_) => unreachable!("the block of an NDArray with at most {MAX_NDIM} dimensions"),
    }
}

/// Allocates NDArray objects with room for their shape and strides.
struct TensorAlloc {
    ndim: usize,
}

unsafe extern "C" fn tensor_deleter(obj: *mut Object) {
    let p = obj as *mut NDArrayObj;
    // SAFETY: called once, on the last release, with the address `TensorAlloc` returned
    // (full provenance over the block); the value's `ndim` is the allocator's (see
    // `new_object`), so the layout is the one allocated.
    unsafe {
        let ndim = ptr::addr_of!((*p).tensor.ndim).read() as usize;
        object_core::drop_object_in_place(p);
        dealloc(p as *mut u8, block_layout(ndim));
    }
}

// SAFETY: a fresh block of `block_layout(ndim)`, aligned for `NDArrayObj` and at least
// its size; `tensor_deleter` drops the value once and frees that block, reading only the
// value's `ndim`, which `new_object` sets to this allocator's `ndim`.
unsafe impl Allocator<NDArrayObj> for TensorAlloc {
    fn allocate(&self) -> (NonNull<NDArrayObj>, Deleter) {
        let layout = block_layout(self.ndim);
        // SAFETY: nonzero size (the object's).
        let p = unsafe { alloc(layout) } as *mut NDArrayObj;
        match NonNull::new(p) {
            Some(p) => (p, tensor_deleter),
            None => handle_alloc_error(layout),
        }
    }
}

// ---------------------------------------------------------------------------------
// Assembling objects.
// ---------------------------------------------------------------------------------

/// What [`new_object`] assembles.
pub(super) struct Parts<'s> {
    pub(super) shape: &'s [i64],
    /// `None`: compact row-major (checked with `check_compact`), written in place.
    pub(super) strides: Option<&'s [i64]>,
    pub(super) data: *mut c_void,
    pub(super) byte_offset: u64,
    pub(super) dtype: DataType,
    pub(super) device: Device,
    pub(super) storage: Storage,
    pub(super) read_only: bool,
}

/// Assembles an NDArray object.
///
/// # Safety
///
/// The description is checked: rank at most [`MAX_NDIM`], strides as long as the shape
/// (or `None`, with compact strides that fit), the sizes and span in range (as
/// [`check_description`](layout::check_description) checks), and the data valid as
/// described for as long as `storage` lives (and, if not `read_only`, writable by
/// whoever reaches it alone).
#[inline]
pub(super) unsafe fn new_object(parts: Parts<'_>) -> NDArray {
    let ndim = parts.shape.len();
    debug_assert!(ndim <= MAX_NDIM && parts.strides.is_none_or(|s| s.len() == ndim));
    let value = NDArrayObj {
        base: Object::new(),
        tensor: DLTensor {
            data: parts.data,
            device: parts.device,
            ndim: ndim as i32,
            dtype: parts.dtype,
            shape: ptr::null_mut(),
            strides: ptr::null_mut(),
            byte_offset: parts.byte_offset,
        },
        storage: parts.storage,
        read_only: parts.read_only,
        lease: AtomicU32::new(0),
    };
    let obj = TensorAlloc { ndim }.make(value);
    let raw = ObjectPtr::as_ptr(&obj) as *mut NDArrayObj;
    // SAFETY: a fresh object we alone hold, in a block with room for `2 * ndim`
    // `i64`s at `DIMS_OFFSET`; `raw` has the block's provenance (from the allocator)
    // and no reference to the object is alive while we write.
    unsafe {
        let dims = (raw as *mut u8).add(DIMS_OFFSET) as *mut i64;
        ptr::copy_nonoverlapping(parts.shape.as_ptr(), dims, ndim);
        match parts.strides {
            Some(st) => ptr::copy_nonoverlapping(st.as_ptr(), dims.add(ndim), ndim),
            None => layout::write_compact_strides(
                parts.shape,
                core::slice::from_raw_parts_mut(dims.add(ndim), ndim),
            ),
        }
        ptr::addr_of_mut!((*raw).tensor.shape).write(dims);
        ptr::addr_of_mut!((*raw).tensor.strides).write(dims.add(ndim));
    }
    NDArray::from_object_ptr(obj)
}

/// Checks a foreign DLTensor and assembles an NDArray around its data, kept alive by
/// the owner `take_owner` makes. The owner is made only once every check has passed, so
/// a refused description leaves what the owner would hold untouched (a producer's
/// managed tensor stays the caller's; a Rust value captured by `take_owner` is dropped
/// with it). The shape and strides are copied into the object; the data is not.
///
/// # Safety
///
/// `tensor`'s shape and strides are readable as [`check_dl_tensor`] requires, and its
/// data is valid as described until the owner releases it; nobody else writes the data
/// while a borrow from the NDArray or its views is alive (nor reads it while Rust
/// writes, unless `read_only`).
pub(super) unsafe fn import(
    tensor: &DLTensor,
    read_only: bool,
    take_owner: impl FnOnce() -> ForeignOwner,
) -> Result<NDArray, NDArrayError> {
    // SAFETY: the caller's contract.
    let c = unsafe { check_dl_tensor(tensor) }?;
    // Nothing below can fail (an allocation failure aborts): from here on the owner is
    // the NDArray's.
    let owner = take_owner();
    // SAFETY: checked just now; the data's validity is the caller's contract.
    Ok(unsafe {
        new_object(Parts {
            shape: c.shape,
            strides: c.strides,
            data: tensor.data,
            byte_offset: tensor.byte_offset,
            dtype: tensor.dtype,
            device: tensor.device,
            storage: Storage::Foreign(owner),
            read_only,
        })
    })
}

/// A handle's object address, with the handle's provenance (over the whole block).
#[inline]
pub(super) fn object_address(o: &ObjectPtr<NDArrayObj>) -> NonNull<NDArrayObj> {
    // SAFETY: a handle's pointer is never null.
    unsafe { NonNull::new_unchecked(ObjectPtr::as_ptr(o) as *mut NDArrayObj) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_of_the_object() {
        assert_eq!(NDArrayObj::DL_TENSOR_OFFSET, 16);
        assert_eq!(block_layout(0).size(), DIMS_OFFSET);
        assert_eq!(block_layout(3).size(), DIMS_OFFSET + 48);
    }
}
