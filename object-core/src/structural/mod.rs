//! Structural equality and hashing over any reflected graph, with no per-type code:
//! [`structural_equal`], [`structural_hash`], [`first_mismatch`], and the key wrapper
//! [`StructuralKey`] for hash maps keyed by structure; and *shallow* keys, one level
//! deep, for hash-consing ([`ShallowKey`], [`HashCons`]).
//!
//! # Which key
//!
//! - [`StructuralKey`] (deep; [`StructuralHashCache`] to key every subexpression in
//!   O(n)): compares whole programs, up to the renaming of bound variables — `fn(x) { x }`
//!   equals `fn(y) { y }`. Free variables and identity objects hash by identity, in
//!   this process.
//! - [`ShallowKey`] / [`HashCons`] (one level): a node's own values and its children's
//!   identities, for a pass whose children are canonical already (hash-consing,
//!   bottom-up CSE): O(own fields) per key, no walk, no binding (see *Shallow keys*).
//! - [`StructuralOptions::content_only_hashes`]: deep hashes with no address in them,
//!   the same in every process and build — for hashes stored or sent elsewhere.
//!
//! # What is compared
//!
//! - **Plain values** (`int`, `bool`, `DataType`, `Device`, `None`) by value; an `int`
//!   never equals a `bool` or a `float`.
//! - **Floats** bitwise, except that every NaN equals every NaN: `-0.0 != 0.0`, and
//!   `NaN == NaN`. The hash agrees (all NaNs hash as one).
//! - **Strings and bytes** by content, however they are stored (inline, objects,
//!   `std` strings in fields).
//! - **Objects** must have the same run-time type; then by their type's
//!   [`StructuralKind`] (declared with `#[object(structural = "…")]`):
//!   - `tree` (the default): by their reflected fields, parents' first, except those
//!     marked `#[object(no_eq)]`;
//!   - `dag`: by fields, and sharing must correspond: an object reached twice on one
//!     side must meet the same object both times on the other side;
//!   - `var`: a variable, compared by binding (below);
//!   - `identity`: only the same object is equal.
//!
//!   A subtype takes its parent's kind unless it declares its own.
//! - **Built-ins** through what their [`BuiltinHooks`](crate::builtin::BuiltinHooks) show: `Array` item by item; `Map`
//!   regardless of insertion order, entries matched by key (keys compare as `Map` keys
//!   do: strings and plain values by value, objects by identity, or for a bound
//!   variable through its binding); `Shape` by its dimensions; `NDArray` by dtype,
//!   shape and contents (unless [`StructuralOptions::skip_tensor_contents`]); the
//!   mutable `List` and `Dict` as `Array` and `Map` do, from a snapshot of their items
//!   taken under their lock (see *Cycles* below). Opaque built-ins without hooks
//!   (functions, modules, errors) compare by identity.
//!
//! # Variables and definition sites
//!
//! A field marked `#[object(def)]` is a *definition site*: every variable reached
//! through it (directly, in a container, or deeper) that is not bound yet is bound
//! there to the variable at the same place on the other side, both ways. Definition
//! fields of a node are visited before its other fields, so a function's parameters
//! are bound before its body. From then on the variable equals only its partner, so
//! `fn(x) { x + 1 }` equals `fn(y) { y + 1 }` but not `fn(y) { x + 1 }`. At a
//! definition, the variables' own fields (say, a type annotation) are compared too;
//! mark a name hint `no_eq` to ignore it.
//!
//! A variable met outside any definition before it is bound is *free*: it equals only
//! itself, unless [`StructuralOptions::map_free_vars`] is set, which binds it there as
//! if it were defined. So a variable used before its definition site is free at that
//! use and bound from its definition on (the order of the walk is the order of the
//! fields). Bindings last for the whole comparison (they are not scoped): a variable
//! object defined at two sites must meet the same partner at both — the rule for IR in
//! which every variable is defined once, which shadowing with fresh variables keeps.
//!
//! # Hashes
//!
//! `structural_equal(a, b)` implies `structural_hash(a) == structural_hash(b)` in every
//! mode: a bound variable hashes as the order in which it was bound, so alpha-equivalent
//! programs hash alike; a free variable and an identity object (each equal only to
//! itself) by identity: distinct objects hash apart, which keeps hash-consing and CSE
//! keys over many free variables from colliding. That part of a hash is the object's
//! address, valid in this process while the object lives (a [`StructuralKey`] keeps its
//! value alive). With [`StructuralOptions::content_only_hashes`], a free variable hashes
//! as its type and fields and an identity object as its type instead, and hashes are
//! **stable across processes and builds**: seeded from type keys
//! ([`TypeInfo::key_hash`](crate::TypeInfo::key_hash)) and mixed with fixed constants
//! (no random keys, no addresses, no type indices) — for hashes stored or sent
//! elsewhere. Values without free variables or identity objects hash the same either
//! way. Hashes may change between versions of this crate.
//!
//! # Shallow keys
//!
//! [`shallow_hash`] and [`shallow_equal`] (and the key [`ShallowKey`], its
//! [`ShallowMap`]/[`ShallowSet`], the table [`HashCons`]) read one node and nothing
//! below its children, under the same field flags as structural equality:
//!
//! - the node's type, then its compared fields (`no_eq` fields left out; a `def` field
//!   read like any other: a shallow key binds nothing, so alpha-equivalent functions
//!   whose parameters are distinct objects are different keys);
//! - plain values, strings and bytes by value (as structural equality compares them:
//!   floats bitwise but all NaNs alike, a string however stored);
//! - a child object by identity (its address), whatever its kind — except a built-in
//!   that holds no object (`String`, `Bytes`, `Shape`, `BigInt`), which is a value, and
//!   an immutable container (`Array`, `Map`) held in a field, which is part of its node
//!   (`Call { args: Array<Expr> }`): one level into it, its items by the same rules
//!   (objects by identity, a container inside it too), a map's entries regardless of
//!   order;
//! - a variable (`var`), an `identity` object, a mutable container (`List`, `Dict`,
//!   whose items can change), a tensor or an opaque built-in by identity, as the node
//!   itself or as a child;
//! - a built-in container keyed itself (an `Array`) by its items, as in a field.
//!
//! So two nodes are equal keys when they have the same type, equal own values and the
//! very same children, and a hash-consing pass that interns nodes bottom-up (each
//! node's children canonical first) makes one object of every two subtrees that are the
//! same tree over the same variable objects (structurally equal with every variable —
//! and every tensor, mutable container and identity object — compared by identity), at
//! one key and one table probe a node, however many free variables the program holds. The hash holds addresses: it is valid in this process
//! while the key (which holds the node, and so its children) lives.
//!
//! # Cost
//!
//! Neither function recurses in proportion to depth, so a graph 10,000,000 deep works
//! on a 2 MiB thread: both walk the top 48 levels by recursion (a bounded amount of
//! stack, and values kept in registers instead of a trip through a stack) and
//! everything deeper on a work stack, in the same order. Objects held more than once
//! are compared (and hashed) once per pairing, so a DAG costs its size, not its
//! unfolded size, and a cycle terminates (a pair met again while being compared counts
//! as equal). The same
//! object on both sides is equal at once (O(1) to compare an object with itself);
//! identical subtrees further down are skipped too while no variable has been bound to
//! another object and `map_free_vars` is off (a binding makes "the same subtree" mean
//! something else on each side), and if no `dag` type is linked into the program (a
//! skipped subtree would hide the pairings of the DAG nodes inside it).
//!
//! # Cycles
//!
//! Only a mutable container (`List`, `Dict`) can make a value reach itself. Each is read
//! as an owned snapshot (the lock is held only to copy the items out), so comparing a
//! list that holds itself, or two lists that hold each other, neither deadlocks nor
//! sees a half-done change. Then:
//!
//! - **equality** is *bisimulation*: a pair of objects met again while (or after) being
//!   compared counts as equal, so the walk ends, and two cyclic values are equal when
//!   their infinite unfoldings are: `l1 = [l1]` equals `l2 = [l2]` and `l3 = [[l3]]`;
//!   `[l, 1]` with `l` itself differs from `[l', 2]` at `<root>[1]`;
//! - **the hash** of a value is the hash of its unfolding cut where it is nested in
//!   more than three mutable containers (a `List`/`Dict` that deep counts by its type
//!   and length only). It depends only on what the unfolding holds, so values equal as
//!   above hash alike, and it ends on every cycle. The cost of the cut: values that
//!   differ only four or more mutable containers deep collide.
//!
//! # Limits
//!
//! - Bindings are made in the order of the walk. In a map, entries are walked in a
//!   canonical order for hashing (by key, for string and plain keys) and in the left
//!   side's order for equality: a map whose entries are where variables are first bound
//!   (free variables with `map_free_vars`, or definitions) may hash differently for two
//!   insertion orders when its keys are objects.
//! - The derived `Hash`-and-`Eq` of a Rust type is not consulted: only reflected fields
//!   count.
//!
//! # Examples
//!
//! ```
//! use object_core::prelude::*;
//! use object_core::structural::{first_mismatch, structural_equal, structural_hash};
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.se.Expr", slots = 4)]
//! struct Expr { base: Object }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.se.Var", parent = Expr, structural = "var")]
//! struct Var {
//!     base: Expr,
//!     #[object(no_eq)]
//!     name: String,
//! }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.se.Add", parent = Expr)]
//! struct Add { base: Expr, lhs: ObjectPtr<Expr>, rhs: ObjectPtr<Expr> }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.se.Lambda", parent = Expr)]
//! struct Lambda {
//!     base: Expr,
//!     #[object(def)]
//!     param: ObjectPtr<Expr>,
//!     body: ObjectPtr<Expr>,
//! }
//!
//! let var = |n: &str| Var::new(n).upcast::<Expr>();
//! let add = |a: &ObjectPtr<Expr>, b: &ObjectPtr<Expr>| Add::new(a.clone(), b.clone()).upcast::<Expr>();
//! let lam = |p: &ObjectPtr<Expr>, b: ObjectPtr<Expr>| Lambda::new(p.clone(), b).upcast::<Expr>();
//!
//! let (x, y, z) = (var("x"), var("y"), var("z"));
//! let f = lam(&x, add(&x, &z)); // fn(x) { x + z }
//! let g = lam(&y, add(&y, &z)); // fn(y) { y + z }
//! let h = lam(&y, add(&z, &y)); // fn(y) { z + y }
//! assert!(structural_equal(&f, &g));
//! assert_eq!(structural_hash(&f), structural_hash(&g));
//! assert!(!structural_equal(&f, &h));
//! let (l, r) = first_mismatch(&f, &h).unwrap();
//! assert_eq!(l.to_string(), "<root>.body.lhs");
//! assert_eq!(r.to_string(), "<root>.body.lhs");
//! ```

