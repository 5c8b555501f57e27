//! Methods: functions registered per type in the process's one runtime, found along
//! the type's ancestry (the nearest ancestor with the name), and called from Rust
//! ([`call_method`]), C (`obj_method_get`, `obj_object_call_method`) and Python
//! (`obj.name(…)`, `Cls.name(…)`).
//!
//! The table is shared exactly as the global functions are: a plugin's copy of this
//! crate, or a copy that joined the process's runtime (`function/adopt.rs`), uses the
//! table of the copy that runs the registry, so a method registered by any language in
//! any library is found by every other.
//!
//! A method is a [`Function`] and a [`MethodKind`]: an instance method is called with
//! the object first (`e.eval(env)` calls `eval(e, env)`), a static method without it
//! (a named constructor, `Cls.make(…)`).
//!
//! ```
//! use object_containers::{call_method, find_method, register_method, register_static_method, Function};
//! use object_core::prelude::*;
//! use object_core::{Any, AnyView};
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.methods.Shape", ref = Shape)]
//! pub struct ShapeNode { base: Object }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.methods.Square", parent = ShapeNode, final, ref = Square)]
//! pub struct SquareNode { base: ShapeNode, side: i64 }
//!
//! // Registered on the base, found for every subtype (the nearest ancestor's).
//! register_method::<ShapeNode>("describe", Function::from_typed(|s: Shape| format!("a {}", s.type_key()))).unwrap();
//! register_method::<SquareNode>("area", Function::from_typed(|s: Square| s.side * s.side)).unwrap();
//! register_static_method::<SquareNode>("unit", Function::from_typed(|| Square::new(1))).unwrap();
//!
//! let sq = Square::new(3);
//! assert_eq!(call_method(sq.as_object_ref(), "area", &[]).unwrap(), Any::from(9));
//! assert_eq!(call_method(sq.as_object_ref(), "describe", &[]).unwrap().as_str(), Some("a doc.methods.Square"));
//! let unit = find_method(SquareNode::type_index(), "unit").unwrap();
//! let one = unit.function().call(&[]).unwrap();
//! assert_eq!(call_method(one.as_object().unwrap(), "area", &[]).unwrap(), Any::from(1));
//! let err = call_method(sq.as_object_ref(), "perimeter", &[]).unwrap_err();
//! assert_eq!(err.kind(), "AttributeError");
//! ```

use std::collections::BTreeMap;
use std::sync::{OnceLock, RwLock};

use object_core::registry::{self, TypeInfo};
use object_core::{Any, AnyView, Error, ErrorKind, ObjectRef, ObjectType};

use super::Function;

/// How a method is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MethodKind {
    /// With the object it is called on as its first argument.
    Instance,
    /// Without it: a function of the type (a named constructor, a helper).
    Static,
}

impl MethodKind {
    /// The kind's number in the C API (`OBJ_METHOD_INSTANCE` = 0, `OBJ_METHOD_STATIC` =
    /// 1).
    pub fn code(self) -> i32 {
        match self {
            MethodKind::Instance => 0,
            MethodKind::Static => 1,
        }
    }

    /// The kind of a C API number.
    pub fn from_code(code: i32) -> Option<MethodKind> {
        match code {
            0 => Some(MethodKind::Instance),
            1 => Some(MethodKind::Static),
            _ => None,
        }
    }
}

/// A method as [`find_method`] finds it: the function, its kind, and the type it is
/// registered on (the object's type or the nearest ancestor with the name).
#[derive(Debug, Clone)]
pub struct Method {
    function: Function,
    kind: MethodKind,
    owner: u32,
}

impl Method {
    /// The function (an instance method takes the object first).
    pub fn function(&self) -> &Function {
        &self.function
    }

    /// How it is called.
    pub fn kind(&self) -> MethodKind {
        self.kind
    }

    /// The index of the type it is registered on.
    pub fn owner(&self) -> u32 {
        self.owner
    }

    /// Calls the method on `obj` with `args`: an instance method with `obj` first, a
    /// static one without it.
    ///
    /// # Errors
    ///
    /// The function's.
    pub fn call_on(&self, obj: &ObjectRef, args: &[AnyView<'_>]) -> Result<Any, Error> {
        match self.kind {
            MethodKind::Static => self.function.call(args),
            MethodKind::Instance => {
                const INLINE: usize = 8;
                let this = AnyView::from(obj);
                if args.len() < INLINE {
                    let mut all = [AnyView::NONE; INLINE];
                    all[0] = this;
                    all[1..=args.len()].copy_from_slice(args);
                    self.function.call(&all[..=args.len()])
                } else {
                    let mut all = Vec::with_capacity(args.len() + 1);
                    all.push(this);
                    all.extend_from_slice(args);
                    self.function.call(&all)
                }
            }
        }
    }
}

/// One type's methods, by name.
type TypeMethods = BTreeMap<std::string::String, (Function, MethodKind)>;

/// The method table: by type index, then by name (shared as a data structure between
/// copies of the same build, like the global table).
pub(super) type Methods = RwLock<BTreeMap<u32, TypeMethods>>;

fn methods() -> &'static Methods {
    match super::adopt::adopted() {
        Some(host) => (host.methods)(),
        None => methods_here(),
    }
}

