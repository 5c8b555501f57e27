//! Types registered at run time with fields (`TypeSpec::fields`, the mechanism behind
//! Python's `@py_class` and C's `obj_type_register_fields`): their objects are read,
//! printed, compared, hashed, saved, loaded, created by key and rebuilt by
//! `transform::mutate` through the run-time table alone, beside derive types, and a
//! run-time subtype of a Rust type keeps the Rust type's layout prefix.

use std::sync::OnceLock;

use object_containers::{Array, Map};
use object_core::prelude::*;
use object_core::reflection::{
    create, field_names, get_attr, FieldFlags, FieldKind, FieldSpec, FieldType, ReflectErrorKind,
};
use object_core::registry::{
    register_type, seal_foreign_layout, type_info_by_key, ForeignMaker, LayoutOwner, RegistryError,
    TypeSpec,
};
use object_core::structural::{structural_equal, structural_hash};
use object_core::transform::{mutate, Rewriter, TransformError, TransformErrorKind};
use object_core::TypedRef;
use object_core::{make_object_as, Any, DataType, Device, ObjectEnum, String as Str};
use object_tests::{on_small_stack, scaled, DropCounter, LeakCheck};

/// The base of the expressions.
#[derive(Object)]
#[repr(C)]
#[object(key = "rtf.Expr", slots = 8, abstract, ref = Expr)]
pub struct ExprNode {
    base: Object,
}

/// A literal.
#[derive(Object)]
#[repr(C)]
#[object(key = "rtf.Lit", parent = ExprNode, final, ref = Lit)]
pub struct LitNode {
    base: ExprNode,
    value: i64,
}

/// A binary node (not abstract: run-time types extend it).
#[derive(Object)]
#[repr(C)]
#[object(key = "rtf.Bin", parent = ExprNode, slots = 4, ref = Bin)]
pub struct BinNode {
    base: ExprNode,
    lhs: Expr,
    rhs: Expr,
}

#[derive(ObjectEnum, Clone, Copy, Debug, PartialEq)]
#[repr(u8)]
#[object_enum(key = "rtf.Color")]
enum Color {
    Red,
    Green = 5,
}

/// A derive type with an enum field, so that the enum is a registered one.
#[derive(Object)]
#[repr(C)]
#[object(key = "rtf.Paint")]
struct Paint {
    base: Object,
    color: Color,
}

/// How many `OwnerNode` values were dropped.
static OWNER_DROPS: DropCounter = DropCounter::new();

/// A Rust type with a `Drop` of its own and a skipped field, which run-time types
/// extend: their deleter (the same for every run-time table) must drop it as
/// `drop_in_place::<OwnerNode>` does, its own `Drop` first.
#[derive(Object)]
#[repr(C)]
#[object(key = "rtf.Owner", slots = 2)]
pub struct OwnerNode {
    base: Object,
    name: Str,
    child: Option<ObjectRef>,
    #[object(skip)]
    scratch: Vec<u64>,
}

impl Drop for OwnerNode {
    fn drop(&mut self) {
        // Bumps the counter only if the whole value is still there.
        if self.scratch.is_empty() && !self.name.as_str().is_empty() {
            let _ = OWNER_DROPS.track();
        }
    }
}

fn opt(t: FieldType) -> FieldType {
    FieldType::Optional(Box::new(t))
}

fn obj(key: &str) -> FieldType {
    FieldType::Object(key.to_owned())
}

