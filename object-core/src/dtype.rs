//! `DataType` and `Device`, with DLPack's encoding (`DLDataType`, `DLDevice`), so they
//! travel in an `Any` and into DLPack tensors unchanged.

use core::fmt;
use core::str::FromStr;

/// A scalar type in DLPack's encoding: type code, bits per lane, lanes.
///
/// Prints and parses as tvm-ffi's `DLDataTypeToString` / `StringToDLDataType` do:
/// `int32`, `uint8`, `float16`, `bfloat16`, `bool`, `float32x4` (4 lanes), the float8,
/// float6 and float4 types of DLPack 1.1 by name without a bit count
/// (`float8_e4m3fn`, `float4_e2m1fnx2`), scalable vectors with a vscale factor
/// (`float32xvscalex4`: lanes holds −4 as DLPack's signed 16 bits), `handle` (64
/// bits), and `void` written as the empty text `""` (`handle`, 0 bits, 0 lanes).
/// Parsing also takes the names without bits (`int` is `int32`, `float` `float32`,
/// `bfloat` `bfloat16`, `uint` `uint32`) and `void`.
///
/// Two extensions, each of which tvm-ffi's parser reads back as the same type:
/// `complex64` (tvm-ffi has no name for DLPack's complex code), and a handle other than
/// 64 bits and 1 lane written with its bits and lanes (`handle32`, `handle64x4`;
/// tvm-ffi writes every handle as `handle`, which loses them). A custom code (129 and
/// up) prints as `custom[code]bitsxlanes`, which does not parse: tvm-ffi names custom
/// types through a registry this crate does not have.
///
/// ```
/// use object_core::DataType;
/// let t: DataType = "float32x4".parse().unwrap();
/// assert_eq!((t.code, t.bits, t.lanes), (DataType::FLOAT, 32, 4));
/// assert_eq!(t.to_string(), "float32x4");
/// assert_eq!(DataType::int(64).to_string(), "int64");
/// let f8: DataType = "float8_e4m3fn".parse().unwrap();
/// assert_eq!((f8.code, f8.bits, f8.lanes), (DataType::FLOAT8_E4M3FN, 8, 1));
/// let sv: DataType = "float32xvscalex4".parse().unwrap();
/// assert_eq!(sv.vscale_factor(), Some(4));
/// assert_eq!(sv.to_string(), "float32xvscalex4");
/// assert_eq!(DataType::void().to_string(), "");
/// assert_eq!("".parse::<DataType>(), Ok(DataType::void()));
/// ```
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct DataType {
    /// Type code (`DataType::INT`, …), DLPack's `DLDataTypeCode`.
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Lanes (1 for scalars). DLPack reads it as signed for scalable vectors: a value
    /// of −n (as `u16`, `0x10000 - n`) is a vector of n × vscale lanes
    /// ([`vscale_factor`](Self::vscale_factor)).
    pub lanes: u16,
}

const _: () = {
    assert!(core::mem::size_of::<DataType>() == 4);
    assert!(core::mem::offset_of!(DataType, bits) == 1);
    assert!(core::mem::offset_of!(DataType, lanes) == 2);
};

/// The DLPack 1.1 codes named by their format rather than a bit count: code, name,
/// bits. (`kDLFloat8_e3m4` = 7 … `kDLFloat4_e2m1fn` = 17, as in `dlpack.h`.)
const NAMED_FLOATS: &[(u8, &str, u8)] = &[
    (DataType::FLOAT8_E3M4, "float8_e3m4", 8),
    (DataType::FLOAT8_E4M3, "float8_e4m3", 8),
    (DataType::FLOAT8_E4M3B11FNUZ, "float8_e4m3b11fnuz", 8),
    (DataType::FLOAT8_E4M3FN, "float8_e4m3fn", 8),
    (DataType::FLOAT8_E4M3FNUZ, "float8_e4m3fnuz", 8),
    (DataType::FLOAT8_E5M2, "float8_e5m2", 8),
    (DataType::FLOAT8_E5M2FNUZ, "float8_e5m2fnuz", 8),
    (DataType::FLOAT8_E8M0FNU, "float8_e8m0fnu", 8),
    (DataType::FLOAT6_E2M3FN, "float6_e2m3fn", 6),
    (DataType::FLOAT6_E3M2FN, "float6_e3m2fn", 6),
    (DataType::FLOAT4_E2M1FN, "float4_e2m1fn", 4),
];

