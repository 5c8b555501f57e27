//! Reflection: field tables (parents first, names, offsets, kinds, static types, flags),
//! every supported field type through `get_attr` and `create`, typed visits, `create`
//! errors, run-time registered descendants, and the printer (exact output, pretty
//! form, shared objects labelled once, deep nesting elided, a panicking `Debug`).
//!
//! Every test starts with a [`LeakCheck`]: it serializes the tests of this binary and
//! checks that `live_objects()` is back to where it started when the test ends.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use object_containers::{Array, Map, Shape};
use object_core::reflection::{
    create, create_from_source, field_names, field_ref, get_attr, get_field, visit_object_attrs,
    AttrVisitor, FieldFeed, FieldFlags, FieldInfo, FieldKind, FieldReader, FieldSource, Reflect,
    ReflectError, ReflectErrorKind, TypeReflection, ValueRef,
};
use object_core::registry::{register_type, type_info_by_key, TypeSpec};
use object_core::type_index as ti;
use object_core::{
    make_object, Any, AnyView, DataType, Device, Error, Object, ObjectPtr, ObjectRef, ObjectType,
    String, TypeInfo,
};
use object_tests::LeakCheck;

// ---------------------------------------------------------------------------------
// A three-level hierarchy with every field attribute.
// ---------------------------------------------------------------------------------

#[derive(Object)]
#[repr(C)]
#[object(key = "rtest.Base", slots = 4)]
struct Base {
    base: Object,
    #[object(rename = "span_id", read_only)]
    span: u32,
    #[object(no_eq)]
    note: std::string::String,
}

/// A skipped field's type: `create` fills it with `Default` (here 42, not 0).
#[derive(Debug, PartialEq)]
struct Cache(u32);

impl Default for Cache {
    fn default() -> Self {
        Cache(42)
    }
}

#[derive(Object)]
#[repr(C)]
#[object(key = "rtest.Mid", parent = Base, slots = 2)]
struct Mid {
    base: Base,
    #[object(skip)]
    cache: Cache,
    label: String,
    child: Option<ObjectPtr<Base>>,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "rtest.Leaf", parent = Mid)]
struct Leaf {
    base: Mid,
    #[object(read_only, no_eq)]
    weight: f64,
}

fn base(span: u32, note: &str) -> Base {
    Base {
        base: Object::new(),
        span,
        note: note.to_owned(),
    }
}

fn leaf(span: u32, label: &str, child: Option<ObjectPtr<Base>>, weight: f64) -> ObjectPtr<Leaf> {
    make_object(Leaf {
        base: Mid {
            base: base(span, "n"),
            cache: Cache(1),
            label: String::from(label),
            child,
        },
        weight,
    })
}

// ---------------------------------------------------------------------------------
// Every supported field type.
// ---------------------------------------------------------------------------------

#[derive(Object)]
#[repr(C)]
#[object(key = "rtest.AllTypes", final)]
struct AllTypes {
    base: Object,
    a_i8: i8,
    a_i16: i16,
    a_i32: i32,
    a_i64: i64,
    a_u8: u8,
    a_u16: u16,
    a_u32: u32,
    a_u64: u64,
    a_usize: usize,
    a_isize: isize,
    a_f32: f32,
    a_f64: f64,
    a_bool: bool,
    a_std_str: std::string::String,
    a_str: String,
    a_dtype: DataType,
    a_device: Device,
    a_any: Any,
    a_node: ObjectPtr<Base>,
    a_ref: ObjectRef,
    a_opt_node: Option<ObjectPtr<Base>>,
    a_opt_int: Option<i64>,
    a_array: Array<i64>,
    a_map: Map<String, i64>,
    a_shape: Shape,
}

const ALL_NAMES: [&str; 25] = [
    "a_i8",
    "a_i16",
    "a_i32",
    "a_i64",
    "a_u8",
    "a_u16",
    "a_u32",
    "a_u64",
    "a_usize",
    "a_isize",
    "a_f32",
    "a_f64",
    "a_bool",
    "a_std_str",
    "a_str",
    "a_dtype",
    "a_device",
    "a_any",
    "a_node",
    "a_ref",
    "a_opt_node",
    "a_opt_int",
    "a_array",
    "a_map",
    "a_shape",
];

/// A long string (stored as an object, not inline) and a short one.
const LONG: &str = "a string well beyond the inline small-string limit";

fn node(span: u32) -> ObjectPtr<Base> {
    make_object(base(span, "node"))
}

fn int_array(items: &[i64]) -> Array<i64> {
    items.iter().copied().collect()
}

fn str_map(entries: &[(&str, i64)]) -> Map<String, i64> {
    let mut m = Map::new();
    for &(k, v) in entries {
        m.insert(String::from(k), v);
    }
    m
}

/// Field values for `rtest.AllTypes`, every one valid.
fn all_entries(objects: &Objects) -> Vec<(&'static str, Any)> {
    vec![
        ("a_i8", Any::from(-128)),
        ("a_i16", Any::from(32767)),
        ("a_i32", Any::from(i64::from(i32::MIN))),
        ("a_i64", Any::from(i64::MIN)),
        ("a_u8", Any::from(255)),
        ("a_u16", Any::from(65535)),
        ("a_u32", Any::from(i64::from(u32::MAX))),
        ("a_u64", Any::from(i64::MAX)),
        ("a_usize", Any::from(7)),
        ("a_isize", Any::from(-7)),
        ("a_f32", Any::from(0.5)),
        ("a_f64", Any::from(-2.25)),
        ("a_bool", Any::from(true)),
        ("a_std_str", Any::from("short")),
        ("a_str", Any::from(LONG)),
        ("a_dtype", Any::from(DataType::float(32))),
        ("a_device", Any::from(Device::cpu())),
        ("a_any", Any::from(objects.any.clone())),
        ("a_node", Any::from(objects.node.clone())),
        ("a_ref", Any::from(objects.object.clone())),
        ("a_opt_node", Any::NONE),
        ("a_opt_int", Any::from(5)),
        ("a_array", Any::from(objects.array.clone())),
        ("a_map", Any::from(objects.map.clone())),
        ("a_shape", Any::from(objects.shape.clone())),
    ]
}

struct Objects {
    any: ObjectPtr<Base>,
    node: ObjectPtr<Base>,
    object: ObjectRef,
    array: Array<i64>,
    map: Map<String, i64>,
    shape: Shape,
}

impl Objects {
    fn new() -> Self {
        Objects {
            any: node(1),
            node: node(2),
            object: make_object(Object::new()),
            array: int_array(&[1, 2, 3]),
            map: str_map(&[("one", 1), ("two", 2)]),
            shape: Shape::new(&[2, 3]),
        }
    }
}

/// `entries` with the value of `name` replaced (or removed, for `None`).
fn with(
    mut entries: Vec<(&'static str, Any)>,
    name: &'static str,
    value: Option<Any>,
) -> Vec<(&'static str, Any)> {
    let at = entries
        .iter()
        .position(|(n, _)| *n == name)
        .expect("a field of the list");
    match value {
        Some(v) => entries[at].1 = v,
        None => {
            entries.remove(at);
        }
    }
    entries
}

fn make_all(entries: Vec<(&'static str, Any)>) -> Result<ObjectRef, ReflectError> {
    create("rtest.AllTypes", entries)
}

// ---------------------------------------------------------------------------------
// Printer types.
// ---------------------------------------------------------------------------------

#[derive(Object)]
#[repr(C)]
#[object(key = "rtest.Expr", slots = 8)]
struct Expr {
    base: Object,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "rtest.Var", parent = Expr, final)]
struct Var {
    base: Expr,
    name: String,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "rtest.Int", parent = Expr, final)]
struct Int {
    base: Expr,
    value: i64,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "rtest.Add", parent = Expr, final)]
struct Add {
    base: Expr,
    lhs: ObjectPtr<Expr>,
    rhs: ObjectPtr<Expr>,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "rtest.Call", parent = Expr, final)]
struct Call {
    base: Expr,
    callee: std::string::String,
    args: Array<ObjectPtr<Expr>>,
    attrs: Map<String, Any>,
}

/// Any two values: to put one container in two places.
#[derive(Object)]
#[repr(C)]
#[object(key = "rtest.Pair", final)]
struct Pair {
    base: Object,
    a: Any,
    b: Any,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "rtest.Chain", final)]
struct Chain {
    base: Object,
    depth: u32,
    next: Option<ObjectPtr<Chain>>,
}

/// An opaque type whose `Debug` panics when armed.
#[derive(Object)]
#[repr(C)]
#[object(key = "rtest.Bomb", final, opaque)]
struct Bomb {
    base: Object,
    armed: bool,
}

impl fmt::Debug for Bomb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        assert!(!self.armed, "boom");
        f.write_str("Bomb(disarmed)")
    }
}

/// A reflected type with a hand-written `Debug`.
#[derive(Object)]
#[repr(C)]
#[object(key = "rtest.Secret", final, custom_debug)]
struct Secret {
    base: Object,
    password: std::string::String,
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<hidden>)")
    }
}

fn var(name: &str) -> ObjectPtr<Expr> {
    make_object(Var {
        base: Expr {
            base: Object::new(),
        },
        name: String::from(name),
    })
    .upcast()
}

fn int(value: i64) -> ObjectPtr<Expr> {
    make_object(Int {
        base: Expr {
            base: Object::new(),
        },
        value,
    })
    .upcast()
}

fn add(lhs: ObjectPtr<Expr>, rhs: ObjectPtr<Expr>) -> ObjectPtr<Expr> {
    make_object(Add {
        base: Expr {
            base: Object::new(),
        },
        lhs,
        rhs,
    })
    .upcast()
}

fn pair(a: impl Into<Any>, b: impl Into<Any>) -> ObjectPtr<Pair> {
    make_object(Pair {
        base: Object::new(),
        a: a.into(),
        b: b.into(),
    })
}

// ---------------------------------------------------------------------------------
// Field tables.
// ---------------------------------------------------------------------------------

fn names(fields: &[FieldInfo]) -> Vec<&'static str> {
    fields.iter().map(FieldInfo::name).collect()
}

