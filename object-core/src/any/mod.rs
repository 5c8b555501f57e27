//! `Any` (owning) and `AnyView<'a>` (borrowing): the 16-byte tagged value that crosses
//! the function ABI and fills containers. Same layout as tvm-ffi's `TVMFFIAny`:
//! `{ type_index: u32, small: u32, payload: 8-byte union }`.
//!
//! Kinds: `None`, `int` (i64), `bool`, `float` (f64), opaque pointers, `DataType`,
//! `Device`, short strings inline (`ffi.SmallStr`, up to 7 bytes), borrowed strings
//! and borrowed `DLTensor*` (views only), and objects (type index 64 and up; an owned
//! reference in `Any`, a borrowed one in `AnyView`).

use core::fmt;
use core::hash::{Hash, Hasher};
use core::mem::size_of;

use crate::dtype::{DataType, Device};
use crate::object_type::ObjectType;
use crate::ptr::ObjectPtr;
use crate::string::{String, StringObj};
use crate::type_index as ti;

// The representation: the union, the constructors and the accessors that read it.
#[allow(unsafe_code)]
mod repr;
// `AnyItem` is an unsafe trait: its impls hand out references into `Any` slots.
#[allow(unsafe_code)]
mod item;

// The typed-call conversions (`FromArg`, `IntoRet`, `FromRet`).
mod call;

pub use self::call::{FromArg, FromRet, IntoRet, PtrArg};
pub use self::item::AnyItem;
pub use self::repr::{Any, AnyView};

/// The longest string stored inline in an `Any` (the rest of the 8-byte payload is a
/// NUL, so C readers see a C string).
pub const SMALL_STR_MAX: usize = 7;

/// A failed conversion out of an `Any`: what was expected, what was there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeError {
    /// The expected type (a type key, or a Rust-side name such as `int32`).
    pub expected: std::borrow::Cow<'static, str>,
    /// The type key of the value that was there.
    pub actual: &'static str,
}

impl TypeError {
    /// An error for a value of type `actual` where `expected` was wanted.
    /// Inline short strings and bytes are reported as the string and bytes types they
    /// stand for.
    pub fn new(expected: impl Into<std::borrow::Cow<'static, str>>, actual: &'static str) -> Self {
        TypeError {
            expected: expected.into(),
            actual: ti::canonical_key(actual),
        }
    }
}

impl fmt::Display for TypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "expected {}, got {}", self.expected, self.actual)
    }
}

impl std::error::Error for TypeError {}

fn key_of(index: u32) -> &'static str {
    crate::registry::type_info(index).map_or("<unregistered>", |i| i.key())
}

/// The inline payload of a string of at most `SMALL_STR_MAX` bytes, zero-padded, built
/// in a register: two overlapping 4-byte reads (4 to 7 bytes) or three byte reads (1 to
/// 3), so there is no `memcpy` call and no narrow-stores-then-wide-load stall.
#[inline]
fn small_str_payload(s: &[u8]) -> [u8; 8] {
    let n = s.len();
    debug_assert!(n <= SMALL_STR_MAX);
    let v: u64 = if n >= 4 {
        let lo = u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as u64;
        let hi = u32::from_le_bytes([s[n - 4], s[n - 3], s[n - 2], s[n - 1]]) as u64;
        lo | (hi << ((n - 4) * 8))
    } else if n > 0 {
        (s[0] as u64) | ((s[n / 2] as u64) << ((n / 2) * 8)) | ((s[n - 1] as u64) << ((n - 1) * 8))
    } else {
        0
    };
    v.to_le_bytes()
}