/// The codes named with a bit count: name, code, bits when the text has none.
const BASE_NAMES: &[(&str, u8, u8)] = &[
    ("int", DataType::INT, 32),
    ("uint", DataType::UINT, 32),
    ("float", DataType::FLOAT, 32),
    ("bfloat", DataType::BFLOAT, 16),
    ("bool", DataType::BOOL, 8),
    ("handle", DataType::OPAQUE_HANDLE, 64),
    ("complex", DataType::COMPLEX, 64),
];

impl DataType {
    /// Signed integer.
    pub const INT: u8 = 0;
    /// Unsigned integer.
    pub const UINT: u8 = 1;
    /// IEEE float.
    pub const FLOAT: u8 = 2;
    /// Opaque handle.
    pub const OPAQUE_HANDLE: u8 = 3;
    /// bfloat.
    pub const BFLOAT: u8 = 4;
    /// Complex.
    pub const COMPLEX: u8 = 5;
    /// Boolean.
    pub const BOOL: u8 = 6;
    /// `kDLFloat8_e3m4`.
    pub const FLOAT8_E3M4: u8 = 7;
    /// `kDLFloat8_e4m3`.
    pub const FLOAT8_E4M3: u8 = 8;
    /// `kDLFloat8_e4m3b11fnuz`.
    pub const FLOAT8_E4M3B11FNUZ: u8 = 9;
    /// `kDLFloat8_e4m3fn`.
    pub const FLOAT8_E4M3FN: u8 = 10;
    /// `kDLFloat8_e4m3fnuz`.
    pub const FLOAT8_E4M3FNUZ: u8 = 11;
    /// `kDLFloat8_e5m2`.
    pub const FLOAT8_E5M2: u8 = 12;
    /// `kDLFloat8_e5m2fnuz`.
    pub const FLOAT8_E5M2FNUZ: u8 = 13;
    /// `kDLFloat8_e8m0fnu`.
    pub const FLOAT8_E8M0FNU: u8 = 14;
    /// `kDLFloat6_e2m3fn`.
    pub const FLOAT6_E2M3FN: u8 = 15;
    /// `kDLFloat6_e3m2fn`.
    pub const FLOAT6_E3M2FN: u8 = 16;
    /// `kDLFloat4_e2m1fn`.
    pub const FLOAT4_E2M1FN: u8 = 17;

    /// A type from its parts.
    pub const fn new(code: u8, bits: u8, lanes: u16) -> Self {
        DataType { code, bits, lanes }
    }
    /// `intN`.
    pub const fn int(bits: u8) -> Self {
        Self::new(Self::INT, bits, 1)
    }
    /// `uintN`.
    pub const fn uint(bits: u8) -> Self {
        Self::new(Self::UINT, bits, 1)
    }
    /// `floatN`.
    pub const fn float(bits: u8) -> Self {
        Self::new(Self::FLOAT, bits, 1)
    }
    /// `bool` (8 bits, as DLPack stores it).
    pub const fn bool() -> Self {
        Self::new(Self::BOOL, 8, 1)
    }
    /// `void`: a handle of 0 bits and 0 lanes, written `""`.
    pub const fn void() -> Self {
        Self::new(Self::OPAQUE_HANDLE, 0, 0)
    }
    /// A scalable vector of `factor` × vscale lanes (`float32xvscalex4`); `None` for
    /// a factor below 2 or beyond what DLPack's signed lanes hold (32768).
    pub const fn scalable(code: u8, bits: u8, factor: u16) -> Option<Self> {
        if factor < 2 || factor > 32768 {
            return None;
        }
        Some(Self::new(code, bits, factor.wrapping_neg()))
    }
    /// The vscale factor of a scalable vector (lanes below −1 as DLPack's signed
    /// lanes); `None` for a fixed number of lanes.
    pub const fn vscale_factor(&self) -> Option<u16> {
        let signed = self.lanes as i16;
        if signed < -1 {
            Some(signed.unsigned_abs())
        } else {
            None
        }
    }
    /// Whether this is `void`.
    pub const fn is_void(&self) -> bool {
        self.code == Self::OPAQUE_HANDLE && self.bits == 0 && self.lanes == 0
    }
    /// Bytes per element (all lanes), rounded up. Meaningless for a scalable vector,
    /// whose lane count is known only at run time.
    pub const fn bytes(&self) -> usize {
        (self.bits as usize * self.lanes as usize).div_ceil(8)
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.code == Self::BOOL && self.bits == 8 && self.lanes == 1 {
            return f.write_str("bool");
        }
        if self.is_void() {
            return Ok(());
        }
        let with_bits = match self.code {
            Self::INT => "int",
            Self::UINT => "uint",
            Self::FLOAT => "float",
            Self::BFLOAT => "bfloat",
            Self::COMPLEX => "complex",
            Self::BOOL => "bool",
            Self::OPAQUE_HANDLE if self.bits == 64 && self.lanes == 1 => {
                return f.write_str("handle")
            }
            Self::OPAQUE_HANDLE => "handle",
            code => match NAMED_FLOATS.iter().find(|(c, _, _)| *c == code) {
                Some((_, name, _)) => {
                    f.write_str(name)?;
                    return self.fmt_lanes(f);
                }
                None => return write!(f, "custom[{code}]{}x{}", self.bits, self.lanes),
            },
        };
        f.write_str(with_bits)?;
        // `bool` is 8 bits unless it says otherwise.
        if self.code != Self::BOOL || self.bits != 8 {
            write!(f, "{}", self.bits)?;
        }
        self.fmt_lanes(f)
    }
}