/// Registers the types of these tests once (before any leak check: a type's defaults
/// live for the process).
fn types() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let _ = Paint::type_index();
        let every = vec![
            FieldSpec::new("b", FieldType::Bool),
            FieldSpec::new("i", FieldType::Int),
            FieldSpec::new("f", FieldType::Float),
            FieldSpec::new("s", FieldType::Str),
            FieldSpec::new("dt", FieldType::DataType),
            FieldSpec::new("dev", FieldType::Device),
            FieldSpec::new("any", FieldType::Any),
            FieldSpec::new("o", obj("ffi.Object")),
            FieldSpec::new("ints", FieldType::Array(Box::new(FieldType::Float))),
            FieldSpec::new(
                "names",
                FieldType::Map(Box::new(FieldType::Str), Box::new(FieldType::Int)),
            ),
            FieldSpec::new("color", FieldType::Enum(Color::ENUM_INFO)),
            FieldSpec::new("maybe_i", opt(FieldType::Int)),
            FieldSpec::new("maybe_s", opt(FieldType::Str)),
            FieldSpec::new("maybe_o", opt(obj("rtf.Expr"))),
            FieldSpec::new("maybe_color", opt(FieldType::Enum(Color::ENUM_INFO))),
            FieldSpec::new("level", FieldType::Int).default(7),
            FieldSpec::new("scale", FieldType::Float).default(1),
            FieldSpec::new("note", FieldType::Str)
                .default("hi")
                .no_eq(true),
        ];
        register_type(&TypeSpec::new("rtf.Every", "ffi.Object").fields(every)).unwrap();
        // A run-time subtype of a Rust type with fields, and of it again.
        register_type(
            &TypeSpec::new("rtf.Neg", "rtf.Expr")
                .fields(vec![FieldSpec::new("arg", obj("rtf.Expr"))]),
        )
        .unwrap();
        register_type(
            &TypeSpec::new("rtf.Tagged", "rtf.Bin")
                .fields(vec![FieldSpec::new("tag", FieldType::Str)]),
        )
        .unwrap();
        register_type(&TypeSpec::new("rtf.Tagged2", "rtf.Tagged").fields(vec![
            FieldSpec::new("extra", opt(obj("rtf.Expr"))),
            FieldSpec::new("weight", FieldType::Float).default(0.5),
        ]))
        .unwrap();
        register_type(&with_array()).unwrap();
        register_type(
            &TypeSpec::new("rtf.Shape", "ffi.Object")
                .abstract_type(true)
                .slots(2)
                .fields(vec![FieldSpec::new("name", FieldType::Str)]),
        )
        .unwrap();
        // Over a Rust type with a `Drop` of its own. (Its default string is an object
        // that lives for the process: made here, before any test's leak check.)
        register_type(&TypeSpec::new("rtf.Owned", "rtf.Owner").fields(vec![
            FieldSpec::new("n", FieldType::Int),
            FieldSpec::new("s", FieldType::Str).default("a string too long to be inline"),
        ]))
        .unwrap();
        register_type(
            &TypeSpec::new("rtf.Circle", "rtf.Shape")
                .final_type(true)
                .fields(vec![FieldSpec::new("r", FieldType::Float)]),
        )
        .unwrap();
    });
}

fn lit(v: i64) -> Expr {
    Lit::new(v).into()
}

fn neg(arg: impl Into<Any>) -> ObjectRef {
    create("rtf.Neg", [("arg", arg.into())]).unwrap()
}

fn tagged(lhs: impl Into<Any>, rhs: impl Into<Any>, tag: &str) -> ObjectRef {
    create(
        "rtf.Tagged",
        [
            ("lhs", lhs.into()),
            ("rhs", rhs.into()),
            ("tag", Any::from(tag)),
        ],
    )
    .unwrap()
}

fn every() -> ObjectRef {
    let names: Map<Str, i64> = [(Str::from("a"), 1), (Str::from("b"), 2)]
        .into_iter()
        .collect();
    create(
        "rtf.Every",
        [
            ("b", Any::from(true)),
            ("i", Any::from(-3)),
            ("f", Any::from(2.5)),
            ("s", Any::from("a string long enough to be an object")),
            ("dt", Any::from(DataType::new(2, 32, 1))),
            ("dev", Any::from(Device::cpu())),
            (
                "any",
                Any::from(Array::from(vec![Any::from(1), Any::from("x")])),
            ),
            ("o", Any::from(lit(4))),
            (
                "ints",
                Any::from(Array::from(vec![Any::from(1), Any::from(2.5)])),
            ),
            ("names", Any::from(names)),
            ("color", Any::from("Green")),
            ("maybe_s", Any::from("short")),
            ("maybe_color", Any::from(0)),
        ],
    )
    .unwrap()
}

