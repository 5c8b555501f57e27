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


def test_int_out_of_range():
    with pytest.raises(OverflowError):
        echo(2**70)


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