impl Any {
    /// The value's type key (`"int"`, `"ffi.SmallStr"`, `"ffi.String"`, `"my.Node"`, …).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{Any, String};
    /// assert_eq!(Any::from(1).type_key(), "int");
    /// assert_eq!(Any::from("short").type_key(), "ffi.SmallStr");
    /// assert_eq!(Any::from(String::from("a longer string")).type_key(), "ffi.String");
    /// assert_eq!(Any::NONE.type_key(), "None");
    /// ```
    pub fn type_key(&self) -> &'static str {
        key_of(self.type_index())
    }

    /// Whether the value is `None`.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::Any;
    /// assert!(Any::from(()).is_none());
    /// assert!(Any::from(None::<i64>).is_none());
    /// assert!(!Any::from(0).is_none());
    /// ```
    #[inline]
    pub fn is_none(&self) -> bool {
        self.type_index() == ti::NONE
    }

    /// The integer, if the value is one.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::Any;
    /// assert_eq!(Any::from(7).as_int(), Some(7));
    /// assert_eq!(Any::from(7.0).as_int(), None); // floats do not narrow
    /// ```
    #[inline]
    pub fn as_int(&self) -> Option<i64> {
        self.view().as_int()
    }
    /// The boolean, if the value is one.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::Any;
    /// assert_eq!(Any::from(true).as_bool(), Some(true));
    /// assert_eq!(Any::from(1).as_bool(), None);
    /// ```
    #[inline]
    pub fn as_bool(&self) -> Option<bool> {
        self.view().as_bool()
    }
    /// The float, if the value is one (integers widen).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::Any;
    /// assert_eq!(Any::from(0.5).as_float(), Some(0.5));
    /// assert_eq!(Any::from(2).as_float(), Some(2.0));
    /// assert_eq!(Any::from("2").as_float(), None);
    /// ```
    #[inline]
    pub fn as_float(&self) -> Option<f64> {
        self.view().as_float()
    }
    /// The data type, if the value is one.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{Any, DataType};
    /// assert_eq!(Any::from(DataType::float(32)).as_data_type(), Some(DataType::float(32)));
    /// assert_eq!(Any::from(32).as_data_type(), None);
    /// ```
    pub fn as_data_type(&self) -> Option<DataType> {
        self.view().as_data_type()
    }
    /// The device, if the value is one.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{Any, Device};
    /// assert_eq!(Any::from(Device::cpu()).as_device(), Some(Device::cpu()));
    /// assert_eq!(Any::NONE.as_device(), None);
    /// ```
    pub fn as_device(&self) -> Option<Device> {
        self.view().as_device()
    }
    /// The opaque pointer, if the value is one.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::Any;
    /// let mut state = 0u64;
    /// let p = (&mut state as *mut u64).cast::<core::ffi::c_void>();
    /// assert_eq!(Any::opaque_ptr(p).as_opaque_ptr(), Some(p)); // never dereferenced
    /// assert_eq!(Any::from(0).as_opaque_ptr(), None);
    /// ```
    pub fn as_opaque_ptr(&self) -> Option<*mut core::ffi::c_void> {
        self.view().as_opaque_ptr()
    }
}

impl Default for Any {
    fn default() -> Self {
        Any::NONE
    }
}

impl PartialEq for Any {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.view() == other.view()
    }
}
impl Eq for Any {}

impl Hash for Any {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.view().hash(state)
    }
}

/// Equality as for [`Any`]: strings by text (borrowed, inline or object alike), other
/// objects by identity, plain values by value (floats by bits).
impl PartialEq for AnyView<'_> {
    fn eq(&self, other: &Self) -> bool {
        if let (Some(a), Some(b)) = (self.as_str(), other.as_str()) {
            return a == b;
        }
        if let (Some(a), Some(b)) = (self.bytes_content(), other.bytes_content()) {
            return a == b;
        }
        if self.type_index() != other.type_index() {
            return false;
        }
        // Objects by identity (their address), plain kinds by their 8 payload bytes
        // (zero-padded where narrower); `None` has a zero payload.
        self.payload_bits() == other.payload_bits()
    }
}
impl Eq for AnyView<'_> {}

