//! Field-less enums as reflected fields (`#[derive(ObjectEnum)]`): the field table and
//! the descriptor, values, `create` by name and by value, structural equality and
//! hashing by value (in place and through the general walk), the printer, the mutator,
//! and the JSON graph (both load paths).

use object_core::prelude::*;
use object_core::reflection::{
    create, field_ref, get_attr, EnumRepr, FieldFlags, FieldKind, ReflectErrorKind, ValueRef,
};
use object_core::structural::{first_mismatch, structural_equal, structural_hash};
use object_core::transform::{mutate, Rewriter, TransformError};
use object_core::type_index as ti;
use object_core::{registry, Any};
use object_json::{from_json_graph, to_json_graph, to_json_graph_pretty, GraphErrorKind};
use object_tests::LeakCheck;

/// An operator: `#[repr(u8)]` (compared in place), a renamed variant, an explicit value.
#[derive(ObjectEnum, Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
#[object_enum(key = "test.enum.BinOpKind")]
pub enum BinOpKind {
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`, reflected as `mul`.
    #[object_enum(rename = "mul")]
    Mul,
    /// `/`, of value 10.
    Div = 10,
}

/// No `repr`, negative values, default key (the Rust name).
#[derive(ObjectEnum, Clone, Copy, Debug, PartialEq)]
enum Sign {
    Minus = -1,
    Zero = 0,
    Plus = 1,
}

/// `#[repr(i16)]`, neither `Copy` nor `Clone`.
#[derive(ObjectEnum, Debug, PartialEq)]
#[repr(i16)]
#[object_enum(key = "test.enum.Level")]
enum Level {
    Low = -300,
    High = 300,
}

/// `#[repr(u64)]` with a value beyond `i64::MAX` (seen as `Variant as i64`).
#[derive(ObjectEnum, Clone, Copy, Debug, PartialEq)]
#[repr(u64)]
#[object_enum(key = "test.enum.Big")]
enum Big {
    Small = 1,
    Huge = 0xffff_ffff_ffff_fff0,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.enum.Expr", abstract)]
/// An expression.
pub struct Expr {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.enum.Lit", parent = Expr, final)]
/// A literal.
pub struct Lit {
    base: Expr,
    value: i64,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.enum.Binary", parent = Expr, final)]
/// A binary operation: one type for every operator.
pub struct Binary {
    base: Expr,
    op: BinOpKind,
    lhs: ObjectPtr<Expr>,
    rhs: ObjectPtr<Expr>,
}

/// Every other shape of enum field.
#[derive(Object)]
#[repr(C)]
#[object(key = "test.enum.Mixed")]
struct Mixed {
    base: Object,
    sign: Sign,
    level: Level,
    big: Big,
    maybe: Option<BinOpKind>,
    #[object(default = BinOpKind::Sub)]
    defaulted: BinOpKind,
}

/// A tree type of integers only (compared on the spot inside a pair).
#[derive(Object)]
#[repr(C)]
#[object(key = "test.enum.Leveled", final)]
struct Leveled {
    base: Object,
    level: Level,
    n: i64,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.enum.Holder", final)]
struct Holder {
    base: Object,
    inner: ObjectPtr<Leveled>,
}

fn lit(v: i64) -> ObjectPtr<Lit> {
    Lit::new(v)
}

fn bin(op: BinOpKind, l: i64, r: i64) -> ObjectPtr<Binary> {
    Binary::new(op, lit(l), lit(r))
}

fn mixed(sign: Sign, level: Level, big: Big, maybe: Option<BinOpKind>) -> ObjectPtr<Mixed> {
    Mixed::new_all(sign, level, big, maybe, BinOpKind::Div)
}

#[test]
fn the_field_table_describes_the_enum() {
    let refl = registry::type_info_by_key("test.enum.Binary")
        .unwrap()
        .reflection();
    let op = refl.field("op").unwrap();
    assert_eq!(op.kind(), FieldKind::Enum);
    assert_eq!(op.static_type_key(), "test.enum.BinOpKind");
    assert_eq!(op.static_type_index(), Some(ti::INT));
    assert!(op.is_inline_pod());
    assert!(!op.flags().contains(FieldFlags::OPTIONAL));
    let info = op.enum_info().unwrap();
    assert_eq!(info.key(), "test.enum.BinOpKind");
    assert_eq!(info.name(), "BinOpKind");
    let variants: Vec<_> = info
        .variants()
        .iter()
        .map(|v| (v.name(), v.value()))
        .collect();
    assert_eq!(variants, [("Add", 0), ("Sub", 1), ("mul", 2), ("Div", 10)]);
    assert_eq!(
        info.repr(),
        EnumRepr::Int {
            size: 1,
            signed: false
        }
    );
    // Only enum fields have a descriptor.
    assert!(refl.field("lhs").unwrap().enum_info().is_none());

    let refl = registry::type_info_by_key("test.enum.Mixed")
        .unwrap()
        .reflection();
    let sign = refl.field("sign").unwrap();
    assert_eq!(sign.static_type_key(), "Sign"); // the default key: the Rust name
    assert_eq!(sign.enum_info().unwrap().repr(), EnumRepr::Rust);
    assert_eq!(
        refl.field("level").unwrap().enum_info().unwrap().repr(),
        EnumRepr::Int {
            size: 2,
            signed: true
        }
    );
    let maybe = refl.field("maybe").unwrap();
    assert_eq!(maybe.kind(), FieldKind::Enum);
    assert!(maybe.flags().contains(FieldFlags::OPTIONAL));
    assert!(!maybe.is_inline_pod());
    assert_eq!(maybe.enum_info().unwrap().key(), "test.enum.BinOpKind");
    let defaulted = refl.field("defaulted").unwrap();
    assert!(defaulted.has_default());
    assert_eq!(
        defaulted.default_value().unwrap().unwrap().as_int(),
        Some(1)
    );
    // The trait's own view of one variant.
    assert_eq!(BinOpKind::Mul.variant_name(), "mul");
    assert_eq!(BinOpKind::Div.value(), 10);
    assert_eq!(BinOpKind::from_value(10), Some(BinOpKind::Div));
    assert_eq!(BinOpKind::from_name("mul"), Some(BinOpKind::Mul));
    assert_eq!(BinOpKind::from_name("Mul"), None);
    assert_eq!(Level::from_value(-300), Some(Level::Low));
}

#[test]
fn values_are_the_variants_integers() {
    let _leaks = LeakCheck::new();
    let b = bin(BinOpKind::Div, 1, 2).into_object_ref();
    assert_eq!(get_attr(&b, "op").unwrap().as_int(), Some(10));
    assert_eq!(b.downcast_ref::<Binary>().unwrap().op, BinOpKind::Div);

    let m = mixed(Sign::Minus, Level::Low, Big::Huge, None).into_object_ref();
    assert_eq!(get_attr(&m, "sign").unwrap().as_int(), Some(-1));
    assert_eq!(get_attr(&m, "level").unwrap().as_int(), Some(-300));
    assert_eq!(
        get_attr(&m, "big").unwrap().as_int(),
        Some(Big::Huge as i64)
    );
    assert!(get_attr(&m, "maybe").unwrap().is_none());
    assert_eq!(get_attr(&m, "defaulted").unwrap().as_int(), Some(10));
    let m2 = mixed(Sign::Plus, Level::High, Big::Small, Some(BinOpKind::Mul)).into_object_ref();
    assert_eq!(get_attr(&m2, "maybe").unwrap().as_int(), Some(2));

    // Read in place (the narrow integers widened with their sign), as `get_attr` reads.
    for (obj, name, want) in [
        (&m, "level", -300),
        (&m2, "level", 300),
        (&m, "big", Big::Huge as i64),
        (&m, "sign", -1),
        (&b, "op", 10),
    ] {
        let field = obj.type_info().reflection().field(name).unwrap();
        match field_ref(obj, field).unwrap() {
            ValueRef::Value(v) => assert_eq!(v.as_int(), Some(want), "{name}"),
            other => panic!("{name}: {other:?}"),
        }
    }
}

#[test]
fn create_takes_a_name_or_a_value() {
    let _leaks = LeakCheck::new();
    let args = |op: Any| {
        [
            ("op", op),
            ("lhs", Any::from(lit(1))),
            ("rhs", Any::from(lit(2))),
        ]
    };
    let by_name = create("test.enum.Binary", args(Any::from("mul"))).unwrap();
    assert_eq!(by_name.downcast_ref::<Binary>().unwrap().op, BinOpKind::Mul);
    let by_value = create("test.enum.Binary", args(Any::from(10))).unwrap();
    assert_eq!(
        by_value.downcast_ref::<Binary>().unwrap().op,
        BinOpKind::Div
    );
    // A name longer than an inline string.
    let m = create(
        "test.enum.Mixed",
        [
            ("sign", Any::from("Minus")),
            ("level", Any::from(-300)),
            ("big", Any::from(Big::Huge as i64)),
            ("maybe", Any::from("Add")),
        ],
    )
    .unwrap();
    let m = m.downcast_ref::<Mixed>().unwrap();
    assert_eq!(
        (m.sign, &m.level, m.big, m.maybe, m.defaulted),
        (
            Sign::Minus,
            &Level::Low,
            Big::Huge,
            Some(BinOpKind::Add),
            BinOpKind::Sub
        )
    );

    let e = create("test.enum.Binary", args(Any::from("Mul"))).unwrap_err();
    assert_eq!(e.kind(), ReflectErrorKind::WrongType);
    assert_eq!(e.field(), Some("op"));
    assert_eq!(
        e.to_string(),
        "field `op` of `test.enum.Binary`: expected test.enum.BinOpKind (one of Add, Sub, mul, Div, by name or value; \"Mul\" is none of them), got ffi.String"
    );
    let e = create("test.enum.Binary", args(Any::from(3))).unwrap_err();
    assert_eq!(e.kind(), ReflectErrorKind::WrongType);
    assert!(
        e.to_string().contains("; 3 is none of them), got int"),
        "{e}"
    );
    let e = create("test.enum.Binary", args(Any::from(1.0))).unwrap_err();
    assert_eq!(
        e.to_string(),
        "field `op` of `test.enum.Binary`: expected test.enum.BinOpKind (one of Add, Sub, mul, Div, by name or value), got float"
    );
    let e = create(
        "test.enum.Binary",
        [("lhs", Any::from(lit(1))), ("rhs", Any::from(lit(2)))],
    )
    .unwrap_err();
    assert_eq!(e.kind(), ReflectErrorKind::MissingField);
    assert!(e.to_string().contains("(test.enum.BinOpKind)"), "{e}");
    // An error is an ordinary `TypeError` across the packed-call boundary.
    let e = create("test.enum.Binary", args(Any::NONE)).unwrap_err();
    assert_eq!(object_core::Error::from(e).kind(), "TypeError");
}

#[test]
fn structural_equality_and_hashing_are_by_value() {
    let _leaks = LeakCheck::new();
    // In place (`#[repr(u8)]` in a tree type).
    let (a, b, c) = (
        bin(BinOpKind::Add, 1, 2),
        bin(BinOpKind::Add, 1, 2),
        bin(BinOpKind::Sub, 1, 2),
    );
    assert!(structural_equal(&a, &b));
    assert_eq!(structural_hash(&a), structural_hash(&b));
    assert!(!structural_equal(&a, &c));
    assert_ne!(structural_hash(&a), structural_hash(&c));
    let (at, _) = first_mismatch(&a, &c).unwrap();
    assert_eq!(at.to_string(), "<root>.op");
    // Nested: the pair walk reads the operators in place.
    let nest = |op| Binary::new(op, bin(BinOpKind::Mul, 3, 4), lit(5));
    assert!(structural_equal(
        &nest(BinOpKind::Div),
        &nest(BinOpKind::Div)
    ));
    assert!(!structural_equal(
        &nest(BinOpKind::Div),
        &Binary::new(BinOpKind::Div, bin(BinOpKind::Add, 3, 4), lit(5))
    ));
    assert_ne!(
        structural_hash(&nest(BinOpKind::Div)),
        structural_hash(&Binary::new(
            BinOpKind::Div,
            bin(BinOpKind::Add, 3, 4),
            lit(5)
        ))
    );

    // Signed narrow values (in place, in an all-integer type inside a pair) and every
    // other shape (through the general walk).
    let holder = |level, n| Holder::new(Leveled::new(level, n));
    assert!(structural_equal(
        &holder(Level::Low, 1),
        &holder(Level::Low, 1)
    ));
    assert!(!structural_equal(
        &holder(Level::Low, 1),
        &holder(Level::High, 1)
    ));
    assert_eq!(
        structural_hash(&holder(Level::Low, 1)),
        structural_hash(&holder(Level::Low, 1))
    );
    assert_ne!(
        structural_hash(&holder(Level::Low, 1)),
        structural_hash(&holder(Level::High, 1))
    );
    let m = |sign, maybe| mixed(sign, Level::High, Big::Huge, maybe);
    assert!(structural_equal(
        &m(Sign::Minus, None),
        &m(Sign::Minus, None)
    ));
    assert!(!structural_equal(
        &m(Sign::Minus, None),
        &m(Sign::Zero, None)
    ));
    assert!(!structural_equal(
        &m(Sign::Minus, None),
        &m(Sign::Minus, Some(BinOpKind::Add))
    ));
    assert_eq!(
        structural_hash(&m(Sign::Plus, Some(BinOpKind::Mul))),
        structural_hash(&m(Sign::Plus, Some(BinOpKind::Mul)))
    );
    assert_ne!(
        structural_hash(&m(Sign::Plus, Some(BinOpKind::Mul))),
        structural_hash(&m(Sign::Plus, Some(BinOpKind::Div)))
    );
    let (at, _) =
        first_mismatch(&m(Sign::Plus, None), &m(Sign::Plus, Some(BinOpKind::Add))).unwrap();
    assert_eq!(at.to_string(), "<root>.maybe");
    // The in-place walk (an object held once) and the general walk (the same object,
    // shared) give the same hash: the narrow values are widened alike.
    for level in [Level::Low, Level::High] {
        let solo = Leveled::new(level, 7);
        let in_place = structural_hash(&solo);
        let shared = solo.clone();
        assert_eq!(structural_hash(&solo), in_place);
        drop(shared);
    }
    for op in [BinOpKind::Add, BinOpKind::Div] {
        let solo = bin(op, 1, 2);
        let in_place = structural_hash(&solo);
        let shared = solo.clone();
        assert_eq!(structural_hash(&solo), in_place);
        drop(shared);
    }
}

#[test]
fn the_printer_shows_names() {
    let _leaks = LeakCheck::new();
    let b = Binary::new(BinOpKind::Mul, lit(1), bin(BinOpKind::Div, 2, 3));
    assert_eq!(
        format!("{b:?}"),
        "test.enum.Binary { op: mul, lhs: test.enum.Lit { value: 1 }, rhs: test.enum.Binary { op: Div, lhs: test.enum.Lit { value: 2 }, rhs: test.enum.Lit { value: 3 } } }"
    );
    let m = mixed(Sign::Minus, Level::Low, Big::Huge, None);
    assert_eq!(
        format!("{m:?}"),
        "test.enum.Mixed { sign: Minus, level: Low, big: Huge, maybe: None, defaulted: Div }"
    );
    let m = mixed(Sign::Zero, Level::High, Big::Small, Some(BinOpKind::Add));
    assert!(format!("{m:?}").contains("maybe: Add,"), "{m:?}");
    assert!(format!("{m:#?}").contains("    sign: Zero,\n"), "{m:#?}");
}

/// Replaces every `Lit(1)` with `Lit(100)`.
struct Hundred;
impl Rewriter for Hundred {
    type Error = TransformError;
    fn post(&mut self, node: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
        match node.downcast_ref::<Lit>() {
            Some(l) if l.value == 1 => Ok(lit(100).into_object_ref()),
            _ => Ok(node),
        }
    }
}

#[test]
fn the_mutator_keeps_the_operator() {
    let _leaks = LeakCheck::new();
    let root = Binary::new(BinOpKind::Div, bin(BinOpKind::Mul, 1, 2), lit(1)).into_object_ref();
    let out = mutate(&root, &mut Hundred).unwrap();
    assert!(!ObjectPtr::ptr_eq(&out, &root));
    let top = out.downcast_ref::<Binary>().unwrap();
    assert_eq!(top.op, BinOpKind::Div);
    let left = top.lhs.clone().into_object_ref();
    let left = left.downcast_ref::<Binary>().unwrap();
    assert_eq!(left.op, BinOpKind::Mul);
    assert!(structural_equal(
        &out,
        &Binary::new(BinOpKind::Div, bin(BinOpKind::Mul, 100, 2), lit(100))
    ));
}

#[test]
fn the_json_graph_writes_names_and_reads_names_or_values() {
    let _leaks = LeakCheck::new();
    let b = Binary::new(BinOpKind::Div, lit(1), bin(BinOpKind::Mul, 2, 3));
    let text = to_json_graph(&Any::from(b.clone())).unwrap();
    assert!(text.contains(r#"{"op":"Div","lhs":"#), "{text}");
    assert!(text.contains(r#"{"op":"mul","lhs":"#), "{text}");
    // As saved (the direct path), pretty, and reformatted (the general path).
    let back = from_json_graph(&text).unwrap();
    assert!(structural_equal(&back, &Any::from(b.clone())));
    let back_b = back.as_object().unwrap().downcast_ref::<Binary>().unwrap();
    assert_eq!(back_b.op, BinOpKind::Div);
    let pretty = to_json_graph_pretty(&Any::from(b.clone())).unwrap();
    assert!(pretty.contains(r#""op": "Div""#), "{pretty}");
    assert!(structural_equal(
        &from_json_graph(&pretty).unwrap(),
        &Any::from(b.clone())
    ));
    let reordered = text.replace(
        r#"{"op":"Div","lhs":0,"rhs":3}"#,
        r#"{ "rhs" : 3 , "lhs":0, "op" :  "Div" }"#,
    );
    assert_ne!(reordered, text, "{text}");
    assert!(structural_equal(
        &from_json_graph(&reordered).unwrap(),
        &Any::from(b.clone())
    ));
    // By value, in both forms.
    let by_value = text.replace(r#""op":"Div""#, r#""op":10"#);
    assert!(structural_equal(
        &from_json_graph(&by_value).unwrap(),
        &Any::from(b.clone())
    ));
    let by_value = reordered.replace(r#""op" :  "Div""#, r#""op": 10"#);
    assert!(structural_equal(
        &from_json_graph(&by_value).unwrap(),
        &Any::from(b.clone())
    ));
    // A different variant in the text is that variant.
    let sub = text.replace(r#""op":"Div""#, r#""op":"Sub""#);
    let sub = from_json_graph(&sub).unwrap();
    let sub_b = sub.as_object().unwrap().downcast_ref::<Binary>().unwrap();
    assert_eq!(sub_b.op, BinOpKind::Sub);

    // A bad name or value: a `Field` error naming the field and the type, in both forms.
    for bad in [
        text.replace(r#""op":"Div""#, r#""op":"Pow""#),
        reordered.replace(r#""op" :  "Div""#, r#""op": "Pow""#),
        text.replace(r#""op":"Div""#, r#""op":5"#),
        text.replace(r#""op":"Div""#, r#""op":1.5"#),
        text.replace(r#""op":"Div""#, r#""op":null"#),
    ] {
        let e = from_json_graph(&bad).unwrap_err();
        assert_eq!(e.kind(), GraphErrorKind::Field, "{bad}: {e}");
        assert_eq!(e.field(), Some("op"), "{bad}: {e}");
        assert_eq!(e.type_key(), Some("test.enum.Binary"), "{bad}: {e}");
        assert!(e.to_string().contains("test.enum.BinOpKind"), "{e}");
    }
    let e = from_json_graph(&text.replace(r#""op":"Div""#, r#""op":"Pow""#)).unwrap_err();
    assert!(e.to_string().contains(r#""Pow" is none of them"#), "{e}");
    assert!(e.to_string().contains("one of Add, Sub, mul, Div"), "{e}");

    // Every other shape: no `repr`, signed narrow, beyond `i64::MAX`, optional (a node),
    // defaulted (may be left out).
    for m in [
        mixed(Sign::Minus, Level::Low, Big::Huge, None),
        mixed(Sign::Plus, Level::High, Big::Small, Some(BinOpKind::Mul)),
    ] {
        let text = to_json_graph(&Any::from(m.clone())).unwrap();
        let back = from_json_graph(&text).unwrap();
        assert!(structural_equal(&back, &Any::from(m.clone())), "{text}");
        let back = back.as_object().unwrap().downcast_ref::<Mixed>().unwrap();
        assert_eq!((back.sign, back.big, back.maybe), (m.sign, m.big, m.maybe));
        assert_eq!(back.level, m.level);
    }
    let text = to_json_graph(&Any::from(mixed(Sign::Minus, Level::Low, Big::Huge, None))).unwrap();
    assert!(
        text.contains(r#""sign":"Minus","level":"Low","big":"Huge","maybe":"#),
        "{text}"
    );
    let without_default = text.replace(r#","defaulted":"Div""#, "");
    assert_ne!(without_default, text);
    let back = from_json_graph(&without_default).unwrap();
    let back = back.as_object().unwrap().downcast_ref::<Mixed>().unwrap();
    assert_eq!(back.defaulted, BinOpKind::Sub);
}
