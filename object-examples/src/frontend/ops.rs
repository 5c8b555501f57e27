//! The binary operators both implementations share: their text symbols and their
//! constant-folding arithmetic (one definition, so the two versions cannot disagree).
//!
//! The object IR holds it as an enum field of its one `frontend.Binary` node
//! (`#[derive(ObjectEnum)]`: stored in place, compared and hashed by value, written to
//! the JSON graph by name, an `IntEnum` in Python); the enum IR holds it in
//! `ExprNode::Binary` with the derived `Hash`/`Eq` and serde's derives.

use object_core::ObjectEnum;
use serde::{Deserialize, Serialize};

/// A binary operator.
///
/// ```
/// use object_core::reflection::ObjectEnum as _;
/// use object_examples::frontend::BinOpKind;
/// assert_eq!(BinOpKind::from_symbol("min"), Some(BinOpKind::Min));
/// assert_eq!(BinOpKind::Min.symbol(), "min");
/// // Its reflected name (the JSON graph's, Python's `IntEnum` member's):
/// assert_eq!(BinOpKind::Min.variant_name(), "Min");
/// ```
#[derive(ObjectEnum, Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
#[object_enum(key = "frontend.BinOpKind")]
pub enum BinOpKind {
    /// `(+ a b)`, checked.
    Add,
    /// `(- a b)`, checked.
    Sub,
    /// `(* a b)`, checked.
    Mul,
    /// `(/ a b)`: truncating division; by zero (or `MIN / -1`) it is undefined.
    Div,
    /// `(% a b)`: the remainder of truncating division; by zero it is undefined.
    Mod,
    /// `(min a b)`.
    Min,
    /// `(max a b)`.
    Max,
    /// `(< a b)`: 1 or 0.
    Lt,
    /// `(== a b)`: 1 or 0.
    Eq,
    /// `(and a b)`: 1 if both are nonzero, else 0 (both sides are evaluated).
    And,
    /// `(or a b)`: 1 if either is nonzero, else 0 (both sides are evaluated).
    Or,
}

impl BinOpKind {
    /// Every operator, in declaration order.
    pub const ALL: [BinOpKind; 11] = [
        BinOpKind::Add,
        BinOpKind::Sub,
        BinOpKind::Mul,
        BinOpKind::Div,
        BinOpKind::Mod,
        BinOpKind::Min,
        BinOpKind::Max,
        BinOpKind::Lt,
        BinOpKind::Eq,
        BinOpKind::And,
        BinOpKind::Or,
    ];

    /// The head of the operator's form in the text syntax.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOpKind::Add => "+",
            BinOpKind::Sub => "-",
            BinOpKind::Mul => "*",
            BinOpKind::Div => "/",
            BinOpKind::Mod => "%",
            BinOpKind::Min => "min",
            BinOpKind::Max => "max",
            BinOpKind::Lt => "<",
            BinOpKind::Eq => "==",
            BinOpKind::And => "and",
            BinOpKind::Or => "or",
        }
    }

    /// The operator whose symbol is `s`.
    pub fn from_symbol(s: &str) -> Option<BinOpKind> {
        BinOpKind::ALL.into_iter().find(|op| op.symbol() == s)
    }

    /// The value of `a op b`, or `None` where it is undefined (overflow, division or
    /// remainder by zero): constant folding leaves such nodes alone.
    ///
    /// ```
    /// use object_examples::frontend::BinOpKind;
    /// assert_eq!(BinOpKind::Div.apply(7, 2), Some(3));
    /// assert_eq!(BinOpKind::Div.apply(7, 0), None);
    /// assert_eq!(BinOpKind::Add.apply(i64::MAX, 1), None);
    /// assert_eq!(BinOpKind::Lt.apply(1, 2), Some(1));
    /// ```
    pub fn apply(self, a: i64, b: i64) -> Option<i64> {
        match self {
            BinOpKind::Add => a.checked_add(b),
            BinOpKind::Sub => a.checked_sub(b),
            BinOpKind::Mul => a.checked_mul(b),
            BinOpKind::Div => a.checked_div(b),
            BinOpKind::Mod => a.checked_rem(b),
            BinOpKind::Min => Some(a.min(b)),
            BinOpKind::Max => Some(a.max(b)),
            BinOpKind::Lt => Some(i64::from(a < b)),
            BinOpKind::Eq => Some(i64::from(a == b)),
            BinOpKind::And => Some(i64::from(a != 0 && b != 0)),
            BinOpKind::Or => Some(i64::from(a != 0 || b != 0)),
        }
    }
}
