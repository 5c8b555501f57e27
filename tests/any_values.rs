//! `Any` and `AnyView`: every kind round-trips, layout, conversion errors, equality and
//! hashing, debug output, exact reference counts, and thread safety.
//!
//! Every test starts with a [`LeakCheck`]: it serializes the tests of this binary and
//! checks that `live_objects()` is back to where it started when the test ends.

use std::collections::HashSet;
use std::ffi::c_void;
use std::hash::{BuildHasher, Hash};
use std::mem::{align_of, size_of};

use object_containers::{Array, BigInt, Function, Map, ParseBigIntError};
use object_core::{
    make_object, Any, AnyView, Bytes, BytesObj, DataType, Device, Object, ObjectPtr, ObjectRef,
    String, StringObj, TypeError, SMALL_STR_MAX,
};
use object_tests::{scaled, DropCounter, Tracked};

// ---------------------------------------------------------------------------------
// Leak guard.
// ---------------------------------------------------------------------------------

use object_tests::LeakCheck;

// ---------------------------------------------------------------------------------
// Object types.
// ---------------------------------------------------------------------------------

#[derive(Object, Clone)]
#[repr(C)]
#[object(key = "atest.Node", slots = 2)]
struct Node {
    base: Object,
    value: i64,
}

#[derive(Object, Clone)]
#[repr(C)]
#[object(key = "atest.Leaf", parent = Node, final)]
struct Leaf {
    base: Node,
    label: std::string::String,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "atest.Tracked", final)]
struct TrackedObj {
    base: Object,
    #[object(skip)]
    _tracked: Tracked,
}

fn node(value: i64) -> ObjectPtr<Node> {
    make_object(Node {
        base: Object::new(),
        value,
    })
}

fn leaf(value: i64, label: &str) -> ObjectPtr<Leaf> {
    make_object(Leaf {
        base: Node {
            base: Object::new(),
            value,
        },
        label: label.to_owned(),
    })
}

fn hash_of<T: Hash>(state: &std::collections::hash_map::RandomState, v: T) -> u64 {
    state.hash_one(v)
}

// ---------------------------------------------------------------------------------
// Layout and thread safety.
// ---------------------------------------------------------------------------------

#[test]
fn layout_is_16_bytes() {
    let _guard = LeakCheck::new();
    assert_eq!(size_of::<Any>(), 16);
    assert_eq!(align_of::<Any>(), 8);
    assert_eq!(size_of::<AnyView<'static>>(), 16);
    assert_eq!(SMALL_STR_MAX, 7);
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Any>();
    send_sync::<AnyView<'static>>();
    send_sync::<Array<Any>>();
    send_sync::<Map<Any, Any>>();
    send_sync::<String>();
    send_sync::<Bytes>();
    send_sync::<TypeError>();
}

#[test]
fn any_is_send_and_sync_across_threads() {
    let _guard = LeakCheck::new();
    static DROPS: DropCounter = DropCounter::new();
    let shared = node(5);
    let arr: Array<Any> = vec![
        Any::from(1),
        Any::from("short"),
        Any::from("a long string object"),
        Any::from(shared.clone()),
        Any::from(make_object(TrackedObj {
            base: Object::new(),
            _tracked: DROPS.track(),
        })),
        Any::from(Array::<i64>::from(vec![1, 2, 3])),
    ]
    .into();
    // Moved to another thread and dropped there.
    let h = std::thread::spawn(move || {
        assert_eq!(arr[1].as_str(), Some("short"));
        assert_eq!(arr[3].downcast_ref::<Node>().map(|n| n.value), Some(5));
        drop(arr);
    });
    h.join().unwrap();
    assert_eq!(DROPS.get(), 1, "dropped on the other thread");
    assert_eq!(ObjectPtr::strong_count(&shared), 1);

    // Shared by reference: clones made and dropped on many threads.
    let any = Any::from(shared.clone());
    let n = scaled(2000, 20);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..n {
                    let c = any.clone();
                    assert!(c.as_object().is_some());
                    let v = any.view();
                    assert_eq!(v.downcast_ref::<Node>().map(|n| n.value), Some(5));
                    drop(c);
                }
            });
        }
    });
    assert_eq!(ObjectPtr::strong_count(&shared), 2);
    // An owned Any sent through a channel.
    let (tx, rx) = std::sync::mpsc::channel::<Any>();
    let t = std::thread::spawn(move || rx.recv().unwrap());
    tx.send(any).unwrap();
    let back = t.join().unwrap();
    assert!(back
        .as_object()
        .is_some_and(|o| ObjectPtr::ptr_eq(o, &shared)));
    drop(back);
    assert_eq!(ObjectPtr::strong_count(&shared), 1);
}

// ---------------------------------------------------------------------------------
// Round trips.
// ---------------------------------------------------------------------------------

#[test]
fn none_round_trips() {
    let _guard = LeakCheck::new();
    for a in [
        Any::NONE,
        Any::default(),
        Any::from(()),
        Any::from(None::<i64>),
    ] {
        assert!(a.is_none());
        assert!(!a.is_object());
        assert_eq!(a.type_key(), "None");
        assert_eq!(a.type_index(), 0);
        assert_eq!(<()>::try_from(a.clone()), Ok(()));
        assert_eq!(Option::<i64>::try_from(a.clone()), Ok(None));
        assert_eq!(Option::<String>::try_from(a.clone()), Ok(None));
        assert_eq!(Option::<ObjectPtr<Node>>::try_from(a.clone()), Ok(None));
        assert!(a.view().is_none());
        assert_eq!(a.view(), AnyView::NONE);
        assert_eq!(a.view(), AnyView::default());
        assert!(a.view().to_any().is_none());
        assert_eq!(
            i64::try_from(a).unwrap_err().to_string(),
            "expected int, got None"
        );
    }
    assert_eq!(
        <()>::try_from(Any::from(0)).unwrap_err().to_string(),
        "expected None, got int"
    );
}