#[test]
fn fields_of_every_kind_are_read_through_the_table() {
    types();
    let _leaks = LeakCheck::new();
    let e = every();
    assert_eq!(
        field_names(&e),
        [
            "b",
            "i",
            "f",
            "s",
            "dt",
            "dev",
            "any",
            "o",
            "ints",
            "names",
            "color",
            "maybe_i",
            "maybe_s",
            "maybe_o",
            "maybe_color",
            "level",
            "scale",
            "note"
        ]
    );
    let get = |n: &str| get_attr(&e, n).unwrap();
    assert_eq!(get("b").as_bool(), Some(true));
    assert_eq!(get("i").as_int(), Some(-3));
    assert_eq!(get("f").as_float(), Some(2.5));
    assert_eq!(
        get("s").as_str(),
        Some("a string long enough to be an object")
    );
    assert_eq!(get("color").as_int(), Some(5), "an enum by its value");
    assert!(get("maybe_i").is_none());
    assert_eq!(get("maybe_s").as_str(), Some("short"));
    assert!(get("maybe_o").is_none());
    assert_eq!(get("maybe_color").as_int(), Some(0));
    assert_eq!(get("level").as_int(), Some(7), "a default");
    assert_eq!(
        get("scale").as_float(),
        Some(1.0),
        "an int default of a float field"
    );
    assert_eq!(get("note").as_str(), Some("hi"));
    // The items of an `Array[float]` were converted.
    let ints = Array::<f64>::try_from(get("ints")).unwrap();
    assert_eq!(ints.iter().copied().collect::<Vec<_>>(), [1.0, 2.5]);
    // The printer, with enums by name.
    let text = format!("{e:?}");
    assert!(
        text.starts_with("rtf.Every { b: true, i: -3, f: 2.5, s: \"a string"),
        "{text}"
    );
    assert!(text.contains("color: Green"), "{text}");
    assert!(text.contains("maybe_color: Red"), "{text}");
    assert!(text.contains("o: rtf.Lit { value: 4 }"), "{text}");
    assert!(
        text.ends_with("level: 7, scale: 1.0, note: \"hi\" }"),
        "{text}"
    );
}

#[test]
fn the_table_describes_the_cells() {
    types();
    let info = type_info_by_key("rtf.Every").unwrap();
    let refl = info.reflection();
    let f = |n: &str| refl.field(n).unwrap();
    assert_eq!(
        (f("i").kind(), f("i").static_type_key()),
        (FieldKind::Int, "int")
    );
    assert_eq!(f("s").kind(), FieldKind::Str);
    assert!(f("s").flags().contains(FieldFlags::ANY_LAYOUT));
    assert_eq!(
        (f("o").kind(), f("o").static_type_key()),
        (FieldKind::Object, "ffi.Object")
    );
    assert!(!f("o").flags().contains(FieldFlags::OPTIONAL));
    assert!(f("maybe_o").flags().contains(FieldFlags::OPTIONAL));
    assert_eq!(f("maybe_o").static_type_key(), "rtf.Expr");
    assert_eq!(f("ints").static_type_key(), "ffi.Array");
    assert_eq!(f("names").static_type_key(), "ffi.Map");
    assert_eq!(f("color").kind(), FieldKind::Enum);
    assert_eq!(f("color").enum_info().unwrap().key(), "rtf.Color");
    assert_eq!(f("color").rust_type(), "u8", "stored as the enum's repr");
    assert!(f("maybe_i").flags().contains(FieldFlags::OPTIONAL));
    assert!(f("maybe_i").flags().contains(FieldFlags::ANY_LAYOUT));
    assert!(f("note").flags().contains(FieldFlags::NO_EQUALITY));
    assert_eq!(
        f("level").default_value().unwrap().unwrap().as_int(),
        Some(7)
    );
    // Every cell lies after the Rust ancestor's struct (the header), in order (the
    // table's word lies before the object).
    let mut last = 0;
    for field in refl.fields() {
        assert!(field.offset() >= 16, "{field:?}");
        assert!(field.offset() >= last);
        last = field.offset();
    }
    let table = info.runtime_fields().unwrap();
    assert_eq!(
        table.field_type("ints"),
        Some(&FieldType::Array(Box::new(FieldType::Float)))
    );
    assert_eq!(table.own_fields().len(), refl.fields().len());
    assert!(table.object_size() > last);
    assert!(matches!(
        info.layout_owner(),
        LayoutOwner::Fields {
            ancestor_key: "ffi.Object",
            ..
        }
    ));
    assert!(info
        .layout_owner()
        .to_string()
        .contains("run-time field table"));
}

