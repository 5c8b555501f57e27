//! Field-less enums as reflected fields: what `#[derive(ObjectEnum)]` records about an
//! enum ([`EnumInfo`]: its key, its variants' names and values, its representation),
//! reachable from every field of that type through [`FieldInfo::enum_info`].
//!
//! An enum field is stored in place, as the Rust enum itself. Its value, wherever a
//! value is asked for ([`get_attr`](super::get_attr), `Any`, structural equality and
//! hashing), is the variant's integer value (its discriminant): tvm-ffi's `Any` has no
//! enum kind, and an integer round-trips through every front-end (Python's `IntEnum`
//! members are integers). The names are in the descriptor, for whoever shows or reads
//! the field by name: the printer (`op: Add`), the JSON graph (`"op":"Add"`), Python (the
//! members of an `enum.IntEnum`), C (`obj_type_field_enum`). [`create`](super::create)
//! takes a variant by name or by value.
//!
//! [`FieldInfo::enum_info`]: super::FieldInfo::enum_info

use core::fmt;
use std::borrow::Cow;

use crate::any::{AnyView, TypeError};

/// One variant of a field-less enum: its reflected name and its integer value (the
/// discriminant, as `Variant as i64` gives it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EnumVariant {
    name: &'static str,
    value: i64,
}

impl EnumVariant {
    /// A variant called `name` of value `value`. Used by the derive.
    pub const fn new(name: &'static str, value: i64) -> Self {
        EnumVariant { name, value }
    }

    /// The reflected name (the Rust name, or its `#[object_enum(rename = "…")]`).
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The integer value (the discriminant).
    pub const fn value(&self) -> i64 {
        self.value
    }
}

/// How a field-less enum lies in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EnumRepr {
    /// No primitive representation (`repr(Rust)`): the layout is the compiler's, so
    /// the field is read through Rust only (foreign readers read its value).
    Rust,
    /// `#[repr(u8)]`, `#[repr(i32)]`, …: the discriminant stored as an integer of
    /// `size` bytes, signed or not. Structural equality compares such fields in
    /// place, and C may read them at their offset.
    Int {
        /// The integer's size in bytes (1, 2, 4 or 8).
        size: u8,
        /// Whether the integer is signed.
        signed: bool,
    },
}

/// What `#[derive(ObjectEnum)]` records about a field-less enum: plain data in a
/// `static`, reachable from each field of the type ([`FieldInfo::enum_info`]).
///
/// ```
/// use object_core::ObjectEnum;
/// use object_core::reflection::EnumRepr;
///
/// #[derive(ObjectEnum)]
/// #[repr(u8)]
/// #[object_enum(key = "doc.enum.Level")]
/// enum Level { Low = 1, #[object_enum(rename = "mid")] Medium = 5, High = 9 }
///
/// let info = <Level as ObjectEnum>::ENUM_INFO;
/// assert_eq!(info.key(), "doc.enum.Level");
/// assert_eq!(info.name(), "Level");
/// let names: Vec<_> = info.variants().iter().map(|v| (v.name(), v.value())).collect();
/// assert_eq!(names, [("Low", 1), ("mid", 5), ("High", 9)]);
/// assert_eq!(info.name_of(5), Some("mid"));
/// assert_eq!(info.value_of("High"), Some(9));
/// assert_eq!(info.repr(), EnumRepr::Int { size: 1, signed: false });
/// ```
///
/// [`FieldInfo::enum_info`]: super::FieldInfo::enum_info
pub struct EnumInfo {
    key: &'static str,
    variants: &'static [EnumVariant],
    repr: EnumRepr,
}

impl EnumInfo {
    /// The descriptor of the enum `key`. Used by the derive (whose `unsafe impl` of
    /// [`ObjectEnum`](super::ObjectEnum) vouches that it describes the enum).
    pub const fn new(key: &'static str, variants: &'static [EnumVariant], repr: EnumRepr) -> Self {
        EnumInfo {
            key,
            variants,
            repr,
        }
    }