impl Hash for AnyView<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        if let Some(s) = self.as_str() {
            // Every string representation hashes alike.
            state.write_u8(0xff);
            state.write(s.as_bytes());
            state.write_u8(0xff);
            return;
        }
        if let Some(b) = self.bytes_content() {
            state.write_u8(0xfe);
            state.write(b);
            state.write_u8(0xfe);
            return;
        }
        state.write_u32(self.type_index());
        if self.type_index() != ti::NONE {
            state.write_u64(self.payload_bits());
        }
    }
}

impl fmt::Debug for Any {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Any(")?;
        fmt::Debug::fmt(&self.view(), f)?;
        write!(f, ")")
    }
}

// ---------------------------------------------------------------------------------
// Views.
// ---------------------------------------------------------------------------------

impl AnyView<'_> {
    /// The value's type key.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{Any, AnyView};
    /// assert_eq!(AnyView::from("borrowed").type_key(), "const char*");
    /// assert_eq!(Any::from("owned").view().type_key(), "ffi.SmallStr");
    /// assert_eq!(AnyView::from(1.5).type_key(), "float");
    /// ```
    #[inline]
    pub fn type_key(&self) -> &'static str {
        key_of(self.type_index())
    }
    /// Whether the value is `None`.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::AnyView;
    /// assert!(AnyView::NONE.is_none());
    /// assert!(AnyView::from(None::<&str>).is_none());
    /// assert!(!AnyView::from("").is_none());
    /// ```
    #[inline]
    pub fn is_none(&self) -> bool {
        self.type_index() == ti::NONE
    }

    /// The content of an `ffi.Bytes` object.
    fn bytes_content(&self) -> Option<&[u8]> {
        self.as_object_of::<crate::string::BytesObj>()
            .map(|b| b.as_bytes())
    }
}

impl Default for AnyView<'_> {
    fn default() -> Self {
        AnyView::NONE
    }
}

impl fmt::Debug for AnyView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = self.as_str() {
            return write!(f, "{s:?}");
        }
        match self.type_index() {
            ti::NONE => f.write_str("None"),
            ti::INT => write!(f, "{}", self.as_int().unwrap_or_default()),
            ti::BOOL => write!(f, "{}", self.as_bool().unwrap_or_default()),
            ti::FLOAT => write!(f, "{:?}", self.as_float().unwrap_or_default()),
            ti::DATA_TYPE => write!(
                f,
                "{}",
                self.as_data_type()
                    .map(|d| d.to_string())
                    .unwrap_or_default()
            ),
            ti::DEVICE => write!(
                f,
                "{}",
                self.as_device().map(|d| d.to_string()).unwrap_or_default()
            ),
            ti::OPAQUE_PTR => write!(
                f,
                "{:p}",
                self.as_opaque_ptr().unwrap_or(core::ptr::null_mut())
            ),
            ti::DL_TENSOR_PTR => write!(
                f,
                "DLTensor*@{:p}",
                self.as_dl_tensor_ptr().unwrap_or(core::ptr::null_mut())
            ),
            _ => match self.as_object() {
                Some(o) => crate::reflection::debug_object(o, f),
                None => write!(f, "<{}>", self.type_key()),
            },
        }
    }
}

// ---------------------------------------------------------------------------------
// Conversions into Any / AnyView.
// ---------------------------------------------------------------------------------

macro_rules! int_into {
    ($($t:ty),*) => {$(
        impl From<$t> for Any {
            #[inline]
            fn from(v: $t) -> Any {
                Any::from_int(v as i64)
            }
        }
        impl From<$t> for AnyView<'_> {
            #[inline]
            fn from(v: $t) -> Self {
                AnyView::from_int(v as i64)
            }
        }
    )*};
}
int_into!(i8, i16, i32, i64, u8, u16, u32);

const _: () = assert!(size_of::<isize>() <= size_of::<i64>());
impl From<isize> for Any {
    #[inline]
    fn from(v: isize) -> Any {
        // Lossless: `isize` is at most 64 bits (asserted above).
        Any::from_int(v as i64)
    }
}