#[test]
fn structural_equality_hashing_and_the_json_graph() {
    types();
    let _leaks = LeakCheck::new();
    let a = every();
    let b = every();
    assert!(structural_equal(&a, &b));
    assert_eq!(structural_hash(&a), structural_hash(&b));
    let c = create(
        "rtf.Every",
        [
            ("b", Any::from(false)),
            ("i", Any::from(-3)),
            ("f", Any::from(2.5)),
            ("s", Any::from("")),
            ("dt", Any::from(DataType::new(2, 32, 1))),
            ("dev", Any::from(Device::cpu())),
            ("any", Any::default()),
            ("o", Any::from(lit(4))),
            ("ints", Any::from(Array::<f64>::new())),
            ("names", Any::from(Map::<Str, i64>::new())),
            ("color", Any::from(0)),
        ],
    )
    .unwrap();
    assert!(!structural_equal(&a, &c));
    // `no_eq` leaves `note` out.
    let d = create(
        "rtf.Circle",
        [("name", Any::from("c")), ("r", Any::from(1.0))],
    )
    .unwrap();
    let text = object_json::to_json_graph(&Any::from(a.clone())).unwrap();
    assert!(text.contains("\"type\":\"rtf.Every\""), "{text}");
    assert!(text.contains("\"color\":\"Green\""), "{text}");
    let back = object_json::from_json_graph(&text).unwrap();
    let back = back.as_object().unwrap();
    assert_eq!(back.type_key(), "rtf.Every");
    assert!(structural_equal(back, &a));
    assert_eq!(format!("{back:?}"), format!("{a:?}"));
    // A node without a defaulted field takes the default.
    let text = object_json::to_json_graph(&Any::from(d.clone())).unwrap();
    let back = object_json::from_json_graph(&text).unwrap();
    assert!(structural_equal(back.as_object().unwrap(), &d));
}

#[test]
fn a_run_time_subtype_of_a_rust_type_keeps_its_layout() {
    types();
    let _leaks = LeakCheck::new();
    let t = tagged(lit(1), lit(2), "sum");
    // Rust reads the Rust part in place.
    assert!(t.is::<BinNode>() && t.is::<ExprNode>() && !t.is::<LitNode>());
    let bin = t.downcast_ref::<BinNode>().unwrap();
    assert_eq!(bin.lhs.downcast_ref::<LitNode>().unwrap().value, 1);
    assert_eq!(get_attr(&t, "tag").unwrap().as_str(), Some("sum"));
    assert_eq!(
        format!("{t:?}"),
        "rtf.Tagged { lhs: rtf.Lit { value: 1 }, rhs: rtf.Lit { value: 2 }, tag: \"sum\" }"
    );
    // A run-time subtype of that one: the parent's cells, then its own.
    let t2 = create(
        "rtf.Tagged2",
        [
            ("lhs", Any::from(lit(1))),
            ("rhs", Any::from(neg(lit(2)))),
            ("tag", Any::from("t")),
        ],
    )
    .unwrap();
    assert_eq!(field_names(&t2), ["lhs", "rhs", "tag", "extra", "weight"]);
    let parent = type_info_by_key("rtf.Tagged").unwrap().reflection();
    let child = t2.type_info().reflection();
    for f in parent.fields() {
        assert_eq!(child.field(f.name()).unwrap().offset(), f.offset());
    }
    assert_eq!(get_attr(&t2, "weight").unwrap().as_float(), Some(0.5));
    assert!(t2.type_info().is_ancestor_or_self_of(t2.type_index()));
    assert!(type_info_by_key("rtf.Tagged")
        .unwrap()
        .is_ancestor_or_self_of(t2.type_index()));
    // A run-time subtype of `ffi.Object` is not any Rust struct.
    let n = neg(lit(3));
    assert!(n.downcast_ref::<BinNode>().is_none());
    assert!(n.is::<ExprNode>());
}

