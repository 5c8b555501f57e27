//! `BigInt` (`ffi.BigInt`, static index 78): an immutable integer of any size.
//!
//! The object holds the value as a [`dashu_int::IBig`] (a sign and a magnitude of
//! machine words; values of up to 128 bits inline, larger ones on the heap): zero is
//! never negative, so every value has one representation, and `==`, `Ord` and `Hash`
//! are the value's. The crate stays private: the API here is conversions (from and to
//! `i64`, `i128`, `u64`, decimal text), comparison and hashing.
//!
//! # Why `dashu-int`
//!
//! Decimal text is what crosses the boundary (the JSON graph, the printer), and text of
//! up to [`BigInt::MAX_DIGITS`] digits comes from outside, so both directions have to be
//! sub-quadratic; a hand-written conversion (multiply or divide by 10⁹ per chunk) is
//! quadratic: a million digits took 2.8 s to parse and about 15 s to print. Of the
//! candidates, measured on a million digits (release build, this machine):
//!
//! | crate | parse | to text | |
//! | --- | --- | --- | --- |
//! | `dashu-int` 0.6 | 0.22 s | 0.35 s | divide and conquer both ways (halves joined by a multiplication by a power of ten; split by division by one), over Karatsuba, Toom-3 and number-theoretic-transform multiplication and divide-and-conquer division |
//! | `num-bigint` 0.5 | 1.7 s | 0.43 s | divide-and-conquer printing, but parsing multiplies the whole number by 10¹⁹ per chunk of 19 digits: quadratic |
//! | `malachite-nz` | | | FFT multiplication, asymptotically the fastest, but LGPL-3.0-only and Rust 1.90 (this workspace: Apache-2.0, 1.85) |
//!
//! `dashu-int` is MIT OR Apache-2.0, maintained, pure Rust, with three small
//! dependencies (`dashu-base`, `num-modular`, `static_assertions`). On a loaded machine,
//! in one run, the old conversion took 8.6 s to parse and 42.7 s to print where
//! `dashu-int` took 0.49 s and 0.76 s. The `big_int` bench (in `benches/`) measures the
//! object's parse, text, JSON save and load and printing beside the crate's own.
//!
//! # Structural equality
//!
//! Structural equality and hashing see a `BigInt` by value (its hooks' contents are
//! the sign byte and the magnitude's little-endian bytes, without high zero bytes, the
//! same on every platform): two `BigInt` objects of one value are structurally equal,
//! so a graph holding one equals its JSON round trip; two values differ as bytes do.

use core::fmt;
use core::str::FromStr;
use std::borrow::Cow;

use dashu_int::{IBig, Sign, UBig};
use object_core::builtin::{BuiltinError, BuiltinHooks, BuiltinShape, Contents, Parts};
use object_core::{make_object, Object, ObjectPtr};

/// The object behind [`BigInt`].
#[derive(object_core::Object)]
#[repr(C)]
#[object(
    key = "ffi.BigInt",
    index = 78,
    final,
    opaque,
    builtin = BIG_INT_HOOKS
)]
pub struct BigIntObj {
    base: Object,
    value: IBig,
}

/// The value, in decimal (what an `ffi.BigInt` held in an `Any` prints as).
impl fmt::Debug for BigIntObj {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_decimal(&self.value, f)
    }
}

/// The value's decimal text, without the formatter's flags (as the printer expects:
/// `{:#?}` changes nothing).
fn write_decimal(value: &IBig, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    write!(f, "{value}")
}

/// Text that is not a decimal integer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseBigIntError {
    /// No digits (`""` or `"-"`).
    Empty,
    /// A character that is not a digit, at this byte position.
    InvalidDigit(usize),
    /// More than [`BigInt::MAX_DIGITS`] digits.
    TooLong(usize),
}

impl fmt::Display for ParseBigIntError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseBigIntError::Empty => f.write_str("an integer needs at least one digit"),
            ParseBigIntError::InvalidDigit(at) => {
                write!(f, "invalid digit at byte {at} of an integer")
            }
            ParseBigIntError::TooLong(n) => write!(
                f,
                "an integer of {n} digits is longer than the {} allowed",
                BigInt::MAX_DIGITS
            ),
        }
    }
}

impl std::error::Error for ParseBigIntError {}

/// An immutable integer of any size, `ffi.BigInt` (tvm-ffi's type for integers beyond
/// 64 bits; its JSON graph node is `{"type": "ffi.BigInt", "data": "<decimal>"}`).
///
/// Compared and hashed by value (`==` between two `BigInt`s), by structural equality
/// and hashing too. Inside an `Any`, like every object other than a string, it
/// compares by identity: as `Map` keys, two equal `BigInt` objects are two keys.
///
/// ```
/// use object_containers::BigInt;
///
/// let big: BigInt = "-170141183460469231731687303715884105728".parse().unwrap();
/// assert_eq!(big.to_i128(), Some(i128::MIN));
/// assert_eq!(big.to_i64(), None);
/// assert_eq!(BigInt::from(u64::MAX).to_string(), "18446744073709551615");
/// assert_eq!(BigInt::from(7i64), BigInt::from(7u64));
/// let seven: BigInt = "+007".parse().unwrap();
/// assert!(object_core::structural::structural_equal(&seven, &BigInt::from(7u64)));
/// let huge: BigInt = "123456789012345678901234567890123456789012345678901234567890".parse().unwrap();
/// assert_eq!(huge.to_string(), "123456789012345678901234567890123456789012345678901234567890");
/// ```
#[repr(transparent)]
#[derive(Clone)]
pub struct BigInt(ObjectPtr<BigIntObj>);

