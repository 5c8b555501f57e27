//! `BigInt` (`ffi.BigInt`, static index 78): an immutable integer of any size.
//!
//! The digits are stored here, not by a big-number crate: the type only converts (from
//! and to `i64`, `i128`, `u64` and decimal text), compares and hashes, which needs no
//! arithmetic beyond multiplying and dividing by a small number, and so no dependency.
//! The magnitude is base 2³² limbs, least significant first, with no high zero limb;
//! zero is never negative, so every value has one representation and equality and
//! hashing are those of the fields.

use core::fmt;
use core::str::FromStr;

use object_core::{make_object, Object, ObjectPtr};

/// The object behind [`BigInt`].
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "ffi.BigInt", index = 78, final, opaque)]
pub struct BigIntObj {
    base: Object,
    negative: bool,
    /// Base 2³², least significant first, no high zero limb (zero is empty).
    magnitude: Vec<u32>,
}

/// The value, in decimal (what an `ffi.BigInt` held in an `Any` prints as).
impl fmt::Debug for BigIntObj {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&to_decimal(self.negative, &self.magnitude))
    }
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
/// Compared and hashed by value (`==` between two `BigInt`s). Inside an `Any`, like
/// every object other than a string, it compares by identity: as `Map` keys, two equal
/// `BigInt` objects are two keys.
///
/// ```
/// use object_containers::BigInt;
///
/// let big: BigInt = "-170141183460469231731687303715884105728".parse().unwrap();
/// assert_eq!(big.to_i128(), Some(i128::MIN));
/// assert_eq!(big.to_i64(), None);
/// assert_eq!(BigInt::from(u64::MAX).to_string(), "18446744073709551615");
/// assert_eq!(BigInt::from(7i64), BigInt::from(7u64));
/// let huge: BigInt = "123456789012345678901234567890123456789012345678901234567890".parse().unwrap();
/// assert_eq!(huge.to_string(), "123456789012345678901234567890123456789012345678901234567890");
/// ```
#[repr(transparent)]
#[derive(Clone)]
pub struct BigInt(ObjectPtr<BigIntObj>);

impl BigInt {
    /// The most decimal digits [`FromStr`] reads (about 3.3 million bits): parsing and
    /// printing take time quadratic in the length, so text from outside (a JSON graph)
    /// cannot make them run for long.
    pub const MAX_DIGITS: usize = 1_000_000;

    fn new(negative: bool, mut magnitude: Vec<u32>) -> Self {
        while magnitude.last() == Some(&0) {
            magnitude.pop();
        }
        let negative = negative && !magnitude.is_empty();
        BigInt(make_object(BigIntObj {
            base: Object::new(),
            negative,
            magnitude,
        }))
    }

    fn from_parts(negative: bool, magnitude: u128) -> Self {
        let limbs = (0..4).map(|i| (magnitude >> (32 * i)) as u32).collect();
        BigInt::new(negative, limbs)
    }

    /// Whether the value is below zero.
    pub fn is_negative(&self) -> bool {
        self.0.negative
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.0.magnitude.is_empty()
    }

    /// The magnitude, if it fits 128 bits.
    fn magnitude_u128(&self) -> Option<u128> {
        let m = &self.0.magnitude;
        if m.len() > 4 {
            return None;
        }
        Some(
            m.iter()
                .enumerate()
                .fold(0u128, |acc, (i, &l)| acc | (u128::from(l) << (32 * i))),
        )
    }

    /// The value as an `i128`, if it fits.
    pub fn to_i128(&self) -> Option<i128> {
        let m = self.magnitude_u128()?;
        if self.is_negative() {
            if m == 1u128 << 127 {
                Some(i128::MIN)
            } else {
                i128::try_from(m).ok().map(|v| -v)
            }
        } else {
            i128::try_from(m).ok()
        }
    }

    /// The value as an `i64`, if it fits.
    pub fn to_i64(&self) -> Option<i64> {
        self.to_i128().and_then(|v| i64::try_from(v).ok())
    }

    /// The value as a `u64`, if it fits.
    pub fn to_u64(&self) -> Option<u64> {
        self.to_i128().and_then(|v| u64::try_from(v).ok())
    }
}

impl From<i128> for BigInt {
    fn from(v: i128) -> Self {
        BigInt::from_parts(v < 0, v.unsigned_abs())
    }
}
impl From<i64> for BigInt {
    fn from(v: i64) -> Self {
        BigInt::from(i128::from(v))
    }
}
impl From<u64> for BigInt {
    fn from(v: u64) -> Self {
        BigInt::from_parts(false, u128::from(v))
    }
}
impl From<u128> for BigInt {
    fn from(v: u128) -> Self {
        BigInt::from_parts(false, v)
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
        // Nine digits at a time: magnitude = magnitude * 10^k + chunk.
        let mut mag: Vec<u32> = Vec::with_capacity(digits.len() / 9 + 1);
        for chunk in digits.as_bytes().chunks(9) {
            let (mut scale, mut add) = (1u64, 0u64);
            for &d in chunk {
                scale *= 10;
                add = add * 10 + u64::from(d - b'0');
            }
            let mut carry = add;
            for limb in &mut mag {
                let v = u64::from(*limb) * scale + carry;
                *limb = v as u32;
                carry = v >> 32;
            }
            if carry > 0 {
                mag.push(carry as u32);
            }
        }
        Ok(BigInt::new(negative, mag))
    }
}

/// Decimal text of a sign and magnitude.
fn to_decimal(negative: bool, magnitude: &[u32]) -> String {
    if magnitude.is_empty() {
        return "0".to_owned();
    }
    // Divide by 10^9 repeatedly; the remainders are the base-10^9 digits.
    const BASE: u64 = 1_000_000_000;
    let mut mag = magnitude.to_vec();
    let mut chunks: Vec<u32> = Vec::new();
    while !mag.is_empty() {
        let mut rem = 0u64;
        for limb in mag.iter_mut().rev() {
            let cur = (rem << 32) | u64::from(*limb);
            *limb = (cur / BASE) as u32;
            rem = cur % BASE;
        }
        chunks.push(rem as u32);
        while mag.last() == Some(&0) {
            mag.pop();
        }
    }
    let mut out = String::with_capacity(chunks.len() * 9 + 1);
    if negative {
        out.push('-');
    }
    let mut rev = chunks.iter().rev();
    if let Some(first) = rev.next() {
        out.push_str(&first.to_string());
    }
    for c in rev {
        out.push_str(&format!("{c:09}"));
    }
    out
}

impl fmt::Display for BigInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&to_decimal(self.0.negative, &self.0.magnitude))
    }
}

impl fmt::Debug for BigInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl PartialEq for BigInt {
    fn eq(&self, other: &Self) -> bool {
        self.0.negative == other.0.negative && self.0.magnitude == other.0.magnitude
    }
}
impl Eq for BigInt {}

impl core::hash::Hash for BigInt {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.0.negative.hash(state);
        self.0.magnitude.hash(state);
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
        use core::cmp::Ordering;
        let magnitude = |a: &[u32], b: &[u32]| {
            a.len()
                .cmp(&b.len())
                .then_with(|| a.iter().rev().cmp(b.iter().rev()))
        };
        match (self.is_negative(), other.is_negative()) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => magnitude(&self.0.magnitude, &other.0.magnitude),
            (true, true) => magnitude(&other.0.magnitude, &self.0.magnitude),
        }
    }
}

crate::handle::object_handle!(BigInt, BigIntObj, "ffi.BigInt");
crate::function::impl_call_traits!(BigInt);
