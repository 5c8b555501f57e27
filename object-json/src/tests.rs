//! Unit tests of the graph format that need the crate's insides: the fast path against
//! the general path, and errors whose exact text matters.

use object_containers::{Array, Map, Shape};
use object_core::{Any, Bytes, DataType, Device};

use crate::load::{load_general, load_in_order};
use crate::{from_json_graph, to_json_graph, GraphErrorKind};

#[test]
fn short_strings_load_as_string_objects() {
    let mut m: Map<object_core::String, Any> = Map::new();
    m.insert(object_core::String::from("k"), Any::from("v"));
    let a: Array<object_core::String> = vec![object_core::String::from("s")].into();
    let root = Any::from(Array::<Any>::from(vec![Any::from(m), Any::from(a)]));
    let loaded = from_json_graph(&to_json_graph(&root).unwrap()).unwrap();
    let items = Array::<Any>::try_from(loaded).unwrap();
    let m = Map::<object_core::String, Any>::try_from(items[0].clone()).unwrap();
    assert_eq!(m.get("k").and_then(|v| v.as_str()), Some("v"));
    let a = Array::<object_core::String>::try_from(items[1].clone()).unwrap();
    assert_eq!(a[0].as_str(), "s");
}

#[test]
fn saved_graphs_take_the_fast_path() {
    let s = Any::from("a string long enough to be an object");
    let inner = Any::from(Array::<Any>::from(vec![Any::from(1), s.clone()]));
    let mut m: Map<Any, Any> = Map::new();
    m.insert(Any::from(2.5), inner.clone());
    m.insert(s.clone(), Any::from(DataType::int(8)));
    let value = Any::from(Array::<Any>::from(vec![
        inner,
        Any::from(m),
        Any::from(Shape::new(&[1, 2])),
        Any::from(Device::cpu()),
        Any::from(Bytes::new(b"xy")),
        Any::default(),
        Any::from(true),
        s,
    ]));
    let text = to_json_graph(&value).unwrap();
    let fast = load_in_order(&text).expect("the fast path");
    assert_eq!(to_json_graph(&fast).unwrap(), text);
    // Forward references and errors take the general path.
    let forward = r#"{"root_index": 0, "nodes": [{"type": "ffi.Array", "data": [1]}, {"type": "int", "data": 1}]}"#;
    assert!(load_in_order(forward).is_none());
    assert!(from_json_graph(forward).is_ok());
    assert!(load_in_order(r#"{"root_index": 0, "nodes": [{"type": "nope"}]}"#).is_none());
}

/// Mutated graphs: whatever the fast path loads, the general path loads to the
/// same value (compared by saving both).
#[test]
fn the_fast_path_agrees_with_the_general_path() {
    let s = Any::from("a string long enough to be an object");
    let inner = Any::from(Array::<Any>::from(vec![
        Any::from(1),
        s.clone(),
        Any::from(-2.5),
    ]));
    let mut m: Map<Any, Any> = Map::new();
    m.insert(Any::from(2), inner.clone());
    m.insert(s.clone(), Any::from(DataType::int(8)));
    let holder = Any::from(object_core::make_object(Holder {
        base: object_core::Object::new(),
        child: object_core::make_object(object_core::Object::new()),
    }));
    let seeds: Vec<Vec<u8>> = [
        Any::from(Array::<Any>::from(vec![
            inner,
            Any::from(m),
            Any::from(Shape::new(&[1, 2])),
            Any::from(Device::cpu()),
            Any::from(Bytes::new(b"xy")),
            Any::default(),
            Any::from(true),
            holder.clone(),
            s,
        ])),
        holder,
    ]
    .iter()
    .map(|v| to_json_graph(v).unwrap().into_bytes())
    .collect();
    let mut state = 0x1234_5678_u64;
    let mut next = |n: usize| {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    };
    // Fewer under valgrind (`OBJECT_TEST_SCALE`, as the integration tests read it), and
    // fewer still under Miri.
    let scale = std::env::var("OBJECT_TEST_SCALE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(1.0);
    let rounds = ((20_000.0 * scale) as usize).max(if cfg!(miri) { 12 } else { 1_000 });
    let mut fast = 0;
    for round in 0..rounds {
        let mut t = seeds[round % seeds.len()].clone();
        // Under Miri's few rounds, every fourth text is a seed as it is (which takes the
        // fast path), so that both paths are exercised.
        let mutations = if cfg!(miri) && round % 4 == 0 {
            0
        } else {
            1 + next(2)
        };
        for _ in 0..mutations {
            let at = next(t.len());
            match next(4) {
                0 => t[at] = b"0123456789"[next(10)],
                1 => t[at] = b" {}[],:\"-.e1x"[next(13)],
                2 => {
                    t.remove(at);
                }
                _ => t.insert(at, b"0 1,\"[{-"[next(8)]),
            }
        }
        let Ok(text) = std::str::from_utf8(&t) else {
            continue;
        };
        if let Some(v) = load_in_order(text) {
            fast += 1;
            let general = load_general(text).unwrap_or_else(|e| {
                panic!("the fast path loads, the general path says {e}:\n{text}")
            });
            assert_eq!(
                to_json_graph(&v).unwrap(),
                to_json_graph(&general).unwrap(),
                "{text}"
            );
        }
    }
    assert!(fast > rounds / 50, "{fast} of {rounds}");
}

#[test]
fn nans_are_one_node() {
    let other_nan = f64::from_bits(f64::NAN.to_bits() | 1);
    let values = [f64::NAN, -f64::NAN, other_nan, 1.0].map(Any::from);
    let text = to_json_graph(&Any::from(Array::<Any>::from(values.to_vec()))).unwrap();
    assert_eq!(text.matches("NaN").count(), 1, "{text}");
    let again = to_json_graph(&from_json_graph(&text).unwrap()).unwrap();
    assert_eq!(again, text);
}

#[test]
fn data_types_without_a_text_are_refused() {
    for d in [
        DataType::new(9, 32, 1),
        DataType::new(0, 0, 1),
        DataType::new(2, 32, 0),
    ] {
        let e = to_json_graph(&Any::from(d)).unwrap_err();
        assert_eq!(e.kind(), GraphErrorKind::Unsupported);
        assert_eq!(e.type_key(), Some("DataType"));
        assert!(e.message().contains("does not read back"), "{e}");
        assert_eq!(object_core::Error::from(e).kind(), "TypeError");
    }
    let handle = Any::from(DataType::new(DataType::OPAQUE_HANDLE, 32, 1));
    let text = to_json_graph(&handle).unwrap();
    assert_eq!(from_json_graph(&text).unwrap(), handle);
}

#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "json_graph.tests.Holder", final)]
struct Holder {
    base: object_core::Object,
    child: object_core::ObjectRef,
}

#[test]
fn a_bad_field_index_names_the_node_once() {
    let holder = object_core::make_object(Holder {
        base: object_core::Object::new(),
        child: object_core::make_object(object_core::Object::new()),
    });
    assert!(to_json_graph(&Any::from(holder)).is_ok());
    let text = r#"{"root_index": 0, "nodes": [{"type": "json_graph.tests.Holder", "data": {"child": 9}}]}"#;
    assert_eq!(
        from_json_graph(text).unwrap_err().message(),
        "node 0 (`json_graph.tests.Holder`): field `child`: node index 9 is out of range (the graph has 1 nodes)"
    );
    let text = r#"{"root_index": 0, "nodes": [{"type": "ffi.Array", "data": [9]}]}"#;
    assert_eq!(
        from_json_graph(text).unwrap_err().message(),
        "node 0 (`ffi.Array`): node index 9 is out of range (the graph has 1 nodes)"
    );
}

#[test]
fn graph_errors_cross_threads_and_box() {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<crate::GraphError>();
    let boxed: Box<dyn std::error::Error + Send + Sync> = from_json_graph("[").unwrap_err().into();
    let e = boxed.downcast_ref::<crate::GraphError>().unwrap();
    assert_eq!(e.kind(), GraphErrorKind::Syntax);
    assert_eq!((e.line(), e.column(), e.node()), (Some(1), Some(2), None));
}

/// Fields of several kinds, one of them skipped (not in the JSON).
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "json_graph.tests.Fields", final)]
struct Fields {
    base: object_core::Object,
    left: object_core::ObjectRef,
    #[object(skip)]
    cache: i64,
    count: i64,
    right_hand_side: object_core::ObjectRef,
}

#[test]
fn members_are_matched_to_fields_however_the_keys_are_written() {
    let o = |data: &str| {
        format!(
            r#"{{"root_index": 2, "nodes": [{{"type": "ffi.Array", "data": []}},
                {{"type": "ffi.Array", "data": [0]}},
                {{"type": "json_graph.tests.Fields", "data": {data}}}]}}"#
        )
    };
    let saved = to_json_graph(&Any::from(object_core::make_object(Fields {
        base: object_core::Object::new(),
        left: object_core::make_object(object_core::Object::new()),
        cache: 9,
        count: -3,
        right_hand_side: object_core::make_object(object_core::Object::new()),
    })))
    .unwrap();
    assert!(load_in_order(&saved).is_some(), "{saved}");
    // The order the fields are in, other orders, white space, escapes: the fast path
    // loads each, as the general path does.
    for data in [
        r#"{"left": 0, "count": -3, "right_hand_side": 1}"#,
        "{ \"left\" : 0 , \"count\"\t:-3,\"right_hand_side\":1 }",
        r#"{"count": -3, "right_hand_side": 1, "left": 0}"#,
        r#"{"right_hand_side": 1, "left": 0, "count": -3}"#,
        r#"{"\u006ceft": 0, "count": -3, "right_hand_sid\u0065": 1}"#,
    ] {
        let text = o(data);
        let v = load_in_order(&text).unwrap_or_else(|| panic!("the fast path: {text}"));
        let f = v
            .as_object()
            .and_then(|o| o.downcast_ref::<Fields>())
            .unwrap();
        assert_eq!(f.count, -3, "{text}");
        assert!(f
            .left
            .downcast_ref::<object_containers::ArrayObj>()
            .is_some());
        let general = load_general(&text).unwrap();
        assert_eq!(to_json_graph(&v).unwrap(), to_json_graph(&general).unwrap());
    }
    // A key that is a field's name with more after it, or a prefix of one, is not it;
    // nor is a skipped field; and none may be left out.
    for data in [
        r#"{"lefty": 0, "count": -3, "right_hand_side": 1}"#,
        r#"{"lef": 0, "count": -3, "right_hand_side": 1}"#,
        r#"{"left": 0, "count": -3, "right_hand_side": 1, "cache": 4}"#,
        r#"{"left": 0, "count": -3}"#,
    ] {
        let text = o(data);
        assert!(load_in_order(&text).is_none(), "{text}");
        let e = from_json_graph(&text).unwrap_err();
        assert_eq!(e.kind(), GraphErrorKind::Field, "{text}");
    }
    // A field's name without its closing quote is not a key (the text is not JSON).
    let text = o(r#"{"left : 0, "count": -3, "right_hand_side": 1}"#);
    assert!(load_in_order(&text).is_none(), "{text}");
    assert_eq!(
        from_json_graph(&text).unwrap_err().kind(),
        GraphErrorKind::Syntax
    );
}