mod equal;
mod hash;
mod hooks;
// The stack the in-place walks keep their pairs on: values written in place.
#[allow(unsafe_code)]
mod in_place_stack;
mod path;
mod shallow;
// The walk plans: objects read in place at the offsets of their own type's table.
#[allow(unsafe_code)]
pub(crate) mod plan;
mod snapshot;
mod stable;
#[cfg(test)]
mod tests;
mod walk;

use core::fmt;
use core::hash::{Hash, Hasher};

pub use self::path::{AccessPath, PathStep};
pub use self::shallow::{
    shallow_equal, shallow_hash, HashCons, ShallowKey, ShallowMap, ShallowSet,
};
pub use self::stable::stable_hash_str;

use self::equal::EqEngine;
use self::hash::{HashEngine, SubtreeHashes};
use self::path::{NoPaths, PathArena};
use self::snapshot::Snapshots;
use crate::reflection::{FieldKind, FieldValue};

/// How structural equality and hashing treat the objects of a type: the
/// `#[object(structural = "tree" | "dag" | "var" | "identity")]` attribute. See the
/// [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum StructuralKind {
    /// By fields; sharing does not matter (`"tree"`, the default).
    #[default]
    Tree,
    /// By fields, and sharing must correspond on both sides (`"dag"`).
    Dag,
    /// A variable: by binding at definition sites (`"var"`).
    Var,
    /// Only the same object is equal (`"identity"`).
    Identity,
}