    /// The enum's key (`#[object_enum(key = "…")]`, else the Rust name): what a field's
    /// [`static_type_key`](super::FieldInfo::static_type_key) says, Python's class is
    /// found by, and C reads.
    pub const fn key(&self) -> &'static str {
        self.key
    }

    /// The last part of the key (`BinOpKind` for `frontend.BinOpKind`): the name of
    /// Python's class.
    pub fn name(&self) -> &'static str {
        self.key.rsplit('.').next().unwrap_or(self.key)
    }

    /// The variants, in declaration order.
    pub const fn variants(&self) -> &'static [EnumVariant] {
        self.variants
    }

    /// How the enum lies in memory.
    pub const fn repr(&self) -> EnumRepr {
        self.repr
    }

    /// The name of the variant of value `value`.
    pub fn name_of(&self, value: i64) -> Option<&'static str> {
        self.variants
            .iter()
            .find(|v| v.value == value)
            .map(|v| v.name)
    }

    /// The value of the variant called `name`.
    pub fn value_of(&self, name: &str) -> Option<i64> {
        self.variants
            .iter()
            .find(|v| v.name == name)
            .map(|v| v.value)
    }

    /// The position (in [`variants`](Self::variants)) of the variant `value` names: a
    /// string by name, an integer by value.
    ///
    /// # Errors
    ///
    /// A `TypeError` naming the enum and its variants, for another kind of value or a
    /// name or value no variant has.
    ///
    /// ```
    /// use object_core::{Any, ObjectEnum};
    ///
    /// #[derive(ObjectEnum)]
    /// #[object_enum(key = "doc.enum.Op")]
    /// enum Op { Add, Sub }
    ///
    /// let info = <Op as ObjectEnum>::ENUM_INFO;
    /// assert_eq!(info.position(Any::from("Sub").view()).unwrap(), 1);
    /// assert_eq!(info.position(Any::from(0).view()).unwrap(), 0);
    /// let e = info.position(Any::from("Mul").view()).unwrap_err();
    /// assert_eq!(
    ///     e.to_string(),
    ///     r#"expected doc.enum.Op (one of Add, Sub, by name or value; "Mul" is none of them), got ffi.String"#
    /// );
    /// assert!(info.position(Any::from(0.5).view()).is_err());
    /// ```
    pub fn position(&self, value: AnyView<'_>) -> Result<usize, TypeError> {
        if let Some(i) = value.as_int() {
            return self
                .variants
                .iter()
                .position(|v| v.value == i)
                .ok_or_else(|| self.type_error(Some(&i.to_string()), value));
        }
        if let Some(s) = value.as_str() {
            return self
                .variants
                .iter()
                .position(|v| v.name == s)
                .ok_or_else(|| self.type_error(Some(&quoted(s)), value));
        }
        Err(self.type_error(None, value))
    }

    /// The error for `value`, which names no variant (`given` says what it was, for a
    /// string or an integer).
    #[cold]
    fn type_error(&self, given: Option<&str>, value: AnyView<'_>) -> TypeError {
        let mut expected = format!("{} (one of ", self.key);
        for (i, v) in self.variants.iter().enumerate() {
            if i > 0 {
                expected.push_str(", ");
            }
            expected.push_str(v.name);
        }
        expected.push_str(", by name or value");
        if let Some(given) = given {
            expected.push_str("; ");
            expected.push_str(given);
            expected.push_str(" is none of them");
        }
        expected.push(')');
        TypeError::new(Cow::Owned(expected), value.type_key())
    }
}

/// `s` quoted for an error message, cut short if long.
fn quoted(s: &str) -> std::string::String {
    const MAX: usize = 48;
    match s.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{:?}…", &s[..cut]),
        None => format!("{s:?}"),
    }
}

impl PartialEq for EnumInfo {
    /// The same key and variants (two copies of one enum's descriptor, a plugin's and
    /// its host's, are equal).
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key && self.variants == other.variants
    }
}