#[test]
fn tables_list_parents_first_through_three_levels() {
    let _guard = LeakCheck::new();
    assert_eq!(names(Base::FIELDS), ["span_id", "note"]);
    assert_eq!(
        names(Mid::FIELDS),
        ["span_id", "note", "cache", "label", "child"]
    );
    assert_eq!(
        names(Leaf::FIELDS),
        ["span_id", "note", "cache", "label", "child", "weight"]
    );
    // The registry hands out the same table.
    let refl = Leaf::type_info().reflection();
    assert!(core::ptr::eq(refl.fields(), Leaf::FIELDS));
    assert!(!refl.is_opaque());
    assert!(refl.can_create());
    let reflected: Vec<_> = refl.reflected_fields().map(FieldInfo::name).collect();
    assert_eq!(reflected, ["span_id", "note", "label", "child", "weight"]);
    assert_eq!(refl.field("span_id").map(FieldInfo::name), Some("span_id"));
    assert!(refl.field("span").is_none(), "the Rust name is replaced");
    assert!(
        refl.field("cache").is_none(),
        "skipped fields are not found"
    );
    assert!(
        refl.field("base").is_none(),
        "the parent field is not a field"
    );
    // Each level's table is a prefix of its children's.
    for (a, b) in Mid::FIELDS.iter().zip(Leaf::FIELDS) {
        assert_eq!(
            (a.name(), a.offset(), a.flags()),
            (b.name(), b.offset(), b.flags())
        );
    }
    let l: ObjectRef = leaf(1, "l", None, 0.0).into_object_ref();
    assert_eq!(
        field_names(&l),
        ["span_id", "note", "label", "child", "weight"]
    );
}

#[test]
fn offsets_match_offset_of() {
    let _guard = LeakCheck::new();
    let want = [
        core::mem::offset_of!(Leaf, base.base.span),
        core::mem::offset_of!(Leaf, base.base.note),
        core::mem::offset_of!(Leaf, base.cache),
        core::mem::offset_of!(Leaf, base.label),
        core::mem::offset_of!(Leaf, base.child),
        core::mem::offset_of!(Leaf, weight),
    ];
    let got: Vec<usize> = Leaf::FIELDS.iter().map(FieldInfo::offset).collect();
    assert_eq!(got, want);
    // Inherited fields sit where the parent has them (the parent is at offset 0).
    assert_eq!(Base::FIELDS[1].offset(), core::mem::offset_of!(Base, note));
    assert_eq!(Mid::FIELDS[3].offset(), core::mem::offset_of!(Mid, label));
    // Every offset is past the header and inside the struct.
    for f in Leaf::FIELDS {
        assert!(f.offset() >= size_of::<Object>(), "{f:?}");
        assert!(f.offset() < size_of::<Leaf>(), "{f:?}");
    }
    let all: Vec<usize> = AllTypes::FIELDS.iter().map(FieldInfo::offset).collect();
    assert_eq!(all[0], core::mem::offset_of!(AllTypes, a_i8));
    assert_eq!(all[12], core::mem::offset_of!(AllTypes, a_bool));
    assert_eq!(all[24], core::mem::offset_of!(AllTypes, a_shape));
}

#[test]
fn flags_kinds_and_rust_types() {
    let _guard = LeakCheck::new();
    let f = Leaf::FIELDS;
    let flags: Vec<FieldFlags> = f.iter().map(FieldInfo::flags).collect();
    assert_eq!(
        flags,
        [
            FieldFlags::READ_ONLY,
            FieldFlags::NO_EQUALITY,
            FieldFlags::SKIPPED,
            // An `object_core::String`: one `Any` cell, readable in place.
            FieldFlags::ANY_LAYOUT,
            FieldFlags::OPTIONAL,
            FieldFlags::READ_ONLY.union(FieldFlags::NO_EQUALITY),
        ]
    );
    assert_eq!(f[5].flags().bits(), 3);
    assert!(f[5].flags().contains(FieldFlags::READ_ONLY));
    assert!(!f[0].flags().contains(FieldFlags::NO_EQUALITY));
    assert_eq!(format!("{:?}", f[5].flags()), "{READ_ONLY, NO_EQUALITY}");
    assert_eq!(format!("{:?}", FieldFlags::NONE), "{}");
    let reflected: Vec<bool> = f.iter().map(FieldInfo::is_reflected).collect();
    assert_eq!(reflected, [true, true, false, true, true, true]);

    let kinds: Vec<FieldKind> = f.iter().map(FieldInfo::kind).collect();
    assert_eq!(
        kinds,
        [
            FieldKind::Int,
            FieldKind::Str,
            FieldKind::Opaque,
            FieldKind::Str,
            FieldKind::Object,
            FieldKind::Float,
        ]
    );
    let keys: Vec<&str> = f.iter().map(FieldInfo::static_type_key).collect();
    assert_eq!(
        keys,
        ["int", "ffi.String", "", "ffi.String", "rtest.Base", "float"]
    );
    let rust: Vec<&str> = f.iter().map(FieldInfo::rust_type).collect();
    assert_eq!(
        rust,
        [
            "u32",
            "std::string::String",
            "Cache",
            "String",
            "Option<ObjectPtr<Base>>",
            "f64"
        ]
    );
    let shown = format!("{:?}", f[4]);
    assert!(shown.contains("name: \"child\""), "{shown}");
    assert!(shown.contains("kind: Object"), "{shown}");
    assert!(shown.contains("{OPTIONAL}"), "{shown}");
}

#[test]
fn every_field_type_has_its_kind_and_static_type() {
    let _guard = LeakCheck::new();
    use FieldKind as K;
    let want: [(&str, K, &str, Option<u32>, bool); 25] = [
        ("a_i8", K::Int, "int", Some(ti::INT), true),
        ("a_i16", K::Int, "int", Some(ti::INT), true),
        ("a_i32", K::Int, "int", Some(ti::INT), true),
        ("a_i64", K::Int, "int", Some(ti::INT), true),
        ("a_u8", K::Int, "int", Some(ti::INT), true),
        ("a_u16", K::Int, "int", Some(ti::INT), true),
        ("a_u32", K::Int, "int", Some(ti::INT), true),
        ("a_u64", K::Int, "int", Some(ti::INT), true),
        ("a_usize", K::Int, "int", Some(ti::INT), true),
        ("a_isize", K::Int, "int", Some(ti::INT), true),
        ("a_f32", K::Float, "float", Some(ti::FLOAT), true),
        ("a_f64", K::Float, "float", Some(ti::FLOAT), true),
        ("a_bool", K::Bool, "bool", Some(ti::BOOL), true),
        ("a_std_str", K::Str, "ffi.String", Some(ti::STRING), false),
        ("a_str", K::Str, "ffi.String", Some(ti::STRING), false),
        (
            "a_dtype",
            K::DataType,
            "DataType",
            Some(ti::DATA_TYPE),
            true,
        ),
        ("a_device", K::Device, "Device", Some(ti::DEVICE), false),
        ("a_any", K::Any, "Any", None, false),
        (
            "a_node",
            K::Object,
            "rtest.Base",
            Some(Base::type_index()),
            false,
        ),
        ("a_ref", K::Object, "ffi.Object", Some(ti::OBJECT), false),
        (
            "a_opt_node",
            K::Object,
            "rtest.Base",
            Some(Base::type_index()),
            false,
        ),
        ("a_opt_int", K::Int, "int", Some(ti::INT), false),
        ("a_array", K::Object, "ffi.Array", Some(ti::ARRAY), false),
        ("a_map", K::Object, "ffi.Map", Some(ti::MAP), false),
        ("a_shape", K::Object, "ffi.Shape", Some(ti::SHAPE), false),
    ];
    assert_eq!(AllTypes::FIELDS.len(), want.len());
    for (f, (name, kind, key, index, inline)) in AllTypes::FIELDS.iter().zip(want) {
        assert_eq!(f.name(), name);
        assert_eq!(f.kind(), kind, "{name}");
        assert_eq!(f.static_type_key(), key, "{name}");
        assert_eq!(f.static_type_index(), index, "{name}");
        assert_eq!(f.is_inline_pod(), inline, "{name}");
        let optional = name.starts_with("a_opt");
        assert_eq!(f.flags().contains(FieldFlags::OPTIONAL), optional, "{name}");
        let any_layout = matches!(name, "a_str" | "a_any");
        assert_eq!(
            f.flags().contains(FieldFlags::ANY_LAYOUT),
            any_layout,
            "{name}"
        );
        assert_eq!(
            f.flags(),
            match (optional, any_layout) {
                (true, _) => FieldFlags::OPTIONAL,
                (false, true) => FieldFlags::ANY_LAYOUT,
                (false, false) => FieldFlags::NONE,
            }
        );
    }
    // A skipped field has no static type.
    assert_eq!(Mid::FIELDS[2].static_type_index(), None);
    // Built-ins are opaque: no fields, cannot be created.
    for info in [
        object_core::registry::type_info(ti::ARRAY).unwrap(),
        object_core::registry::type_info_by_key("ffi.Map").unwrap(),
        object_core::registry::type_info_by_key("ffi.String").unwrap(),
    ] {
        let r = info.reflection();
        assert!(r.is_opaque(), "{}", info.key());
        assert!(!r.can_create(), "{}", info.key());
        assert_eq!(r.reflected_fields().count(), 0, "{}", info.key());
    }
    // The root has no fields but can be created; value kinds have nothing.
    let root = Object::type_info().reflection();
    assert!(root.fields().is_empty() && root.can_create() && !root.is_opaque());
    let int_info = object_core::registry::type_info(ti::INT).unwrap();
    assert!(int_info.reflection().fields().is_empty());
    assert!(!int_info.reflection().can_create());
}

// ---------------------------------------------------------------------------------
// get_attr and create, every field type.
// ---------------------------------------------------------------------------------