#[test]
fn integers_of_every_width_round_trip() {
    let _guard = LeakCheck::new();
    macro_rules! round_trip {
        ($($t:ty),*) => {$(
            for v in [<$t>::MIN, <$t>::MIN / 2, 0 as $t, 1 as $t, <$t>::MAX / 3, <$t>::MAX] {
                let a = Any::from(v);
                assert_eq!(a.type_key(), "int", "{}", stringify!($t));
                assert_eq!(a.as_int(), Some(v as i64));
                assert_eq!(<$t>::try_from(a.clone()), Ok(v));
                assert_eq!(<$t>::try_from(a.view()), Ok(v));
                assert_eq!(<$t>::try_from(AnyView::from(v)), Ok(v));
                assert_eq!(i64::try_from(a.clone()), Ok(v as i64));
                assert_eq!(AnyView::from(v), a.view());
                assert_eq!(a.view().to_any(), a);
            }
        )*};
    }
    round_trip!(i8, i16, i32, i64, u8, u16, u32);

    // Out: the unsigned 64-bit kinds, from non-negative ints.
    assert_eq!(u64::try_from(Any::from(i64::MAX)), Ok(i64::MAX as u64));
    assert_eq!(usize::try_from(Any::from(12345)), Ok(12345usize));
    // Options.
    assert_eq!(
        Option::<i64>::try_from(Any::from(Some(-4i64))),
        Ok(Some(-4))
    );
    assert_eq!(Option::<i32>::try_from(Any::from(Some(7i32))), Ok(Some(7)));
    assert_eq!(Option::<u32>::try_from(Any::from(Some(7u32))), Ok(Some(7)));
    assert_eq!(Option::<i32>::try_from(Any::from(None::<i32>)), Ok(None));
}

#[test]
fn out_of_range_integers_are_errors() {
    let _guard = LeakCheck::new();
    let big = Any::from(1i64 << 40);
    let e = i32::try_from(big.clone()).unwrap_err();
    assert_eq!(e, TypeError::new("int32 (in range)", "int"));
    assert_eq!(e.to_string(), "expected int32 (in range), got int");
    assert_eq!(
        i32::try_from(big.view()).unwrap_err().to_string(),
        "expected int32 (in range), got int"
    );
    assert!(Option::<i32>::try_from(big.clone()).is_err());
    assert!(u32::try_from(big.clone()).is_err());
    type Convert = fn(Any) -> Result<(), TypeError>;
    let cases: [(Any, Convert, &str); 9] = [
        (Any::from(128), |a| i8::try_from(a).map(drop), "int8"),
        (Any::from(-129), |a| i8::try_from(a).map(drop), "int8"),
        (Any::from(256), |a| u8::try_from(a).map(drop), "uint8"),
        (Any::from(-1), |a| u8::try_from(a).map(drop), "uint8"),
        (Any::from(1 << 16), |a| u16::try_from(a).map(drop), "uint16"),
        (Any::from(-40000), |a| i16::try_from(a).map(drop), "int16"),
        (Any::from(-1), |a| u32::try_from(a).map(drop), "uint32"),
        (Any::from(-1), |a| u64::try_from(a).map(drop), "uint64"),
        (
            Any::from(i64::MIN),
            |a| usize::try_from(a).map(drop),
            "usize",
        ),
    ];
    for (a, convert, name) in cases {
        let shown = format!("{a:?}");
        let e = convert(a).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("expected {name} (in range), got int"),
            "{shown}"
        );
    }
    // In range at the edges.
    assert_eq!(i8::try_from(Any::from(-128)), Ok(-128i8));
    assert_eq!(u8::try_from(Any::from(255)), Ok(255u8));
    assert_eq!(i32::try_from(Any::from(i32::MIN)), Ok(i32::MIN));
}

#[test]
fn plain_values_round_trip() {
    let _guard = LeakCheck::new();
    // bool
    for b in [false, true] {
        let a = Any::from(b);
        assert_eq!(a.type_key(), "bool");
        assert_eq!(bool::try_from(a.clone()), Ok(b));
        assert_eq!(bool::try_from(AnyView::from(b)), Ok(b));
        assert_eq!(Option::<bool>::try_from(a.clone()), Ok(Some(b)));
        assert_eq!(a.as_int(), None, "a bool is not an int");
        assert_eq!(a.view().to_any(), a);
    }
    // f64 (and f32 in)
    for f in [
        0.0,
        -0.0,
        1.5,
        -1e300,
        f64::MIN_POSITIVE,
        f64::INFINITY,
        f64::NAN,
    ] {
        let a = Any::from(f);
        assert_eq!(a.type_key(), "float");
        assert_eq!(f64::try_from(a.clone()).map(f64::to_bits), Ok(f.to_bits()));
        assert_eq!(
            f64::try_from(AnyView::from(f)).map(f64::to_bits),
            Ok(f.to_bits())
        );
        assert_eq!(
            Option::<f64>::try_from(a.clone()).map(|o| o.map(f64::to_bits)),
            Ok(Some(f.to_bits()))
        );
        assert_eq!(a.as_int(), None);
    }
    assert_eq!(f64::try_from(Any::from(0.25f32)), Ok(0.25));
    assert_eq!(f64::try_from(Any::from(3)), Ok(3.0), "ints widen to float");
    // DataType
    for s in [
        "int8",
        "int64",
        "uint1",
        "float16",
        "float32x4",
        "bfloat16",
        "bool",
        "handle",
    ] {
        let dt: DataType = s.parse().unwrap();
        let a = Any::from(dt);
        assert_eq!(a.type_key(), "DataType");
        assert_eq!(DataType::try_from(a.clone()), Ok(dt));
        assert_eq!(DataType::try_from(AnyView::from(dt)), Ok(dt));
        assert_eq!(a.as_data_type(), Some(dt));
        assert_eq!(Option::<DataType>::try_from(a.clone()), Ok(Some(dt)));
        assert_eq!(AnyView::from(dt), a.view());
        assert_eq!(format!("{a:?}"), format!("Any({s})"));
    }
    // Device
    for d in [
        Device::cpu(),
        Device::new(Device::CUDA, 3),
        Device::new(99, -1),
    ] {
        let a = Any::from(d);
        assert_eq!(a.type_key(), "Device");
        assert_eq!(Device::try_from(a.clone()), Ok(d));
        assert_eq!(Device::try_from(AnyView::from(d)), Ok(d));
        assert_eq!(Option::<Device>::try_from(a.clone()), Ok(Some(d)));
        assert_eq!(a.as_device(), Some(d));
        assert_eq!(AnyView::from(d), a.view());
    }
    // Opaque pointers: stored, never dereferenced.
    let mut target = 7u64;
    let p = &mut target as *mut u64 as *mut c_void;
    for ptr in [p, std::ptr::null_mut(), p.wrapping_add(1)] {
        let a = Any::opaque_ptr(ptr);
        assert_eq!(a.type_key(), "void*");
        assert_eq!(a.as_opaque_ptr(), Some(ptr));
        assert_eq!(a.view().as_opaque_ptr(), Some(ptr));
        assert_eq!(a.clone().as_opaque_ptr(), Some(ptr));
        assert!(!a.is_object() && a.as_int().is_none());
    }
    assert_ne!(Any::opaque_ptr(p), Any::opaque_ptr(std::ptr::null_mut()));
    assert_eq!(Any::opaque_ptr(p), Any::opaque_ptr(p));
}

