//! Every reflection attribute (`rename`, `skip`, `read_only`, `no_eq`, `custom_debug`,
//! `opaque`) on types that build, and what each one does at run time.

use std::fmt;

use object_core::reflection::{create, field_names, get_attr, FieldFlags, Reflect};
use object_core::{make_object, Any, Object, ObjectPtr, ObjectRef, ObjectType};

/// Not `Clone`, not `Debug`: fine for a skipped field as long as it is `Default`.
#[derive(Default)]
struct Scratch(Vec<u8>);

#[derive(Object)]
#[repr(C)]
#[object(key = "pass.refl.Node", slots = 2)]
struct Node {
    base: Object,
    #[object(rename = "id", read_only)]
    node_id: u32,
    #[object(no_eq, rename = "span")]
    source_span: Option<std::string::String>,
    #[object(skip)]
    scratch: Scratch,
    #[object(read_only)]
    #[object(no_eq)]
    hint: f64,
}

/// A reflected type that writes its own `Debug`.
#[derive(Object)]
#[repr(C)]
#[object(key = "pass.refl.Named", parent = Node, final, custom_debug)]
struct Named {
    base: Node,
    name: object_core::String,
}

impl fmt::Debug for Named {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Named({})", self.name.as_str())
    }
}

/// An opaque type: fields of any type, none reflected, no `create`, its own `Debug`.
#[derive(Object)]
#[repr(C)]
#[object(key = "pass.refl.Blob", final, opaque)]
struct Blob {
    base: Object,
    data: Vec<u8>,
    table: std::collections::HashMap<u32, u32>,
}

impl fmt::Debug for Blob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Blob({} bytes)", self.data.len())
    }
}

fn main() {
    // rename, skip, read_only, no_eq.
    let fields = Node::FIELDS;
    let names: Vec<&str> = fields.iter().map(|f| f.name()).collect();
    assert_eq!(names, ["id", "span", "scratch", "hint"]);
    assert_eq!(fields[0].flags(), FieldFlags::READ_ONLY);
    assert_eq!(
        fields[1].flags(),
        FieldFlags::NO_EQUALITY.union(FieldFlags::OPTIONAL)
    );
    assert_eq!(fields[2].flags(), FieldFlags::SKIPPED);
    assert_eq!(
        fields[3].flags(),
        FieldFlags::READ_ONLY.union(FieldFlags::NO_EQUALITY)
    );
    let n: ObjectRef = make_object(Node {
        base: Object::new(),
        node_id: 7,
        source_span: None,
        scratch: Scratch(vec![1]),
        hint: 0.5,
    })
    .into_object_ref();
    assert_eq!(field_names(&n), ["id", "span", "hint"]);
    assert_eq!(get_attr(&n, "id").unwrap().as_int(), Some(7));
    assert!(get_attr(&n, "node_id").is_err());
    assert!(get_attr(&n, "scratch").is_err());
    assert_eq!(
        format!("{n:?}"),
        "pass.refl.Node { id: 7, span: None, hint: 0.5 }"
    );
    let made = create(
        "pass.refl.Node",
        [("id", Any::from(1)), ("hint", Any::from(2))],
    )
    .unwrap();
    let node = made.downcast_ref::<Node>().unwrap();
    assert!(node.scratch.0.is_empty(), "filled by Default");
    assert_eq!(node.source_span, None);

    // custom_debug: the struct prints its own way, through handles too.
    let named: ObjectPtr<Named> = make_object(Named {
        base: Node {
            base: Object::new(),
            node_id: 1,
            source_span: Some("l.1".to_owned()),
            scratch: Scratch::default(),
            hint: 0.0,
        },
        name: object_core::String::from("x"),
    });
    assert_eq!(format!("{:?}", &*named), "Named(x)");
    assert_eq!(format!("{named:?}"), "Named(x)");
    assert!(Named::type_info().reflection().can_create());

    // opaque: no reflected fields, no create, printed with its own Debug.
    let blob = make_object(Blob {
        base: Object::new(),
        data: vec![1, 2, 3],
        table: Default::default(),
    });
    assert_eq!(format!("{blob:?}"), "Blob(3 bytes)");
    let info = Blob::type_info();
    assert!(info.reflection().is_opaque());
    assert!(!info.reflection().can_create());
    assert!(info.reflection().reflected_fields().next().is_none());
    assert!(field_names(blob.as_object_ref()).is_empty());
    assert!(create("pass.refl.Blob", []).is_err());
    assert_eq!(
        Blob::FIELDS.iter().map(|f| f.name()).collect::<Vec<_>>(),
        ["data", "table"]
    );
    assert!(Blob::FIELDS.iter().all(|f| !f.is_reflected()));
}
