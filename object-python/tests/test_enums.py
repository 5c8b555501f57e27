"""Enum fields (``#[derive(ObjectEnum)]``) from Python: members of an ``IntEnum`` per
enum, made once; keyword construction by member, name or value; errors naming the
enum; the printer, structural equality and the JSON graph by name."""

import enum
import pickle

import pytest

import object_python as op

pytestmark = pytest.mark.skipif(not op._native._testing, reason="needs the testing build")


@pytest.fixture
def testing():
    return op.namespace("testing")


def test_the_enum_is_an_int_enum_made_once(testing):
    Color = op.enum_class("testing.Color")
    assert issubclass(Color, enum.IntEnum)
    assert Color.__name__ == "Color" and Color.__qualname__ == "testing.Color"
    assert Color._enum_key == "testing.Color"
    assert [(m.name, m.value) for m in Color] == [("Red", 0), ("Green", 5), ("blue", 6)]
    assert op.enum_class("testing.Color") is Color
    assert testing.Color is Color and testing.Sign is op.enum_class("testing.Sign")
    assert testing.Paint.color.enum is Color
    assert testing.Paint.accent.enum is Color
    assert testing.Paint.sign.enum is testing.Sign
    assert testing.Paint.color.type_key == "testing.Color"
    assert "testing.Color" in op.enum_keys() and "testing.Sign" in op.enum_keys()
    assert op.enum_keys() == sorted(op.enum_keys())
    with pytest.raises(KeyError, match="no enum `testing.Nope`"):
        op.enum_class("testing.Nope")
    # A field of another kind has no enum.
    assert op.namespace("tour").IntImm.value.enum is None


def test_fields_read_as_members(testing):
    Color, Sign = testing.Color, testing.Sign
    p = testing.Paint(color=Color.Green, sign=Sign.Minus)
    assert p.color is Color.Green and type(p.color) is Color
    assert p.sign is Sign.Minus and p.sign == -1
    assert p.accent is None
    assert p.under is Color.Red  # the declared default
    assert p.color == 5  # an IntEnum member is its integer
    assert repr(p) == "testing.Paint { color: Green, sign: Minus, accent: None, under: Red }"


def test_construction_takes_a_member_a_name_or_a_value(testing):
    Color, Sign = testing.Color, testing.Sign
    by_member = testing.Paint(color=Color.blue, sign=Sign.Plus, accent=Color.Green)
    by_name = testing.Paint(color="blue", sign="Plus", accent="Green")
    by_value = testing.Paint(color=6, sign=1, accent=5)
    for p in (by_member, by_name, by_value):
        assert (p.color, p.sign, p.accent) == (Color.blue, Sign.Plus, Color.Green)
    assert op.structural_equal(by_member, by_name) and op.structural_equal(by_name, by_value)
    assert op.structural_hash(by_member) == op.structural_hash(by_value)
    other = testing.Paint(color="Red", sign="Plus", accent="Green")
    assert not op.structural_equal(by_member, other)
    assert op.first_mismatch(by_member, other) == ("<root>.color", "<root>.color")

    with pytest.raises(TypeError) as err:
        testing.Paint(color="Purple", sign="Plus")
    msg = str(err.value)
    assert "field `color` of `testing.Paint`" in msg
    assert "testing.Color (one of Red, Green, blue" in msg and '"Purple" is none of them' in msg
    with pytest.raises(TypeError, match="7 is none of them"):
        testing.Paint(color=7, sign="Plus")
    with pytest.raises(TypeError, match=r"testing\.Sign \(one of Minus, Plus"):
        testing.Paint(color="Red", sign=0.5)
    # A member of another enum passes as its integer: Sign.Plus is 1, no Color.
    with pytest.raises(TypeError, match="1 is none of them"):
        testing.Paint(color=Sign.Plus, sign="Plus")


def test_fields_stay_read_only(testing):
    p = testing.Paint(color="Red", sign="Plus")
    with pytest.raises(AttributeError, match="read-only"):
        p.color = testing.Color.Green


def test_json_graph_and_pickle_keep_the_variant(testing):
    Color, Sign = testing.Color, testing.Sign
    p = testing.Paint(color=Color.blue, sign=Sign.Minus, accent=Color.Red)
    text = op.save_json_graph(p)
    assert '"color":"blue","sign":"Minus"' in text
    back = op.load_json_graph(text)
    assert (back.color, back.sign, back.accent, back.under) == (Color.blue, Sign.Minus, Color.Red, Color.Red)
    assert op.structural_equal(back, p)
    assert op.load_json_graph(text.replace('"color":"blue"', '"color":5')).color is Color.Green
    with pytest.raises(ValueError, match="Purple") as err:
        op.load_json_graph(text.replace('"color":"blue"', '"color":"Purple"'))
    assert "testing.Paint" in str(err.value) and "color" in str(err.value)
    again = pickle.loads(pickle.dumps(p))
    assert again.color is Color.blue and op.structural_equal(again, p)