#[test]
fn strings_round_trip_inline_or_as_objects() {
    let guard = LeakCheck::new();
    // Inline: up to 7 bytes, including multi-byte text and NULs.
    for s in ["", "a", "1234567", "ééé", "a\0b", "日本"] {
        assert!(s.len() <= SMALL_STR_MAX);
        let a = Any::from(s);
        assert_eq!(a.type_key(), "ffi.SmallStr", "{s:?}");
        assert!(!a.is_object());
        assert_eq!(a.as_str(), Some(s));
        assert_eq!(a.view().as_str(), Some(s));
        assert_eq!(std::string::String::try_from(a.clone()).unwrap(), s);
        assert_eq!(std::string::String::try_from(a.view()).as_deref(), Ok(s));
        assert_eq!(Any::from(s.to_owned()), a);
        assert_eq!(Any::from(&s.to_owned()), a);
        assert_eq!(guard.live(), 0, "no object for an inline string");
        // A `String` handle made from an inline string is inline too: no object.
        let handle = String::try_from(a.clone()).unwrap();
        assert_eq!(handle, s);
        assert!(handle.is_inline());
        let handle = String::try_from(a.view()).unwrap();
        assert_eq!(handle.as_str(), s);
        assert!(handle.is_inline());
        assert_eq!(guard.live(), 0);
        // Asking for the object makes one.
        let obj = handle.into_object_ptr();
        assert_eq!(obj.as_str(), s);
        assert_eq!(guard.live(), 1);
        drop(obj);
    }
    // Objects: 8 bytes and up.
    for s in [
        "12345678",
        "éééé",
        "a much longer string that goes on",
        &"x".repeat(5000),
    ] {
        assert!(s.len() > SMALL_STR_MAX);
        let a = Any::from(s);
        assert_eq!(a.type_key(), "ffi.String", "{s:?}");
        assert!(a.is_object());
        assert_eq!(guard.live(), 1);
        assert_eq!(a.as_str(), Some(s));
        assert_eq!(a.downcast_ref::<StringObj>().map(|o| o.as_str()), Some(s));
        let shared = String::try_from(a.clone()).unwrap();
        assert!(ObjectPtr::ptr_eq(
            shared.as_heap_object().unwrap(),
            a.as_object().unwrap()
        ));
        assert_eq!(guard.live(), 1, "shared, not copied");
        assert_eq!(std::string::String::try_from(a.clone()).unwrap(), s);
        drop((a, shared));
        assert_eq!(guard.live(), 0);
    }
    // A short `String` handle is inline, like the `Any`.
    let inline = String::from("ab");
    assert!(inline.is_inline());
    assert_eq!(Any::from(inline.clone()).type_key(), "ffi.SmallStr");
    assert_eq!(String::try_from(Any::from("ab")), Ok(inline.clone()));
    // A string object stays an object even when short, and equals the inline text.
    let short_obj = String::from_object_ptr(inline.clone().into_object_ptr());
    assert!(!short_obj.is_inline());
    assert_eq!(short_obj, inline);
    assert!(!String::ptr_eq(&short_obj, &inline));
    let a = Any::from(short_obj.clone());
    assert_eq!(a.type_key(), "ffi.String");
    assert_eq!(a.as_str(), Some("ab"));
    assert_eq!(
        Option::<String>::try_from(a.clone()),
        Ok(Some(short_obj.clone()))
    );
    assert_eq!(
        Option::<std::string::String>::try_from(a.clone()),
        Ok(Some("ab".to_owned()))
    );
    assert_eq!(
        ObjectPtr::<StringObj>::try_from(a.clone()).map(String::from_object_ptr),
        Ok(short_obj.clone())
    );
    // Borrowed strings (views only) become owned on `to_any`.
    let text = std::string::String::from("a borrowed string");
    let v = AnyView::from(text.as_str());
    assert_eq!(v.type_key(), "const char*");
    assert_eq!(v.as_str(), Some("a borrowed string"));
    assert_eq!(guard.live(), 1, "only `short_obj`: a view owns nothing");
    let owned = v.to_any();
    assert_eq!(owned.type_key(), "ffi.String");
    assert_eq!(owned.view(), v);
    assert_eq!(guard.live(), 2);
    assert_eq!(AnyView::from("tiny").to_any().type_key(), "ffi.SmallStr");
    assert_eq!(String::try_from(v).unwrap(), "a borrowed string");
    let sv = AnyView::from(&short_obj);
    assert_eq!(sv.type_key(), "ffi.String");
    assert_eq!(sv.as_str(), Some("ab"));
    // Strings are not objects of other kinds, and non-strings are not strings.
    assert!(Any::from("abc").downcast_ref::<StringObj>().is_none());
    assert_eq!(
        String::try_from(Any::from(1)).unwrap_err().to_string(),
        "expected ffi.String, got int"
    );
    assert_eq!(
        std::string::String::try_from(Any::from(node(1)))
            .unwrap_err()
            .to_string(),
        "expected ffi.String, got atest.Node"
    );
    assert_eq!(Any::from(1).as_str(), None);
}

#[test]
fn bytes_round_trip_as_objects() {
    let guard = LeakCheck::new();
    let data: &[u8] = &[0, 1, 255, b'\n'];
    let b = Bytes::from(data);
    let a = Any::from(b.clone());
    assert_eq!(a.type_key(), "ffi.Bytes");
    assert_eq!(a.as_str(), None, "bytes are not text");
    assert_eq!(
        a.downcast_ref::<BytesObj>().map(|o| o.as_bytes()),
        Some(data)
    );
    let back = Bytes::from_object_ptr(ObjectPtr::<BytesObj>::try_from(a.clone()).unwrap());
    assert_eq!(back, b);
    assert!(ObjectPtr::ptr_eq(back.as_object_ptr(), b.as_object_ptr()));
    assert_eq!(guard.live(), 1);
    assert_eq!(
        ObjectPtr::<BytesObj>::try_from(Any::from("text"))
            .unwrap_err()
            .to_string(),
        "expected ffi.Bytes, got ffi.String"
    );
    assert_eq!(
        String::try_from(a).unwrap_err().to_string(),
        "expected ffi.String, got ffi.Bytes"
    );
    let empty = Any::from(Bytes::from(Vec::new()));
    assert_eq!(
        empty.downcast_ref::<BytesObj>().map(|o| o.as_bytes().len()),
        Some(0)
    );
}