/// Adds one to every literal.
struct Bump;

impl Rewriter for Bump {
    type Error = TransformError;
    fn post(&mut self, node: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
        match node.downcast_ref::<LitNode>() {
            Some(l) => Ok(Lit::new(l.value + 1).into_object_ref()),
            None => Ok(node),
        }
    }
}

#[test]
fn a_rust_pass_rewrites_a_tree_mixing_rust_and_run_time_nodes() {
    types();
    let _leaks = LeakCheck::new();
    // Bin(Tagged(Neg(1), 2, "t"), Neg(Bin(3, 4)))
    let keep = Bin::new(lit(30), lit(40)); // no literal changes under it? (it does)
    let left = tagged(neg(lit(1)), lit(2), "t");
    let root = Bin::new(
        Expr::try_from_object(left.clone()).unwrap(),
        Expr::try_from_object(neg(keep.clone())).unwrap(),
    );
    let out = mutate(root.as_object_ref(), &mut Bump).unwrap();
    let expected = "rtf.Bin { lhs: rtf.Tagged { lhs: rtf.Neg { arg: rtf.Lit { value: 2 } }, rhs: \
                    rtf.Lit { value: 3 }, tag: \"t\" }, rhs: rtf.Neg { arg: rtf.Bin { lhs: rtf.Lit \
                    { value: 31 }, rhs: rtf.Lit { value: 41 } } } }";
    assert_eq!(format!("{out:?}"), expected);
    // The rebuilt run-time nodes keep their types; the originals are unchanged.
    let new_left = &out.downcast_ref::<BinNode>().unwrap().lhs;
    assert_eq!(new_left.type_key(), "rtf.Tagged");
    assert!(!ObjectRef::ptr_eq(new_left.as_object_ref(), &left));
    assert_eq!(
        get_attr(new_left.as_object_ref(), "tag").unwrap().as_str(),
        Some("t")
    );
    assert!(format!("{left:?}").contains("value: 1 }"));
    // A pass that changes nothing returns the same tree.
    struct Nothing;
    impl Rewriter for Nothing {
        type Error = TransformError;
    }
    let same = mutate(&out, &mut Nothing).unwrap();
    assert!(ObjectRef::ptr_eq(&same, &out));
}

#[test]
fn a_rebuilt_child_is_checked_against_the_declared_type() {
    types();
    let _leaks = LeakCheck::new();
    struct ToPaint;
    impl Rewriter for ToPaint {
        type Error = TransformError;
        fn post(&mut self, node: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
            if node.is::<LitNode>() {
                return Ok(Paint::new(Color::Red).into_object_ref());
            }
            Ok(node)
        }
    }
    let n = neg(lit(1));
    let err = mutate(&n, &mut ToPaint).unwrap_err();
    assert_eq!(err.kind(), TransformErrorKind::WrongChildType);
    assert_eq!(err.type_key(), "rtf.Neg");
    assert_eq!(err.field(), Some("arg"));
    assert!(err.to_string().contains("rtf.Expr"), "{err}");
}