/// Whether a field of `kind` can be a definition site (`#[object(def)]`): one that holds
/// objects. Used by the derive.
#[doc(hidden)]
pub const fn can_define(kind: FieldKind) -> bool {
    matches!(kind, FieldKind::Object | FieldKind::Any)
}

/// Options of a structural comparison or hash (the same options must be used for both
/// when hashes stand for equality).
///
/// ```
/// use object_core::structural::StructuralOptions;
/// let o = StructuralOptions::new().map_free_vars(true);
/// assert!(o.maps_free_vars() && !o.skips_tensor_contents());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct StructuralOptions {
    map_free_vars: bool,
    skip_tensor_contents: bool,
    content_only_hashes: bool,
}

impl StructuralOptions {
    /// The defaults: free variables by identity, tensors by contents, hashes of free
    /// variables and identity objects by identity (in-process).
    pub const fn new() -> Self {
        StructuralOptions {
            map_free_vars: false,
            skip_tensor_contents: false,
            content_only_hashes: false,
        }
    }

    /// Hash free variables and `identity` objects by their content only (a free
    /// variable as its type and compared fields, an identity object as its type), so
    /// that a hash is **the same in every process and build**; by default they hash by
    /// identity (the object's address), which is what hash-consing and CSE need — two
    /// distinct free variables then never collide — but differs from run to run.
    /// Equality is not affected (a free variable equals only itself either way).
    ///
    /// ```
    /// use object_core::prelude::*;
    /// use object_core::structural::{structural_hash, structural_hash_with, StructuralOptions};
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.content_only.Var", structural = "var")]
    /// struct Var {
    ///     base: Object,
    ///     #[object(no_eq)]
    ///     name: String,
    /// }
    ///
    /// let (x, y) = (Var::new("x"), Var::new("y"));
    /// // In-process, distinct free variables hash apart...
    /// assert_ne!(structural_hash(&x), structural_hash(&y));
    /// // ...and by content, alike (the name is not compared), in every process.
    /// let stable = StructuralOptions::new().content_only_hashes(true);
    /// assert_eq!(structural_hash_with(&x, &stable), structural_hash_with(&y, &stable));
    /// ```
    #[must_use]
    pub const fn content_only_hashes(mut self, yes: bool) -> Self {
        self.content_only_hashes = yes;
        self
    }