#[test]
fn objects_round_trip() {
    let _guard = LeakCheck::new();
    let l = leaf(3, "leaf");
    let a = Any::from(l.clone());
    assert!(a.is_object());
    assert_eq!(a.type_key(), "atest.Leaf");
    assert_eq!(a.type_index(), l.type_index());
    // Down-casts to the exact type, its base and the root.
    assert_eq!(
        a.downcast_ref::<Leaf>().map(|x| x.label.as_str()),
        Some("leaf")
    );
    assert_eq!(a.downcast_ref::<Node>().map(|x| x.value), Some(3));
    assert!(a.downcast_ref::<Object>().is_some());
    assert!(a.downcast_ref::<TrackedObj>().is_none());
    assert!(a.downcast_ref::<StringObj>().is_none());
    assert!(a
        .as_object_of::<Node>()
        .is_some_and(|p| ObjectPtr::ptr_eq(p, &l)));
    assert!(a.as_object().is_some_and(|p| ObjectPtr::ptr_eq(p, &l)));
    let v = a.view();
    assert_eq!(v.downcast_ref::<Leaf>().map(|x| x.value()), Some(3));
    assert!(v.as_object_of::<Node>().is_some());
    // Out as handles of every level.
    let as_leaf = ObjectPtr::<Leaf>::try_from(a.clone()).unwrap();
    let as_node = ObjectPtr::<Node>::try_from(a.view()).unwrap();
    let as_obj = ObjectRef::try_from(a.clone()).unwrap();
    assert!(ObjectPtr::ptr_eq(&as_leaf, &l) && ObjectPtr::ptr_eq(&as_node, &l));
    assert!(ObjectPtr::ptr_eq(&as_obj, &l));
    assert_eq!(
        Option::<ObjectPtr<Leaf>>::try_from(a.clone()).map(|o| o.is_some()),
        Ok(true)
    );
    // From a base-typed handle, the `Any` still knows the dynamic type.
    let erased = Any::from(l.clone().into_object_ref());
    assert_eq!(erased.type_key(), "atest.Leaf");
    assert_eq!(erased, a, "same object, same value");
    // A plain `Node` is not a `Leaf`.
    let n = Any::from(node(1));
    let e = ObjectPtr::<Leaf>::try_from(n.clone()).unwrap_err();
    assert_eq!(e.to_string(), "expected atest.Leaf, got atest.Node");
    assert_eq!(
        ObjectPtr::<Leaf>::try_from(n.view())
            .unwrap_err()
            .to_string(),
        "expected atest.Leaf, got atest.Node"
    );
    assert_eq!(
        Option::<ObjectPtr<Leaf>>::try_from(Any::from(1))
            .unwrap_err()
            .to_string(),
        "expected atest.Leaf, got int"
    );
    assert_eq!(
        ObjectRef::try_from(Any::from("inline"))
            .unwrap_err()
            .to_string(),
        "expected ffi.Object, got ffi.String"
    );
    // Options of objects.
    let some = Any::from(Some(l.clone()));
    assert!(ObjectPtr::ptr_eq(some.as_object().unwrap(), &l));
    assert!(Any::from(None::<ObjectPtr<Leaf>>).is_none());
    drop((as_leaf, as_node, as_obj, erased, some));
    drop(a);
    assert_eq!(ObjectPtr::strong_count(&l), 1);
}

impl Leaf {
    fn value(&self) -> i64 {
        self.base.value
    }
}

#[test]
fn wrong_conversions_name_expected_and_actual() {
    let _guard = LeakCheck::new();
    let long = Any::from("a string object");
    let cases: Vec<(std::string::String, &str)> = vec![
        (
            i64::try_from(long.clone()).unwrap_err().to_string(),
            "expected int, got ffi.String",
        ),
        (
            i64::try_from(Any::from("short")).unwrap_err().to_string(),
            "expected int, got ffi.String",
        ),
        (
            i64::try_from(Any::from(true)).unwrap_err().to_string(),
            "expected int, got bool",
        ),
        (
            i64::try_from(Any::from(1.0)).unwrap_err().to_string(),
            "expected int, got float",
        ),
        (
            i32::try_from(Any::from(node(1))).unwrap_err().to_string(),
            "expected int32, got atest.Node",
        ),
        (
            bool::try_from(Any::from(1)).unwrap_err().to_string(),
            "expected bool, got int",
        ),
        (
            f64::try_from(Any::from("1.5")).unwrap_err().to_string(),
            "expected float, got ffi.String",
        ),
        (
            f64::try_from(Any::from(false)).unwrap_err().to_string(),
            "expected float, got bool",
        ),
        (
            DataType::try_from(Any::from(Device::cpu()))
                .unwrap_err()
                .to_string(),
            "expected DataType, got Device",
        ),
        (
            Device::try_from(Any::from(DataType::int(32)))
                .unwrap_err()
                .to_string(),
            "expected Device, got DataType",
        ),
        (
            Device::try_from(Any::opaque_ptr(std::ptr::null_mut()))
                .unwrap_err()
                .to_string(),
            "expected Device, got void*",
        ),
        (
            u8::try_from(AnyView::from("view")).unwrap_err().to_string(),
            "expected uint8, got const char*",
        ),
        (
            Option::<i64>::try_from(Any::from("x"))
                .unwrap_err()
                .to_string(),
            "expected int, got ffi.String",
        ),
        (
            Option::<bool>::try_from(Any::from(0))
                .unwrap_err()
                .to_string(),
            "expected bool, got int",
        ),
        (
            Array::<Any>::try_from(Any::from(2))
                .unwrap_err()
                .to_string(),
            "expected ffi.Array, got int",
        ),
    ];
    for (got, want) in cases {
        assert_eq!(got, want);
    }
    // The fields are public and match the message.
    let e = i64::try_from(long).unwrap_err();
    assert_eq!((&*e.expected, e.actual), ("int", "ffi.String"));
    let _: &dyn std::error::Error = &e;
}