#[test]
fn construction_errors_name_the_field() {
    types();
    let _leaks = LeakCheck::new();
    let e = create("rtf.Neg", [("arg", Any::from(3))]).unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        (ReflectErrorKind::WrongType, Some("arg"))
    );
    let e = create("rtf.Neg", [("arg", Any::from(Paint::new(Color::Red)))]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "field `arg` of `rtf.Neg`: expected rtf.Expr, got rtf.Paint"
    );
    let e = create("rtf.Neg", []).unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        (ReflectErrorKind::MissingField, Some("arg"))
    );
    let e = create("rtf.Neg", [("arg", Any::from(lit(1))), ("x", Any::from(1))]).unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        (ReflectErrorKind::ExtraField, Some("x"))
    );
    let e = create(
        "rtf.Tagged",
        [("lhs", Any::from(lit(1))), ("tag", Any::from("t"))],
    )
    .unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        (ReflectErrorKind::MissingField, Some("rhs"))
    );
    let items = Array::from(vec![Any::from(1), Any::from("two")]);
    let mut fields = every_fields();
    fields.push(("ints", Any::from(items)));
    let e = create("rtf.Every", fields).unwrap_err();
    assert_eq!(e.field(), Some("ints"));
    assert!(
        e.to_string()
            .contains("Array[float] (at 1: expected float, got"),
        "{e}"
    );
    let mut fields = every_fields();
    fields.push(("ints", Any::from(Array::<f64>::new())));
    fields[10] = ("color", Any::from("Blue"));
    let e = create("rtf.Every", fields).unwrap_err();
    assert_eq!(e.field(), Some("color"));
    assert!(e.to_string().contains("one of Red, Green"), "{e}");
    // Abstract: refused; its subtype is made.
    let e = create("rtf.Shape", [("name", Any::from("s"))]).unwrap_err();
    assert_eq!(e.kind(), ReflectErrorKind::Abstract);
    let c = create(
        "rtf.Circle",
        [("name", Any::from("c")), ("r", Any::from(2))],
    )
    .unwrap();
    assert_eq!(get_attr(&c, "r").unwrap().as_float(), Some(2.0));
    assert!(type_info_by_key("rtf.Shape").unwrap().is_abstract());
}

/// The fields `every()` gives but `ints` (for tests that vary one).
fn every_fields() -> Vec<(&'static str, Any)> {
    vec![
        ("b", Any::from(true)),
        ("i", Any::from(-3)),
        ("f", Any::from(2.5)),
        ("s", Any::from("s")),
        ("dt", Any::from(DataType::new(2, 32, 1))),
        ("dev", Any::from(Device::cpu())),
        ("any", Any::default()),
        ("o", Any::from(lit(4))),
        ("names", Any::from(Map::<Str, i64>::new())),
        ("maybe_s", Any::default()),
        ("color", Any::from(0)),
    ]
}

#[test]
fn objects_of_a_field_table_are_never_made_another_way() {
    types();
    let _leaks = LeakCheck::new();
    let neg_index = type_info_by_key("rtf.Neg").unwrap().index();
    let tagged_index = type_info_by_key("rtf.Tagged").unwrap().index();
    // `make_object_as` would make an object without cells.
    let e = make_object_as(BinNode::new_value(lit(1), lit(2)), tagged_index);
    assert!(e.is_err());
    // C could not lay it out either, nor a Rust struct claim it.
    let e = seal_foreign_layout(neg_index, 64, ForeignMaker::C).unwrap_err();
    assert!(matches!(e, RegistryError::LayoutMismatch { .. }), "{e}");
}

/// A type whose default is an object (registered once, in `types`).
fn with_array() -> TypeSpec {
    TypeSpec::new("rtf.WithArray", "ffi.Object").fields(vec![FieldSpec::new(
        "xs",
        FieldType::Array(Box::new(FieldType::Int)),
    )
    .default(Array::from(vec![Any::from(1), Any::from(2)]))])
}

