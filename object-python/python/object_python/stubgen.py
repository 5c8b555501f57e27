"""Typed modules for the registered types, enums and global functions.

The classes of registered types are made at run time, so a type checker sees none of
them through ``namespace("tour").Add``. This writes, for each chosen key namespace, a
module that binds the run-time objects to names (``Add = type_class("tour.Add")``,
``add = get_global("tour.add")``) and a stub beside it (``.pyi``) that declares them
from what the registry of this process says:

- each type as a class whose base is its parent's class (``object_python.Object`` at
  the root; the nearest ancestor written too when the parent is not), ``@final`` if the
  type is; its fields as read-only properties (``int``, ``float``, ``bool``, ``str``,
  ``DataType``, ``Device``, the class of an object type, ``Array[T]``, ``Map[K, V]``,
  ``T | None`` for an optional field, an enum's ``IntEnum``; ``Any`` where the table
  does not say); an ``__init__`` that takes what construction takes: every field by
  keyword (positionally too, in table order, for a type with a run-time field table,
  e.g. a ``@py_class``), those with a default or optional may be left out, a list or
  tuple where an ``Array`` is asked, a dict (any mapping) where a ``Map`` is, an enum's
  member, name or value (an abstract type gets none);
- the methods of the method table, with their signatures (``@staticmethod`` for static
  ones);
- each enum as an ``IntEnum`` with its members;
- each global function with its signature (parameter names, defaults, types; ``Any``
  where a type is not known, ``(*args: Any) -> Any`` for a packed function).

Layout: the key namespace ``tour`` is the package ``tour`` (``tour/__init__.py`` and
``tour/__init__.pyi``), or ``NAME.tour`` with ``package="NAME"``; a nested namespace
(``a.b`` of the key ``a.b.C``) is the subpackage ``a/b/``. A name that is not an
identifier, is a keyword, is taken in the module (a subpackage, a class, an enum, a
function, in that order of precedence) or is one the stub needs (``int``, ``str``, …)
gets a ``_`` appended (``testing.raise`` is ``testing.raise_``). A type or enum of a
namespace not written is declared as its nearest written ancestor (``Object`` at
last), an enum as ``IntEnum``.

The modules bind the run-time objects when imported: a plugin's types need the plugin
loaded first (``--load``), a ``@py_class``'s module imported (``--import``). The stubs
say what the registry held when they were written; run it again after a change.

    python -m object_python.stubgen --prefix tour --package typed -o stubs
    # then, with stubs/ on sys.path (and MYPYPATH):
    from typed.tour import Add, IntImm, Var
"""

from __future__ import annotations

import argparse
import collections.abc as abc
import enum as _enum
import importlib
import inspect
import keyword
import os
import pathlib
import re
import sys
import types
import typing
from typing import Any, Iterable, Sequence

import object_python as _op
from object_python import _native

__all__ = ["generate", "main"]

#: The package's own classes for the built-in types.
_OP_CLASSES = {
    "ffi.Object": "Object",
    "ffi.Array": "Array",
    "ffi.Map": "Map",
    "ffi.Function": "Function",
    "ffi.Tensor": "NDArray",
    "ffi.Shape": "Shape",
    "ffi.Module": "Module",
}
#: Built-in types whose values Python sees as its own.
_PY_VALUES = {"ffi.String": "str", "ffi.Bytes": "bytes", "ffi.BigInt": "int"}
#: The scalar names of field and parameter types.
_SCALARS = {
    "bool": "bool",
    "int": "int",
    "float": "float",
    "str": "str",
    "bytes": "bytes",
    "None": "None",
    "Any": "_t.Any",
    "typing.Any": "_t.Any",
    "object": "_t.Any",
    "DataType": "_op.DataType",
    "Device": "_op.Device",
}
#: Names a stub module uses itself.
_RESERVED = {"int", "float", "bool", "str", "bytes", "None", "object", "type", "property",
             "staticmethod", "_t", "_op", "_enum"}
