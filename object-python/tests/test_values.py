import collections.abc
import sys

import pytest

import object_python as op

echo = op.get_global("testing.echo")


@pytest.mark.parametrize(
    "value",
    [0, -5, 2**62, 1.5, True, False, None, "", "short", "a longer string than eight", b"", b"\x00bytes\xff"],
)
def test_values_round_trip(value):
    back = echo(value)
    assert back == value and type(back) is type(value)


def test_data_types_and_devices():
    f32 = op.DataType("float32")
    assert (f32.code, f32.bits, f32.lanes) == (2, 32, 1)
    assert str(f32) == "float32" and echo(f32) == f32 and hash(echo(f32)) == hash(f32)
    cpu = op.Device("cpu:0")
    assert echo(cpu) == cpu == op.Device(1, 0) and cpu.device_type == 1
    with pytest.raises(ValueError):
        op.DataType("nonsense")


@pytest.mark.parametrize(
    "value", [2**63, -(2**63) - 1, 2**70, -(2**200), 7**5000, 2**64 - 1]
)
def test_ints_beyond_64_bits_are_big_ints(value):
    # Rust sees an `ffi.BigInt` (a typed parameter reads it), Python an `int` again.
    assert op.get_global("testing.big_int_text")(value) == str(value)
    back = echo(value)
    assert back == value and type(back) is int
    assert list(op.Array([value, 1])) == [value, 1]
    # 64-bit ints stay ints
    assert op.get_global("testing.add")(2**62, 2**62 - 1) == 2**63 - 1
    with pytest.raises(TypeError, match="expected int"):
        op.get_global("testing.add")(value, 1)


def test_numpy_scalars_are_their_values():
    np = pytest.importorskip("numpy")
    add = op.get_global("testing.add")
    assert add(np.int64(40), np.int32(2)) == 42
    assert add(np.uint8(255), np.int16(-5)) == 250
    for v, want in [
        (np.float32(1.5), 1.5),
        (np.float16(0.25), 0.25),
        (np.float64(2.5), 2.5),
        (np.bool_(True), True),
        (np.bool_(False), False),
        (np.int64(-3), -3),
        (np.uint64(2**64 - 1), 2**64 - 1),
    ]:
        back = echo(v)
        assert back == want and type(back) is type(want), (v, back)
    with pytest.raises(TypeError, match="cannot pass"):
        echo(np.complex64(1j))
    # arrays are still tensors
    assert op.get_global("testing.tensor_sum")(np.ones(3, np.float32)) == 3.0


def test_devices_by_kind_and_id():
    assert op.Device("cuda", 1) == op.Device("cuda:1") == op.Device(2, 1)
    assert str(op.Device("cpu", 0)) == "cpu:0" and op.Device("cuda").device_id == 0
    with pytest.raises(ValueError, match="already names the device id"):
        op.Device("cuda:1", 2)
    with pytest.raises(ValueError):
        op.Device("nonsense", 1)


def test_tvm_ffi_devices_and_data_types():
    tvm_ffi = pytest.importorskip("tvm_ffi", reason="apache-tvm-ffi is not installed")
    assert echo(tvm_ffi.device("cuda", 1)) == op.Device("cuda", 1)
    assert echo(tvm_ffi.device("cpu", 0)) == op.Device("cpu:0")
    assert echo(tvm_ffi.dtype("float16")) == op.DataType("float16")
    assert echo(tvm_ffi.dtype("int8x4")) == op.DataType("int8x4")


def test_arrays_and_maps_compare_by_value():
    a = op.Array([1, "two", [3, 4]])
    assert a == [1, "two", [3, 4]] and a == (1, "two", (3, 4))
    assert a == op.Array([1, "two", [3, 4]]) and not a != [1, "two", [3, 4]]
    assert a != [1, "two", [3, 5]] and a != [1, "two"] and a != "one"
    assert hash(a) == hash((1, "two", (3, 4)))
    assert {a: "x"}[op.Array([1, "two", [3, 4]])] == "x"
    assert op.Array([1, 2]) == op.Shape([1, 2])
    m = op.Map({"a": 1, "b": [1, 2]})
    assert m == op.Map({"b": [1, 2], "a": 1}) and m != op.Map({"a": 1, "b": [1, 3]})
    assert m != op.Map({"a": 1}) and hash(m) == hash(op.Map({"b": [1, 2], "a": 1}))
    # tvm-ffi's rule: a Map and a dict are not compared
    assert m != {"a": 1, "b": [1, 2]}
    # other objects inside compare by identity
    tour = op.namespace("tour")
    x = tour.Var(name="x")
    assert op.Array([x]) == [x] and op.Array([x]) != [tour.Var(name="x")]