impl Eq for EnumInfo {}

impl fmt::Debug for EnumInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnumInfo")
            .field("key", &self.key)
            .field("variants", &self.variants)
            .field("repr", &self.repr)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    //! Every in-place layout of an enum field, read as a value (`field_ref`) and
    //! compared and hashed by the in-place walk and by the general one (the object
    //! shared), here so that the unit tests (which Miri runs under both models) reach
    //! each unsafe read.

    use crate::prelude::*;
    use crate::reflection::{field_ref, ValueRef};
    use crate::structural::{structural_equal, structural_hash};

    macro_rules! narrow {
        ($name:ident, $repr:ty, $lo:expr, $hi:expr) => {
            #[derive(ObjectEnum, Clone, Copy, Debug, PartialEq)]
            #[repr($repr)]
            enum $name {
                Lo = $lo,
                Hi = $hi,
            }
        };
    }
    narrow!(EI8, i8, -100, 100);
    narrow!(EU8, u8, 1, 200);
    narrow!(EI16, i16, -30000, 30000);
    narrow!(EU16, u16, 1, 60000);
    narrow!(EI32, i32, -2_000_000_000, 2_000_000_000);
    narrow!(EU32, u32, 1, 4_000_000_000);
    narrow!(EU64, u64, 1, 0xffff_ffff_ffff_fff0);

    #[derive(Object)]
    #[repr(C)]
    #[object(key = "unit.enum.Every", final)]
    struct Every {
        base: Object,
        a: EI8,
        b: EU8,
        c: EI16,
        d: EU16,
        e: EI32,
        f: EU32,
        g: EU64,
    }

    #[derive(Object)]
    #[repr(C)]
    #[object(key = "unit.enum.Holder", final)]
    struct Holder {
        base: Object,
        every: ObjectPtr<Every>,
    }

    fn every(hi: bool) -> ObjectPtr<Every> {
        if hi {
            Every::new(
                EI8::Hi,
                EU8::Hi,
                EI16::Hi,
                EU16::Hi,
                EI32::Hi,
                EU32::Hi,
                EU64::Hi,
            )
        } else {
            Every::new(
                EI8::Lo,
                EU8::Lo,
                EI16::Lo,
                EU16::Lo,
                EI32::Lo,
                EU32::Lo,
                EU64::Lo,
            )
        }
    }

    #[test]
    fn narrow_fields_read_in_place_as_their_values() {
        let o = every(false).into_object_ref();
        let want = [-100, 1, -30000, 1, -2_000_000_000, 1, 1];
        let o_hi = every(true).into_object_ref();
        let want_hi = [
            100,
            200,
            30000,
            60000,
            2_000_000_000,
            4_000_000_000,
            EU64::Hi as i64,
        ];
        for (obj, want) in [(&o, want), (&o_hi, want_hi)] {
            let fields: Vec<_> = obj.type_info().reflection().reflected_fields().collect();
            for (f, w) in fields.iter().zip(want) {
                match field_ref(obj, f).unwrap() {
                    ValueRef::Value(v) => assert_eq!(v.as_int(), Some(w), "{}", f.name()),
                    other => panic!("{}: {other:?}", f.name()),
                }
            }
        }
    }

    #[test]
    fn narrow_fields_compare_and_hash_alike_in_place_and_not() {
        for hi in [false, true] {
            let (x, y) = (every(hi), every(hi));
            assert!(structural_equal(&x, &y));
            let in_place = structural_hash(&x);
            let shared = x.clone();
            assert_eq!(structural_hash(&x), in_place);
            drop(shared);
            assert!(structural_equal(&Holder::new(x), &Holder::new(y)));
        }
        assert!(!structural_equal(&every(false), &every(true)));
        assert!(!structural_equal(
            &Holder::new(every(false)),
            &Holder::new(every(true))
        ));
        assert_ne!(
            structural_hash(&every(false)),
            structural_hash(&every(true))
        );
    }
}