#[test]
fn registration_checks_the_fields_and_is_idempotent() {
    types();
    let _leaks = LeakCheck::new();
    let reg = |spec: TypeSpec| register_type(&spec);
    let bad = |spec: TypeSpec| match reg(spec) {
        Err(RegistryError::BadField { reason, .. }) => reason,
        other => panic!("expected BadField, got {other:?}"),
    };
    let base = || TypeSpec::new("rtf.bad.T", "ffi.Object");
    assert!(bad(base().fields(vec![FieldSpec::new("", FieldType::Int)])).contains("name"));
    assert!(bad(base().fields(vec![
        FieldSpec::new("a", FieldType::Int),
        FieldSpec::new("a", FieldType::Str)
    ]))
    .contains("taken"));
    assert!(
        bad(base().fields(vec![FieldSpec::new("o", obj("rtf.Nowhere"))])).contains("rtf.Nowhere")
    );
    assert!(
        bad(base().fields(vec![FieldSpec::new("i", FieldType::Int).default("x")]))
            .contains("default")
    );
    let mut deep = FieldType::Int;
    for _ in 0..20 {
        deep = FieldType::Array(Box::new(deep));
    }
    assert!(bad(base().fields(vec![FieldSpec::new("d", deep)])).contains("nests"));
    assert!(bad(base().abstract_type(true).final_type(true).fields(vec![])).contains("abstract"));
    assert!(bad(base().abstract_type(true)).contains("abstract"));
    // A Rust parent's field names are taken too.
    assert!(bad(
        TypeSpec::new("rtf.bad.U", "rtf.Bin").fields(vec![FieldSpec::new("lhs", FieldType::Int)])
    )
    .contains("taken"));
    // A built-in cannot be extended.
    assert!(bad(TypeSpec::new("rtf.bad.V", "ffi.Array").fields(vec![])).contains("built-in"));
    // Nothing was registered by the failures.
    assert!(type_info_by_key("rtf.bad.T").is_none());

    // The same registration again is the same type; another is refused.
    let spec = || {
        TypeSpec::new("rtf.Again", "rtf.Expr").fields(vec![FieldSpec::new("v", FieldType::Int)
            .default(Array::from(vec![Any::from(1)]).len() as i64)])
    };
    let a = reg(spec()).unwrap();
    assert_eq!(reg(spec()).unwrap().index(), a.index());
    let other =
        TypeSpec::new("rtf.Again", "rtf.Expr").fields(vec![FieldSpec::new("v", FieldType::Float)]);
    let e = reg(other).unwrap_err();
    assert!(matches!(e, RegistryError::DuplicateKey { .. }), "{e}");
    assert!(e.to_string().contains("v: int"), "{e}");
    // Defaults that are equal structurally (a class body run again) are the same.
    let a = type_info_by_key("rtf.WithArray").unwrap();
    assert_eq!(reg(with_array()).unwrap().index(), a.index());
    // A type without fields under one with a table gets an empty table of its own.
    let plain = reg(TypeSpec::new("rtf.PlainNeg", "rtf.Neg")).unwrap();
    assert!(plain.runtime_fields().is_some());
    let p = create("rtf.PlainNeg", [("arg", Any::from(lit(1)))]).unwrap();
    assert_eq!(
        format!("{p:?}"),
        "rtf.PlainNeg { arg: rtf.Lit { value: 1 } }"
    );
    drop(p);
    assert_eq!(
        reg(TypeSpec::new("rtf.PlainNeg", "rtf.Neg"))
            .unwrap()
            .index(),
        plain.index()
    );
}

#[test]
fn a_run_time_type_under_a_plain_run_time_type() {
    types();
    // A type registered without fields under a Rust type (its objects are the Rust
    // type's), then one with fields under it: the plain one is sealed as having the Rust
    // ancestor's layout, so C can no longer give its objects fields of their own.
    let plain = register_type(&TypeSpec::new("rtf.PlainBin", "rtf.Bin").slots(2)).unwrap();
    let with = register_type(
        &TypeSpec::new("rtf.PlainBinChild", "rtf.PlainBin")
            .fields(vec![FieldSpec::new("k", FieldType::Int)]),
    )
    .unwrap();
    assert!(with.runtime_fields().is_some());
    assert!(matches!(
        plain.layout_owner(),
        LayoutOwner::Foreign {
            object_size: Some(32),
            ..
        }
    ));
    assert!(seal_foreign_layout(plain.index(), 48, ForeignMaker::C).is_err());
    let _leaks = LeakCheck::new();
    let o = create(
        "rtf.PlainBinChild",
        [
            ("lhs", Any::from(lit(1))),
            ("rhs", Any::from(lit(2))),
            ("k", Any::from(3)),
        ],
    )
    .unwrap();
    assert_eq!(
        o.downcast_ref::<BinNode>()
            .unwrap()
            .rhs
            .downcast_ref::<LitNode>()
            .unwrap()
            .value,
        2
    );
}