#[test]
fn every_field_type_round_trips_through_create_and_get_attr() {
    let _guard = LeakCheck::new();
    let objects = Objects::new();
    let o = make_all(all_entries(&objects)).expect("valid fields");
    assert_eq!(o.type_key(), "rtest.AllTypes");
    let t = o.downcast_ref::<AllTypes>().unwrap();
    assert_eq!(t.a_i8, -128);
    assert_eq!(t.a_i16, 32767);
    assert_eq!(t.a_i32, i32::MIN);
    assert_eq!(t.a_i64, i64::MIN);
    assert_eq!(t.a_u8, 255);
    assert_eq!(t.a_u16, 65535);
    assert_eq!(t.a_u32, u32::MAX);
    assert_eq!(t.a_u64, i64::MAX as u64);
    assert_eq!(t.a_usize, 7);
    assert_eq!(t.a_isize, -7);
    assert_eq!(t.a_f32, 0.5);
    assert_eq!(t.a_f64, -2.25);
    assert!(t.a_bool);
    assert_eq!(t.a_std_str, "short");
    assert_eq!(t.a_str.as_str(), LONG);
    assert_eq!(t.a_dtype, DataType::float(32));
    assert_eq!(t.a_device, Device::cpu());
    assert_eq!(t.a_any, Any::from(objects.any.clone()));
    assert!(ObjectPtr::ptr_eq(&t.a_node, &objects.node));
    assert!(ObjectPtr::ptr_eq(&t.a_ref, &objects.object));
    assert!(t.a_opt_node.is_none());
    assert_eq!(t.a_opt_int, Some(5));
    assert!(
        Array::ptr_eq(&t.a_array, &objects.array),
        "objects are shared, not copied"
    );
    assert!(Map::ptr_eq(&t.a_map, &objects.map));
    assert!(ObjectPtr::ptr_eq(
        t.a_shape.as_object_ptr(),
        objects.shape.as_object_ptr()
    ));

    // get_attr gives back what went in.
    for (name, value) in all_entries(&objects) {
        let got = get_attr(&o, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got, value, "{name}");
    }
    assert_eq!(get_attr(&o, "a_f32").unwrap().as_float(), Some(0.5));
    assert_eq!(get_attr(&o, "a_u8").unwrap().as_int(), Some(255));

    // A generic copy: every field read back and fed to `create` again.
    let copy = make_all(
        ALL_NAMES
            .iter()
            .map(|&n| (n, get_attr(&o, n).unwrap()))
            .collect(),
    )
    .unwrap();
    assert!(!ObjectPtr::ptr_eq(&copy, &o));
    for name in ALL_NAMES {
        assert_eq!(
            get_attr(&copy, name).unwrap(),
            get_attr(&o, name).unwrap(),
            "{name}"
        );
    }
    assert_eq!(format!("{copy:?}"), format!("{o:?}"));

    // Some options and the object string kept as it was given.
    let shared = String::from(LONG);
    let o2 = make_all(with(
        with(
            with(
                all_entries(&objects),
                "a_opt_node",
                Some(Any::from(objects.node.clone())),
            ),
            "a_opt_int",
            Some(Any::NONE),
        ),
        "a_str",
        Some(Any::from(shared.clone())),
    ))
    .unwrap();
    let t2 = o2.downcast_ref::<AllTypes>().unwrap();
    assert!(ObjectPtr::ptr_eq(
        t2.a_opt_node.as_ref().unwrap(),
        &objects.node
    ));
    assert_eq!(t2.a_opt_int, None);
    assert_eq!(get_attr(&o2, "a_opt_int").unwrap(), Any::NONE);
    assert!(get_attr(&o2, "a_opt_int").unwrap().is_none());
    assert_eq!(
        get_attr(&o2, "a_opt_node").unwrap(),
        Any::from(objects.node.clone())
    );
    // An `ffi.String` object given to an `String` field is shared.
    let back = String::try_from(get_attr(&o2, "a_str").unwrap()).unwrap();
    assert!(!back.is_inline());
    assert!(String::ptr_eq(&back, &shared));
    // An option field may be left out: it is `None`.
    let o3 = make_all(with(
        with(all_entries(&objects), "a_opt_node", None),
        "a_opt_int",
        None,
    ))
    .unwrap();
    let t3 = o3.downcast_ref::<AllTypes>().unwrap();
    assert!(t3.a_opt_node.is_none() && t3.a_opt_int.is_none());
}