macro_rules! unsigned_try_into {
    ($($t:ty),*) => {$(
        impl TryFrom<$t> for Any {
            type Error = TypeError;
            /// Fails above `i64::MAX` (`Any` integers are 64-bit signed).
            fn try_from(v: $t) -> Result<Any, TypeError> {
                i64::try_from(v).map(Any::from).map_err(|_| TypeError::new("int (at most i64::MAX)", stringify!($t)))
            }
        }
    )*};
}
unsigned_try_into!(u64, usize);

impl From<bool> for Any {
    #[inline]
    fn from(v: bool) -> Any {
        Any::from_bool(v)
    }
}
impl From<bool> for AnyView<'_> {
    #[inline]
    fn from(v: bool) -> Self {
        AnyView::from_bool(v)
    }
}
impl From<f64> for Any {
    #[inline]
    fn from(v: f64) -> Any {
        Any::from_float(v)
    }
}
impl From<f32> for Any {
    #[inline]
    fn from(v: f32) -> Any {
        Any::from(f64::from(v))
    }
}
impl From<f64> for AnyView<'_> {
    #[inline]
    fn from(v: f64) -> Self {
        AnyView::from_float(v)
    }
}
impl From<DataType> for Any {
    fn from(v: DataType) -> Any {
        Any::from_data_type(v)
    }
}
impl From<DataType> for AnyView<'_> {
    fn from(v: DataType) -> Self {
        Any::from(v).into_raw()
    }
}
impl From<Device> for Any {
    fn from(v: Device) -> Any {
        Any::from_device(v)
    }
}
impl From<Device> for AnyView<'_> {
    fn from(v: Device) -> Self {
        AnyView::from_device(v)
    }
}
impl From<()> for Any {
    fn from((): ()) -> Any {
        Any::NONE
    }
}

impl From<&str> for Any {
    /// Strings of up to [`SMALL_STR_MAX`] bytes are stored inline; longer ones become an
    /// `ffi.String` object.
    #[inline]
    fn from(s: &str) -> Any {
        if s.len() <= SMALL_STR_MAX {
            Any::from_small_str(s)
        } else {
            Any::from(long_string(s))
        }
    }
}

/// A string object for text too long to be inline: out of line, so that
/// `Any::from(&str)` (and `String::new`) stays small enough to inline, and returns the
/// 8-byte handle in a register, so the caller builds the 16-byte value in registers
/// too (a value returned through memory, written field by field and then moved as a
/// whole, stalls store forwarding).
#[inline(never)]
fn long_string(s: &str) -> ObjectPtr<StringObj> {
    StringObj::make(s.as_bytes())
}
impl From<std::string::String> for Any {
    fn from(s: std::string::String) -> Any {
        Any::from(s.as_str())
    }
}
impl From<&std::string::String> for Any {
    fn from(s: &std::string::String) -> Any {
        Any::from(s.as_str())
    }
}
impl From<String> for Any {
    /// The handle's own 16 bytes (a `String` is an `Any` holding a string).
    #[inline]
    fn from(s: String) -> Any {
        s.into_any()
    }
}

impl<'a> From<&'a str> for AnyView<'a> {
    /// A borrowed string (`RawStr`, length in `small`).
    ///
    /// # Panics
    ///
    /// If the string is 4 GiB or longer (the length field is 32 bits).
    #[inline]
    fn from(s: &'a str) -> Self {
        AnyView::from_raw_str(s)
    }
}
impl<'a> From<&'a String> for AnyView<'a> {
    fn from(s: &'a String) -> Self {
        s.as_any().view()
    }
}
impl<'a> From<&'a std::string::String> for AnyView<'a> {
    fn from(s: &'a std::string::String) -> Self {
        AnyView::from(s.as_str())
    }
}
impl<'a, T: Into<AnyView<'a>>> From<Option<T>> for AnyView<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(AnyView::NONE, Into::into)
    }
}
impl<'a> From<&'a Any> for AnyView<'a> {
    #[inline]
    fn from(a: &'a Any) -> Self {
        a.view()
    }
}