#[test]
fn into_raw_and_from_raw_keep_ownership() {
    let guard = LeakCheck::new();
    let o = node(9);
    let values = vec![
        Any::NONE,
        Any::from(-3),
        Any::from(true),
        Any::from(2.5),
        Any::from(DataType::float(32)),
        Any::from(Device::cpu()),
        Any::opaque_ptr(std::ptr::null_mut()),
        Any::from("inline"),
        Any::from("a string object"),
        Any::from(o.clone()),
    ];
    assert_eq!(ObjectPtr::strong_count(&o), 2);
    let expected: Vec<std::string::String> = values.iter().map(|v| format!("{v:?}")).collect();
    let raws: Vec<AnyView<'static>> = values.into_iter().map(Any::into_raw).collect();
    assert_eq!(
        ObjectPtr::strong_count(&o),
        2,
        "the raw form owns the reference"
    );
    assert_eq!(guard.live(), 2, "the string object is alive too");
    assert_eq!(raws[9].downcast_ref::<Node>().map(|n| n.value), Some(9));
    assert_eq!(raws[7].as_str(), Some("inline"));
    let back: Vec<Any> = raws
        .into_iter()
        // SAFETY: every raw value came from `Any::into_raw` just above and is taken back
        // exactly once, so each owned reference is reclaimed once.
        .map(|r| unsafe { Any::from_raw(r) })
        .collect();
    let shown: Vec<std::string::String> = back.iter().map(|v| format!("{v:?}")).collect();
    assert_eq!(shown, expected);
    assert_eq!(ObjectPtr::strong_count(&o), 2);
    drop(back);
    assert_eq!(ObjectPtr::strong_count(&o), 1);
    assert_eq!(guard.live(), 1);
}

#[test]
fn reference_counts_are_exact() {
    let _guard = LeakCheck::new();
    let o = leaf(1, "o");
    let count = || ObjectPtr::strong_count(&o);
    assert_eq!(count(), 1);
    let a = Any::from(o.clone());
    assert_eq!(count(), 2);
    let b = a.clone();
    assert_eq!(count(), 3);
    let c = Any::from(&o);
    assert_eq!(count(), 4);
    drop(c);
    assert_eq!(count(), 3);
    // Views and borrows do not count.
    let v = a.view();
    let v2 = AnyView::from(&o);
    let w = v;
    assert_eq!(count(), 3);
    assert!(v.as_object().is_some() && w.as_object_of::<Node>().is_some());
    assert!(a.as_object().is_some() && a.downcast_ref::<Leaf>().is_some());
    assert_eq!(v, v2);
    assert_eq!(count(), 3);
    // `to_any` on a view takes a new reference.
    let d = v.to_any();
    assert_eq!(count(), 4);
    // Moving out of an `Any` transfers its reference.
    let p = ObjectPtr::<Leaf>::try_from(b).unwrap();
    assert_eq!(count(), 4);
    let q = ObjectPtr::<Node>::try_from(v2).unwrap();
    assert_eq!(count(), 5, "converting a view clones");
    // Failed conversions give every reference back.
    assert!(i64::try_from(d.clone()).is_err());
    assert!(ObjectPtr::<TrackedObj>::try_from(d.clone()).is_err());
    assert!(String::try_from(d.clone()).is_err());
    assert!(Array::<Any>::try_from(d.clone()).is_err());
    assert!(Option::<ObjectPtr<TrackedObj>>::try_from(d.clone()).is_err());
    assert_eq!(count(), 5);
    // Raw round trip.
    let raw = d.into_raw();
    assert_eq!(count(), 5);
    // SAFETY: `raw` came from `into_raw` and is taken back exactly once.
    let d = unsafe { Any::from_raw(raw) };
    assert_eq!(count(), 5);
    // Containers hold one reference each.
    let arr: Array<Any> = vec![a.clone(), d.clone(), Any::from(p.clone())].into();
    assert_eq!(count(), 8);
    let arr2 = arr.clone();
    assert_eq!(count(), 8, "cloning a container shares it");
    drop((arr, arr2));
    assert_eq!(count(), 5);
    drop((a, d, p, q));
    assert_eq!(count(), 1);
}

#[test]
fn options_round_trip() {
    let _guard = LeakCheck::new();
    assert_eq!(Option::<i64>::try_from(Any::from(Some(5i64))), Ok(Some(5)));
    assert_eq!(
        Option::<bool>::try_from(Any::from(Some(false))),
        Ok(Some(false))
    );
    assert_eq!(Option::<f64>::try_from(Any::from(Some(0.5))), Ok(Some(0.5)));
    assert_eq!(
        Option::<std::string::String>::try_from(Any::from(Some("a long string value"))),
        Ok(Some("a long string value".to_owned()))
    );
    assert_eq!(
        Option::<String>::try_from(Any::from(Some(String::from("s")))),
        Ok(Some(String::from("s")))
    );
    assert_eq!(
        Option::<DataType>::try_from(Any::from(Some(DataType::bool()))),
        Ok(Some(DataType::bool()))
    );
    assert_eq!(
        Option::<Device>::try_from(Any::from(None::<Device>)),
        Ok(None)
    );
    assert_eq!(
        Option::<String>::try_from(Any::from(None::<&str>)),
        Ok(None)
    );
    let n = node(2);
    let some = Option::<ObjectPtr<Node>>::try_from(Any::from(Some(n.clone()))).unwrap();
    assert!(some.is_some_and(|p| ObjectPtr::ptr_eq(&p, &n)));
    assert_eq!(ObjectPtr::strong_count(&n), 1);
}

// ---------------------------------------------------------------------------------
// Equality and hashing.
// ---------------------------------------------------------------------------------