#: Rust scalar types (a field's Rust type, read for the items of a container).
_RUST_SCALARS = {
    **{t: "int" for t in ("i8", "i16", "i32", "i64", "isize", "u8", "u16", "u32", "u64",
                           "usize")},
    "f32": "float", "f64": "float", "bool": "bool", "String": "str", "str": "str",
    "DataType": "DataType", "Device": "Device", "Any": "Any",
}

# A type, as this module handles one: ("name", text of a scalar), ("object", key),
# ("enum", key), ("array", T), ("map", K, V), ("optional", T).
_ANY = ("name", "Any")


def _identifier(name: str, taken: set[str]) -> str:
    """``name`` made a fresh identifier of a module (``_`` appended as needed)."""
    out = re.sub(r"\W", "_", name)
    if not out or out[0].isdigit():
        out = "_" + out
    while keyword.iskeyword(out) or out in taken or out in _RESERVED:
        out += "_"
    taken.add(out)
    return out


def _is_name(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


def _doc(text: str | None, indent: str) -> list[str]:
    if not text:
        return []
    text = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = text.splitlines()
    if len(lines) == 1:
        return ['{}"""{}"""'.format(indent, lines[0])]
    return ['{}"""{}'.format(indent, lines[0])] + [
        (indent + line) if line.strip() else "" for line in lines[1:]
    ] + ['{}"""'.format(indent)]


# ---------------------------------------------------------------------------------
# Type text → type.


def _split_top(text: str, sep: str, brackets: str = "[]") -> list[str]:
    """``text`` split at ``sep`` outside brackets."""
    parts, depth, start = [], 0, 0
    i = 0
    while i < len(text):
        c = text[i]
        if c == brackets[0]:
            depth += 1
        elif c == brackets[1]:
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            start = i + len(sep)
            i = start
            continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


class _Parser:
    """Reads a type's text: a signature's (``int``, ``Optional[str]``, ``tour.Expr``,
    ``ffi.Array of tour.Var``, ``ffi.Map of ffi.String to Any``, a Python annotation's
    text such as ``list[int]`` or ``X | None``) or a run-time field table's
    (``Array[Optional[int]]``, ``Map[str, pyt.Point]``, an enum's key)."""

    def __init__(self, type_keys: set[str], enum_keys: set[str]):
        self.type_keys = type_keys
        self.enum_keys = enum_keys

    def parse(self, text: str) -> tuple[Any, ...]:
        try:
            return self._parse(text.strip())
        except (ValueError, IndexError):
            return _ANY

    def _parse(self, text: str) -> tuple[Any, ...]:
        alternatives = _split_top(text, "|")
        if len(alternatives) > 1:
            rest = [a for a in alternatives if a not in ("None", "NoneType")]
            if len(rest) == 1:
                return ("optional", self._parse(rest[0]))
            return _ANY
        for word in ("ffi.Array", "ffi.List", "ffi.Map", "ffi.Dict"):
            if text.startswith(word + " of "):
                tail = text[len(word) + 4:]
                if word in ("ffi.Array", "ffi.List"):
                    item = self._parse(tail)
                    return ("array", item) if word == "ffi.Array" else ("object", "ffi.List")
                k, v = self._key_to_value(tail)
                return ("map", k, v) if word == "ffi.Map" else ("object", "ffi.Dict")
        m = re.fullmatch(r"([\w.]+)\[(.*)\]", text, re.S)
        if m:
            head, args = m.group(1), _split_top(m.group(2), ",")
            head = head.removeprefix("typing.").removeprefix("collections.abc.")
            if head == "Optional" and len(args) == 1:
                return ("optional", self._parse(args[0]))
            if head in ("Array", "list", "List", "Sequence", "tuple") and (
                len(args) == 1 or (head == "tuple" and args[-1] == "...")
            ):
                return ("array", self._parse(args[0]))
            if head in ("Map", "dict", "Dict", "Mapping") and len(args) == 2:
                return ("map", self._parse(args[0]), self._parse(args[1]))
            if head == "Union":
                return self._parse(" | ".join(args))
            return _ANY
        text = text.strip("'\"")
        if text in _SCALARS:
            return ("name", text)
        if text in _PY_VALUES:
            return ("name", _PY_VALUES[text])
        if text in self.enum_keys:
            return ("enum", text)
        if text in self.type_keys:
            return ("object", text)
        return _ANY

    def _key_to_value(self, text: str) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        # `K to V`, where K may itself be `ffi.Map of A to B`: the first ` to ` whose
        # left side reads whole.
        words = text.split(" to ")
        for i in range(1, len(words)):
            left, right = " to ".join(words[:i]), " to ".join(words[i:])
            if left.count(" of ") == left.count(" to "):
                return self._parse(left), self._parse(right)
        raise ValueError(text)


# ---------------------------------------------------------------------------------
# The registry, read once.


class _Registry:
    def __init__(self) -> None:
        self.types: dict[str, dict[str, Any]] = {}
        for key in _op.type_keys():
            cls = _op.type_class(key)
            facts = dict(_native._type_facts(cls._type_index))
            facts["class"] = cls
            self.types[key] = facts
        self.enums = {key: _op.enum_class(key) for key in _op.enum_keys()}
        self.globals = sorted(_op.list_globals())
        self.parser = _Parser(set(self.types), set(self.enums))
        # Rust type names → keys, for a container field's items.
        self.by_rust = {f["rust_name"]: k for k, f in self.types.items() if f["rust_name"]}

    def fields(self, key: str) -> list[Any]:
        """The reflected fields of the type, in table order (parents' first)."""
        cls = self.types[key]["class"]
        return [v for v in vars(cls).values() if isinstance(v, _native.Field)]

    def ancestors(self, key: str) -> list[str]:
        """The type's ancestors, nearest first."""
        out = []
        parent = self.types[key]["parent"]
        while parent is not None:
            out.append(parent)
            parent = self.types[parent]["parent"]
        return out

    def field_type(self, key: str, f: Any, declared: dict[str, str] | None) -> tuple[Any, ...]:
        """A field's type: from a run-time table's declaration, else from its kind,
        static type key and (for a container's items) Rust type."""
        if declared is not None and f.name in declared:
            return self.parser.parse(declared[f.name])
        kind = f.kind
        if kind == "Enum":
            t: tuple[Any, ...] = ("enum", f.type_key)
        elif kind in ("Bool", "Int", "Float", "DataType", "Device", "Any"):
            t = ("name", {"Bool": "bool", "Int": "int", "Float": "float"}.get(kind, kind))
        elif kind == "Str":
            t = ("name", "str")
        elif kind == "Object":
            t = self._rust_object(f.rust_type, f.type_key, self._rust_module(key, f.name))
        else:
            t = _ANY
        if f.optional and t[0] != "optional" and t != _ANY:
            t = ("optional", t)
        return t

    def _rust_module(self, key: str, field: str) -> str | None:
        """The Rust module of the struct that declares the field ``field`` of the type
        (its topmost ancestor with the field), where the names of its Rust type are."""
        for k in reversed([key] + self.ancestors(key)):
            if isinstance(vars(self.types[k]["class"]).get(field), _native.Field):
                name = self.types[k]["rust_name"]
                return name.rsplit("::", 1)[0] if name else None
        return None

    def _rust_object(self, rust_type: str, static_key: str,
                     module: str | None) -> tuple[Any, ...]:
        if static_key == "ffi.Array" or static_key == "ffi.Map":
            parsed = self._rust(rust_type, module)
            if parsed[0] in ("array", "map"):
                return parsed
            if parsed[0] == "optional" and parsed[1][0] in ("array", "map"):
                inner: tuple[Any, ...] = parsed[1]
                return inner
            return ("array", _ANY) if static_key == "ffi.Array" else ("map", _ANY, _ANY)
        if static_key in _PY_VALUES:
            return ("name", _PY_VALUES[static_key])
        return ("object", static_key)

    def _rust(self, text: str, module: str | None) -> tuple[Any, ...]:
        """A Rust type as written (``Array<ObjectPtr<Var>>``): containers, options,
        object pointers and scalars; an object type by its Rust name, when it is the
        Rust type a registered type was derived for, written with its path or declared
        in ``module`` (the declaring struct's); else ``Any`` (a typed reference's name,
        say, is not in the registry)."""
        m = re.fullmatch(r"((?:\w+::)*)(\w+)(?:<(.*)>)?", text.replace(" ", ""))
        if not m:
            return _ANY
        path, head, inner = m.group(1), m.group(2), m.group(3)
        args = _split_top(inner, ",", "<>") if inner else []
        if head == "Option" and len(args) == 1:
            return ("optional", self._rust(args[0], module))
        if head in ("Array", "Vec") and len(args) == 1:
            return ("array", self._rust(args[0], module))
        if head == "Map" and len(args) == 2:
            return ("map", self._rust(args[0], module), self._rust(args[1], module))
        if head == "ObjectPtr" and len(args) == 1:
            return self._rust(args[0], module)
        if head == "ObjectRef" and not args:
            return ("object", "ffi.Object")
        if head in _RUST_SCALARS and not args:
            return ("name", _RUST_SCALARS[head])
        if head in ("NDArray", "Tensor") and not args:
            return ("object", "ffi.Tensor")
        if head == "Function" and not args:
            return ("object", "ffi.Function")
        if not args:
            if path:  # (a path relative to the crate or module is not followed)
                full = None if path.startswith(("crate::", "self::", "super::")) else path + head
            else:
                full = "{}::{}".format(module, head) if module else None
            if full in self.by_rust:
                return ("object", self.by_rust[full])
        return _ANY


# ---------------------------------------------------------------------------------
# Modules.


class _Module:
    """One key namespace's module: the names it binds and the text of its files."""

    def __init__(self, ns: str, modname: str):
        self.ns = ns
        self.modname = modname
        self.taken: set[str] = set()
        self.subpackages: list[str] = []
        self.classes: dict[str, str] = {}  # key → name
        self.enums: dict[str, str] = {}
        self.functions: dict[str, str] = {}
        self.imports: set[str] = set()


class _Writer:
    def __init__(self, reg: _Registry, modules: dict[str, _Module]):
        self.reg = reg
        self.modules = modules
        self.class_module = {k: m for m in modules.values() for k in m.classes}
        self.enum_module = {k: m for m in modules.values() for k in m.enums}

    # -- references ----------------------------------------------------------------

    def _alias(self, here: _Module, there: _Module) -> str:
        alias = "_m_" + there.modname.replace(".", "_")
        here.imports.add("import {} as {}".format(there.modname, alias))
        return alias

    def class_ref(self, key: str, here: _Module) -> str:
        """The class of the object type ``key`` as ``here`` names it: its written class,
        the package's for a built-in, else its nearest written ancestor's."""
        for k in [key] + (self.reg.ancestors(key) if key in self.reg.types else []):
            if k in _OP_CLASSES:
                name = "_op." + _OP_CLASSES[k]
                return name + ("[_t.Any]" if k == "ffi.Array" else
                               "[_t.Any, _t.Any]" if k == "ffi.Map" else "")
            m = self.class_module.get(k)
            if m is not None:
                if m is here:
                    return m.classes[k]
                return "{}.{}".format(self._alias(here, m), m.classes[k])
        return "_op.Object"

    def enum_ref(self, key: str, here: _Module) -> str:
        m = self.enum_module.get(key)
        if m is None:
            return "_enum.IntEnum"
        if m is here:
            return m.enums[key]
        return "{}.{}".format(self._alias(here, m), m.enums[key])

    def render(self, t: tuple[Any, ...], here: _Module, taking: bool) -> str:
        """The annotation of type ``t``: what a value read is (``taking=False``) or what
        a parameter takes (``taking=True``: sequences for Arrays, mappings for Maps,
        callables for Functions, an enum's name or value)."""
        tag = t[0]
        if tag == "name":
            return _SCALARS.get(t[1], str(t[1]))
        if tag == "optional":
            inner = self.render(t[1], here, taking)
            return inner if inner == "_t.Any" else inner + " | None"
        if tag == "array":
            item = self.render(t[1], here, taking)
            return ("_t.Sequence[{}]" if taking else "_op.Array[{}]").format(item)
        if tag == "map":
            k, v = self.render(t[1], here, taking), self.render(t[2], here, taking)
            return ("_t.Mapping[{}, {}]" if taking else "_op.Map[{}, {}]").format(k, v)
        if tag == "enum":
            e = self.enum_ref(t[1], here)
            return e + " | int | str" if taking else e
        if tag == "object":
            key = t[1]
            if key in _PY_VALUES:
                return _PY_VALUES[key]
            if taking and key == "ffi.Function":
                return "_op.Function | _t.Callable[..., _t.Any]"
            if taking and key == "ffi.Tensor":
                return "_t.Any"  # anything with `__dlpack__`
            return self.class_ref(key, here)
        return "_t.Any"

    # -- signatures ----------------------------------------------------------------

    def signature(self, fn: Any, here: _Module, method: bool) -> str | None:
        """``(params) -> ret`` of a ``Function`` (``self`` first for an instance
        method, whose own first parameter is the object); ``None`` when it cannot be
        written."""
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            sig = None
        head = ["self"] if method else []
        if sig is None:
            return "({}) -> _t.Any".format(", ".join(head + ["*args: _t.Any"]))
        hints: dict[str, Any] = {}
        if inspect.isfunction(fn):  # a Python function: its annotations evaluated
            try:
                hints = typing.get_type_hints(fn)
            except Exception:  # noqa: BLE001 (an annotation that does not evaluate)
                hints = {}
        params = list(sig.parameters.values())
        if params and params[0].kind == inspect.Parameter.VAR_POSITIONAL:
            return "({}) -> _t.Any".format(", ".join(head + ["*args: _t.Any"]))
        if method:
            if not params:
                return None
            params = params[1:]
        out = list(head)
        taken = set(head)
        slash = False
        for p in params:
            name = p.name
            if p.kind == inspect.Parameter.POSITIONAL_ONLY:
                if not _is_name(name) or name in taken:
                    name = _identifier(name, set(taken))
                slash = True
            else:
                if slash:
                    out.append("/")
                    slash = False
                if not _is_name(name) or name in taken:
                    return None
            taken.add(name)
            ann = "_t.Any"
            if p.annotation is not inspect.Parameter.empty:
                t = self._annotation(hints.get(p.name, p.annotation))
                ann = self.render(t, here, True)
            default = "" if p.default is inspect.Parameter.empty else " = ..."
            out.append("{}: {}{}".format(name, ann, default))
        if slash:
            out.append("/")
        ret = "_t.Any"
        if sig.return_annotation is not inspect.Signature.empty:
            t = self._annotation(hints.get("return", sig.return_annotation))
            ret = self.render(t, here, False)
        return "({}) -> {}".format(", ".join(out), ret)

    def _annotation(self, ann: Any) -> tuple[Any, ...]:
        """The type an annotation names: a ``Function``'s signature text, or a Python
        function's annotation (a class, a generic, ``Optional``, ``X | None``)."""
        if isinstance(ann, str):
            return self.reg.parser.parse(ann)
        if isinstance(ann, typing.ForwardRef):
            return self.reg.parser.parse(ann.__forward_arg__)
        if ann is None or ann is type(None):
            return ("name", "None")
        if ann is typing.Any or ann is object:
            return _ANY
        for cls, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"),
                          (bytes, "bytes"), (_op.DataType, "DataType"),
                          (_op.Device, "Device")):
            if ann is cls:
                return ("name", name)
        origin, args = typing.get_origin(ann), typing.get_args(ann)
        if origin is typing.Union or isinstance(ann, types.UnionType):
            rest = [a for a in args if a is not type(None)]
            if len(rest) == 1 and len(rest) < len(args):
                return ("optional", self._annotation(rest[0]))
            return _ANY
        if origin in (list, tuple, abc.Sequence, _op.Array) and args and (
            origin is not tuple or (len(args) == 2 and args[1] is Ellipsis)
        ):
            return ("array", self._annotation(args[0]))
        if origin in (dict, abc.Mapping, _op.Map) and len(args) == 2:
            return ("map", self._annotation(args[0]), self._annotation(args[1]))
        if isinstance(ann, type):
            key = getattr(ann, "_enum_key", None)
            if issubclass(ann, _enum.IntEnum) and key in self.reg.enums:
                return ("enum", key)
            key = ann.__dict__.get("_type_key")  # (a class of its own, not a subclass)
            if issubclass(ann, _op.Object) and key in self.reg.types:
                return ("object", key)
        return _ANY

    # -- a class -------------------------------------------------------------------

    def stub_base(self, key: str, here: _Module) -> tuple[str, str | None]:
        """The base class text and the key of the type it stands for (``None``: a class
        of the package's own)."""
        for k in self.reg.ancestors(key):
            if k in _OP_CLASSES or k in self.class_module:
                if k == "ffi.Object":
                    break
                return self.class_ref(k, here), k
        cls = self.reg.types[key]["class"]
        for base, text in ((_op.ArrayBase, "_op.ArrayBase[_t.Any]"),
                           (_op.MapBase, "_op.MapBase[_t.Any, _t.Any]"),
                           (_op.ShapeBase, "_op.ShapeBase"),
                           (_op.NDArrayBase, "_op.NDArrayBase"),
                           (_op.FunctionBase, "_op.FunctionBase"),
                           (_op.ModuleBase, "_op.ModuleBase")):
            if issubclass(cls, base):
                return text, None
        return "_op.Object", None

    def class_stub(self, key: str, here: _Module) -> list[str]:
        reg = self.reg
        facts = reg.types[key]
        name = here.classes[key]
        base, base_key = self.stub_base(key, here)
        fields = reg.fields(key)
        declared = _native._field_types(facts["class"]._type_index)
        inherited = {f.name for f in reg.fields(base_key)} if base_key in reg.types else set()
        lines = []
        if facts["final"]:
            lines.append("@_t.final")
        lines.append("class {}({}):".format(name, base))
        body = _doc(
            "The registered type `{}`{}.".format(
                key, " (abstract: its objects are of its subtypes)" if facts["abstract"] else ""
            ),
            "    ",
        )
        typed = [(f, reg.field_type(key, f, declared)) for f in fields]
        for f, t in typed:
            if f.name in inherited:
                continue
            if not _is_name(f.name):
                body.append("    # (field {!r}: not a Python name)".format(f.name))
                continue
            body.append("    @property")
            body.append("    def {}(self) -> {}: ...".format(f.name, self.render(t, here, False)))
        # (A built-in's class, made from its shape's base, is built as that base is.)
        shaped = base_key is None and base != "_op.Object"
        if not facts["abstract"] and key not in _OP_CLASSES and not shaped:
            body.append("    " + self._init(typed, declared is not None, here))
        body.extend(self._methods(key, base_key, {f.name for f in fields}, here))
        if len(body) == 0:
            body.append("    ...")
        return lines + body

    def _init(self, typed: list[tuple[Any, tuple[Any, ...]]], positional: bool,
              here: _Module) -> str:
        if any(not _is_name(f.name) or f.name == "self" for f, _ in typed):
            return "def __init__(self, **fields: _t.Any) -> None: ..."
        params = ["self"]
        if not positional and typed:
            params.append("*")
        star = not positional
        for f, t in typed:
            may_omit = f.has_default or f.optional
            if positional and not may_omit and not star and any(
                p.endswith(" = ...") for p in params
            ):
                params.append("*")  # (a required field after one with a default)
                star = True
            params.append("{}: {}{}".format(
                f.name, self.render(t, here, True), " = ..." if may_omit else ""
            ))
        return "def __init__({}) -> None: ...".format(", ".join(params))

    def _methods(self, key: str, base_key: str | None, fields: set[str],
                 here: _Module) -> list[str]:
        # The type's own methods, and those of ancestors between it and its stub base
        # (not written, so not inherited in the stub); the nearest wins.
        chain = [key]
        for k in self.reg.ancestors(key):
            if k == base_key or k in _OP_CLASSES or k in self.class_module:
                break
            chain.append(k)
        found: dict[str, tuple[Any, bool]] = {}
        for k in chain:
            cls = self.reg.types[k]["class"]
            for name, (fn, static) in _native._type_methods(cls._type_index).items():
                # A class body's function (`@py_class`) has the signature, with its
                # annotations; the method table's `Function` has none.
                body = vars(cls).get(name)
                if isinstance(body, staticmethod):
                    body = body.__func__
                if inspect.isfunction(body) and body.__qualname__ == fn.__qualname__:
                    fn = body
                found.setdefault(name, (fn, static))
        out = []
        for name in sorted(found):
            fn, static = found[name]
            if not _is_name(name) or name in fields or name.startswith("__"):
                continue
            sig = self.signature(fn, here, method=not static)
            if sig is None:
                sig = "(self, *args: _t.Any, **kwargs: _t.Any) -> _t.Any"
            if static:
                out.append("    @staticmethod")
            out.append("    def {}{}: ...".format(name, sig))
        return out

    # -- a module ------------------------------------------------------------------

    def enum_stub(self, key: str, here: _Module) -> list[str]:
        cls = self.reg.enums[key]
        lines = ["class {}(_enum.IntEnum):".format(here.enums[key])]
        lines += _doc("The enum `{}`.".format(key), "    ")
        for member in cls:
            if _is_name(member.name) and not member.name.startswith("_"):
                lines.append("    {} = {}".format(member.name, int(member)))
        return lines

    def function_stub(self, gname: str, here: _Module) -> list[str]:
        fn = _op.get_global(gname)
        sig = self.signature(fn, here, method=False) if fn is not None else None
        if sig is None:
            sig = "(*args: _t.Any, **kwargs: _t.Any) -> _t.Any"
        lines = ["def {}{}:".format(here.functions[gname], sig)]
        doc = _doc(getattr(fn, "__doc__", None) or "The global function `{}`.".format(gname),
                   "    ")
        return lines + doc + ["    ..."]

    def pyi(self, m: _Module) -> str:
        body: list[str] = []
        for key in m.enums:
            body += [""] + self.enum_stub(key, m) + [""]
        for key in m.classes:
            if key in _OP_CLASSES:
                body += ["", "{} = _op.{}".format(m.classes[key], _OP_CLASSES[key]), ""]
                continue
            body += [""] + self.class_stub(key, m) + [""]
        for gname in m.functions:
            body += [""] + self.function_stub(gname, m) + [""]
        head = [
            "# Generated by `python -m object_python.stubgen` from the registry: the types,",
            "# enums and global functions of `{}.*`. Do not edit; generate again.".format(m.ns),
            "import enum as _enum",
            "import typing as _t",
            "",
            "import object_python as _op",
        ] + sorted(m.imports)
        return "\n".join(head + [""] + body).rstrip() + "\n"

    def py(self, m: _Module) -> str:
        names = list(m.classes.values()) + list(m.enums.values()) + list(m.functions.values())
        lines = [
            '"""The types, enums and global functions of `{}.*`, bound to names (typed in'.format(m.ns),
            "`__init__.pyi` beside this file). Generated by `python -m object_python.stubgen`.",
            '"""',
            "",
            "import object_python as _op",
            "",
            "__all__ = {!r}".format(sorted(names)),
            "",
        ]
        for key, name in m.classes.items():
            lines.append("{} = _op.type_class({!r})".format(name, key))
        for key, name in m.enums.items():
            lines.append("{} = _op.enum_class({!r})".format(name, key))
        for gname, name in m.functions.items():
            lines.append("{} = _op.get_global({!r})".format(name, gname))
        return "\n".join(lines) + "\n"