#[test]
fn integer_fields_check_their_range() {
    let _guard = LeakCheck::new();
    let objects = Objects::new();
    let bad: [(&'static str, i64, &str); 12] = [
        ("a_i8", 128, "int8"),
        ("a_i8", -129, "int8"),
        ("a_i16", 32768, "int16"),
        ("a_i16", -32769, "int16"),
        ("a_i32", i64::from(i32::MAX) + 1, "int32"),
        ("a_u8", 256, "uint8"),
        ("a_u8", -1, "uint8"),
        ("a_u16", 65536, "uint16"),
        ("a_u16", -1, "uint16"),
        ("a_u32", 1 << 32, "uint32"),
        ("a_u64", -1, "uint64"),
        ("a_usize", -1, "usize"),
    ];
    for (name, value, ty) in bad {
        let e =
            make_all(with(all_entries(&objects), name, Some(Any::from(value)))).expect_err(name);
        assert_eq!(e.kind(), ReflectErrorKind::WrongType, "{name} = {value}");
        assert_eq!((e.type_key(), e.field()), ("rtest.AllTypes", Some(name)));
        let t = e.type_error().expect("the failed conversion");
        assert_eq!(
            (&*t.expected, t.actual),
            (&*format!("{ty} (in range)"), "int")
        );
        assert_eq!(
            e.to_string(),
            format!("field `{name}` of `rtest.AllTypes`: expected {ty} (in range), got int"),
        );
    }
    // The bounds themselves are fine.
    for (name, value) in [
        ("a_i8", 127),
        ("a_i8", -128),
        ("a_u8", 0),
        ("a_i16", -32768),
        ("a_u16", 0),
        ("a_i32", i64::from(i32::MAX)),
        ("a_u32", 0),
        ("a_u64", 0),
        ("a_isize", i64::MIN),
        ("a_isize", i64::MAX),
    ] {
        let o = make_all(with(all_entries(&objects), name, Some(Any::from(value))))
            .unwrap_or_else(|e| panic!("{name} = {value}: {e}"));
        assert_eq!(get_attr(&o, name).unwrap().as_int(), Some(value));
    }
}

#[test]
fn unsigned_beyond_i64_max_is_an_error_on_read() {
    let _guard = LeakCheck::new();
    let objects = Objects::new();
    let o = make_all(all_entries(&objects)).unwrap();
    let mut o = o.downcast::<AllTypes>().ok().unwrap();
    {
        let fields = ObjectPtr::get_mut(&mut o).expect("unique");
        *fields.a_u64 = u64::MAX;
        *fields.a_usize = i64::MAX as usize + 1;
    }
    let o = o.into_object_ref();
    let e = get_attr(&o, "a_u64").unwrap_err();
    assert_eq!(e.kind(), ReflectErrorKind::OutOfRange);
    assert_eq!(e.field(), Some("a_u64"));
    assert_eq!(
        e.to_string(),
        "field `a_u64` of `rtest.AllTypes`: expected int (an i64), got u64 beyond i64::MAX"
    );
    let e = get_attr(&o, "a_usize").unwrap_err();
    assert_eq!(e.kind(), ReflectErrorKind::OutOfRange);
    // At the packed-call boundary, the same `TypeError` as ever.
    assert_eq!(
        Error::from(e).to_string(),
        "TypeError: field `a_usize` of `rtest.AllTypes`: expected int (an i64), got usize beyond i64::MAX"
    );
    // The visitor gets it exactly, through `visit_u64`; the printer shows it.
    let mut r = Recorder::default();
    visit_object_attrs(&o, &mut r);
    assert!(
        r.0.contains(&"u64 a_u64=18446744073709551615".to_owned()),
        "{:?}",
        r.0
    );
    assert!(format!("{o:?}").contains("a_u64: 18446744073709551615,"));
}

#[test]
fn floats_accept_ints_and_bools_do_not() {
    let _guard = LeakCheck::new();
    let objects = Objects::new();
    let o = make_all(with(
        with(all_entries(&objects), "a_f32", Some(Any::from(3))),
        "a_f64",
        Some(Any::from(-4)),
    ))
    .unwrap();
    let t = o.downcast_ref::<AllTypes>().unwrap();
    assert_eq!((t.a_f32, t.a_f64), (3.0, -4.0));
    assert_eq!(get_attr(&o, "a_f32").unwrap(), Any::from(3.0));
    // A float is not an int, a bool is neither, an int is not a bool.
    let cases: [(&'static str, Any, &str); 8] = [
        ("a_i64", Any::from(1.0), "expected int, got float"),
        ("a_f64", Any::from(true), "expected float, got bool"),
        ("a_f32", Any::from("1.5"), "expected float, got ffi.String"),
        ("a_bool", Any::from(1), "expected bool, got int"),
        ("a_std_str", Any::from(1), "expected ffi.String, got int"),
        ("a_str", Any::from(true), "expected ffi.String, got bool"),
        (
            "a_dtype",
            Any::from("float32"),
            "expected DataType, got ffi.String",
        ),
        (
            "a_device",
            Any::from(DataType::int(8)),
            "expected Device, got DataType",
        ),
    ];
    for (name, value, msg) in cases {
        let e = make_all(with(all_entries(&objects), name, Some(value))).unwrap_err();
        assert_eq!(e.kind(), ReflectErrorKind::WrongType);
        assert_eq!(e.field(), Some(name));
        assert_eq!(
            e.to_string(),
            format!("field `{name}` of `rtest.AllTypes`: {msg}")
        );
    }
}

#[test]
fn object_fields_check_the_static_type() {
    let _guard = LeakCheck::new();
    let objects = Objects::new();
    let cases: [(&'static str, Any, &str); 8] = [
        (
            "a_node",
            Any::from(objects.object.clone()),
            "expected rtest.Base, got ffi.Object",
        ),
        ("a_node", Any::NONE, "expected rtest.Base, got None"),
        ("a_ref", Any::from(1), "expected ffi.Object, got int"),
        (
            "a_opt_node",
            Any::from(var("x")),
            "expected rtest.Base, got rtest.Var",
        ),
        ("a_array", Any::from(objects.map.clone()), "ffi.Map"),
        ("a_map", Any::from(objects.array.clone()), "ffi.Array"),
        ("a_shape", Any::from(objects.array.clone()), "ffi.Array"),
        ("a_opt_int", Any::from("x"), "expected int, got ffi.String"),
    ];
    for (name, value, msg) in cases {
        let e = make_all(with(all_entries(&objects), name, Some(value))).unwrap_err();
        assert_eq!(e.kind(), ReflectErrorKind::WrongType, "{name}");
        assert_eq!(e.field(), Some(name));
        let prefix = format!("field `{name}` of `rtest.AllTypes`: ");
        assert!(e.to_string().starts_with(&prefix), "{e}");
        assert!(e.to_string().contains(msg), "{e}");
    }
    // An array of the wrong item type.
    let strings: Array<Any> = vec![Any::from("a")].into();
    let e = make_all(with(
        all_entries(&objects),
        "a_array",
        Some(Any::from(strings)),
    ))
    .unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        (ReflectErrorKind::WrongType, Some("a_array"))
    );
    // A descendant is accepted where its ancestor is expected.
    let l = leaf(9, "l", None, 1.0);
    let o = make_all(with(
        all_entries(&objects),
        "a_node",
        Some(Any::from(l.clone())),
    ))
    .unwrap();
    assert_eq!(get_attr(&o, "a_node").unwrap(), Any::from(l));
    // `ObjectRef` takes any object, a string or an array too.
    let o = make_all(with(all_entries(&objects), "a_ref", Some(Any::from(LONG)))).unwrap();
    assert_eq!(get_attr(&o, "a_ref").unwrap().as_str(), Some(LONG));
}

#[test]
fn any_fields_keep_every_kind() {
    let _guard = LeakCheck::new();
    let objects = Objects::new();
    for value in [
        Any::NONE,
        Any::from(1),
        Any::from(2.5),
        Any::from(false),
        Any::from("s"),
        Any::from(LONG),
        Any::from(DataType::bool()),
        Any::from(Device::cpu()),
        Any::from(objects.array.clone()),
        Any::from(node(3)),
    ] {
        let o = make_all(with(all_entries(&objects), "a_any", Some(value.clone()))).unwrap();
        assert_eq!(get_attr(&o, "a_any").unwrap(), value);
        assert_eq!(o.downcast_ref::<AllTypes>().unwrap().a_any, value);
    }
}

// ---------------------------------------------------------------------------------
// Visitors.
// ---------------------------------------------------------------------------------

/// Records which typed method saw which field.
#[derive(Default)]
struct Recorder(Vec<std::string::String>);

impl AttrVisitor for Recorder {
    fn visit_any(&mut self, f: &FieldInfo, v: AnyView<'_>) {
        self.0.push(format!("any {}={v:?}", f.name()));
    }
    fn visit_i64(&mut self, f: &FieldInfo, v: i64) {
        self.0.push(format!("i64 {}={v}", f.name()));
    }
    fn visit_u64(&mut self, f: &FieldInfo, v: u64) {
        self.0.push(format!("u64 {}={v}", f.name()));
    }
    fn visit_f64(&mut self, f: &FieldInfo, v: f64) {
        self.0.push(format!("f64 {}={v:?}", f.name()));
    }
    fn visit_bool(&mut self, f: &FieldInfo, v: bool) {
        self.0.push(format!("bool {}={v}", f.name()));
    }
    fn visit_str(&mut self, f: &FieldInfo, v: &str) {
        self.0.push(format!("str {}={v:?}", f.name()));
    }
    fn visit_data_type(&mut self, f: &FieldInfo, v: DataType) {
        self.0.push(format!("dtype {}={v}", f.name()));
    }
    fn visit_device(&mut self, f: &FieldInfo, v: Device) {
        self.0.push(format!("device {}={v}", f.name()));
    }
    fn visit_object(&mut self, f: &FieldInfo, v: Option<&ObjectRef>) {
        let key = v.map_or("<none>", |o| o.type_key());
        self.0.push(format!("object {}={key}", f.name()));
    }
    fn visit_none(&mut self, f: &FieldInfo) {
        self.0.push(format!("none {}", f.name()));
    }
}

/// Implements only `visit_any`: every typed method must fall back to it.
#[derive(Default)]
struct AnyOnly(Vec<std::string::String>);

impl AttrVisitor for AnyOnly {
    fn visit_any(&mut self, f: &FieldInfo, v: AnyView<'_>) {
        self.0.push(format!("{}={v:?}", f.name()));
    }
}

#[test]
fn visitors_get_typed_calls_in_table_order() {
    let _guard = LeakCheck::new();
    let objects = Objects::new();
    let o = make_all(all_entries(&objects)).unwrap();
    let mut r = Recorder::default();
    visit_object_attrs(&o, &mut r);
    let dev = Device::cpu().to_string();
    let want = [
        "i64 a_i8=-128".to_owned(),
        "i64 a_i16=32767".to_owned(),
        format!("i64 a_i32={}", i32::MIN),
        format!("i64 a_i64={}", i64::MIN),
        "i64 a_u8=255".to_owned(),
        "i64 a_u16=65535".to_owned(),
        format!("i64 a_u32={}", u32::MAX),
        format!("i64 a_u64={}", i64::MAX),
        "i64 a_usize=7".to_owned(),
        "i64 a_isize=-7".to_owned(),
        "f64 a_f32=0.5".to_owned(),
        "f64 a_f64=-2.25".to_owned(),
        "bool a_bool=true".to_owned(),
        "str a_std_str=\"short\"".to_owned(),
        format!("str a_str={LONG:?}"),
        "dtype a_dtype=float32".to_owned(),
        format!("device a_device={dev}"),
        "any a_any=rtest.Base { span_id: 1, note: \"node\" }".to_owned(),
        "object a_node=rtest.Base".to_owned(),
        "object a_ref=ffi.Object".to_owned(),
        "none a_opt_node".to_owned(),
        "i64 a_opt_int=5".to_owned(),
        "object a_array=ffi.Array".to_owned(),
        "object a_map=ffi.Map".to_owned(),
        "object a_shape=ffi.Shape".to_owned(),
    ];
    assert_eq!(r.0, want);

    // The static entry point sees the same.
    let mut s = Recorder::default();
    o.downcast_ref::<AllTypes>().unwrap().visit_attrs(&mut s);
    assert_eq!(s.0, r.0);

    // Skipped fields are not visited; inherited ones come first.
    let child = node(4);
    let l = leaf(3, "lbl", Some(child), 0.25).into_object_ref();
    let mut r = Recorder::default();
    visit_object_attrs(&l, &mut r);
    assert_eq!(
        r.0,
        [
            "i64 span_id=3",
            "str note=\"n\"",
            "str label=\"lbl\"",
            "object child=rtest.Base",
            "f64 weight=0.25",
        ]
    );
}

#[test]
fn typed_visits_default_to_visit_any() {
    let _guard = LeakCheck::new();
    let objects = Objects::new();
    let o = make_all(all_entries(&objects)).unwrap();
    let mut v = AnyOnly::default();
    visit_object_attrs(&o, &mut v);
    assert_eq!(v.0.len(), ALL_NAMES.len());
    assert_eq!(v.0[0], "a_i8=-128");
    assert_eq!(v.0[10], "a_f32=0.5");
    assert_eq!(v.0[12], "a_bool=true");
    assert_eq!(v.0[13], "a_std_str=\"short\"");
    assert_eq!(v.0[15], "a_dtype=float32");
    assert_eq!(v.0[18], "a_node=rtest.Base { span_id: 2, note: \"node\" }");
    assert_eq!(v.0[20], "a_opt_node=None");
    assert_eq!(v.0[22], "a_array=[1, 2, 3]");
    assert_eq!(v.0[24], "a_shape=[2, 3]");
}

// ---------------------------------------------------------------------------------
// create errors.
// ---------------------------------------------------------------------------------

fn base_entries() -> Vec<(&'static str, Any)> {
    vec![("span_id", Any::from(1)), ("note", Any::from("n"))]
}

#[test]
fn create_fills_skipped_fields_with_default_and_builds_parents() {
    let _guard = LeakCheck::new();
    let child = node(8);
    let o = create(
        "rtest.Leaf",
        [
            ("weight", Any::from(1.5)),
            ("child", Any::from(child.clone())),
            ("label", Any::from("lab")),
            ("note", Any::from(LONG)),
            ("span_id", Any::from(11)),
        ],
    )
    .unwrap();
    assert_eq!(o.type_key(), "rtest.Leaf");
    let l = o.downcast_ref::<Leaf>().unwrap();
    assert_eq!(l.weight, 1.5);
    assert_eq!(l.base.cache, Cache(42), "filled by Default");
    assert_eq!(l.base.label.as_str(), "lab");
    assert!(ObjectPtr::ptr_eq(l.base.child.as_ref().unwrap(), &child));
    assert_eq!(l.base.base.span, 11);
    assert_eq!(l.base.base.note, LONG);
    assert!(o.is::<Mid>() && o.is::<Base>());
    // The option left out.
    let o = create(
        "rtest.Mid",
        base_entries()
            .into_iter()
            .chain([("label", Any::from("m"))]),
    )
    .unwrap();
    let m = o.downcast_ref::<Mid>().unwrap();
    assert!(m.child.is_none());
    assert_eq!(m.cache, Cache(42));
    // The root type has no fields.
    let o = create("ffi.Object", []).unwrap();
    assert_eq!(o.type_key(), "ffi.Object");
    assert_eq!(format!("{o:?}"), "ffi.Object");
}

#[test]
fn create_errors_name_the_field_and_the_type() {
    let _guard = LeakCheck::new();
    let e = create("rtest.NoSuchType", base_entries()).unwrap_err();
    assert_eq!(e.kind(), ReflectErrorKind::UnknownType);
    assert_eq!((e.type_key(), e.field()), ("rtest.NoSuchType", None));
    assert_eq!(e.to_string(), "unknown type key `rtest.NoSuchType`");
    // Value kinds are not object types.
    let e = create("int", []).unwrap_err();
    assert_eq!(e.kind(), ReflectErrorKind::UnknownType);

    let e = create("rtest.Base", [("span_id", Any::from(1))]).unwrap_err();
    assert_eq!(e.kind(), ReflectErrorKind::MissingField);
    assert_eq!((e.type_key(), e.field()), ("rtest.Base", Some("note")));
    assert_eq!(
        e.to_string(),
        "missing field `note` (ffi.String) of `rtest.Base`"
    );
    let e = create("rtest.Leaf", base_entries()).unwrap_err();
    assert_eq!(
        (e.kind(), e.type_key(), e.field()),
        (ReflectErrorKind::MissingField, "rtest.Leaf", Some("label"))
    );
    assert_eq!(
        e.to_string(),
        "missing field `label` (ffi.String) of `rtest.Leaf`"
    );

    let e = create(
        "rtest.Base",
        base_entries().into_iter().chain([("extra", Any::from(1))]),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ReflectErrorKind::ExtraField);
    assert_eq!(e.field(), Some("extra"));
    assert_eq!(e.to_string(), "`rtest.Base` has no field `extra`");
    // A renamed field is known by its new name only, a skipped one not at all.
    let e = create(
        "rtest.Base",
        [("span", Any::from(1)), ("note", Any::from("n"))],
    )
    .unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        (ReflectErrorKind::MissingField, Some("span_id"))
    );
    assert_eq!(
        e.to_string(),
        "missing field `span_id` (int) of `rtest.Base`"
    );
    let e = create(
        "rtest.Mid",
        base_entries()
            .into_iter()
            .chain([("label", Any::from("m")), ("cache", Any::from(1))]),
    )
    .unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        (ReflectErrorKind::ExtraField, Some("cache"))
    );
    assert_eq!(e.to_string(), "`rtest.Mid` has no field `cache`");

    let e = create(
        "rtest.Base",
        [
            ("span_id", Any::from(1)),
            ("note", Any::from("a")),
            ("span_id", Any::from(2)),
        ],
    )
    .unwrap_err();
    assert_eq!(e.kind(), ReflectErrorKind::DuplicateField);
    assert_eq!(e.field(), Some("span_id"));
    assert_eq!(
        e.to_string(),
        "field `span_id` of `rtest.Base` is given twice"
    );

    let e = create(
        "rtest.Base",
        [("span_id", Any::from("one")), ("note", Any::from("n"))],
    )
    .unwrap_err();
    assert_eq!(e.kind(), ReflectErrorKind::WrongType);
    assert_eq!(
        Error::from(e).to_string(),
        "TypeError: field `span_id` of `rtest.Base`: expected uint32, got ffi.String"
    );
    // Inherited fields are reported under the type being built.
    let e = create(
        "rtest.Leaf",
        [
            ("span_id", Any::from(1)),
            ("note", Any::from(2)),
            ("label", Any::from("l")),
            ("weight", Any::from(1.0)),
        ],
    )
    .unwrap_err();
    assert_eq!(
        (e.kind(), e.type_key(), e.field()),
        (ReflectErrorKind::WrongType, "rtest.Leaf", Some("note"))
    );
    assert_eq!(
        e.to_string(),
        "field `note` of `rtest.Leaf`: expected ffi.String, got int"
    );

    // A name that is no field, twice, is still an unknown field.
    let e = create(
        "rtest.Base",
        base_entries()
            .into_iter()
            .chain([("zz", Any::from(1)), ("zz", Any::from(2))]),
    )
    .unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        (ReflectErrorKind::ExtraField, Some("zz"))
    );
    assert_eq!(e.to_string(), "`rtest.Base` has no field `zz`");

    // Opaque built-ins cannot be built from fields.
    for key in [
        "ffi.Array",
        "ffi.Map",
        "ffi.String",
        "ffi.Shape",
        "rtest.Bomb",
    ] {
        let e = create(key, []).unwrap_err();
        assert_eq!(e.kind(), ReflectErrorKind::NotCreatable, "{key}");
        assert_eq!(e.type_key(), key);
        assert_eq!(
            e.to_string(),
            format!("`{key}` cannot be created from fields")
        );
    }
}