#[test]
fn strings_are_equal_by_value_in_every_form() {
    let _guard = LeakCheck::new();
    let st = std::collections::hash_map::RandomState::new();
    for text in [
        "",
        "abc",
        "a\0b",
        "1234567",
        "12345678",
        "a much longer string",
    ] {
        let owned = text.to_owned();
        let object = String::from(text);
        let forms = [
            Any::from(text),               // inline if short
            Any::from(object.clone()),     // always an object
            Any::from(String::from(text)), // another object
            AnyView::from(owned.as_str()).to_any(),
        ];
        let views = [
            AnyView::from(text), // borrowed
            AnyView::from(&object),
            forms[0].view(),
            forms[2].view(),
        ];
        let h = hash_of(&st, &forms[0]);
        for f in &forms {
            assert_eq!(f, &forms[0], "{text:?}: {f:?}");
            assert_eq!(hash_of(&st, f), h, "{text:?}: {f:?}");
        }
        for v in &views {
            assert_eq!(*v, forms[0].view(), "{text:?}: {v:?}");
            assert_eq!(hash_of(&st, v), h, "{text:?}: {v:?}");
        }
        let set: HashSet<Any> = forms.iter().cloned().collect();
        assert_eq!(set.len(), 1, "{text:?}");
        assert_ne!(forms[0], Any::from(format!("{text}.")));
        assert_ne!(forms[1], Any::from(format!("{text}x")));
    }
    // Strings and other kinds never compare equal.
    assert_ne!(Any::from("1"), Any::from(1));
    assert_ne!(Any::from(""), Any::NONE);
    assert_ne!(Any::from("true"), Any::from(true));
    // A map keyed by strings finds any form.
    let mut m: Map = Map::new();
    m.insert(Any::from("key"), Any::from(1));
    m.insert(Any::from(String::from("a longer key")), Any::from(2));
    assert_eq!(m.get(&String::from("key")).and_then(Any::as_int), Some(1));
    assert_eq!(m.get("a longer key").and_then(Any::as_int), Some(2));
    assert_eq!(
        m.get(&Any::from("a longer key")).and_then(Any::as_int),
        Some(2)
    );
    // Inserting another form of an existing key replaces the value in place.
    m.insert(Any::from(String::from("key")), Any::from(3));
    assert_eq!(m.len(), 2);
    assert_eq!(m.get("key").and_then(Any::as_int), Some(3));
}

#[test]
fn plain_values_compare_by_value_and_objects_by_identity() {
    let _guard = LeakCheck::new();
    let st = std::collections::hash_map::RandomState::new();
    let same = |a: Any, b: Any| {
        assert_eq!(a, b);
        assert_eq!(hash_of(&st, &a), hash_of(&st, &b), "{a:?}");
    };
    same(Any::from(5), Any::from(5i8));
    same(Any::from(5u32), Any::from(5i64));
    same(Any::from(true), Any::from(true));
    same(Any::from(1.5), Any::from(1.5f32));
    same(Any::from(f64::NAN), Any::from(f64::NAN));
    same(
        Any::from(DataType::int(8)),
        "int8".parse::<DataType>().map(Any::from).unwrap(),
    );
    same(Any::from(Device::new(2, 1)), Any::from(Device::new(2, 1)));
    same(Any::NONE, Any::from(()));
    // Different kinds with "the same" number are different values.
    let distinct = [
        Any::from(1),
        Any::from(1.0),
        Any::from(true),
        Any::from("1"),
        Any::NONE,
        Any::from(0),
        Any::from(0.0),
        Any::from(-0.0),
        Any::from(false),
        Any::from(f64::from_bits(f64::NAN.to_bits() ^ 1)),
        Any::from(f64::NAN),
        Any::from(DataType::int(32)),
        Any::from(DataType::new(DataType::INT, 32, 4)),
        Any::from(Device::new(2, 0)),
        Any::from(Device::new(2, 1)),
        Any::opaque_ptr(std::ptr::null_mut()),
    ];
    for (i, a) in distinct.iter().enumerate() {
        for (j, b) in distinct.iter().enumerate() {
            assert_eq!(a == b, i == j, "{a:?} vs {b:?}");
        }
    }
    let set: HashSet<Any> = distinct.iter().cloned().collect();
    assert_eq!(set.len(), distinct.len());
    // Objects by identity.
    let n = node(1);
    let a = Any::from(n.clone());
    same(a.clone(), Any::from(n.clone().into_object_ref()));
    assert_ne!(a, Any::from(node(1)), "same content, another object");
    assert_ne!(a.view(), Any::from(node(1)).view());
    let b1 = Any::from(Bytes::from(&b"bytes"[..]));
    let b2 = Any::from(Bytes::from(&b"bytes"[..]));
    // Bytes compare by content, like strings (and like `Bytes` itself).
    same(b1.clone(), b2.clone());
    assert_ne!(b1, Any::from(Bytes::from(&b"other"[..])));
    assert_ne!(b1, Any::from("bytes"), "bytes are not a string");
    let arr: Array<i64> = vec![1].into();
    assert_ne!(
        Any::from(arr.clone()),
        Any::from(Array::<i64>::from(vec![1]))
    );
    same(Any::from(arr.clone()), Any::from(arr));
    let set: HashSet<Any> = [a.clone(), a.clone(), Any::from(node(1))]
        .into_iter()
        .collect();
    assert_eq!(set.len(), 2);
}

// ---------------------------------------------------------------------------------
// Debug output.
// ---------------------------------------------------------------------------------