impl BigInt {
    /// The most decimal digits [`FromStr`] reads (about 3.3 million bits), so that text
    /// from outside (a JSON graph) cannot make a conversion run long or take much
    /// memory. Parsing and printing are sub-quadratic (see the module docs): a number
    /// this long takes a fraction of a second each way in a release build.
    pub const MAX_DIGITS: usize = 1_000_000;

    fn new(value: IBig) -> Self {
        BigInt(make_object(BigIntObj {
            base: Object::new(),
            value,
        }))
    }

    /// The integer of a sign and a magnitude written as little-endian bytes (what
    /// Python's `abs(x).to_bytes(n, "little")` writes).
    ///
    /// ```
    /// use object_containers::BigInt;
    /// let x = BigInt::from_le_bytes(true, &[0, 0, 0, 0, 0, 0, 0, 0, 1]);
    /// assert_eq!(x.to_string(), "-18446744073709551616");
    /// assert_eq!(x.to_le_bytes(), (true, vec![0, 0, 0, 0, 0, 0, 0, 0, 1]));
    /// ```
    pub fn from_le_bytes(negative: bool, magnitude: &[u8]) -> Self {
        let sign = if negative {
            Sign::Negative
        } else {
            Sign::Positive
        };
        BigInt::new(IBig::from_parts(sign, UBig::from_le_bytes(magnitude)))
    }

    /// The sign (true: below zero) and the magnitude as little-endian bytes, without
    /// trailing zero bytes (none for zero).
    pub fn to_le_bytes(&self) -> (bool, Vec<u8>) {
        let (sign, magnitude) = self.0.value.clone().into_parts();
        (sign == Sign::Negative, magnitude.to_le_bytes().into_vec())
    }

    /// Whether the value is below zero.
    pub fn is_negative(&self) -> bool {
        self.0.value.sign() == Sign::Negative
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.0.value.is_zero()
    }

    /// The value as an `i128`, if it fits.
    pub fn to_i128(&self) -> Option<i128> {
        i128::try_from(&self.0.value).ok()
    }

    /// The value as an `i64`, if it fits.
    pub fn to_i64(&self) -> Option<i64> {
        i64::try_from(&self.0.value).ok()
    }

    /// The value as a `u64`, if it fits.
    pub fn to_u64(&self) -> Option<u64> {
        u64::try_from(&self.0.value).ok()
    }
}

impl From<i128> for BigInt {
    fn from(v: i128) -> Self {
        BigInt::new(IBig::from(v))
    }
}
impl From<i64> for BigInt {
    fn from(v: i64) -> Self {
        BigInt::new(IBig::from(v))
    }
}
impl From<u64> for BigInt {
    fn from(v: u64) -> Self {
        BigInt::new(IBig::from(v))
    }
}
impl From<u128> for BigInt {
    fn from(v: u128) -> Self {
        BigInt::new(IBig::from(v))
    }
}

/// Decimal text: an optional `-` (or `+`), then digits (leading zeros allowed).
impl FromStr for BigInt {
    type Err = ParseBigIntError;
    fn from_str(s: &str) -> Result<Self, ParseBigIntError> {
        let (negative, digits, offset) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..], 1),
            Some(b'+') => (false, &s[1..], 1),
            _ => (false, s, 0),
        };
        if digits.is_empty() {
            return Err(ParseBigIntError::Empty);
        }
        if let Some(at) = digits.bytes().position(|b| !b.is_ascii_digit()) {
            return Err(ParseBigIntError::InvalidDigit(at + offset));
        }
        if digits.len() > BigInt::MAX_DIGITS {
            return Err(ParseBigIntError::TooLong(digits.len()));
        }
        // Only ASCII digits are left, which the crate reads whatever their number (its
        // error cannot happen; reported as the first digit, not a panic).
        let magnitude =
            UBig::from_str_radix(digits, 10).map_err(|_| ParseBigIntError::InvalidDigit(offset))?;
        let sign = if negative {
            Sign::Negative
        } else {
            Sign::Positive
        };
        // (A negative zero is made positive.)
        Ok(BigInt::new(IBig::from_parts(sign, magnitude)))
    }
}

impl fmt::Display for BigInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_decimal(&self.0.value, f)
    }
}

impl fmt::Debug for BigInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_decimal(&self.0.value, f)
    }
}

impl PartialEq for BigInt {
    fn eq(&self, other: &Self) -> bool {
        self.0.value == other.0.value
    }
}
impl Eq for BigInt {}

impl core::hash::Hash for BigInt {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.0.value.hash(state);
    }
}

impl PartialOrd for BigInt {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Numeric order.
impl Ord for BigInt {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.0.value.cmp(&other.0.value)
    }
}

crate::handle::object_handle!(BigInt, BigIntObj, "ffi.BigInt");
crate::function::impl_call_traits!(BigInt);

/// A `BigInt` is a built-in of shape integer: its decimal text (as tvm-ffi writes it),
/// built by parsing such text.
static BIG_INT_HOOKS: BuiltinHooks = BuiltinHooks {
    shape: BuiltinShape::Integer,
    mutable: false,
    contents: |obj| match obj.downcast_ref::<BigIntObj>() {
        Some(b) => Contents::Integer(Cow::Owned(b.value.to_string())),
        None => Contents::Identity,
    },
    build: |parts| match parts {
        Parts::Integer(text) => text
            .parse::<BigInt>()
            .map(object_core::Any::from)
            .map_err(|e| BuiltinError::data(e.to_string())),
        other => Err(BuiltinError::wrong_shape(BuiltinShape::Integer, &other)),
    },
};