    /// Whether free variables and identity objects hash by content only.
    pub const fn hashes_content_only(&self) -> bool {
        self.content_only_hashes
    }

    /// Bind free variables where they are first met, as if defined there (so `x + 1`
    /// equals `y + 1`).
    #[must_use]
    pub const fn map_free_vars(mut self, yes: bool) -> Self {
        self.map_free_vars = yes;
        self
    }

    /// Compare tensors by dtype and shape only.
    #[must_use]
    pub const fn skip_tensor_contents(mut self, yes: bool) -> Self {
        self.skip_tensor_contents = yes;
        self
    }

    /// Whether free variables are bound where first met.
    pub const fn maps_free_vars(&self) -> bool {
        self.map_free_vars
    }

    /// Whether tensor contents are skipped.
    pub const fn skips_tensor_contents(&self) -> bool {
        self.skip_tensor_contents
    }
}

/// Whether `a` and `b` are structurally equal (see the [module docs](self)), with the
/// default options. `a` and `b` are any reflected values: `Any`, `ObjectRef`,
/// `ObjectPtr<T>`, handles (`String`, `Array`, `Map`, `NDArray`, …), plain values.
///
/// ```
/// use object_core::structural::structural_equal;
/// use object_core::{Any, String};
/// assert!(structural_equal(&Any::from("text"), &String::from("text")));
/// assert!(structural_equal(&f64::NAN, &f64::NAN));
/// assert!(!structural_equal(&0.0f64, &-0.0f64));
/// ```
pub fn structural_equal<A: FieldValue, B: FieldValue>(a: &A, b: &B) -> bool {
    structural_equal_with(a, b, &StructuralOptions::new())
}

/// [`structural_equal`] with `options`.
pub fn structural_equal_with<A: FieldValue, B: FieldValue>(
    a: &A,
    b: &B,
    options: &StructuralOptions,
) -> bool {
    let store = Snapshots::new();
    EqEngine::new(*options, NoPaths, &store)
        .run(a.borrow_value(), b.borrow_value())
        .is_ok()
}

/// The structural hash of `a` (see the [module docs](self)), with the default options:
/// equal values hash alike; the same in every process unless `a` holds free variables
/// or identity objects (see [`StructuralOptions::content_only_hashes`]).
///
/// ```
/// use object_core::structural::structural_hash;
/// use object_core::Any;
/// assert_eq!(structural_hash(&Any::from("ab")), structural_hash(&String::from("ab")));
/// assert_ne!(structural_hash(&1i64), structural_hash(&true));
/// ```
pub fn structural_hash<A: FieldValue>(a: &A) -> u64 {
    structural_hash_with(a, &StructuralOptions::new())
}

/// [`structural_hash`] with `options`.
pub fn structural_hash_with<A: FieldValue>(a: &A, options: &StructuralOptions) -> u64 {
    let store = Snapshots::new();
    HashEngine::new(*options, &store).run(a.borrow_value())
}