#[test]
fn failed_creates_release_every_value() {
    let _guard = LeakCheck::new();
    let objects = Objects::new();
    let before = ObjectPtr::strong_count(&objects.node);
    // Fails late (the last field), after the object-valued fields were taken.
    let e = make_all(with(all_entries(&objects), "a_shape", Some(Any::from(1)))).unwrap_err();
    assert_eq!(e.kind(), ReflectErrorKind::WrongType);
    // Fails after the object was built (an extra field).
    let mut extra = all_entries(&objects);
    extra.push(("zzz", Any::from(node(0))));
    assert_eq!(
        make_all(extra).unwrap_err().kind(),
        ReflectErrorKind::ExtraField
    );
    // Fails on a missing field, with objects given.
    let missing = with(all_entries(&objects), "a_u8", None);
    assert_eq!(
        make_all(missing).unwrap_err().kind(),
        ReflectErrorKind::MissingField
    );
    // An unknown type.
    assert_eq!(
        create("rtest.Nope", all_entries(&objects))
            .unwrap_err()
            .kind(),
        ReflectErrorKind::UnknownType
    );
    assert_eq!(ObjectPtr::strong_count(&objects.node), before);
    let child = node(1);
    let e = create(
        "rtest.Leaf",
        [
            ("span_id", Any::from(1)),
            ("note", Any::from(LONG)),
            ("label", Any::from(LONG)),
            ("child", Any::from(child.clone())),
            ("weight", Any::from("heavy")),
        ],
    )
    .unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        (ReflectErrorKind::WrongType, Some("weight"))
    );
    assert_eq!(ObjectPtr::strong_count(&child), 1);
}

#[test]
fn create_from_source_takes_every_entry() {
    let _guard = LeakCheck::new();
    let info = object_core::registry::type_info_by_key("rtest.Mid").unwrap();
    let child = node(2);
    let mut entries: Vec<(&str, Option<Any>)> = vec![
        ("label", Some(Any::from("m"))),
        ("span_id", Some(Any::from(4))),
        ("child", Some(Any::from(child.clone()))),
        ("note", Some(Any::from("n"))),
    ];
    let mut src = FieldSource::new(info.key(), &mut entries);
    let o = create_from_source(info, &mut src).unwrap();
    assert!(
        entries.iter().all(|(_, v)| v.is_none()),
        "every value was moved"
    );
    assert_eq!(ObjectPtr::strong_count(&child), 2);
    assert_eq!(
        format!("{o:?}"),
        r#"rtest.Mid { span_id: 4, note: "n", label: "m", child: rtest.Base { span_id: 2, note: "node" } }"#
    );
    // A failed build leaves the values it did not reach where they were.
    let mut entries: Vec<(&str, Option<Any>)> = vec![
        ("span_id", Some(Any::from(-1))),
        ("note", Some(Any::from("n"))),
    ];
    let mut src = FieldSource::new(info.key(), &mut entries);
    let e = create_from_source(info, &mut src).unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        (ReflectErrorKind::WrongType, Some("span_id"))
    );
    assert_eq!(
        e.to_string(),
        "field `span_id` of `rtest.Mid`: expected uint32 (in range), got int"
    );
    assert!(entries[1].1.is_some());
    // Opaque types refuse before taking anything.
    let array = object_core::registry::type_info(ti::ARRAY).unwrap();
    let mut entries: Vec<(&str, Option<Any>)> = vec![("len", Some(Any::from(1)))];
    let mut src = FieldSource::new(array.key(), &mut entries);
    let e = create_from_source(array, &mut src).unwrap_err();
    assert_eq!(e.kind(), ReflectErrorKind::NotCreatable);
    assert_eq!(
        Error::from(e).to_string(),
        "TypeError: `ffi.Array` cannot be created from fields"
    );
    assert!(entries[0].1.is_some());
}

// ---------------------------------------------------------------------------------
// Run-time registered descendants.
// ---------------------------------------------------------------------------------

fn runtime_leaf() -> &'static TypeInfo {
    static INFO: OnceLock<&'static TypeInfo> = OnceLock::new();
    INFO.get_or_init(|| {
        register_type(&TypeSpec::new("rtest.RuntimeLeaf", "rtest.Leaf")).expect("registered")
    })
}

fn runtime_base() -> &'static TypeInfo {
    static INFO: OnceLock<&'static TypeInfo> = OnceLock::new();
    INFO.get_or_init(|| {
        let mid =
            register_type(&TypeSpec::new("rtest.RuntimeBase", "rtest.Base")).expect("registered");
        // A run-time type below a run-time type: the nearest Rust ancestor is two up.
        register_type(&TypeSpec::new("rtest.RuntimeBase2", mid.key())).expect("registered")
    })
}

#[test]
fn runtime_descendants_reuse_their_rust_ancestors_reflection() {
    let _guard = LeakCheck::new();
    let info = runtime_leaf();
    assert!(core::ptr::eq(
        info.reflection(),
        Leaf::type_info().reflection()
    ));
    assert!(info.rust_name().is_none());
    let o = create(
        "rtest.RuntimeLeaf",
        [
            ("span_id", Any::from(5)),
            ("note", Any::from("rt")),
            ("label", Any::from("x")),
            ("weight", Any::from(2)),
        ],
    )
    .unwrap();
    assert_eq!(o.type_key(), "rtest.RuntimeLeaf");
    assert_eq!(o.type_index(), info.index());
    assert!(o.is::<Leaf>() && o.is::<Base>());
    assert_eq!(o.downcast_ref::<Leaf>().unwrap().weight, 2.0);
    assert_eq!(o.downcast_ref::<Leaf>().unwrap().base.cache, Cache(42));
    assert_eq!(
        field_names(&o),
        ["span_id", "note", "label", "child", "weight"]
    );
    assert_eq!(get_attr(&o, "label").unwrap().as_str(), Some("x"));
    let e = get_attr(&o, "nope").unwrap_err();
    assert_eq!(
        (e.kind(), e.type_key(), e.field()),
        (
            ReflectErrorKind::NoSuchField,
            "rtest.RuntimeLeaf",
            Some("nope")
        )
    );
    assert_eq!(e.to_string(), "`rtest.RuntimeLeaf` has no field `nope`");
    assert_eq!(
        format!("{o:?}"),
        r#"rtest.RuntimeLeaf { span_id: 5, note: "rt", label: "x", child: None, weight: 2.0 }"#
    );
    // Errors name the run-time type.
    let e = create("rtest.RuntimeLeaf", [("span_id", Any::from(5))]).unwrap_err();
    assert_eq!(
        (e.kind(), e.type_key()),
        (ReflectErrorKind::MissingField, "rtest.RuntimeLeaf")
    );
    assert_eq!(
        e.to_string(),
        "missing field `note` (ffi.String) of `rtest.RuntimeLeaf`"
    );

    let info2 = runtime_base();
    let o = create("rtest.RuntimeBase2", base_entries()).unwrap();
    assert_eq!(o.type_index(), info2.index());
    assert_eq!(field_names(&o), ["span_id", "note"]);
    assert_eq!(
        format!("{o:?}"),
        r#"rtest.RuntimeBase2 { span_id: 1, note: "n" }"#
    );
    // Held through a typed handle, the run-time key still shows.
    let as_base: ObjectPtr<Base> = o.downcast().ok().unwrap();
    assert_eq!(
        format!("{as_base:?}"),
        r#"rtest.RuntimeBase2 { span_id: 1, note: "n" }"#
    );
    let p = pair(as_base.clone(), as_base);
    assert_eq!(
        format!("{p:?}"),
        r#"rtest.Pair { a: rtest.RuntimeBase2 #1 { span_id: 1, note: "n" }, b: #1 }"#
    );
}