impl DataType {
    /// `x4` for 4 lanes, `xvscalex4` for 4 × vscale, nothing for one (or for 0 and −1,
    /// which have no text, as in tvm-ffi).
    fn fmt_lanes(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let signed = self.lanes as i16;
        if signed > 1 {
            write!(f, "x{signed}")
        } else if signed < -1 {
            write!(f, "xvscalex{}", signed.unsigned_abs())
        } else {
            Ok(())
        }
    }
}

/// A string that is not a data type: the text, and why ([`ParseDataTypeReason`]).
///
/// ```
/// use object_core::{DataType, ParseDataTypeError, ParseDataTypeReason};
/// let e = "int0x4".parse::<DataType>().unwrap_err();
/// assert_eq!((e.text.as_str(), e.reason), ("int0x4", ParseDataTypeReason::Bits));
/// assert!(matches!(
///     "float32x0".parse::<DataType>(),
///     Err(ParseDataTypeError { reason: ParseDataTypeReason::Lanes, .. })
/// ));
/// assert_eq!(
///     "f32".parse::<DataType>().unwrap_err().to_string(),
///     "`f32` is not a data type: unknown type name \
///      (expected e.g. int32, float16x4, bool, float8_e4m3fn)"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseDataTypeError {
    /// The text that was parsed.
    pub text: String,
    /// Why it is not a data type.
    pub reason: ParseDataTypeReason,
}

/// Why a text is not a data type (see [`ParseDataTypeError`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParseDataTypeReason {
    /// It starts with no type name (`int`, `uint`, `float`, `bfloat`, `bool`, `handle`,
    /// a named float such as `float8_e4m3fn`, …).
    UnknownName,
    /// A `float8_`, `float6_` or `float4_` name that is no known format.
    UnknownFloatFormat,
    /// The bits are 0 or more than 255.
    Bits,
    /// What follows the name and bits is no lane count: `x<lanes>` (1 to 32767) or
    /// `xvscalex<factor>` (2 to 32768), or nothing.
    Lanes,
}

impl ParseDataTypeError {
    fn new(text: &str, reason: ParseDataTypeReason) -> Self {
        ParseDataTypeError {
            text: text.to_owned(),
            reason,
        }
    }
}

impl fmt::Display for ParseDataTypeReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ParseDataTypeReason::UnknownName => "unknown type name",
            ParseDataTypeReason::UnknownFloatFormat => "unknown float format",
            ParseDataTypeReason::Bits => "the bits must be 1 to 255",
            ParseDataTypeReason::Lanes => {
                "bad lanes (expected x<1..32767>, xvscalex<2..32768> or nothing)"
            }
        })
    }
}

impl fmt::Display for ParseDataTypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a data type: {} (expected e.g. int32, float16x4, bool, float8_e4m3fn)",
            self.text, self.reason
        )
    }
}
impl std::error::Error for ParseDataTypeError {}

/// The lanes of a suffix: `""` (one), `x4`, `xvscalex4`; `None` for anything else,
/// including zero lanes and factors below 2.
fn parse_lanes(suffix: &str) -> Option<u16> {
    if suffix.is_empty() {
        return Some(1);
    }
    let digits = |t: &str| -> Option<u16> {
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        t.parse::<u16>().ok()
    };
    if let Some(factor) = suffix.strip_prefix("xvscalex") {
        return DataType::scalable(0, 0, digits(factor)?).map(|t| t.lanes);
    }
    let lanes = digits(suffix.strip_prefix('x')?)?;
    // Above 32767 a lane count reads as a negative (scalable) one in DLPack.
    (lanes >= 1 && lanes <= i16::MAX as u16).then_some(lanes)
}