/// This copy's own table.
pub(super) fn methods_here() -> &'static Methods {
    static METHODS: OnceLock<Methods> = OnceLock::new();
    METHODS.get_or_init(|| RwLock::new(BTreeMap::new()))
}

fn object_type(type_index: u32) -> Result<&'static TypeInfo, Error> {
    registry::type_info(type_index)
        .filter(|t| t.is_object())
        .ok_or_else(|| {
            Error::new(
                ErrorKind::KeyError,
                format!("no object type has index {type_index}"),
            )
        })
}

/// Registers `f` as the method `name` of the type `type_index` (and so of its
/// descendants that have no method of that name themselves). With `replace`, a method
/// of that name on the type is replaced and returned; without, it is an error.
///
/// # Errors
///
/// A `KeyError` for an index no object type has, or a name the type already has a
/// method of (without `replace`); a `ValueError` for an empty name.
pub fn register_method_at(
    type_index: u32,
    name: &str,
    f: Function,
    kind: MethodKind,
    replace: bool,
) -> Result<Option<Function>, Error> {
    let info = object_type(type_index)?;
    if name.is_empty() {
        return Err(Error::value_error(format!(
            "a method of `{}` needs a name",
            info.key()
        )));
    }
    let mut table = methods().write().unwrap_or_else(|e| e.into_inner());
    let own = table.entry(type_index).or_default();
    if !replace && own.contains_key(name) {
        return Err(Error::new(
            ErrorKind::KeyError,
            format!("`{}` already has a method `{name}`", info.key()),
        ));
    }
    Ok(own.insert(name.to_owned(), (f, kind)).map(|(old, _)| old))
}

/// Registers `f` as the instance method `name` of `T` (called with the object first).
///
/// # Errors
///
/// As [`register_method_at`] without `replace`.
pub fn register_method<T: ObjectType>(name: &str, f: Function) -> Result<(), Error> {
    register_method_at(T::type_index(), name, f, MethodKind::Instance, false).map(drop)
}

/// Registers `f` as the static method `name` of `T` (called without an object: a named
/// constructor, a helper).
///
/// # Errors
///
/// As [`register_method_at`] without `replace`.
pub fn register_static_method<T: ObjectType>(name: &str, f: Function) -> Result<(), Error> {
    register_method_at(T::type_index(), name, f, MethodKind::Static, false).map(drop)
}

/// The method `name` of the type `type_index`: its own, or the nearest ancestor's.
pub fn find_method(type_index: u32, name: &str) -> Option<Method> {
    let info = registry::type_info(type_index)?;
    let table = methods().read().unwrap_or_else(|e| e.into_inner());
    info.ancestors().iter().rev().find_map(|&t| {
        table
            .get(&t)
            .and_then(|own| own.get(name))
            .map(|(f, kind)| Method {
                function: f.clone(),
                kind: *kind,
                owner: t,
            })
    })
}

/// The methods registered on the type `type_index` itself (not its ancestors'), by
/// name.
pub fn type_methods(type_index: u32) -> Vec<(std::string::String, Method)> {
    let table = methods().read().unwrap_or_else(|e| e.into_inner());
    table
        .get(&type_index)
        .map(|own| {
            own.iter()
                .map(|(name, (f, kind))| {
                    let m = Method {
                        function: f.clone(),
                        kind: *kind,
                        owner: type_index,
                    };
                    (name.clone(), m)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Removes and returns the method `name` registered on the type `type_index` itself.
pub fn remove_method(type_index: u32, name: &str) -> Option<Function> {
    let mut table = methods().write().unwrap_or_else(|e| e.into_inner());
    let own = table.get_mut(&type_index)?;
    let removed = own.remove(name).map(|(f, _)| f);
    if own.is_empty() {
        table.remove(&type_index);
    }
    removed
}

/// Calls the method `name` of `obj`'s type (or of its nearest ancestor with one) on
/// `obj`: an instance method with `obj` first, a static one without it. The function is
/// taken out of the table before it runs, so a method may register or call methods.
///
/// # Errors
///
/// An `AttributeError` naming the type if no method `name` is found; else the
/// function's.
pub fn call_method(obj: &ObjectRef, name: &str, args: &[AnyView<'_>]) -> Result<Any, Error> {
    match find_method(obj.type_index(), name) {
        Some(m) => m.call_on(obj, args),
        None => Err(Error::new(
            ErrorKind::AttributeError,
            format!("`{}` has no method `{name}`", obj.type_key()),
        )),
    }
}