#[test]
fn get_attr_of_unknown_or_skipped_names_is_an_attribute_error() {
    let _guard = LeakCheck::new();
    let l = leaf(1, "l", None, 0.0).into_object_ref();
    for name in ["cache", "span", "base", "", "weight "] {
        let e = get_attr(&l, name).unwrap_err();
        assert_eq!(e.kind(), ReflectErrorKind::NoSuchField, "{name:?}");
        assert_eq!(e.field(), Some(name));
        assert_eq!(e.to_string(), format!("`rtest.Leaf` has no field `{name}`"));
        // An `AttributeError` at the packed-call boundary, as ever.
        let e = Error::from(e);
        assert_eq!(e.kind(), "AttributeError");
        assert_eq!(e.message(), format!("`rtest.Leaf` has no field `{name}`"));
    }
    // A built-in has no fields.
    let a = Any::from(int_array(&[1]));
    let arr = a.as_object().unwrap();
    assert!(field_names(arr).is_empty());
    assert_eq!(
        get_attr(arr, "len").unwrap_err().kind(),
        ReflectErrorKind::NoSuchField
    );
}

#[test]
fn get_field_reads_only_entries_of_the_objects_own_table() {
    let _guard = LeakCheck::new();
    let l = leaf(3, "l", None, 0.5).into_object_ref();
    let table = l.type_info().reflection();
    // Every reflected entry reads like `get_attr`.
    for f in table.reflected_fields() {
        assert_eq!(get_field(&l, f).unwrap(), get_attr(&l, f.name()).unwrap());
    }
    // A skipped entry has nothing to read.
    let cache = table.fields().iter().find(|f| f.name() == "cache").unwrap();
    assert!(!cache.is_reflected());
    let e = get_field(&l, cache).unwrap_err();
    assert_eq!(
        (e.kind(), e.type_key(), e.field()),
        (ReflectErrorKind::SkippedField, "rtest.Leaf", Some("cache"))
    );
    assert_eq!(Error::from(e).kind(), "TypeError");
    // An entry of another type's table (even a parent's, at the same offset) is refused:
    // only the object's own run-time table describes it.
    let base_span = Base::type_info().reflection().field("span_id").unwrap();
    let e = get_field(&l, base_span).unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        (ReflectErrorKind::NotInTable, Some("span_id"))
    );
    assert_eq!(
        e.to_string(),
        "field `span_id` is not a field of `rtest.Leaf`"
    );
    assert_eq!(Error::from(e).kind(), "TypeError");
}

/// A lent value, owned (to compare with what `get_field` makes).
fn owned(v: ValueRef<'_>) -> Any {
    match v {
        ValueRef::Value(v) => v.to_any(),
        ValueRef::Str(s) => Any::from(s),
        ValueRef::Object(o) => Any::from(o.clone()),
    }
}

#[test]
fn field_ref_and_field_reader_lend_what_get_field_reads() {
    let _guard = LeakCheck::new();
    let objects = Objects::new();
    let o = make_all(all_entries(&objects)).expect("valid fields");
    let table = o.type_info().reflection();
    let reader = FieldReader::new(o.type_info());
    assert_eq!(format!("{reader:?}"), r#"FieldReader("rtest.AllTypes")"#);
    let fields = reader.read(&o).expect("an object of the reader's type");
    // Every field kind, by name and by position, reads as `get_field` reads it (`a_i64`
    // is `i64::MIN`, `a_u64` is `i64::MAX`).
    for (k, f) in table.fields().iter().enumerate() {
        if !f.is_reflected() {
            assert!(fields.get(k).is_none(), "{}", f.name());
            continue;
        }
        let lent = owned(field_ref(&o, f).unwrap());
        assert_eq!(lent, get_field(&o, f).unwrap(), "{}", f.name());
        assert_eq!(owned(fields.get(k).unwrap()), lent, "{}", f.name());
    }
    assert!(fields.get(table.fields().len()).is_none());
    // An object field is lent, not cloned.
    let node = table.field("a_node").unwrap();
    let ValueRef::Object(lent) = field_ref(&o, node).unwrap() else {
        panic!("an object field lends its object")
    };
    let count = ObjectPtr::strong_count(lent);
    let ValueRef::Object(again) = fields.get(node_position(table, "a_node")).unwrap() else {
        panic!("an object field lends its object")
    };
    assert!(ObjectPtr::ptr_eq(lent, again));
    assert_eq!(ObjectPtr::strong_count(again), count);

    // Only the object's own table: another type's entry is refused, as by `get_field`,
    // and a reader reads only objects of exactly its type.
    let l = leaf(1, "l", None, 0.0).into_object_ref();
    let e = field_ref(&l, table.field("a_i8").unwrap()).unwrap_err();
    assert_eq!(e.kind(), ReflectErrorKind::NotInTable);
    assert!(reader.read(&l).is_none());
    let cache = l
        .type_info()
        .reflection()
        .fields()
        .iter()
        .find(|f| f.name() == "cache");
    let e = field_ref(&l, cache.unwrap()).unwrap_err();
    assert_eq!(e.kind(), ReflectErrorKind::SkippedField);

    // A run-time type reads through its Rust ancestor's table, by its own reader only.
    let info = runtime_base();
    let rt = create(info.key(), base_entries()).unwrap();
    let fields = FieldReader::new(info).read(&rt).expect("its own type");
    for (k, f) in info.reflection().fields().iter().enumerate() {
        if f.is_reflected() {
            assert_eq!(owned(fields.get(k).unwrap()), get_field(&rt, f).unwrap());
        }
    }
    assert!(FieldReader::new(Base::type_info()).read(&rt).is_none());

    // An unsigned value beyond `i64::MAX` (read in place as a negative `i64`'s bits) is
    // refused by every exact read, as by `get_field`; a negative signed one is not.
    let mut all: ObjectPtr<AllTypes> = o.downcast().ok().unwrap();
    {
        let m = ObjectPtr::get_mut(&mut all).expect("unique");
        *m.a_u64 = u64::MAX;
        *m.a_usize = 1 << 63;
    }
    let all = all.into_object_ref();
    let fields = reader.read(&all).unwrap();
    for name in ["a_u64", "a_usize"] {
        let f = table.field(name).unwrap();
        assert_eq!(
            get_field(&all, f).unwrap_err().kind(),
            ReflectErrorKind::OutOfRange
        );
        assert_eq!(
            field_ref(&all, f).unwrap_err().kind(),
            ReflectErrorKind::OutOfRange
        );
        assert!(fields.get(node_position(table, name)).is_none(), "{name}");
    }
    let min = table.field("a_i64").unwrap();
    assert_eq!(
        owned(field_ref(&all, min).unwrap()).as_int(),
        Some(i64::MIN)
    );
}

/// The position of the field `name` in the whole table.
fn node_position(table: &TypeReflection, name: &str) -> usize {
    table
        .fields()
        .iter()
        .position(|f| f.name() == name)
        .unwrap()
}

// ---------------------------------------------------------------------------------
// The printer.
// ---------------------------------------------------------------------------------

#[test]
fn small_asts_print_exactly() {
    let _guard = LeakCheck::new();
    let e = add(var("x"), add(int(1), int(-2)));
    assert_eq!(
        format!("{e:?}"),
        r#"rtest.Add { lhs: rtest.Var { name: "x" }, rhs: rtest.Add { lhs: rtest.Int { value: 1 }, rhs: rtest.Int { value: -2 } } }"#
    );
    // The struct itself prints the same way (its static key).
    let add_ref = e.downcast_ref::<Add>().unwrap();
    assert_eq!(format!("{add_ref:?}"), format!("{e:?}"));
    // Inside an Any, an Array and a Map.
    assert_eq!(
        format!("{:?}", Any::from(int(3))),
        "Any(rtest.Int { value: 3 })"
    );
    let mut attrs: Map<String, Any> = Map::new();
    attrs.insert(String::from("inline"), Any::from(true));
    attrs.insert(String::from("dtype"), Any::from(DataType::int(32)));
    let call = make_object(Call {
        base: Expr {
            base: Object::new(),
        },
        callee: "f".to_owned(),
        args: vec![var("a"), int(2)].into_iter().collect(),
        attrs,
    });
    assert_eq!(
        format!("{call:?}"),
        r#"rtest.Call { callee: "f", args: [rtest.Var { name: "a" }, rtest.Int { value: 2 }], attrs: {"inline": true, "dtype": int32} }"#
    );
    // Every field kind.
    let objects = Objects::new();
    let o = make_all(with(
        all_entries(&objects),
        "a_std_str",
        Some(Any::from("q\"uote")),
    ))
    .unwrap();
    let want = format!(
        concat!(
            "rtest.AllTypes {{ a_i8: -128, a_i16: 32767, a_i32: -2147483648, ",
            "a_i64: -9223372036854775808, a_u8: 255, a_u16: 65535, a_u32: 4294967295, ",
            "a_u64: 9223372036854775807, a_usize: 7, a_isize: -7, a_f32: 0.5, a_f64: -2.25, ",
            "a_bool: true, a_std_str: \"q\\\"uote\", a_str: \"{}\", a_dtype: float32, ",
            "a_device: {}, a_any: rtest.Base {{ span_id: 1, note: \"node\" }}, ",
            "a_node: rtest.Base {{ span_id: 2, note: \"node\" }}, a_ref: ffi.Object, ",
            "a_opt_node: None, a_opt_int: 5, a_array: [1, 2, 3], ",
            "a_map: {{\"one\": 1, \"two\": 2}}, a_shape: [2, 3] }}"
        ),
        LONG,
        Device::cpu()
    );
    assert_eq!(format!("{o:?}"), want);
    // Skipped fields are not printed.
    let l = leaf(1, "l", None, 0.5);
    assert_eq!(
        format!("{l:?}"),
        r#"rtest.Leaf { span_id: 1, note: "n", label: "l", child: None, weight: 0.5 }"#
    );
}

#[test]
fn pretty_printing_is_multi_line() {
    let _guard = LeakCheck::new();
    let x = var("x");
    let e = add(x.clone(), add(x, int(1)));
    let want = r#"rtest.Add {
    lhs: rtest.Var #1 {
        name: "x",
    },
    rhs: rtest.Add {
        lhs: #1,
        rhs: rtest.Int {
            value: 1,
        },
    },
}"#;
    assert_eq!(format!("{e:#?}"), want);
    let arr: Array<ObjectPtr<Expr>> = vec![int(1), int(2)].into_iter().collect();
    assert_eq!(
        format!("{arr:#?}"),
        "[\n    rtest.Int {\n        value: 1,\n    },\n    rtest.Int {\n        value: 2,\n    },\n]"
    );
}

