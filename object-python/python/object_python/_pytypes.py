"""Types defined in Python (``py_class``) and methods (``method``, ``register_method``).

``@py_class("demo.Point")`` over an annotated class (the dataclass idiom) registers
the type in the process's one registry with a real field table: the parent is the
class's base (``Object`` or any object class, Rust-defined or Python-defined), every
annotated name of the class body is a field of the declared type, a value in the body
is its default. Objects of the type are objects like any other: Rust reflection, the
printer, the JSON graph, structural equality, ``transform`` passes and C's field table
read them. Fields are read-only, as Rust's are once an object is shared; ``replace``
makes a changed copy.

The class body's public functions are registered in the process's method table (as
static methods for ``staticmethod``s), so Rust and C call them; methods registered
from Rust or C are found on instances and classes too.
"""

import enum as _enum
import inspect as _inspect
import types as _types
import typing as _typing

from . import _native

_MISSING = object()

#: Field types by their Python annotation.
_SCALARS = {
    bool: ("bool",),
    int: ("int",),
    float: ("float",),
    str: ("str",),
    _typing.Any: ("Any",),
    object: ("Any",),
}


class Field:
    """What ``field(...)`` gives for a class body's field: a default and flags."""

    __slots__ = ("default", "no_eq")

    def __init__(self, default=_MISSING, no_eq=False):
        self.default = default
        self.no_eq = no_eq

    def __repr__(self):
        return "field(default={!r}, no_eq={!r})".format(self.default, self.no_eq)


def field(*, default=_MISSING, no_eq=False):
    """A field's options in a ``py_class`` body: ``x: int = field(default=1)``;
    ``no_eq=True`` leaves it out of structural equality and hashing."""
    return Field(default, no_eq)


class _Self:
    """Stands for the class being defined in its own annotations."""


def _describe(ann, key, where, resolve):
    """The description of annotation ``ann`` that ``_native._register_py_type`` takes
    (``resolve`` evaluates a forward reference: a string inside a generic)."""
    from . import Array, Map, Object, DataType, Device  # (the package is loaded by now)

    if isinstance(ann, _typing.ForwardRef):
        ann = ann.__forward_arg__
    if isinstance(ann, str):
        ann = resolve(ann)
    if ann is None or ann is type(None):
        raise TypeError("{}: `None` alone is not a field type".format(where))
    if ann is _Self:
        return ("object", key)
    if ann in _SCALARS and not isinstance(ann, str):
        return _SCALARS[ann]
    if ann is DataType:
        return ("DataType",)
    if ann is Device:
        return ("Device",)
    origin = _typing.get_origin(ann)
    args = _typing.get_args(ann)
    if origin is _typing.Union or (
        hasattr(_types, "UnionType") and isinstance(ann, _types.UnionType)
    ):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(rest) < len(args):
            return ("optional", _describe(rest[0], key, where, resolve))
        raise TypeError(
            "{}: only `Optional[T]` (`T | None`) unions are field types, not {!r}".format(
                where, ann
            )
        )
    if origin in (list, _typing.List) or ann in (list, _typing.List):
        item = args[0] if args else _typing.Any
        return ("array", _describe(item, key, where, resolve))
    if origin in (dict, _typing.Dict) or ann in (dict, _typing.Dict):
        k, v = args if args else (_typing.Any, _typing.Any)
        return ("map", _describe(k, key, where, resolve), _describe(v, key, where, resolve))
    if origin is Array and len(args) == 1:  # `Array[T]`
        return ("array", _describe(args[0], key, where, resolve))
    if origin is Map and len(args) == 2:  # `Map[K, V]`
        k, v = args
        return ("map", _describe(k, key, where, resolve), _describe(v, key, where, resolve))
    if isinstance(ann, type):
        if issubclass(ann, Array):
            return ("array", ("Any",))
        if issubclass(ann, Map):
            return ("map", ("Any",), ("Any",))
        if issubclass(ann, Object):
            return ("object", ann._type_key)
        if issubclass(ann, _enum.IntEnum):
            enum_key = getattr(ann, "_enum_key", None)
            if enum_key is None:
                raise TypeError(
                    "{}: the IntEnum {!r} is not a Rust enum's class "
                    "(`object_python.enum_class(key)`)".format(where, ann)
                )
            return ("enum", enum_key)
    raise TypeError("{}: {!r} is not a field type".format(where, ann))


def _annotations(cls):
    """The class body's own annotations, strings evaluated (the class's own name
    standing for the class), and the function that evaluates a string met later (a
    forward reference inside a generic: ``Optional["Node"]``)."""
    module = _inspect.getmodule(cls)
    globals_ = dict(vars(module)) if module is not None else {}
    locals_ = {cls.__name__: _Self}

    def resolve(text):
        try:
            return eval(text, globals_, locals_)  # noqa: S307 (an annotation, as typing does)
        except Exception as e:
            raise TypeError("cannot resolve the annotation {!r}: {}".format(text, e)) from None

    return (
        _inspect.get_annotations(cls, eval_str=True, globals=globals_, locals=locals_),
        resolve,
    )


def _is_class_var(ann):
    return ann is _typing.ClassVar or _typing.get_origin(ann) is _typing.ClassVar