/// Fields of the other kinds a node's data holds: optional ones, one with a declared
/// default, and literals of each inline kind.
#[derive(object_core::Object)]
#[repr(C)]
#[object(key = "json_graph.tests.Extras", final)]
struct Extras {
    base: object_core::Object,
    maybe: Option<object_core::ObjectRef>,
    count: Option<i64>,
    #[object(default = 7)]
    with_default: i64,
    ratio: f64,
    flag: bool,
    dtype: DataType,
}

/// Graphs as `to_json_graph` writes them are built straight from the text (the
/// in-place reading); any other text of the same node is read the general way, with
/// the same result or the same error.
#[test]
fn nodes_read_in_place_agree_with_the_general_reading() {
    let extras = |maybe: Option<object_core::ObjectRef>, count: Option<i64>| {
        Any::from(object_core::make_object(Extras {
            base: object_core::Object::new(),
            maybe,
            count,
            with_default: -4,
            ratio: 0.25,
            flag: true,
            dtype: DataType::float(16),
        }))
    };
    let leaf = object_core::make_object(object_core::Object::new());
    for value in [
        extras(None, None),
        extras(Some(leaf.clone()), Some(3)),
        Any::from(Array::<Any>::from(vec![
            extras(Some(leaf.clone()), None),
            extras(Some(leaf), Some(-1)),
        ])),
    ] {
        let text = to_json_graph(&value).unwrap();
        let fast = load_in_order(&text).unwrap_or_else(|| panic!("the fast path: {text}"));
        assert_eq!(to_json_graph(&fast).unwrap(), text);
        assert_eq!(to_json_graph(&load_general(&text).unwrap()).unwrap(), text);
    }

    // `Fields` as saved, then written otherwise: compact, but in another order, with
    // an escape, a space or a value of another form. The reading in place gives each
    // up (some after reading a field or two) and the node is read again.
    let o = |data: &str| {
        format!(
            r#"{{"root_index":2,"nodes":[{{"type":"ffi.Array","data":[]}},{{"type":"ffi.Array","data":[0]}},{{"type":"json_graph.tests.Fields","data":{data}}}]}}"#
        )
    };
    let saved = r#"{"left":0,"count":-3,"right_hand_side":1}"#;
    let same = [
        saved,
        r#"{"count":-3,"left":0,"right_hand_side":1}"#,
        r#"{"left":0,"count":-3,"right_hand_sid\u0065":1}"#,
        r#"{"left":0,"count":-3,"right_hand_side": 1}"#,
        r#"{"left":0,"count":-3,"right_hand_side":1 }"#,
        r#"{"left":0,"count":-3.0e0,"right_hand_side":1}"#,
    ];
    let reference = to_json_graph(&load_general(&o(saved)).unwrap()).unwrap();
    for data in same {
        let text = o(data);
        let general = load_general(&text);
        let fast = load_in_order(&text);
        match (fast, general) {
            (Some(fast), Ok(general)) => {
                let fast = to_json_graph(&fast).unwrap();
                assert_eq!(fast, to_json_graph(&general).unwrap(), "{text}");
                assert_eq!(fast, reference, "{text}");
            }
            // (A float for an integer field is refused by both readings.)
            (None, Err(e)) => assert_eq!(e.kind(), GraphErrorKind::Field, "{text}"),
            (fast, general) => panic!("{text}: {:?} against {general:?}", fast.is_some()),
        }
    }
    for (data, kind) in [
        (
            r#"{"left":0,"count":-3,"right_hand_side":1,"cache":4}"#,
            GraphErrorKind::Field,
        ),
        (r#"{"left":0,"count":-3}"#, GraphErrorKind::Field),
        (
            r#"{"left":0,"count":"x","right_hand_side":1}"#,
            GraphErrorKind::Field,
        ),
        (
            r#"{"left":0,"count":-3,"right_hand_side":2}"#,
            GraphErrorKind::Cycle,
        ),
        (
            r#"{"left":0,"count":-3,"right_hand_side":3}"#,
            GraphErrorKind::NodeIndex,
        ),
        (
            r#"{"left":0,"count":-3,"right_hand_side":1"#,
            GraphErrorKind::Syntax,
        ),
    ] {
        let text = o(data);
        assert!(load_in_order(&text).is_none(), "{text}");
        assert_eq!(from_json_graph(&text).unwrap_err().kind(), kind, "{text}");
    }
}

/// Every built-in form the saver writes — a tensor's object of arrays, a big integer's
/// text, bytes, shapes, maps, strings, floats — is read by the fast path.
#[test]
fn every_saved_form_takes_the_fast_path() {
    use object_containers::{BigInt, NDArray};
    let t = NDArray::from_slice(&[2, 2], &[1.5f32, -2.0, 0.25, 8.0]).unwrap();
    let mut m: Map<object_core::String, Any> = Map::new();
    m.insert(
        object_core::String::from("a key long enough"),
        Any::from(t.clone()),
    );
    let value = Any::from(Array::<Any>::from(vec![
        Any::from(t.clone()),
        Any::from(t),
        Any::from(NDArray::from_slice(&[3], &[1i64, 2, 3]).unwrap()),
        Any::from(m),
        Any::from(BigInt::from(u64::MAX)),
        Any::from(Bytes::new(b"bytes")),
        Any::from(Shape::new(&[4, 5])),
        Any::from(-0.5),
        Any::from("a string long enough to be an object"),
    ]));
    let text = to_json_graph(&value).unwrap();
    let fast = load_in_order(&text).unwrap_or_else(|| panic!("the fast path: {text}"));
    assert_eq!(to_json_graph(&fast).unwrap(), text);
    assert_eq!(to_json_graph(&load_general(&text).unwrap()).unwrap(), text);
}

/// A node written in a form the quick reading does not expect (members in another
/// order, spaces, an escape in its type) is read again as one value and loading goes
/// on at the next node: the fast path still loads the graph, to the same value as the
/// general path; a bad node among them is still the general path's error.
#[test]
fn an_unusual_node_is_read_again_alone() {
    let g = |odd: &str| {
        format!(
            r#"{{"root_index":3,"nodes":[{{"type":"ffi.Array","data":[]}},{odd},{{"type":"ffi.Shape","data":[1,2]}},{{"type":"ffi.Array","data":[0,1,2]}}]}}"#
        )
    };
    let reference =
        to_json_graph(&load_general(&g(r#"{"type":"ffi.Array","data":[0]}"#)).unwrap()).unwrap();
    for odd in [
        r#"{"data":[0],"type":"ffi.Array"}"#,
        r#"{"type":"ffi.\u0041rray","data":[0]}"#,
        r#"{ "type" : "ffi.Array" , "data" : [ 0 ] }"#,
        r#"{"type":"ffi.Array","data":[0] }"#,
        r#"{"data":[0],"type":"ffi.Array","x":{"y":[1]}}"#,
    ] {
        let text = g(odd);
        let fast = load_in_order(&text).unwrap_or_else(|| panic!("the fast path: {text}"));
        assert_eq!(to_json_graph(&fast).unwrap(), reference, "{text}");
    }
    for (odd, kind) in [
        (
            r#"{"data":[0],"data":[0],"type":"ffi.Array"}"#,
            GraphErrorKind::DuplicateMember,
        ),
        (r#"{"data":[1],"type":"ffi.Array"}"#, GraphErrorKind::Cycle),
    ] {
        let text = g(odd);
        assert!(load_in_order(&text).is_none(), "{text}");
        assert_eq!(from_json_graph(&text).unwrap_err().kind(), kind, "{text}");
    }
}