#[test]
fn shared_objects_print_once_with_a_label() {
    let _guard = LeakCheck::new();
    let x = var("x");
    let y = var("y");
    // In objects: labels in order of first appearance, per print.
    let e = add(add(x.clone(), y.clone()), add(y.clone(), x.clone()));
    let want = r#"rtest.Add { lhs: rtest.Add { lhs: rtest.Var #1 { name: "x" }, rhs: rtest.Var #2 { name: "y" } }, rhs: rtest.Add { lhs: #2, rhs: #1 } }"#;
    assert_eq!(format!("{e:?}"), want);
    assert_eq!(format!("{e:?}"), want, "a second print starts afresh");
    // A shared subtree is printed once, its insides too.
    let sub = add(x.clone(), int(1));
    let e2 = add(sub.clone(), sub.clone());
    assert_eq!(
        format!("{e2:?}"),
        r#"rtest.Add { lhs: rtest.Add #1 { lhs: rtest.Var { name: "x" }, rhs: rtest.Int { value: 1 } }, rhs: #1 }"#
    );
    // In arrays.
    let arr: Array<ObjectPtr<Expr>> = vec![x.clone(), y.clone(), x.clone()].into_iter().collect();
    assert_eq!(
        format!("{arr:?}"),
        r#"[rtest.Var #1 { name: "x" }, rtest.Var { name: "y" }, #1]"#
    );
    // In maps, as keys' values.
    let mut m: Map<String, ObjectPtr<Expr>> = Map::new();
    m.insert(String::from("a"), x.clone());
    m.insert(String::from("b"), y.clone());
    m.insert(String::from("c"), x.clone());
    assert_eq!(
        format!("{m:?}"),
        r#"{"a": rtest.Var #1 { name: "x" }, "b": rtest.Var { name: "y" }, "c": #1}"#
    );
    // Across an object, an array and a map inside it.
    let mut attrs: Map<String, Any> = Map::new();
    attrs.insert(String::from("self"), Any::from(x.clone()));
    let call = make_object(Call {
        base: Expr {
            base: Object::new(),
        },
        callee: "g".to_owned(),
        args: vec![x.clone(), add(x.clone(), y.clone())]
            .into_iter()
            .collect(),
        attrs,
    });
    assert_eq!(
        format!("{call:?}"),
        r#"rtest.Call { callee: "g", args: [rtest.Var #1 { name: "x" }, rtest.Add { lhs: #1, rhs: rtest.Var { name: "y" } }], attrs: {"self": #1} }"#
    );
    // An object that is not shared within one print is not labelled, however many
    // handles exist elsewhere.
    assert_eq!(format!("{x:?}"), r#"rtest.Var { name: "x" }"#);
}

#[test]
fn shared_containers_print_once_with_a_label() {
    let _guard = LeakCheck::new();
    let arr = int_array(&[1, 2]);
    let p = pair(arr.clone(), arr.clone());
    assert_eq!(
        format!("{p:?}"),
        "rtest.Pair { a: ffi.Array #1 [1, 2], b: #1 }"
    );
    let m = str_map(&[("k", 1)]);
    let p = pair(m.clone(), m);
    assert_eq!(
        format!("{p:?}"),
        r#"rtest.Pair { a: ffi.Map #1 {"k": 1}, b: #1 }"#
    );
    assert_eq!(
        format!("{:#?}", pair(arr.clone(), arr.clone())),
        "rtest.Pair {\n    a: ffi.Array #1 [\n        1,\n        2,\n    ],\n    b: #1,\n}"
    );
    // An array holding the same array twice.
    let outer: Array<Any> = vec![Any::from(arr.clone()), Any::from(arr.clone())].into();
    assert_eq!(format!("{outer:?}"), "[ffi.Array #1 [1, 2], #1]");
    // Strings are values: a string object reached twice prints twice.
    let s = String::from(LONG);
    let p = pair(s.clone(), s);
    assert_eq!(
        format!("{p:?}"),
        format!("rtest.Pair {{ a: {LONG:?}, b: {LONG:?} }}")
    );
}

/// A chain `depth` long, built without recursion.
fn chain(depth: u32) -> ObjectPtr<Chain> {
    let mut head = make_object(Chain {
        base: Object::new(),
        depth: 0,
        next: None,
    });
    for d in 1..depth {
        head = make_object(Chain {
            base: Object::new(),
            depth: d,
            next: Some(head),
        });
    }
    head
}

/// Drops a chain link by link, so that no drop recurses.
fn dismantle(mut head: ObjectPtr<Chain>) {
    loop {
        let next = match ObjectPtr::get_mut(&mut head) {
            Some(fields) => fields.next.take(),
            None => return, // Shared: someone else drops it.
        };
        drop(head);
        match next {
            Some(n) => head = n,
            None => return,
        }
    }
}

#[test]
fn deep_nesting_is_elided_without_overflowing_the_stack() {
    let _guard = LeakCheck::new();
    // Under Miri, deep enough to be elided (past 96 levels) and no deeper.
    let depth = object_tests::native_or_miri(10_000, 200) as u32;
    let head = chain(depth);
    let shown = format!("{head:?}");
    // 96 levels in full, then the 97th elided.
    assert_eq!(
        shown.matches("rtest.Chain {").count(),
        97,
        "{}",
        &shown[..200]
    );
    assert_eq!(shown.matches("rtest.Chain { … }").count(), 1);
    assert!(shown.starts_with(&format!(
        "rtest.Chain {{ depth: {}, next: rtest.Chain {{ depth: {}, ",
        depth - 1,
        depth - 2
    )));
    let tail = format!("depth: {}, next: rtest.Chain {{ … }}", depth - 96);
    assert!(shown.contains(&tail), "{}", &shown[shown.len() - 200..]);
    assert!(shown.ends_with(&format!("{}{}", "{ … }", " }".repeat(96))));
    // Pretty printing too. (Not under Miri: std's indenting adapter passes each byte
    // through one layer per open level, 96 deep here, which takes Miri many minutes;
    // shallow pretty printing is checked above.)
    if !cfg!(miri) {
        let pretty = format!("{head:#?}");
        assert_eq!(pretty.matches("rtest.Chain {\n").count(), 96);
        assert!(pretty.contains("next: rtest.Chain { … },"));
    }
    // Inside arrays, each nested level counts.
    let mut nested: Array<Any> = Array::new();
    for _ in 0..200 {
        nested = vec![Any::from(nested)].into();
    }
    let shown = format!("{nested:?}");
    assert!(shown.contains("ffi.Array { … }"), "{shown}");
    assert_eq!(shown.matches('[').count(), 96);
    // Printing again still elides: the depth was reset.
    assert_eq!(format!("{head:?}").matches("rtest.Chain {").count(), 97);
    dismantle(head);
    // A short chain prints whole.
    let short = chain(3);
    assert_eq!(
        format!("{short:?}"),
        "rtest.Chain { depth: 2, next: rtest.Chain { depth: 1, next: rtest.Chain { depth: 0, next: None } } }"
    );
    dismantle(short);
    // Unwind the nested arrays from the outside in.
    while let Some(inner) = nested.first().cloned() {
        nested = Array::try_from(inner).unwrap();
    }
}

#[test]
fn a_panicking_debug_leaves_the_printer_usable() {
    let _guard = LeakCheck::new();
    let bomb = make_object(Bomb {
        base: Object::new(),
        armed: true,
    });
    let x = var("x");
    let p = pair(x.clone(), bomb);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = catch_unwind(AssertUnwindSafe(|| format!("{p:?}")));
    std::panic::set_hook(hook);
    assert!(r.is_err(), "the Debug of Bomb panicked");
    // No state from the failed print leaks into the next ones: labels start at 1, the
    // objects seen then are not back-references now, and depth starts at 0.
    assert_eq!(format!("{x:?}"), r#"rtest.Var { name: "x" }"#);
    let e = add(x.clone(), x.clone());
    assert_eq!(
        format!("{e:?}"),
        r#"rtest.Add { lhs: rtest.Var #1 { name: "x" }, rhs: #1 }"#
    );
    let calm = make_object(Bomb {
        base: Object::new(),
        armed: false,
    });
    assert_eq!(
        format!("{:?}", pair(calm, 1)),
        "rtest.Pair { a: Bomb(disarmed), b: 1 }"
    );
    let head = chain(200);
    assert_eq!(format!("{head:?}").matches("rtest.Chain {").count(), 97);
    dismantle(head);
}

#[test]
fn custom_debug_is_used_for_the_struct_and_its_handles() {
    let _guard = LeakCheck::new();
    let s = make_object(Secret {
        base: Object::new(),
        password: "hunter2".to_owned(),
    });
    assert_eq!(format!("{:?}", &*s), "Secret(<hidden>)");
    // Handles, `Any` and containers print through the type's own `Debug` too, so a
    // hand-written `Debug` that hides a secret is never bypassed.
    assert_eq!(format!("{s:?}"), "Secret(<hidden>)");
    assert_eq!(
        format!("{:?}", Any::from(s.clone())),
        "Any(Secret(<hidden>))"
    );
    assert_eq!(field_names(s.as_object_ref()), ["password"]);
}

/// Runs only in a child process started by
/// [`printing_works_in_a_thread_local_destructor`]: a thread whose thread-local value's
/// destructor prints objects after the printer's own thread-local state may be gone.
#[test]
#[cfg_attr(
    not(miri),
    ignore = "helper: run in a child process by printing_works_in_a_thread_local_destructor"
)]
fn print_in_tls_destructor_child() {
    if !cfg!(miri) && std::env::var_os("RTEST_TLS_CHILD").is_none() {
        return;
    }
    struct PrintsOnDrop(ObjectPtr<Expr>, Array<ObjectPtr<Expr>>);
    impl Drop for PrintsOnDrop {
        fn drop(&mut self) {
            println!("object: {:?}", self.0);
            println!("array: {:?}", self.1);
            println!("pretty: {:#?}", self.0.downcast_ref::<Add>().unwrap());
        }
    }
    std::thread_local! {
        static GUARD: std::cell::RefCell<Option<PrintsOnDrop>> =
            const { std::cell::RefCell::new(None) };
    }
    std::thread::spawn(|| {
        let x = var("x");
        let e = add(x.clone(), x.clone());
        let arr: Array<ObjectPtr<Expr>> = vec![x.clone(), x].into_iter().collect();
        // Registered first, so destroyed after whatever the print below registers.
        GUARD.with(|g| *g.borrow_mut() = Some(PrintsOnDrop(e.clone(), arr)));
        assert_eq!(
            format!("{e:?}"),
            r#"rtest.Add { lhs: rtest.Var #1 { name: "x" }, rhs: #1 }"#
        );
    })
    .join()
    .unwrap();
    println!("child: done");
}