impl<T: ObjectType> From<ObjectPtr<T>> for Any {
    #[inline]
    fn from(p: ObjectPtr<T>) -> Any {
        Any::from_object_ptr(p)
    }
}
impl<T: ObjectType> From<&ObjectPtr<T>> for Any {
    #[inline]
    fn from(p: &ObjectPtr<T>) -> Any {
        Any::from(p.clone())
    }
}
impl<'a, T: ObjectType> From<&'a ObjectPtr<T>> for AnyView<'a> {
    #[inline]
    fn from(p: &'a ObjectPtr<T>) -> Self {
        AnyView::from_object_ptr(p)
    }
}
impl<T: Into<Any>> From<Option<T>> for Any {
    #[inline]
    fn from(v: Option<T>) -> Any {
        v.map_or(Any::NONE, Into::into)
    }
}

// ---------------------------------------------------------------------------------
// Conversions out of Any.
// ---------------------------------------------------------------------------------

macro_rules! int_out {
    ($($t:ty => $name:literal),*) => {$(
        impl TryFrom<Any> for $t {
            type Error = TypeError;
            #[inline]
            fn try_from(a: Any) -> Result<$t, TypeError> {
                <$t>::try_from(a.view())
            }
        }
        impl TryFrom<AnyView<'_>> for $t {
            type Error = TypeError;
            #[inline]
            fn try_from(a: AnyView<'_>) -> Result<$t, TypeError> {
                match a.as_int() {
                    Some(v) => <$t>::try_from(v).map_err(|_| TypeError::new(concat!($name, " (in range)"), "int")),
                    None => Err(TypeError::new($name, a.type_key())),
                }
            }
        }
    )*};
}
int_out!(i64 => "int", i32 => "int32", u32 => "uint32", i16 => "int16", u16 => "uint16", i8 => "int8", u8 => "uint8", u64 => "uint64", usize => "usize");

macro_rules! pod_out {
    ($t:ty, $name:literal, $get:ident) => {
        impl TryFrom<Any> for $t {
            type Error = TypeError;
            #[inline]
            fn try_from(a: Any) -> Result<$t, TypeError> {
                <$t>::try_from(a.view())
            }
        }
        impl TryFrom<AnyView<'_>> for $t {
            type Error = TypeError;
            #[inline]
            fn try_from(a: AnyView<'_>) -> Result<$t, TypeError> {
                a.$get().ok_or_else(|| TypeError::new($name, a.type_key()))
            }
        }
    };
}
pod_out!(bool, "bool", as_bool);
pod_out!(f64, "float", as_float);
pod_out!(DataType, "DataType", as_data_type);
pod_out!(Device, "Device", as_device);

impl TryFrom<Any> for () {
    type Error = TypeError;
    fn try_from(a: Any) -> Result<(), TypeError> {
        if a.is_none() {
            Ok(())
        } else {
            Err(TypeError::new("None", a.type_key()))
        }
    }
}

impl TryFrom<Any> for std::string::String {
    type Error = TypeError;
    fn try_from(a: Any) -> Result<Self, TypeError> {
        a.as_str()
            .map(str::to_owned)
            .ok_or_else(|| TypeError::new("ffi.String", a.type_key()))
    }
}
impl TryFrom<AnyView<'_>> for std::string::String {
    type Error = TypeError;
    fn try_from(a: AnyView<'_>) -> Result<Self, TypeError> {
        a.as_str()
            .map(str::to_owned)
            .ok_or_else(|| TypeError::new("ffi.String", a.type_key()))
    }
}

impl TryFrom<Any> for String {
    type Error = TypeError;
    /// Inline strings and string objects are taken as they are (no copy).
    #[inline]
    fn try_from(a: Any) -> Result<Self, TypeError> {
        String::from_string_any(a).map_err(|a| TypeError::new("ffi.String", a.type_key()))
    }
}
impl TryFrom<AnyView<'_>> for String {
    type Error = TypeError;
    /// String objects are shared; inline and borrowed text is copied.
    fn try_from(a: AnyView<'_>) -> Result<Self, TypeError> {
        if let Some(s) = a.as_object_of::<StringObj>() {
            return Ok(String::from_object_ptr(s.clone()));
        }
        a.as_str()
            .map(String::new)
            .ok_or_else(|| TypeError::new("ffi.String", a.type_key()))
    }
}

