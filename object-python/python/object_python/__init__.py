"""Python bindings of the unified object protocol.

Every type in the registry (link-time or registered later, e.g. by a plugin) is a Python
class, made on first use, whose base is its parent's class: ``isinstance`` is the
registry's ``is`` check. Reflected fields are read-only attributes, ``repr`` is the
library's printer, construction is by keyword through reflection, ``==`` is identity.
Enum fields (``#[derive(ObjectEnum)]``) read as members of an ``enum.IntEnum`` class
per enum (``enum_class(key)``, ``Field.enum``), and take a member, a name or a value.
Types can be defined here too (``@py_class``, with fields), and methods registered
per type (``method``, ``register_method``) are found from every language.

    >>> import object_python as op
    >>> tour = op.namespace("tour")
    >>> x = tour.Var(name="x")
    >>> e = tour.Add(lhs=x, rhs=tour.IntImm(value=3))
    >>> isinstance(e, tour.BinOp), e.lhs == x
    (True, True)
"""

import collections.abc as _abc
import types as _types

from . import _native
from ._native import (
    ArrayBase,
    DataType,
    Device,
    Field,
    FunctionBase,
    MapBase,
    ModuleBase,
    NDArrayBase,
    Object,
    ObjectError,
    as_function,
    empty,
    enum_class,
    enum_keys,
    from_dlpack,
    get_global,
    list_globals,
    load_module,
    load_json_graph,
    register_error,
    register_global,
    register_type,
    remove_global,
    runtime,
    save_json_graph,
    ShapeBase,
    first_mismatch,
    structural_equal,
    structural_hash,
    type_class,
    type_keys,
    call_method,
    replace,
)
from ._pytypes import (
    field,
    get_method,
    method,
    methods,
    py_class,
    register_method,
    remove_method,
)

__all__ = [
    "Array",
    "DataType",
    "Device",
    "Function",
    "Map",
    "Module",
    "NDArray",
    "Object",
    "ObjectError",
    "ObjectMeta",
    "as_function",
    "call_method",
    "field",
    "get_method",
    "method",
    "methods",
    "py_class",
    "register_method",
    "remove_method",
    "replace",
    "empty",
    "enum_class",
    "enum_keys",
    "from_dlpack",
    "get_global",
    "list_globals",
    "load",
    "load_module",
    "load_json_graph",
    "namespace",
    "register_error",
    "register_global",
    "register_type",
    "remove_global",
    "runtime",
    "save",
    "save_json_graph",
    "Shape",
    "first_mismatch",
    "structural_equal",
    "structural_hash",
    "type_class",
    "type_keys",
]

__version__ = _native.__version__


def _method_getattr(self, name):
    return _native._bound_method(self, name)


class ObjectMeta(type):
    """The metaclass of the generated classes: ``isinstance`` asks the registry;
    attribute reads fall back to the process's method table."""

    def __init__(cls, name, bases, namespace, **kwargs):
        super().__init__(name, bases, namespace, **kwargs)
        # (CPython resets a new class's attribute read to the generic one: the method
        # table's fallback is put back, unless the class reads attributes its own way.
        # A build that cannot reach the slot, `abi3`, gets a `__getattr__`.)
        if not _native._install_getattr(cls) and "__getattr__" not in namespace:
            cls.__getattr__ = _method_getattr

    def __instancecheck__(cls, obj):
        if type.__instancecheck__(cls, obj):
            return True
        return _native._is_instance(obj, cls._type_index)

    def __repr__(cls):
        return "<class {!r} (object type {})>".format(cls._type_key, cls._type_index)

    def __getattr__(cls, name):
        # A method of the type from the process's method table (registered from Rust,
        # C or Python, also after the class was made): `Cls.make(...)`.
        from ._pytypes import class_method_attribute

        return class_method_attribute(cls, name)


_native._set_metaclass(ObjectMeta)

class _FunctionDoc:
    """``f.__doc__``: a function's documentation (its signature's); on the class, the
    class's own."""

    def __init__(self, class_doc):
        self._class_doc = class_doc

    def __get__(self, obj, cls=None):
        if obj is None:
            return self._class_doc
        return obj._doc


Array = type_class("ffi.Array")
Map = type_class("ffi.Map")
Function = type_class("ffi.Function")
Function.__doc__ = _FunctionDoc(
    "A packed function: called with positional and keyword arguments (bound by its "
    "signature), ``inspect.signature(f)`` shows its parameters."
)
Module = type_class("ffi.Module")
NDArray = type_class("ffi.Tensor")
Shape = type_class("ffi.Shape")


# Equality of the immutable containers by value, as tvm-ffi's Python package has it: an
# Array equals an Array or any other sequence but str/bytes (a list, a tuple, a Shape)
# with equal items in the same order, a Map equals a Map with equal entries (a Map and
# a dict are not compared, as in tvm-ffi). Items compare with their own ``==``: numbers
# and text by value, nested Arrays and Maps by value, other objects by identity (tvm-ffi
# compares their fields here; ``structural_equal`` does that). Hashes follow: an Array's
# is its tuple's, a Map's its items' frozenset's.
def _array_eq(self, other):
    if isinstance(other, (str, bytes, bytearray, _abc.Mapping)) or not isinstance(
        other, _abc.Sequence
    ):
        return NotImplemented
    if self is other:
        return True
    if len(self) != len(other):
        return False
    return all(a == b for a, b in zip(self, other))


def _map_eq(self, other):
    if not isinstance(other, MapBase):
        return NotImplemented
    if self is other:
        return True
    if len(self) != len(other):
        return False
    for k, v in self.items():
        if k not in other or not other[k] == v:
            return False
    return True


def _negated(eq):
    def ne(self, other):
        r = eq(self, other)
        return r if r is NotImplemented else not r

    return ne


Array.__eq__ = _array_eq
Array.__ne__ = _negated(_array_eq)
Array.__hash__ = lambda self: hash(tuple(self))
Map.__eq__ = _map_eq
Map.__ne__ = _negated(_map_eq)
Map.__hash__ = lambda self: hash(frozenset(self.items()))
# `Array[int]`, `Map[str, Expr]` in annotations (generic in the package's stub) evaluate
# at run time too, and an Array has a sequence's `index` and `count`.
Array.__class_getitem__ = classmethod(_types.GenericAlias)
Map.__class_getitem__ = classmethod(_types.GenericAlias)
Array.index = _abc.Sequence.index
Array.count = _abc.Sequence.count
_abc.Sequence.register(ArrayBase)
_abc.Sequence.register(ShapeBase)
_abc.Mapping.register(MapBase)


def namespace(prefix):
    """The classes of every registered type whose key starts with ``prefix + "."``,
    by their last name (``namespace("tour").Add`` is the class of ``tour.Add``), and
    the ``IntEnum`` classes of the enums their fields hold, the same way
    (``namespace("frontend").BinOpKind``)."""
    ns = _types.SimpleNamespace()
    start = prefix + "."
    for key in type_keys():
        if key.startswith(start) and "." not in key[len(start):]:
            setattr(ns, key[len(start):], type_class(key))
    for key in enum_keys():
        if key.startswith(start) and "." not in key[len(start):]:
            setattr(ns, key[len(start):], enum_class(key))
    return ns


def save(value, path):
    """Writes ``value`` (an object graph, a container, a number, ...) to ``path`` as a
    JSON graph (tvm-ffi's format)."""
    text = save_json_graph(value)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def load(path):
    """Reads the value a JSON graph file holds."""
    with open(path, encoding="utf-8") as f:
        return load_json_graph(f.read())