#[test]
#[cfg_attr(
    miri,
    ignore = "spawns processes; under Miri its child scenario runs in-process"
)]
fn printing_works_in_a_thread_local_destructor() {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            "print_in_tls_destructor_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("RTEST_TLS_CHILD", "1")
        .output()
        .unwrap();
    let stdout = std::string::String::from_utf8_lossy(&out.stdout);
    let stderr = std::string::String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("child: done"),
        "child failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    for line in [
        r#"object: rtest.Add { lhs: rtest.Var #1 { name: "x" }, rhs: #1 }"#,
        r#"array: [rtest.Var #1 { name: "x" }, #1]"#,
        "pretty: rtest.Add {\n    lhs: rtest.Var #1 {\n        name: \"x\",\n    },\n    rhs: #1,\n}",
    ] {
        assert!(stdout.contains(line), "`{line}` in:\n{stdout}");
    }
}

// ---------------------------------------------------------------------------------
// Field defaults: `#[object(default)]` and `#[object(default = expr)]`.
// ---------------------------------------------------------------------------------

fn default_label() -> String {
    String::from("default")
}

/// tvm-ffi's `test.WithDefaults`, in Rust: one required field and three with defaults.
#[derive(Object)]
#[repr(C)]
#[object(key = "refl.WithDefaults")]
struct WithDefaults {
    base: Object,
    required_val: i64,
    #[object(default = 42)]
    default_int: i64,
    #[object(default = default_label())]
    default_str: String,
    #[object(default = true)]
    default_bool: bool,
    /// `Default::default()`: an empty array.
    #[object(default)]
    items: Array<i64>,
    #[object(default = Some(2.5), rename = "ratio")]
    maybe: Option<f64>,
}

/// A subtype: the parent's defaults apply to its part.
#[derive(Object)]
#[repr(C)]
#[object(key = "refl.WithDefaultsChild", parent = WithDefaults)]
struct WithDefaultsChild {
    base: WithDefaults,
    #[object(default = -1)]
    extra: i64,
}

#[test]
fn omitted_fields_with_defaults_take_them() {
    let _leaks = LeakCheck::new();
    let v = create("refl.WithDefaults", [("required_val", Any::from(999))]).unwrap();
    let w = v.downcast_ref::<WithDefaults>().unwrap();
    assert_eq!(w.required_val, 999);
    assert_eq!(w.default_int, 42);
    assert_eq!(w.default_str.as_str(), "default");
    assert!(w.default_bool);
    assert!(w.items.is_empty());
    assert_eq!(w.maybe, Some(2.5));

    // Given values win over defaults (an explicit None too).
    let v = create(
        "refl.WithDefaults",
        [
            ("required_val", Any::from(1)),
            ("default_int", Any::from(7)),
            ("default_bool", Any::from(false)),
            ("ratio", Any::default()),
        ],
    )
    .unwrap();
    let w = v.downcast_ref::<WithDefaults>().unwrap();
    assert_eq!((w.default_int, w.default_bool, w.maybe), (7, false, None));

    // A field without a default is still required; a wrong type is still an error;
    // a field given twice is still a duplicate.
    let e = create("refl.WithDefaults", []).unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        (ReflectErrorKind::MissingField, Some("required_val"))
    );
    let e = create(
        "refl.WithDefaults",
        [
            ("required_val", Any::from(1)),
            ("default_int", Any::from("x")),
        ],
    )
    .unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        (ReflectErrorKind::WrongType, Some("default_int"))
    );
    let e = create(
        "refl.WithDefaults",
        [
            ("required_val", Any::from(1)),
            ("default_int", Any::from(1)),
            ("default_int", Any::from(2)),
        ],
    )
    .unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        (ReflectErrorKind::DuplicateField, Some("default_int"))
    );

    // Subtypes: the parent's defaults and their own.
    let v = create("refl.WithDefaultsChild", [("required_val", Any::from(5))]).unwrap();
    let c = v.downcast_ref::<WithDefaultsChild>().unwrap();
    assert_eq!(
        (c.base.required_val, c.base.default_int, c.extra),
        (5, 42, -1)
    );
}

#[test]
fn defaults_are_in_the_field_table() {
    let _leaks = LeakCheck::new();
    let refl = object_core::registry::type_info_by_key("refl.WithDefaults")
        .unwrap()
        .reflection();
    let has: Vec<(&str, bool)> = refl
        .reflected_fields()
        .map(|f| (f.name(), f.has_default()))
        .collect();
    assert_eq!(
        has,
        [
            ("required_val", false),
            ("default_int", true),
            ("default_str", true),
            ("default_bool", true),
            ("items", true),
            ("ratio", true),
        ]
    );
    let field = |n: &str| refl.field(n).unwrap();
    assert!(field("default_int")
        .flags()
        .contains(FieldFlags::HAS_DEFAULT));
    assert_eq!(
        field("default_int")
            .default_value()
            .unwrap()
            .unwrap()
            .as_int(),
        Some(42)
    );
    assert_eq!(
        field("default_str")
            .default_value()
            .unwrap()
            .unwrap()
            .as_str(),
        Some("default")
    );
    assert_eq!(
        field("ratio").default_value().unwrap().unwrap().as_float(),
        Some(2.5)
    );
    let items = field("items").default_value().unwrap().unwrap();
    assert_eq!(Array::<i64>::try_from(items).unwrap().len(), 0);
    assert!(field("required_val").default_value().is_none());
    // Made afresh each time: two calls, two arrays.
    let (a, b) = (
        field("items").default_value().unwrap().unwrap(),
        field("items").default_value().unwrap().unwrap(),
    );
    assert_ne!(a.as_object(), b.as_object());
}

// ---------------------------------------------------------------------------------
// Building from a feed (`FieldSource::from_feed`): values handed out as asked for.
// ---------------------------------------------------------------------------------

/// A feed over `(name, value)` pairs that records the names it was asked for, and
/// gives a value only when its next pair has the name asked for.
struct Recorded {
    given: Vec<(&'static str, Any)>,
    next: usize,
    asked: Vec<&'static str>,
}

impl Recorded {
    fn new(given: Vec<(&'static str, Any)>) -> Self {
        Recorded {
            given,
            next: 0,
            asked: Vec::new(),
        }
    }

    fn build(&mut self, key: &str) -> Result<ObjectRef, ReflectError> {
        let info = type_info_by_key(key).unwrap();
        create_from_source(info, &mut FieldSource::from_feed(info.key(), self))
    }
}

impl FieldFeed for Recorded {
    fn take(&mut self, name: &'static str) -> Option<Any> {
        self.asked.push(name);
        match self.given.get(self.next) {
            Some((n, v)) if *n == name => {
                self.next += 1;
                Some(v.clone())
            }
            _ => None,
        }
    }

    fn rest(&mut self) -> Option<&str> {
        self.given.get(self.next).map(|(n, _)| *n)
    }
}

#[test]
fn a_feed_is_asked_for_the_reflected_fields_in_table_order() {
    let _guard = LeakCheck::new();
    let child = node(8);
    let info = type_info_by_key("rtest.Leaf").unwrap();
    let in_table: Vec<&str> = info
        .reflection()
        .reflected_fields()
        .map(|f| f.name())
        .collect();
    let mut feed = Recorded::new(vec![
        ("span_id", Any::from(11)),
        ("note", Any::from(LONG)),
        ("label", Any::from("lab")),
        ("child", Any::from(child.clone())),
        ("weight", Any::from(1.5)),
    ]);
    let o = feed.build("rtest.Leaf").unwrap();
    // Every reflected field, parents first; the skipped `cache` is not asked for.
    assert_eq!(feed.asked, in_table);
    assert_eq!(feed.asked, ["span_id", "note", "label", "child", "weight"]);
    let l = o.downcast_ref::<Leaf>().unwrap();
    assert_eq!((l.weight, l.base.base.span), (1.5, 11));
    assert_eq!(l.base.cache, Cache(42), "filled by Default");
    assert!(ObjectPtr::ptr_eq(l.base.child.as_ref().unwrap(), &child));

    // An `Option` the feed does not give is `None`; a field with a declared default
    // takes it.
    let mut feed = Recorded::new(vec![
        ("span_id", Any::from(1)),
        ("note", Any::from("n")),
        ("label", Any::from("m")),
    ]);
    let o = feed.build("rtest.Mid").unwrap();
    assert!(o.downcast_ref::<Mid>().unwrap().child.is_none());
    let mut feed = Recorded::new(vec![("required_val", Any::from(5))]);
    let o = feed.build("refl.WithDefaults").unwrap();
    let w = o.downcast_ref::<WithDefaults>().unwrap();
    assert_eq!((w.required_val, w.default_int, w.maybe), (5, 42, Some(2.5)));
}

#[test]
fn a_feed_reports_missing_extra_and_mistyped_fields() {
    let _guard = LeakCheck::new();
    // A required field the feed does not give.
    let e = Recorded::new(vec![("span_id", Any::from(1))])
        .build("rtest.Base")
        .unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        (ReflectErrorKind::MissingField, Some("note"))
    );
    // A value left over once the constructor took its fields.
    let mut feed = Recorded::new(vec![
        ("span_id", Any::from(1)),
        ("note", Any::from("n")),
        ("extra", Any::from(node(3))),
    ]);
    let e = feed.build("rtest.Base").unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        (ReflectErrorKind::ExtraField, Some("extra"))
    );
    assert_eq!(e.type_key(), "rtest.Base");
    // A value of the wrong type; what was taken before it is released (the guard).
    let e = Recorded::new(vec![
        ("span_id", Any::from(1)),
        ("note", Any::from("n")),
        ("label", Any::from("m")),
        ("child", Any::from(3)),
    ])
    .build("rtest.Mid")
    .unwrap_err();
    assert_eq!(
        (e.kind(), e.field()),
        (ReflectErrorKind::WrongType, Some("child"))
    );
    // An abstract or opaque type is refused before the feed is asked anything.
    let mut feed = Recorded::new(vec![]);
    let e = feed.build("ffi.Array").unwrap_err();
    assert_eq!(e.kind(), ReflectErrorKind::NotCreatable);
    assert!(feed.asked.is_empty());
}