def test_registered_error_classes():
    class MyError(Exception):
        pass

    class Mine(MyError):
        pass

    assert op.register_error("pytest.MyError", MyError) is MyError
    raise_ = op.get_global("testing.raise")
    with pytest.raises(MyError) as e:
        raise_("pytest.MyError", "boom")
    assert type(e.value) is MyError and e.value.kind == "pytest.MyError"
    assert str(e.value).startswith("boom") and e.value.frames == ["testing.raise"]

    def fail():
        raise Mine("py")

    # Rust sees the registered kind (a subclass's too); the same exception comes back
    assert op.get_global("testing.error_kind")(fail) == "pytest.MyError"
    with pytest.raises(Mine):
        op.get_global("testing.call")(fail)

    @op.register_error("pytest.Other")
    class Other(RuntimeError):
        pass

    with pytest.raises(Other):
        raise_("pytest.Other", "x")
    # unregistered kinds keep their exceptions
    with pytest.raises(op.ObjectError):
        raise_("pytest.Unregistered", "x")
    with pytest.raises(TypeError, match="exception class"):
        op.register_error("pytest.Bad", int)


def test_unconvertible_values():
    with pytest.raises(TypeError, match="cannot pass"):
        echo(object())


def test_array_is_a_read_only_sequence(tour):
    x = tour.Var(name="x")
    a = echo([1, "two", 3.0, None, x, [4]])
    assert isinstance(a, op.Array) and isinstance(a, collections.abc.Sequence)
    assert len(a) == 6 and a[0] == 1 and a[-2] == x and a[1:3] == ["two", 3.0]
    assert list(a[5]) == [4]
    assert "two" in a
    with pytest.raises(IndexError):
        a[6]
    with pytest.raises(TypeError):
        a[0] = 2
    assert list(op.Array((1, 2))) == [1, 2]
    assert repr(a).startswith('[1, "two"')


def test_map_is_a_read_only_mapping(tour):
    m = echo({"a": 1, "b": [1, 2]})
    assert isinstance(m, op.Map) and isinstance(m, collections.abc.Mapping)
    assert len(m) == 2 and m["a"] == 1 and list(m["b"]) == [1, 2] and "b" in m
    assert sorted(m) == ["a", "b"] and sorted(m.keys()) == ["a", "b"]
    assert dict((k, v) for k, v in m.items())["a"] == 1
    assert m.get("zz", 5) == 5
    with pytest.raises(KeyError):
        m["zz"]
    with pytest.raises(TypeError):
        m["a"] = 2


def test_typed_parameters_convert_lists_and_dicts(tour):
    x = tour.Var(name="x")
    y = tour.Var(name="y")
    e = tour.Add(lhs=x, rhs=tour.Mul(lhs=y, rhs=tour.IntImm(value=3)))
    assert op.get_global("tour.eval")(e, {x: 1, y: 2}) == 7
    with pytest.raises(TypeError):
        op.get_global("tour.eval")(e, {x: "one"})
    f = tour.Function(params=[x, y], body=e)
    assert list(f.params) == [x, y]
    with pytest.raises(TypeError):
        tour.Function(params=[1], body=e)


def test_refcounts_of_values_come_back():
    s = "a string long enough to be an object"
    before = sys.getrefcount(s)
    for _ in range(50):
        echo(s)
        echo([s, s])
    assert sys.getrefcount(s) == before


def test_lists_tuples_and_dicts_nest_to_any_depth():
    deep = [0]
    for i in range(20000):
        deep = (deep, i) if i % 2 else [deep, {"i": i}]
    back = echo(deep)
    depth = 0
    while len(back) == 2:
        back, depth = back[0], depth + 1
    assert depth == 20000 and list(back) == [0]


def test_a_container_that_contains_itself_is_refused():
    loop = [1]
    loop.append(loop)
    with pytest.raises(ValueError, match="contains itself"):
        echo(loop)
    d = {}
    d["me"] = [1, (2, d)]
    with pytest.raises(ValueError, match="contains itself"):
        echo(d)
    # Found however deep the cycle starts.
    outer = loop
    for _ in range(1000):
        outer = [outer]
    with pytest.raises(ValueError, match="contains itself"):
        echo(outer)
    # A list met again on another branch is no cycle, however deep.
    shared = [1]
    dag = shared
    for _ in range(1000):
        dag = [dag, shared]
    back = echo(dag)
    assert len(back) == 2 and list(back[1]) == [1]