impl<T: ObjectType> TryFrom<Any> for ObjectPtr<T> {
    type Error = TypeError;
    #[inline]
    fn try_from(a: Any) -> Result<Self, TypeError> {
        a.into_object_ptr()
            .map_err(|a| TypeError::new(T::TYPE_KEY, a.type_key()))
    }
}
impl<T: ObjectType> TryFrom<AnyView<'_>> for ObjectPtr<T> {
    type Error = TypeError;
    #[inline]
    fn try_from(a: AnyView<'_>) -> Result<Self, TypeError> {
        a.as_object_of::<T>()
            .cloned()
            .ok_or_else(|| TypeError::new(T::TYPE_KEY, a.type_key()))
    }
}

macro_rules! option_out {
    ($($t:ty),*) => {$(
        impl TryFrom<Any> for Option<$t> {
            type Error = TypeError;
            fn try_from(a: Any) -> Result<Self, TypeError> {
                if a.is_none() { Ok(None) } else { <$t>::try_from(a).map(Some) }
            }
        }
    )*};
}
option_out!(
    i64,
    i32,
    u32,
    bool,
    f64,
    std::string::String,
    String,
    DataType,
    Device
);

impl<T: ObjectType> TryFrom<Any> for Option<ObjectPtr<T>> {
    type Error = TypeError;
    fn try_from(a: Any) -> Result<Self, TypeError> {
        if a.is_none() {
            Ok(None)
        } else {
            ObjectPtr::<T>::try_from(a).map(Some)
        }
    }
}

#[cfg(test)]
#[allow(unsafe_code)] // exercises the raw and borrowed-pointer kinds' unsafe constructors
mod tests {
    use core::ffi::c_void;

    use super::*;
    use crate::header::Object;
    use crate::ptr::ObjectRef;

    #[test]
    fn kinds_round_trip() {
        assert_eq!(i64::try_from(Any::from(-5i64)), Ok(-5));
        assert_eq!(i32::try_from(Any::from(7i32)), Ok(7));
        assert!(i32::try_from(Any::from(1i64 << 40)).is_err());
        assert_eq!(u32::try_from(Any::from(9u32)), Ok(9));
        assert!(u32::try_from(Any::from(-1)).is_err());
        assert_eq!(bool::try_from(Any::from(true)), Ok(true));
        assert_eq!(f64::try_from(Any::from(1.5)), Ok(1.5));
        assert_eq!(f64::try_from(Any::from(2)), Ok(2.0), "ints widen");
        let dt = DataType::float(16);
        assert_eq!(DataType::try_from(Any::from(dt)), Ok(dt));
        assert_eq!(
            Device::try_from(Any::from(Device::cpu())),
            Ok(Device::cpu())
        );
        assert_eq!(<()>::try_from(Any::NONE), Ok(()));
        assert_eq!(Option::<i64>::try_from(Any::from(None::<i64>)), Ok(None));
        assert_eq!(Option::<i64>::try_from(Any::from(Some(3))), Ok(Some(3)));
        let p = core::ptr::null_mut::<c_void>().wrapping_add(0x1000);
        assert_eq!(Any::opaque_ptr(p).as_opaque_ptr(), Some(p));
    }