#[test]
fn debug_output_is_readable() {
    let _guard = LeakCheck::new();
    let cases = [
        (Any::NONE, "Any(None)"),
        (Any::from(-42), "Any(-42)"),
        (Any::from(true), "Any(true)"),
        (Any::from(1.5), "Any(1.5)"),
        (Any::from(2.0), "Any(2.0)"),
        (Any::from(DataType::float(16)), "Any(float16)"),
        (Any::from(Device::new(Device::CUDA, 1)), "Any(cuda:1)"),
        (Any::from("hi"), r#"Any("hi")"#),
        (Any::from("say \"hi\"\n"), r#"Any("say \"hi\"\n")"#),
        (Any::from(String::from("obj")), r#"Any("obj")"#),
        (Any::opaque_ptr(std::ptr::null_mut()), "Any(0x0)"),
    ];
    for (a, want) in cases {
        assert_eq!(format!("{a:?}"), want);
    }
    let n = node(1);
    let shown = format!("{:?}", Any::from(n.clone()));
    assert_eq!(shown, "Any(atest.Node { value: 1 })");
    assert_eq!(format!("{:?}", AnyView::from("view")), r#""view""#);
    assert_eq!(format!("{:?}", Any::from(7).view()), "7");
    let b = format!("{:?}", Any::from(Bytes::from(&b"x"[..])));
    assert_eq!(b, r#"Any(b"x")"#);
    let arr: Array<Any> = vec![Any::from(1), Any::from("s"), Any::NONE].into();
    let shown = format!("{:?}", Any::from(arr));
    assert_eq!(shown, r#"Any([1, "s", None])"#);
    let e = TypeError::new("int", "bool");
    assert!(format!("{e:?}").contains("expected"));
}

// ---------------------------------------------------------------------------------
// Drops.
// ---------------------------------------------------------------------------------

#[test]
fn objects_in_any_are_dropped_exactly_once() {
    let _guard = LeakCheck::new();
    static DROPS: DropCounter = DropCounter::new();
    let make = || {
        Any::from(make_object(TrackedObj {
            base: Object::new(),
            _tracked: DROPS.track(),
        }))
    };
    let a = make();
    let clones: Vec<Any> = (0..10).map(|_| a.clone()).collect();
    let views: Vec<AnyView<'_>> = clones.iter().map(Any::view).collect();
    assert_eq!(views.len(), 10);
    drop(views);
    drop(clones);
    assert_eq!(DROPS.get(), 0);
    let p = ObjectPtr::<TrackedObj>::try_from(a).unwrap();
    assert_eq!(DROPS.get(), 0, "moved into the handle");
    drop(p);
    assert_eq!(DROPS.get(), 1);
    // A failed conversion drops the value it consumed, exactly once.
    assert!(i64::try_from(make()).is_err());
    assert_eq!(DROPS.get(), 2);
    assert!(ObjectPtr::<Node>::try_from(make()).is_err());
    assert_eq!(DROPS.get(), 3);
    // Overwriting drops the old value.
    let mut slot = make();
    assert!(slot.is_object());
    slot = Any::from(1);
    assert_eq!(DROPS.get(), 4);
    assert_eq!(slot.as_int(), Some(1));
}

#[test]
fn debug_shows_objects_by_content_and_sharing_once() {
    let _guard = LeakCheck::new();
    let n = node(1);
    let a = Any::from(n.clone());
    // Two different objects with the same content print alike: the printer shows
    // structure, not addresses.
    let two: Array<Any> = vec![Any::from(node(1)), Any::from(node(1))].into();
    assert_eq!(
        format!("{two:?}"),
        "[atest.Node { value: 1 }, atest.Node { value: 1 }]"
    );
    assert_eq!(format!("{a:?}"), "Any(atest.Node { value: 1 })");
    assert_eq!(format!("{:?}", a.clone()), format!("{a:?}"));
    // One object reached twice is printed once, then referred to by its label.
    let shared: Array<Any> = vec![a.clone(), Any::from(leaf(2, "l")), a.clone()].into();
    assert_eq!(
        format!("{shared:?}"),
        r#"[atest.Node #1 { value: 1 }, atest.Leaf { value: 2, label: "l" }, #1]"#
    );
    // A printed `ObjectPtr` uses its run-time type, whatever its static type.
    let up: ObjectPtr<Node> = leaf(3, "up").upcast();
    assert_eq!(format!("{up:?}"), r#"atest.Leaf { value: 3, label: "up" }"#);
}

// ---------------------------------------------------------------------------------
// The handle API.
// ---------------------------------------------------------------------------------

/// A reflected object with a field of each core handle type.
#[derive(Object)]
#[repr(C)]
#[object(key = "anytest.Handles")]
struct Handles {
    base: Object,
    bytes: Bytes,
    error: object_core::Error,
    maybe: Option<Bytes>,
}

/// Every object handle of core offers the same API, spelled the same way: the four
/// methods, `From<_> for ObjectRef`, the value conversions, typed container items.
#[test]
fn core_handles_share_one_api() {
    let _guard = LeakCheck::new();
    macro_rules! check {
        ($h:ty, $obj:ty, $make:expr, $key:literal, $ptr:expr) => {{
            let ptr_of: fn(&$h) -> &ObjectPtr<$obj> = $ptr;
            let a: $h = $make;
            let b = a.clone();
            let other: $h = $make;
            assert!(<$h>::ptr_eq(&a, &b), "{}", $key);
            assert!(!<$h>::ptr_eq(&a, &other), "{}", $key);
            assert_eq!(ObjectPtr::strong_count(ptr_of(&a)), 2);
            let p: ObjectPtr<$obj> = b.into_object_ptr();
            assert_eq!(ObjectPtr::strong_count(&p), 2, "unwrapping keeps the count");
            let b = <$h>::from_object_ptr(p);
            assert!(<$h>::ptr_eq(&a, &b));
            let erased: ObjectRef = b.into();
            assert_eq!(erased.type_key(), $key);
            assert_eq!(
                ObjectPtr::strong_count(&erased),
                2,
                "erasing keeps the count"
            );
            drop(erased);
            // Owned and borrowed values, and back.
            let any = Any::from(a.clone());
            assert_eq!(any.type_key(), $key);
            assert_eq!(ObjectPtr::strong_count(ptr_of(&a)), 2, "moved in");
            assert!(<$h>::ptr_eq(&a, &<$h>::try_from(any).unwrap()));
            assert_eq!(AnyView::from(&a).type_key(), $key);
            assert!(<$h>::try_from(Any::from(1)).is_err());
            // A typed container holds it and lends it by reference.
            let items: Array<$h> = vec![a.clone()].into();
            assert!(<$h>::ptr_eq(items.get(0).unwrap(), &a));
        }};
    }
    check!(
        String,
        StringObj,
        String::from("a long string"),
        "ffi.String",
        |s| s.as_heap_object().unwrap()
    );
    check!(
        Bytes,
        BytesObj,
        Bytes::from(&b"some bytes"[..]),
        "ffi.Bytes",
        |b| b.as_object_ptr()
    );
    check!(
        object_core::Error,
        object_core::ErrorObj,
        object_core::Error::new("ValueError", "bad"),
        "ffi.Error",
        |e| e.as_object_ptr()
    );

    // Bytes and Error handles are reflected object fields.
    use object_core::reflection::{get_attr, FieldKind};
    let h = make_object(Handles {
        base: Object::new(),
        bytes: Bytes::from(&[1u8, 2][..]),
        error: object_core::Error::new("KeyError", "k"),
        maybe: None,
    })
    .into_object_ref();
    let table = h.type_info().reflection();
    for (name, key) in [
        ("bytes", "ffi.Bytes"),
        ("error", "ffi.Error"),
        ("maybe", "ffi.Bytes"),
    ] {
        let f = table.field(name).unwrap();
        assert_eq!((f.kind(), f.static_type_key()), (FieldKind::Object, key));
    }
    let b = Bytes::try_from(get_attr(&h, "bytes").unwrap()).unwrap();
    assert_eq!(&*b, &[1, 2]);
    assert!(get_attr(&h, "maybe").unwrap().is_none());
}

// ---------------------------------------------------------------------------------
// `ffi.BigInt`.
// ---------------------------------------------------------------------------------

#[test]
fn big_ints_convert_compare_and_hash_by_value() {
    let _leaks = LeakCheck::new();
    for v in [
        0i128,
        1,
        -1,
        i128::from(i64::MAX),
        i128::from(i64::MIN),
        i128::MAX,
        i128::MIN,
    ] {
        let b = BigInt::from(v);
        assert_eq!(b.to_i128(), Some(v));
        assert_eq!(b.to_string(), v.to_string());
        assert_eq!(v.to_string().parse::<BigInt>().unwrap(), b);
        assert_eq!(b.to_i64(), i64::try_from(v).ok());
        assert_eq!(b.to_u64(), u64::try_from(v).ok());
    }
    assert_eq!(BigInt::from(u64::MAX).to_u64(), Some(u64::MAX));
    assert_eq!(BigInt::from(u128::MAX).to_string(), u128::MAX.to_string());
    assert_eq!(BigInt::from(u128::MAX).to_i128(), None);
    // Beyond 128 bits: text round trips; order is numeric.
    let huge = "-340282366920938463463374607431768211456000000000000000001";
    let h: BigInt = huge.parse().unwrap();
    assert_eq!(h.to_string(), huge);
    assert!(h.is_negative() && h.to_i128().is_none());
    assert!(h < BigInt::from(i128::MIN) && BigInt::from(i128::MIN) < BigInt::from(0i64));
    assert!("-0".parse::<BigInt>().unwrap().is_zero());
    assert_eq!("-0".parse::<BigInt>().unwrap(), BigInt::from(0i64));
    assert_eq!("000123".parse::<BigInt>().unwrap(), BigInt::from(123i64));
    // Equal values hash alike (distinct objects).
    let set: HashSet<BigInt> = [BigInt::from(7i64), BigInt::from(7u64), "7".parse().unwrap()]
        .into_iter()
        .collect();
    assert_eq!(set.len(), 1);
    // Bad text.
    assert_eq!("".parse::<BigInt>(), Err(ParseBigIntError::Empty));
    assert_eq!("-".parse::<BigInt>(), Err(ParseBigIntError::Empty));
    assert_eq!(
        "12x".parse::<BigInt>(),
        Err(ParseBigIntError::InvalidDigit(2))
    );
    assert_eq!(
        "-1 ".parse::<BigInt>(),
        Err(ParseBigIntError::InvalidDigit(2))
    );
    // In `Any`, as a function argument and return.
    let any = Any::from(h.clone());
    assert_eq!(any.type_index(), object_core::type_index::BIG_INT);
    assert_eq!(any.type_key(), "ffi.BigInt");
    assert_eq!(format!("{any:?}"), format!("Any({huge})"));
    // Printed in a container, a number reached twice is labelled, like any object.
    let other: BigInt = huge.parse().unwrap();
    let shared = Array::<Any>::from_iter([any.clone(), any.clone(), Any::from(other)]);
    assert_eq!(
        format!("{shared:?}"),
        format!("[ffi.BigInt #1 {huge}, #1, {huge}]")
    );
    assert_eq!(BigInt::try_from(any).unwrap(), h);
    let negate = Function::from_typed(|b: BigInt| -> BigInt {
        let s = b.to_string();
        match s.strip_prefix('-') {
            Some(pos) => pos.parse().unwrap(),
            None => format!("-{s}").parse().unwrap(),
        }
    });
    let back = negate.call_with([&h]).unwrap();
    assert_eq!(
        BigInt::try_from(back).unwrap().to_string(),
        huge.trim_start_matches('-')
    );
}

/// Every text, short or long, inline or in an object: the two forms of a `String` agree
/// on text, equality, ordering, hashing, `Any` round trips and typed-container reads.
#[test]
fn string_handles_agree_in_both_forms() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let _guard = LeakCheck::new();
    let config = Config {
        cases: scaled(256, 4) as u32,
        failure_persistence: None,
        ..Config::default()
    };
    // Under Miri, a small alphabet with one- to four-byte characters: with the Unicode
    // class `\PC` the test took eight minutes there, with this one two.
    let any_text = if cfg!(miri) {
        "[a-zé€😀\\x00]{0,12}"
    } else {
        "\\PC{0,12}"
    };
    let texts = prop::collection::vec((any_text, "[a-c\\x00é]{0,9}"), 1..6);
    let hasher = std::collections::hash_map::RandomState::new();
    let result = TestRunner::new(config).run(&texts, |pairs| {
        for (a, b) in pairs {
            for text in [a.as_str(), b.as_str()] {
                let s = String::from(text);
                prop_assert_eq!(s.as_str(), text);
                prop_assert_eq!(s.is_inline(), text.len() <= String::INLINE_MAX);
                prop_assert_eq!(s.as_heap_object().is_some(), !s.is_inline());
                let obj = String::from_object_ptr(s.clone().into_object_ptr());
                prop_assert!(!obj.is_inline());
                prop_assert_eq!(&obj, &s);
                prop_assert_eq!(hasher.hash_one(&obj), hasher.hash_one(&s));
                prop_assert_eq!(hasher.hash_one(&s), hasher.hash_one(text));
                prop_assert_eq!(Any::from(s.clone()), Any::from(obj.clone()));
                prop_assert_eq!(Any::from(s.clone()), Any::from(text));
                prop_assert_eq!(String::try_from(Any::from(text)).unwrap(), s.clone());
                prop_assert_eq!(String::try_from(AnyView::from(text)).unwrap(), s.clone());
                let items: Array<String> = vec![s.clone(), obj.clone()].into();
                prop_assert!(items.iter().all(|i| i.as_str() == text));
                prop_assert!(String::ptr_eq(items.get(0).unwrap(), &s));
            }
            let (x, y) = (String::from(a.as_str()), String::from(b.as_str()));
            prop_assert_eq!(x == y, a == b);
            prop_assert_eq!(x.cmp(&y), a.cmp(&b));
            let mut m: Map<String, i64> = Map::new();
            m.insert(x.clone(), 1);
            m.insert(String::from_object_ptr(y.clone().into_object_ptr()), 2);
            prop_assert_eq!(m.len(), if a == b { 1 } else { 2 });
            prop_assert_eq!(m.get(b.as_str()), Some(&2));
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