def _namespaces(prefixes: Iterable[str], reg: _Registry) -> list[str]:
    """Every key namespace at or under the prefixes that holds something, and the
    namespaces between them and their prefix."""
    found: set[str] = set()
    members = list(reg.types) + list(reg.enums) + reg.globals
    for prefix in prefixes:
        prefix = prefix.strip(".")
        found.add(prefix)
        for key in members:
            if key.startswith(prefix + "."):
                ns = key.rsplit(".", 1)[0]
                while ns != prefix:
                    found.add(ns)
                    ns = ns.rsplit(".", 1)[0]
    return sorted(found)


def _default_prefixes(reg: _Registry) -> list[str]:
    keys = list(reg.types) + list(reg.enums) + reg.globals
    tops = {k.split(".", 1)[0] for k in keys if "." in k}
    return sorted(tops - {"ffi", "object_python"})


def generate(prefixes: Sequence[str] | None, out_dir: str | os.PathLike[str],
             package: str | None = None) -> list[pathlib.Path]:
    """Writes a typed module (``__init__.py`` and ``__init__.pyi``) for each key
    namespace at or under ``prefixes`` (default: every namespace but ``ffi`` and
    ``object_python``) into ``out_dir``, as top-level packages or, with ``package``,
    as subpackages of that package (made with a ``py.typed`` marker). Returns the
    files written."""
    reg = _Registry()
    if not prefixes:
        prefixes = _default_prefixes(reg)
    for p in prefixes:
        if not p.strip("."):
            raise ValueError("an empty key prefix")
    if package is not None and not all(_is_name(part) for part in package.split(".")):
        raise ValueError("{!r} is not a package name".format(package))
    spaces = _namespaces(prefixes, reg)
    modules: dict[str, _Module] = {}
    for ns in spaces:
        modname = ".".join(
            ([package] if package else []) + [re.sub(r"\W", "_", part) for part in ns.split(".")]
        )
        modules[ns] = _Module(ns, modname)
    # Names: subpackages first (an import binds them), then classes, enums, functions.
    for ns, m in modules.items():
        for child in spaces:
            if child.rsplit(".", 1)[0] == ns and "." in child:
                m.subpackages.append(modules[child].modname.rsplit(".", 1)[-1])
                m.taken.add(m.subpackages[-1])
    def direct(keys: Iterable[str]) -> Iterable[tuple[_Module, str, str]]:
        for key in keys:
            if "." in key:
                ns, last = key.rsplit(".", 1)
                if ns in modules:
                    yield modules[ns], key, last
    for m, key, last in direct(sorted(reg.types)):
        m.classes[key] = _identifier(last, m.taken)
    for m, key, last in direct(sorted(reg.enums)):
        m.enums[key] = _identifier(last, m.taken)
    for m, key, last in direct(reg.globals):
        m.functions[key] = _identifier(last, m.taken)
    # Parents before children within a module (a stub's base is defined first).
    for m in modules.values():
        depth = {k: len(reg.ancestors(k)) for k in m.classes}
        m.classes = dict(sorted(m.classes.items(), key=lambda kv: (depth[kv[0]], kv[0])))

    writer = _Writer(reg, modules)
    root = pathlib.Path(out_dir)
    written = []
    for m in modules.values():
        d = root.joinpath(*m.modname.split("."))
        d.mkdir(parents=True, exist_ok=True)
        for name, text in (("__init__.py", writer.py(m)), ("__init__.pyi", writer.pyi(m))):
            (d / name).write_text(text, encoding="utf-8")
            written.append(d / name)
    # The packages around them (`package`, the namespaces between a dotted prefix and
    # the top) exist as (empty) packages; `package` is marked typed.
    for path in list(written):
        d = path.parent.parent
        while d != root and root in d.parents:
            init = d / "__init__.py"
            if not init.exists():
                init.write_text("", encoding="utf-8")
                written.append(init)
            d = d.parent
    if package:
        marker = root.joinpath(*package.split("."), "py.typed")
        marker.write_text("", encoding="utf-8")
        written.append(marker)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m object_python.stubgen",
        description="Writes typed modules (.py + .pyi) for the registered types, enums and "
        "global functions of key namespaces.",
    )
    ap.add_argument("--prefix", action="append", default=[],
                    help="a key namespace to write (repeatable; default: all but ffi)")
    ap.add_argument("--package", default=None,
                    help="write the namespaces as subpackages of this package")
    ap.add_argument("--load", action="append", default=[], metavar="PATH",
                    help="load a plugin or library first (object_python.load_module)")
    ap.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                    help="import a Python module first (e.g. one that defines @py_class types)")
    ap.add_argument("-o", "--out", required=True, help="the directory to write into")
    args = ap.parse_args(argv)
    for path in args.load:
        _op.load_module(path)
    for name in args.imports:
        importlib.import_module(name)
    written = generate(args.prefix, args.out, package=args.package)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