    #[test]
    fn dl_tensor_ptr_is_borrowed_only() {
        // Never dereferenced here: the test only checks how the kind travels.
        let p = core::ptr::null_mut::<c_void>().wrapping_add(0x40);
        // SAFETY: nothing reads through the view (the contract is about readers).
        let v = unsafe { AnyView::from_dl_tensor_ptr(p) };
        assert_eq!(v.type_index(), ti::DL_TENSOR_PTR);
        assert_eq!(v.type_key(), "DLTensor*");
        assert_eq!(v.as_dl_tensor_ptr(), Some(p));
        assert_eq!(v.as_opaque_ptr(), None);
        assert!(!v.is_object());
        assert!(format!("{v:?}").starts_with("DLTensor*@0x"));
        // No owned form: the address survives as an opaque pointer.
        let owned = v.to_any();
        assert_eq!(owned.type_index(), ti::OPAQUE_PTR);
        assert_eq!(owned.as_opaque_ptr(), Some(p));
        assert_eq!(owned.view().as_dl_tensor_ptr(), None);
        assert_eq!(AnyView::from(1).as_dl_tensor_ptr(), None);
    }

    #[test]
    fn strings_inline_or_object() {
        let short = Any::from("1234567");
        assert_eq!(short.type_index(), ti::SMALL_STR);
        let long = Any::from("12345678");
        assert_eq!(long.type_index(), ti::STRING);
        assert_eq!(short.as_str(), Some("1234567"));
        assert_eq!(long.as_str(), Some("12345678"));
        assert_eq!(
            std::string::String::try_from(long.clone()).unwrap(),
            "12345678"
        );
        let s = String::try_from(short.clone()).unwrap();
        assert_eq!(s, "1234567");
        // Inline and object strings are equal and hash alike.
        assert_eq!(Any::from("abc"), Any::from(String::from("abc")));
        use std::hash::BuildHasher;
        let st =
            std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default();
        assert_eq!(
            st.hash_one(Any::from("abc")),
            st.hash_one(Any::from(String::from("abc")))
        );
        assert_eq!(Any::from("").as_str(), Some(""));
        assert_eq!(Any::from("é").as_str(), Some("é"));
    }

    #[test]
    fn errors_name_both_types() {
        let e = i64::try_from(Any::from("text")).unwrap_err();
        assert_eq!(e.to_string(), "expected int, got ffi.String");
        let e = ObjectRef::try_from(Any::from(1)).unwrap_err();
        assert_eq!(e.to_string(), "expected ffi.Object, got int");
        let e = ObjectPtr::<StringObj>::try_from(Any::from(crate::make_object(Object::new())))
            .unwrap_err();
        assert_eq!(e.to_string(), "expected ffi.String, got ffi.Object");
    }

    #[test]
    fn objects_are_counted() {
        let o = crate::make_object(Object::new());
        let a = Any::from(o.clone());
        assert_eq!(ObjectPtr::strong_count(&o), 2);
        let b = a.clone();
        assert_eq!(ObjectPtr::strong_count(&o), 3);
        assert!(a.as_object().is_some_and(|r| ObjectPtr::ptr_eq(r, &o)));
        assert_eq!(a, b, "objects compare by identity");
        assert_ne!(a, Any::from(crate::make_object(Object::new())));
        let v = a.view();
        assert_eq!(ObjectPtr::strong_count(&o), 3, "views borrow");
        let back = v.to_any();
        assert_eq!(ObjectPtr::strong_count(&o), 4);
        drop((a, b, back));
        assert_eq!(ObjectPtr::strong_count(&o), 1);
        let raw = Any::from(o.clone()).into_raw();
        // SAFETY: `raw` came from `into_raw` and owns its reference.
        drop(unsafe { Any::from_raw(raw) });
        assert_eq!(ObjectPtr::strong_count(&o), 1);
        assert_eq!(format!("{:?}", Any::from(o)), "Any(ffi.Object)");
        assert_eq!(format!("{:?}", Any::from(1.5)), "Any(1.5)");
    }

    #[test]
    fn small_str_payload_matches_a_plain_copy() {
        let src = "abcdefg\u{e9}";
        for start in 0..3 {
            for n in 0..=SMALL_STR_MAX {
                let Some(s) = src.as_bytes().get(start..start + n) else {
                    continue;
                };
                let mut b = [0u8; 8];
                b[..n].copy_from_slice(s);
                assert_eq!(small_str_payload(s), b, "n={n}");
            }
        }
    }
}