#: Class body entries that never reach the new class as they are.
_DROPPED = ("__dict__", "__weakref__", "__annotations__", "__slots__", "__annotate__",
            "__annotations_cache__", "__static_attributes__", "__firstlineno__",
            "__classdictcell__")


def _make(cls, key, final, abstract, slots):
    from . import Object, ObjectMeta

    bases = cls.__bases__
    if len(bases) != 1 or not issubclass(bases[0], Object):
        raise TypeError(
            "@py_class {!r}: the class derives from exactly one object class "
            "(`Object`, or any registered type's class), not {!r}".format(key, bases)
        )
    parent = bases[0]
    if parent is not Object and (
        not isinstance(parent, ObjectMeta) or _native.type_class(parent._type_key) is not parent
    ):
        raise TypeError(
            "@py_class {!r}: the base {!r} is not a registered type's class (a plain Python "
            "subclass of one is not a type of its own)".format(key, parent)
        )
    body = dict(cls.__dict__)
    for name in ("__init__", "__new__"):
        if name in body:
            raise TypeError(
                "@py_class {!r}: objects are built from their fields; define no `{}` (a "
                "named constructor is a static method)".format(key, name)
            )
    fields = []
    annotations, resolve = _annotations(cls)
    for name, ann in annotations.items():
        if _is_class_var(ann):
            continue
        where = "field `{}` of `{}`".format(name, key)
        desc = _describe(ann, key, where, resolve)
        value = body.pop(name, _MISSING)
        no_eq = False
        if isinstance(value, Field):
            value, no_eq = value.default, value.no_eq
        has_default = value is not _MISSING
        fields.append((name, desc, has_default, None if not has_default else value, no_eq))
    # A name is a field or a class attribute, not both (inherited fields included).
    names = {f[0] for f in fields}
    for name, value in body.items():
        inherited = isinstance(getattr(parent, name, None), _native.Field)
        if not name.startswith("__") and (name in names or inherited):
            raise TypeError(
                "@py_class {!r}: `{}` is a field and also defined in the class body ({!r})"
                .format(key, name, value)
            )
    index = _native._register_py_type(
        key, parent._type_index, fields, final, abstract, slots
    )
    namespace = {k: v for k, v in body.items() if k not in _DROPPED}
    made = _native._install_class(index, cls.__name__, namespace)
    # The public methods of the body, for Rust and C.
    for name, value in body.items():
        if name.startswith("_"):
            continue
        if isinstance(value, staticmethod):
            _native._register_method(index, name, value.__func__, True, True)
        elif isinstance(value, _types.FunctionType):
            _native._register_method(index, name, value, False, True)
    return made


def py_class(key=None, *, final=False, abstract=False, slots=0):
    """Registers an annotated class as an object type (see the module docs).

    ``key`` is the type key (default: ``module.QualName``); ``final`` forbids
    subtypes; ``abstract`` forbids objects of the type itself; ``slots`` reserves
    indices for subtypes registered later. Use it as ``@py_class("demo.Point")``,
    ``@py_class()`` or ``@py_class``. Registering the same key again with the same
    fields gives the same type (its class updated with the new body's methods);
    different fields are an error.
    """
    def wrap(cls):
        k = key if isinstance(key, str) else "{}.{}".format(cls.__module__, cls.__qualname__)
        return _make(cls, k, final, abstract, slots)

    if isinstance(key, type):
        cls, key = key, None
        return wrap(cls)
    return wrap


def _target(target):
    # (Anything else is refused by name, with what it was.)
    return target if isinstance(target, (int, str)) else getattr(target, "_type_index", target)


def register_method(target, name, fn, *, static=False, override=False):
    """Registers ``fn`` as the method ``name`` of ``target`` (an object class, a type
    key or a type index) in the process's method table: Rust's ``call_method``, C's
    ``obj_object_call_method`` and ``obj.name(...)`` here find it for the type and its
    subtypes. An instance method takes the object first; ``static=True`` makes a static
    one (``Cls.name(...)``)."""
    _native._register_method(_target(target), name, fn, static, override)


def method(target, name=None, *, static=False, override=False):
    """A decorator: ``@method(tour.Expr)`` registers the function below as the method
    of its name (or ``name``) of ``tour.Expr``, and returns it unchanged."""
    def wrap(fn):
        register_method(target, name or fn.__name__, fn, static=static, override=override)
        return fn

    return wrap


def get_method(target, name):
    """The ``Function`` of the method ``name`` of ``target`` (its own or its nearest
    ancestor's), or ``None``."""
    found = _native._find_method(_target(target), name)
    return None if found is None else found[0]


def methods(target):
    """The methods registered on ``target`` itself: ``{name: Function}``."""
    return {k: v[0] for k, v in _native._type_methods(_target(target)).items()}


def remove_method(target, name):
    """Removes the method ``name`` registered on ``target`` itself; whether there was
    one."""
    return _native._remove_method(_target(target), name)


def class_method_attribute(cls, name):
    """The metaclass's ``__getattr__``: a method of the class's type from the method
    table (a static one to call as ``Cls.name(...)``, an instance one taking the object
    first)."""
    if name.startswith("_"):
        raise AttributeError(name)
    found = _native._find_method(type.__getattribute__(cls, "_type_index"), name)
    if found is None:
        raise AttributeError(
            "type object {!r} has no attribute {!r}".format(cls.__qualname__, name)
        )
    return found[0]