impl FromStr for DataType {
    type Err = ParseDataTypeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |reason| ParseDataTypeError::new(s, reason);
        if s.is_empty() || s == "void" {
            return Ok(Self::void());
        }
        // The named floats first (`float8_e4m3fnuz` before `float8_e4m3fn`: the
        // longest name that leaves a valid suffix).
        let mut named: Option<DataType> = None;
        let mut named_prefix = false;
        for (code, name, bits) in NAMED_FLOATS {
            if let Some(rest) = s.strip_prefix(name) {
                // A name and then an attempt at lanes (not a longer, unknown name).
                named_prefix |= rest.starts_with('x');
                if let Some(lanes) = parse_lanes(rest) {
                    named = Some(Self::new(*code, *bits, lanes));
                }
            }
        }
        if let Some(t) = named {
            return Ok(t);
        }
        if named_prefix {
            return Err(err(ParseDataTypeReason::Lanes));
        }
        if s.starts_with("float8_") || s.starts_with("float6_") || s.starts_with("float4_") {
            return Err(err(ParseDataTypeReason::UnknownFloatFormat));
        }
        let (name, code, default_bits) = BASE_NAMES
            .iter()
            .find(|(name, _, _)| s.starts_with(name))
            .ok_or_else(|| err(ParseDataTypeReason::UnknownName))?;
        let rest = &s[name.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (bits, suffix) = rest.split_at(digits);
        let bits = if bits.is_empty() {
            *default_bits
        } else {
            match bits.parse::<u8>() {
                Ok(b) if b > 0 => b,
                _ => return Err(err(ParseDataTypeReason::Bits)),
            }
        };
        let lanes = parse_lanes(suffix).ok_or_else(|| err(ParseDataTypeReason::Lanes))?;
        Ok(Self::new(*code, bits, lanes))
    }
}

/// A device in DLPack's encoding: device type and id.
///
/// ```
/// use object_core::Device;
/// let d: Device = "cuda:1".parse().unwrap();
/// assert_eq!(d, Device::new(Device::CUDA, 1));
/// assert_eq!(Device::cpu().to_string(), "cpu:0");
/// ```
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Device {
    /// DLPack's `DLDeviceType`.
    pub device_type: i32,
    /// The device ordinal.
    pub device_id: i32,
}

const _: () = {
    assert!(core::mem::size_of::<Device>() == 8);
    assert!(core::mem::offset_of!(Device, device_id) == 4);
};

const DEVICE_NAMES: &[(i32, &str)] = &[
    (1, "cpu"),
    (2, "cuda"),
    (3, "cuda_host"),
    (4, "opencl"),
    (7, "vulkan"),
    (8, "metal"),
    (9, "vpi"),
    (10, "rocm"),
    (11, "rocm_host"),
    (12, "ext_dev"),
    (13, "cuda_managed"),
    (14, "oneapi"),
    (15, "webgpu"),
    (16, "hexagon"),
    (17, "maia"),
];

impl Device {
    /// `kDLCPU`.
    pub const CPU: i32 = 1;
    /// `kDLCUDA`.
    pub const CUDA: i32 = 2;
    /// `kDLCUDAHost`.
    pub const CUDA_HOST: i32 = 3;
    /// `kDLROCM`.
    pub const ROCM: i32 = 10;
    /// `kDLROCMHost`.
    pub const ROCM_HOST: i32 = 11;

    /// A device from its parts.
    pub const fn new(device_type: i32, device_id: i32) -> Self {
        Device {
            device_type,
            device_id,
        }
    }
    /// The CPU.
    pub const fn cpu() -> Self {
        Self::new(Self::CPU, 0)
    }
    /// Whether the host reads the device's memory directly: the CPU, CUDA pinned host
    /// memory and ROCm pinned host memory. Only such memory is read or written from Rust
    /// (an `NDArray`'s contents, a JSON graph's tensor bytes).
    ///
    /// ```
    /// use object_core::Device;
    /// assert!(Device::cpu().is_host_accessible());
    /// assert!(Device::new(Device::CUDA_HOST, 0).is_host_accessible());
    /// assert!(!Device::new(Device::CUDA, 0).is_host_accessible());
    /// ```
    #[inline]
    pub const fn is_host_accessible(&self) -> bool {
        matches!(
            self.device_type,
            Self::CPU | Self::CUDA_HOST | Self::ROCM_HOST
        )
    }

