//! `DataType` and `Device`, with DLPack's encoding (`DLDataType`, `DLDevice`), so they
//! travel in an `Any` and into DLPack tensors unchanged.

use core::fmt;
use core::str::FromStr;

/// A scalar type in DLPack's encoding: type code, bits per lane, lanes.
///
/// Prints and parses as `int32`, `uint8`, `float16`, `bfloat16`, `bool`, `float32x4`
/// (4 lanes), `handle` (64 bits; other handles as `handle32`, `handle64x4`).
///
/// ```
/// use object_core::DataType;
/// let t: DataType = "float32x4".parse().unwrap();
/// assert_eq!((t.code, t.bits, t.lanes), (DataType::FLOAT, 32, 4));
/// assert_eq!(t.to_string(), "float32x4");
/// assert_eq!(DataType::int(64).to_string(), "int64");
/// ```
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct DataType {
    /// Type code (`DataType::INT`, …), DLPack's `DLDataTypeCode`.
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Lanes (1 for scalars).
    pub lanes: u16,
}

const _: () = {
    assert!(core::mem::size_of::<DataType>() == 4);
    assert!(core::mem::offset_of!(DataType, bits) == 1);
    assert!(core::mem::offset_of!(DataType, lanes) == 2);
};

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
    /// Bytes per element (all lanes), rounded up.
    pub const fn bytes(&self) -> usize {
        (self.bits as usize * self.lanes as usize).div_ceil(8)
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.code {
            Self::INT => "int",
            Self::UINT => "uint",
            Self::FLOAT => "float",
            Self::BFLOAT => "bfloat",
            Self::COMPLEX => "complex",
            Self::BOOL if self.bits == 8 && self.lanes == 1 => return f.write_str("bool"),
            Self::BOOL => "bool",
            Self::OPAQUE_HANDLE if self.bits == 64 && self.lanes == 1 => {
                return f.write_str("handle")
            }
            Self::OPAQUE_HANDLE => "handle",
            other => return write!(f, "custom[{other}]{}x{}", self.bits, self.lanes),
        };
        write!(f, "{name}{}", self.bits)?;
        if self.lanes != 1 {
            write!(f, "x{}", self.lanes)?;
        }
        Ok(())
    }
}

/// A string that is not a data type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseDataTypeError(pub String);

impl fmt::Display for ParseDataTypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a data type (expected e.g. int32, float16x4, bool)",
            self.0
        )
    }
}
impl std::error::Error for ParseDataTypeError {}

impl FromStr for DataType {
    type Err = ParseDataTypeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseDataTypeError(s.to_owned());
        if s == "bool" {
            return Ok(Self::bool());
        }
        if s == "handle" {
            return Ok(Self::new(Self::OPAQUE_HANDLE, 64, 1));
        }
        // Lanes follow an `x` after the bit count ("float32x4"); the `x` of "complex"
        // is not one.
        let (base, lanes) = match s.rsplit_once('x') {
            Some((b, l)) if b.ends_with(|c: char| c.is_ascii_digit()) => {
                (b, l.parse::<u16>().map_err(|_| err())?)
            }
            _ => (s, 1),
        };
        let split = base.find(|c: char| c.is_ascii_digit()).ok_or_else(err)?;
        let (name, bits) = base.split_at(split);
        let bits = bits.parse::<u8>().map_err(|_| err())?;
        let code = match name {
            "int" => Self::INT,
            "uint" => Self::UINT,
            "float" => Self::FLOAT,
            "bfloat" => Self::BFLOAT,
            "complex" => Self::COMPLEX,
            "bool" => Self::BOOL,
            "handle" => Self::OPAQUE_HANDLE,
            _ => return Err(err()),
        };
        if bits == 0 || lanes == 0 {
            return Err(err());
        }
        Ok(Self::new(code, bits, lanes))
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
        ] {
            let t: DataType = s.parse().unwrap();
            assert_eq!(t.to_string(), s);
        }
        for bad in ["", "int", "float0", "int32x0", "foo32", "int999", "x4"] {
            assert!(bad.parse::<DataType>().is_err(), "{bad}");
        }
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