/// Where `a` and `b` first differ, as a path on each side (`<root>.body.args[2]`), or
/// `None` if they are structurally equal. The two paths differ only where map keys
/// matched through a binding print differently. A length mismatch ends in `.len`; a map
/// key missing on the right ends in that key on both sides.
///
/// ```
/// use object_core::structural::first_mismatch;
/// assert!(first_mismatch(&1i64, &1i64).is_none());
/// let (l, r) = first_mismatch(&1i64, &2i64).unwrap();
/// assert_eq!((l.to_string(), r.to_string()), ("<root>".into(), "<root>".into()));
/// ```
pub fn first_mismatch<A: FieldValue, B: FieldValue>(
    a: &A,
    b: &B,
) -> Option<(AccessPath, AccessPath)> {
    first_mismatch_with(a, b, &StructuralOptions::new())
}

/// [`first_mismatch`] with `options`.
pub fn first_mismatch_with<A: FieldValue, B: FieldValue>(
    a: &A,
    b: &B,
    options: &StructuralOptions,
) -> Option<(AccessPath, AccessPath)> {
    let store = Snapshots::new();
    let mut engine = EqEngine::new(*options, PathArena::default(), &store);
    match engine.run(a.borrow_value(), b.borrow_value()) {
        Ok(()) => None,
        Err((l, r)) => Some((engine.paths.path(l), engine.paths.path(r))),
    }
}

/// A value used as a hash-map key by its structure: equal when structurally equal
/// (default options), hashed by its [`structural_hash`] (computed once, in
/// [`new`](Self::new)).
///
/// ```
/// use std::collections::HashMap;
/// use object_core::structural::StructuralKey;
/// use object_core::{Any, String};
///
/// let mut seen: HashMap<StructuralKey<Any>, u32> = HashMap::new();
/// seen.insert(StructuralKey::new(Any::from(String::from("a longer text"))), 1);
/// // Another object with the same text finds the entry.
/// assert_eq!(seen.get(&StructuralKey::new(Any::from("a longer text"))), Some(&1));
/// ```
pub struct StructuralKey<T: FieldValue> {
    value: T,
    hash: u64,
}

impl<T: FieldValue> StructuralKey<T> {
    /// Wraps `value`, hashing it.
    pub fn new(value: T) -> Self {
        let hash = structural_hash(&value);
        StructuralKey { value, hash }
    }

    /// The value.
    pub fn get(&self) -> &T {
        &self.value
    }

    /// The value, unwrapped.
    pub fn into_inner(self) -> T {
        self.value
    }

    /// The structural hash computed at construction.
    pub fn structural_hash(&self) -> u64 {
        self.hash
    }
}

impl<T: FieldValue> PartialEq for StructuralKey<T> {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && structural_equal(&self.value, &other.value)
    }
}

impl<T: FieldValue> Eq for StructuralKey<T> {}

impl<T: FieldValue> Hash for StructuralKey<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl<T: FieldValue + Clone> Clone for StructuralKey<T> {
    fn clone(&self) -> Self {
        StructuralKey {
            value: self.value.clone(),
            hash: self.hash,
        }
    }
}

impl<T: FieldValue + fmt::Debug> fmt::Debug for StructuralKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StructuralKey")
            .field("value", &self.value)
            .field("hash", &format_args!("{:#018x}", self.hash))
            .finish()
    }
}

/// Structural hashes of many overlapping values — every subexpression of a program, as
/// common-subexpression elimination asks for — with each object hashed once: an object
/// met again (by a later call, or inside a larger value) contributes its kept hash
/// instead of being walked again. Hashing the subexpressions of an `n`-node tree
/// bottom-up then costs O(n), where [`structural_hash`] per subexpression costs
/// O(n × height).
///
/// Every number is exactly [`structural_hash`]'s (default options), so keys made here
/// and by [`StructuralKey::new`] are interchangeable. Hashes are kept for objects that
/// hold other objects (a leaf is hashed again, which costs less than a look-up), and
/// only where they depend on the object alone: not for objects under a definition or a bound
/// variable's use, inside a `List` or `Dict` (which can change), or holding a tensor
/// (whose data can change), nor for a cycle. Those are hashed afresh every time, as are
/// objects met while a variable is bound.
///
/// The cache holds a handle to each object it keeps a hash of, so those objects stay
/// alive — and shared, so nothing can get the unique access that would change them —
/// until the cache is cleared or dropped. Use one cache per pass, or per program.
///
/// ```
/// use object_core::prelude::*;
/// use object_core::structural::{structural_hash, StructuralHashCache, StructuralKey, StructuralMap};
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.hash_cache.Add")]
/// struct Add { base: Object, lhs: Option<ObjectRef>, rhs: Option<ObjectRef> }
///
/// let add = |l: Option<&ObjectRef>, r: Option<&ObjectRef>| {
///     Add::new(l.cloned(), r.cloned()).into_object_ref()
/// };
/// let leaf = add(None, None);
/// let inner = add(Some(&leaf), Some(&leaf));
/// let root = add(Some(&inner), Some(&leaf));
///
/// let mut hashes = StructuralHashCache::new();
/// let mut counts: StructuralMap<ObjectRef, usize> = StructuralMap::default();
/// for sub in [&leaf, &inner, &root] {
///     // Bottom-up: `root`'s walk takes `inner`'s and `leaf`'s hashes from the cache.
///     *counts.entry(hashes.key(sub.clone())).or_default() += 1;
/// }
/// // (`inner` and `root` are kept; `leaf`, with no object inside, is quicker to hash
/// // again than to look up.)
/// assert_eq!(hashes.len(), 2);
/// assert_eq!(hashes.hash(&root), structural_hash(&root));
/// assert!(counts.contains_key(&StructuralKey::new(add(Some(&leaf), Some(&leaf)))));
/// ```
#[derive(Default)]
pub struct StructuralHashCache {
    hashes: SubtreeHashes,
}