    /// The device type's name (`cpu`, `cuda`, …), if it is one DLPack defines.
    pub fn type_name(&self) -> Option<&'static str> {
        DEVICE_NAMES
            .iter()
            .find(|(t, _)| *t == self.device_type)
            .map(|(_, n)| *n)
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.type_name() {
            Some(n) => write!(f, "{n}:{}", self.device_id),
            None => write!(f, "device[{}]:{}", self.device_type, self.device_id),
        }
    }
}

/// A string that is not a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseDeviceError(pub String);

impl fmt::Display for ParseDeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a device (expected e.g. cpu, cuda:1)",
            self.0
        )
    }
}
impl std::error::Error for ParseDeviceError {}

impl FromStr for Device {
    type Err = ParseDeviceError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseDeviceError(s.to_owned());
        let (name, id) = match s.split_once(':') {
            Some((n, i)) => (n, i.parse::<i32>().map_err(|_| err())?),
            None => (s, 0),
        };
        let t = DEVICE_NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .ok_or_else(err)?
            .0;
        Ok(Device::new(t, id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_types_round_trip() {
        for s in [
            "int8",
            "int64",
            "uint1",
            "float16",
            "float32x4",
            "bfloat16",
            "bool",
            "handle",
            "handle32",
            "handle64x4",
            "complex64",
            "boolx4",
            "bool1",
            "float8_e3m4",
            "float8_e4m3",
            "float8_e4m3b11fnuz",
            "float8_e4m3fn",
            "float8_e4m3fnuz",
            "float8_e5m2",
            "float8_e5m2fnuz",
            "float8_e8m0fnu",
            "float6_e2m3fn",
            "float6_e3m2fn",
            "float4_e2m1fn",
            "float4_e2m1fnx2",
            "float8_e5m2x16",
            "float32xvscalex4",
            "int8xvscalex16",
            "float8_e4m3fnxvscalex2",
            "",
        ] {
            let t: DataType = s.parse().unwrap();
            assert_eq!(t.to_string(), s);
        }
        // Names without bits take tvm-ffi's defaults.
        for (short, long) in [
            ("int", "int32"),
            ("uint", "uint32"),
            ("float", "float32"),
            ("bfloat", "bfloat16"),
            ("floatx4", "float32x4"),
            ("void", ""),
            ("bool8x4", "boolx4"),
        ] {
            assert_eq!(short.parse::<DataType>().unwrap().to_string(), long);
        }
        use ParseDataTypeReason as R;
        for (bad, reason) in [
            ("float0", R::Bits),
            ("int32x0", R::Lanes),
            ("foo32", R::UnknownName),
            ("int999", R::Bits),
            ("x4", R::UnknownName),
            ("float8_e4m3fnx", R::Lanes),
            ("float8_e9m9", R::UnknownFloatFormat),
            ("float8_e4m3fz", R::UnknownFloatFormat),
            ("float32xvscalex1", R::Lanes),
            ("float32xvscalex", R::Lanes),
            ("float32x40000", R::Lanes),
            ("int32 ", R::Lanes),
            ("float8_e4m3fn32", R::UnknownFloatFormat),
        ] {
            let e = bad.parse::<DataType>().unwrap_err();
            assert_eq!((e.text.as_str(), e.reason), (bad, reason), "{bad}");
            assert!(e
                .to_string()
                .starts_with(&format!("`{bad}` is not a data type: {reason} (")));
        }
        assert_eq!(
            "float32xvscalex4".parse::<DataType>().unwrap().lanes,
            (-4i16) as u16
        );
        assert_eq!(DataType::float(32).bytes(), 4);
        assert_eq!(DataType::new(DataType::UINT, 1, 1).bytes(), 1);
    }

    #[test]
    fn devices_round_trip() {
        for s in ["cpu:0", "cuda:3", "rocm:1", "oneapi:0"] {
            assert_eq!(s.parse::<Device>().unwrap().to_string(), s);
        }
        assert_eq!("cpu".parse::<Device>().unwrap(), Device::cpu());
        assert!("tpu:0".parse::<Device>().is_err());
        assert!("cuda:x".parse::<Device>().is_err());
        assert_eq!(Device::new(99, 2).to_string(), "device[99]:2");
    }
}