#[test]
fn a_deep_chain_of_run_time_nodes_is_printed_saved_compared_and_freed() {
    types();
    let _leaks = LeakCheck::new();
    on_small_stack(|| {
        let n = scaled(100_000, 200);
        let mut e = Any::from(lit(0));
        for _ in 0..n {
            e = Any::from(neg(e));
        }
        let text = object_json::to_json_graph(&e).unwrap();
        let back = object_json::from_json_graph(&text).unwrap();
        assert!(structural_equal(&e, &back));
        assert_eq!(structural_hash(&e), structural_hash(&back));
        let printed = format!("{:?}", e.as_object().unwrap());
        assert!(printed.starts_with("rtf.Neg { arg: rtf.Neg { arg: rtf.Neg"));
        if n > 96 {
            assert!(
                printed.contains("rtf.Neg { … }"),
                "elided past the printer's depth"
            );
        }
        let out = mutate(e.as_object().unwrap(), &mut Bump).unwrap();
        let mut at = out;
        for _ in 0..n {
            at = get_attr(&at, "arg").unwrap().as_object().unwrap().clone();
        }
        assert_eq!(
            get_attr(&at, "value").unwrap().as_int(),
            Some(1),
            "the leaf was rebuilt"
        );
    });
}

#[test]
fn registration_and_construction_from_many_threads() {
    types();
    let _leaks = LeakCheck::new();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                let spec = TypeSpec::new("rtf.Racy", "rtf.Expr")
                    .fields(vec![FieldSpec::new("n", FieldType::Int)]);
                let info = register_type(&spec).unwrap();
                for i in 0..scaled(200, 4) {
                    let o = create("rtf.Racy", [("n", Any::from(i as i64 + t))]).unwrap();
                    assert_eq!(o.type_index(), info.index());
                    assert_eq!(get_attr(&o, "n").unwrap().as_int(), Some(i as i64 + t));
                }
                info.index()
            })
        })
        .collect();
    let indices: Vec<u32> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert!(indices.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn the_rust_ancestors_own_drop_runs_once_per_run_time_object() {
    types();
    let _leaks = LeakCheck::new();
    let make = || {
        create(
            "rtf.Owned",
            [
                ("name", Any::from("owner")),
                ("child", Any::from(lit(1))),
                ("n", Any::from(2)),
            ],
        )
        .unwrap()
    };
    let drops = OWNER_DROPS.get();
    let o = make();
    assert_eq!(
        o.downcast_ref::<OwnerNode>().unwrap().name.as_str(),
        "owner"
    );
    drop(o);
    assert_eq!(OWNER_DROPS.get(), drops + 1);
    // Refused at a cell, after the Rust fields were written: no `OwnerNode` was made (its
    // fields are dropped one by one, its `Drop` does not run) and nothing leaks.
    let e = create(
        "rtf.Owned",
        [
            ("name", Any::from("owner")),
            ("child", Any::from(lit(1))),
            ("n", Any::from("two")),
        ],
    )
    .unwrap_err();
    assert_eq!(e.field(), Some("n"));
    assert_eq!(OWNER_DROPS.get(), drops + 1);
    // Rebuilt by a pass: the copy is an object of its own, dropped on its own.
    let o = make();
    let out = mutate(&o, &mut Bump).unwrap();
    assert!(!ObjectRef::ptr_eq(&o, &out));
    assert_eq!(out.type_key(), "rtf.Owned");
    assert_eq!(
        format!("{out:?}"),
        "rtf.Owned { name: \"owner\", child: rtf.Lit { value: 2 }, n: 2, s: \"a string too long to be inline\" }"
    );
    drop((o, out));
    assert_eq!(OWNER_DROPS.get(), drops + 3);
    // From the size-class pool and from the global allocator, freed with the pool
    // switched the other way: each object keeps the deleter of its block.
    let was = object_core::alloc::size_class_pool_enabled();
    let mut kept = Vec::new();
    for on in [true, false, true, false] {
        object_core::alloc::set_size_class_pool(on);
        kept.push(make());
        kept.push(neg(lit(3)));
    }
    object_core::alloc::set_size_class_pool(!was);
    drop(kept);
    object_core::alloc::set_size_class_pool(was);
    assert_eq!(OWNER_DROPS.get(), drops + 7);
}