impl StructuralHashCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// [`structural_hash`] of `a`, using and filling the cache.
    pub fn hash<A: FieldValue>(&mut self, a: &A) -> u64 {
        let store = Snapshots::new();
        HashEngine::with_cache(&store, &mut self.hashes).run(a.borrow_value())
    }

    /// A [`StructuralKey`] for `value`, hashed through the cache (the same key
    /// [`StructuralKey::new`] makes).
    pub fn key<T: FieldValue>(&mut self, value: T) -> StructuralKey<T> {
        let hash = self.hash(&value);
        StructuralKey { value, hash }
    }

    /// How many objects' hashes are kept.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// Whether no hash is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every kept hash, letting go of the objects.
    pub fn clear(&mut self) {
        self.hashes.clear();
    }
}

impl fmt::Debug for StructuralHashCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StructuralHashCache")
            .field("len", &self.len())
            .finish()
    }
}

/// The [`BuildHasher`](core::hash::BuildHasher) of hash maps keyed by [`StructuralKey`]:
/// the key's structural hash, computed once and already well mixed, is the map's hash
/// as it is — no second hash function runs on every insert and look-up (with the
/// default `RandomState`, SipHash runs over the 8 bytes each time).
///
/// The hashes are deterministic (by content, and by address for free variables and
/// identity objects), so a map
/// fed keys chosen by an adversary can be made slow with colliding keys, with this
/// hasher or with `RandomState` alike (SipHash of equal structural hashes collides too);
/// `RandomState` only spreads keys whose structural hashes differ. Other key types
/// work (their bytes are folded together) but are not mixed: use it for
/// `StructuralKey`s. See [`StructuralMap`] and [`StructuralSet`].
///
/// ```
/// use object_core::structural::{StructuralKey, StructuralMap};
/// use object_core::{Any, String};
///
/// let mut seen: StructuralMap<Any, u32> = StructuralMap::default();
/// seen.insert(StructuralKey::new(Any::from(String::from("a longer text"))), 1);
/// assert_eq!(seen.get(&StructuralKey::new(Any::from("a longer text"))), Some(&1));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct BuildStructuralKeyHasher;

impl core::hash::BuildHasher for BuildStructuralKeyHasher {
    type Hasher = StructuralKeyHasher;

    #[inline]
    fn build_hasher(&self) -> StructuralKeyHasher {
        StructuralKeyHasher(0)
    }
}

/// The hasher of [`BuildStructuralKeyHasher`]: a [`StructuralKey`]'s hash passes
/// through unchanged.
#[derive(Clone, Copy, Debug)]
pub struct StructuralKeyHasher(u64);

impl Hasher for StructuralKeyHasher {
    #[inline]
    fn write_u64(&mut self, n: u64) {
        // The first word as it is (a `StructuralKey` writes one); later ones folded in.
        self.0 = self.0.rotate_left(29) ^ n;
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 56));
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A hash map keyed by structure, hashed by the keys' structural hashes as they are
/// ([`BuildStructuralKeyHasher`]).
pub type StructuralMap<K, V> =
    std::collections::HashMap<StructuralKey<K>, V, BuildStructuralKeyHasher>;

/// A hash set of values compared by structure ([`StructuralMap`]'s set).
pub type StructuralSet<K> = std::collections::HashSet<StructuralKey<K>, BuildStructuralKeyHasher>;
