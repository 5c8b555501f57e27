//! Shallow structural keys: a node's own values by value, its child objects by identity
//! (address), one level only — the key of a hash-consing pass, whose children are
//! canonical already ([`ShallowKey`], [`shallow_hash`], [`shallow_equal`],
//! [`ShallowMap`], [`ShallowSet`], [`HashCons`]). See the module docs of
//! [`structural`](super) (*Shallow keys*) for what is read and how.
//!
//! Reads objects through the same walk plans as the deep engines (`plan.rs`: a tree
//! type's fields in place, any other type's compared fields through its plan), so it
//! holds no unsafe code.

use core::cell::Cell;
use core::fmt;
use core::hash::{Hash, Hasher};
use std::collections::hash_map::Entry as MapEntry;

use super::equal::leaf_eq;
use super::hash::{ints_hash, leaf_hash};
use super::hooks::{self, Contents};
use super::plan::{Child, InPlaceValue, PairStep, TreePair};
use super::stable::{combine, finish, hash_bytes, TAG_BYTES, TAG_IDENTITY, TAG_NONE};
use super::walk::{classify, Node, TreeTypes, TypeEntries};
use super::{BuildStructuralKeyHasher, StructuralKind, StructuralOptions};
use crate::addr_map::addr;
use crate::any::Any;
use crate::builtin::{BuiltinHooks, BuiltinShape};
use crate::object_type::ObjectType;
use crate::ptr::{IntoObjectPtr, ObjectPtr, ObjectRef};
use crate::reflection::{FieldValue, ValueRef};
use crate::transform::{Rewriter, TransformError};
use crate::type_index as ti;

/// The tag of a child (or a node) compared by identity.
const TAG_SAME: u64 = 0x5341_4d45;

/// How a shallow key reads an object it meets as a child.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// By identity (address): reflected objects, variables, mutable containers, tensors,
    /// opaque built-ins.
    Identity,
    /// By value: a built-in holding no object (text, bytes, integers, a big integer).
    Value,
    /// An immutable container (`Array`, `Map`): one level in, its items by
    /// [`item`](Shallow::item).
    Container,
}

/// What a shallow key needs of a type: its [`Class`], hooks and key hash.
#[derive(Clone, Copy)]
struct TypeClass {
    index: u32,
    class: Class,
    hooks: Option<&'static BuiltinHooks>,
    key_hash: u64,
}

/// Entries of the per-thread table of classes (a power of two).
const CLASS_SLOTS: usize = 64;

std::thread_local! {
    /// The classes of the types this thread's shallow keys met, by the low bits of their
    /// index. An entry never goes stale: types are never unregistered.
    static CLASSES: [Cell<Option<TypeClass>>; CLASS_SLOTS] =
        const { [const { Cell::new(None) }; CLASS_SLOTS] };
}

/// The class of `o`'s type.
#[inline(always)]
fn class_of(o: &ObjectRef) -> TypeClass {
    let index = o.type_index();
    let slot = index as usize % CLASS_SLOTS;
    // (`try_with` fails only while the thread's locals are torn down: then a miss.)
    match CLASSES.try_with(|t| t[slot].get()) {
        Ok(Some(c)) if c.index == index => c,
        _ => class_miss(o, slot),
    }
}

#[cold]
#[inline(never)]
fn class_miss(o: &ObjectRef, slot: usize) -> TypeClass {
    let info = o.type_info();
    let hooks = info.reflection().builtin();
    let class = match hooks {
        Some(h) if h.mutable => Class::Identity,
        Some(h) => match h.shape {
            BuiltinShape::Items | BuiltinShape::Entries => Class::Container,
            BuiltinShape::Ints
            | BuiltinShape::Bytes
            | BuiltinShape::Text
            | BuiltinShape::Integer => Class::Value,
            _ => Class::Identity,
        },
        None => Class::Identity,
    };
    let c = TypeClass {
        index: info.index(),
        class,
        hooks,
        key_hash: info.key_hash(),
    };
    let _ = CLASSES.try_with(|t| t[slot].set(Some(c)));
    c
}

/// The options the built-ins' contents are read with (tensors are never read: they are
/// compared by identity).
const OPTIONS: StructuralOptions = StructuralOptions::new().skip_tensor_contents(true);

/// The shallow hash and equality, as functions of values (no state).
struct Shallow;

impl Shallow {
    /// The hash of a child compared by identity.
    #[inline(always)]
    fn same(o: &ObjectRef) -> u64 {
        combine(TAG_SAME, addr(o) as u64)
    }

    /// The hash of an item of a container held in a field (or keyed itself): a leaf
    /// by value, a value built-in by value, any other object by identity.
    #[inline]
    fn item_hash(v: ValueRef<'_>) -> u64 {
        match classify(v) {
            Node::Leaf(l) => leaf_hash(l),
            Node::Obj(o) => Self::child_hash(o, false),
        }
    }

    /// The hash of a field's value: as an item, except that an immutable container is
    /// read one level in.
    #[inline(always)]
    fn field_hash(v: ValueRef<'_>) -> u64 {
        match classify(v) {
            Node::Leaf(l) => leaf_hash(l),
            Node::Obj(o) => Self::child_hash(o, true),
        }
    }

    /// The hash of `o` met as a child (a field's object if `into`, else an item).
    #[inline(always)]
    fn child_hash(o: &ObjectRef, into: bool) -> u64 {
        let c = class_of(o);
        match (c.class, c.hooks) {
            (Class::Identity, _) | (_, None) => Self::same(o),
            (Class::Value, Some(h)) => Self::value_hash(o, c.key_hash, h),
            (Class::Container, Some(h)) if into => Self::container_hash(o, c.key_hash, h),
            (Class::Container, Some(_)) => Self::same(o),
        }
    }

    /// A value built-in's hash: its type and contents.
    fn value_hash(o: &ObjectRef, seed: u64, h: &'static BuiltinHooks) -> u64 {
        match hooks::contents(h, o, &OPTIONS) {
            Contents::Ints(xs) => ints_hash(seed, xs),
            Contents::Bytes(b) => combine(seed, hash_bytes(TAG_BYTES, &b)),
            _ => Self::same(o),
        }
    }

    /// An immutable container's hash: its type, length and items (entries regardless of
    /// order), each by [`item_hash`](Self::item_hash).
    fn container_hash(o: &ObjectRef, seed: u64, h: &'static BuiltinHooks) -> u64 {
        match hooks::contents(h, o, &OPTIONS) {
            Contents::Items(items) => {
                let mut h = combine(seed, items.len() as u64);
                for x in items {
                    h = combine(h, Self::item_hash(ValueRef::from_any(x)));
                }
                h
            }
            Contents::Entries(entries) => {
                let mut acc = 0u64;
                for &(k, v) in &entries {
                    acc = acc.wrapping_add(Self::entry_hash(k, v));
                }
                combine(combine(seed, entries.len() as u64), acc)
            }
            _ => Self::same(o),
        }
    }

    #[inline]
    fn entry_hash(k: &Any, v: &Any) -> u64 {
        finish(combine(
            Self::item_hash(ValueRef::from_any(k)),
            Self::item_hash(ValueRef::from_any(v)),
        ))
    }

    /// The hash of a keyed value: a leaf by value; an object of a reflected type by its
    /// type and compared fields (each by [`field_hash`](Self::field_hash)); a variable,
    /// an identity object, a mutable container, a tensor or an opaque built-in by
    /// identity; a value built-in by value; an immutable container one level in.
    #[inline]
    fn node_hash(v: ValueRef<'_>) -> u64 {
        let o = match classify(v) {
            Node::Leaf(l) => return leaf_hash(l),
            Node::Obj(o) => o,
        };
        // A tree type: its fields read in place.
        if let Some(t) = TreeTypes::get(o.type_index(), o) {
            if let Some(fields) = t.fields(o) {
                let mut h = t.key_hash();
                for f in fields {
                    h = combine(
                        h,
                        match f {
                            InPlaceValue::Word(bits) => combine(u64::from(ti::INT), bits),
                            InPlaceValue::None => TAG_NONE,
                            InPlaceValue::Object(x) => Self::child_hash(x, true),
                        },
                    );
                }
                return h;
            }
        }
        let e = TypeEntries::new().entry(o);
        let seed = e.d.info().key_hash();
        match e.kind {
            StructuralKind::Var | StructuralKind::Identity => {
                return combine(combine(seed, TAG_IDENTITY), addr(o) as u64);
            }
            StructuralKind::Tree | StructuralKind::Dag => {}
        }
        if e.builtin {
            let c = class_of(o);
            return match (c.class, c.hooks) {
                (Class::Value, Some(h)) => Self::value_hash(o, seed, h),
                (Class::Container, Some(h)) => Self::container_hash(o, seed, h),
                _ => combine(combine(seed, TAG_IDENTITY), addr(o) as u64),
            };
        }
        let mut h = seed;
        for (_, v) in e.plan.views(e.d) {
            h = combine(h, Self::field_hash(v));
        }
        h
    }

    /// Whether two items are equal (see [`item_hash`](Self::item_hash)).
    #[inline]
    fn item_eq(a: ValueRef<'_>, b: ValueRef<'_>) -> bool {
        match (classify(a), classify(b)) {
            (Node::Leaf(x), Node::Leaf(y)) => leaf_eq(x, y),
            (Node::Obj(x), Node::Obj(y)) => Self::child_eq(x, y, false),
            _ => false,
        }
    }

    /// Whether two fields' values are equal (see [`field_hash`](Self::field_hash)).
    #[inline(always)]
    fn field_eq(a: ValueRef<'_>, b: ValueRef<'_>) -> bool {
        match (classify(a), classify(b)) {
            (Node::Leaf(x), Node::Leaf(y)) => leaf_eq(x, y),
            (Node::Obj(x), Node::Obj(y)) => Self::child_eq(x, y, true),
            _ => false,
        }
    }

    /// Whether two children are equal (see [`child_hash`](Self::child_hash)).
    #[inline(always)]
    fn child_eq(x: &ObjectRef, y: &ObjectRef, into: bool) -> bool {
        if addr(x) == addr(y) {
            return true;
        }
        if x.type_index() != y.type_index() {
            return false;
        }
        let c = class_of(x);
        match (c.class, c.hooks) {
            (Class::Value, Some(h)) => Self::value_eq(x, y, h),
            (Class::Container, Some(h)) if into => Self::container_eq(x, y, h),
            _ => false,
        }
    }

    /// Whether two value built-ins of one type hold the same value.
    fn value_eq(x: &ObjectRef, y: &ObjectRef, h: &'static BuiltinHooks) -> bool {
        match (
            hooks::contents(h, x, &OPTIONS),
            hooks::contents(h, y, &OPTIONS),
        ) {
            (Contents::Ints(a), Contents::Ints(b)) => a == b,
            (Contents::Bytes(a), Contents::Bytes(b)) => a == b,
            _ => addr(x) == addr(y),
        }
    }

    /// Whether two immutable containers of one type hold equal items (entries: the same
    /// pairs, in any order).
    fn container_eq(x: &ObjectRef, y: &ObjectRef, h: &'static BuiltinHooks) -> bool {
        match (
            hooks::contents(h, x, &OPTIONS),
            hooks::contents(h, y, &OPTIONS),
        ) {
            (Contents::Items(a), Contents::Items(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|(p, q)| Self::item_eq(ValueRef::from_any(p), ValueRef::from_any(q)))
            }
            (Contents::Entries(a), Contents::Entries(b)) => Self::entries_eq(a, b),
            _ => addr(x) == addr(y),
        }
    }

    /// Whether two lists of entries hold the same pairs (each pair by
    /// [`item_eq`](Self::item_eq) on key and value), in any order: both sorted by their
    /// pairs' hashes, then matched within each run of equal hashes.
    fn entries_eq(a: Vec<(&Any, &Any)>, b: Vec<(&Any, &Any)>) -> bool {
        if a.len() != b.len() {
            return false;
        }
        let (a, b) = (Self::by_hash(a), Self::by_hash(b));
        if a.iter().zip(&b).any(|(p, q)| p.0 != q.0) {
            return false;
        }
        let mut used = vec![false; b.len()];
        let mut start = 0;
        for (i, &(h, k, v)) in a.iter().enumerate() {
            if i == 0 || a[i - 1].0 != h {
                start = i;
            }
            let found = (start..b.len()).take_while(|&j| b[j].0 == h).find(|&j| {
                !used[j]
                    && Self::item_eq(ValueRef::from_any(k), ValueRef::from_any(b[j].1))
                    && Self::item_eq(ValueRef::from_any(v), ValueRef::from_any(b[j].2))
            });
            match found {
                Some(j) => used[j] = true,
                None => return false,
            }
        }
        true
    }

    /// `entries` with their pairs' hashes, sorted by them.
    fn by_hash<'a>(entries: Vec<(&'a Any, &'a Any)>) -> Vec<(u64, &'a Any, &'a Any)> {
        let mut v: Vec<_> = entries
            .into_iter()
            .map(|(k, v)| (Self::entry_hash(k, v), k, v))
            .collect();
        v.sort_by_key(|e| e.0);
        v
    }

    /// Whether two keyed values are equal (see [`node_hash`](Self::node_hash)).
    #[inline]
    fn node_eq(a: ValueRef<'_>, b: ValueRef<'_>) -> bool {
        let (x, y) = match (classify(a), classify(b)) {
            (Node::Leaf(x), Node::Leaf(y)) => return leaf_eq(x, y),
            (Node::Obj(x), Node::Obj(y)) => (x, y),
            _ => return false,
        };
        if addr(x) == addr(y) {
            return true;
        }
        // A tree type: compared in place (the words by the pair, the objects here).
        match TreePair::of(x, y, |index| TreeTypes::get(index, x)) {
            Child::Differ => return false,
            Child::Leaf(same) => return same,
            Child::Pair(mut pair) => loop {
                match pair.next() {
                    PairStep::Objects(p, q) => {
                        if !Self::child_eq(p, q, true) {
                            return false;
                        }
                    }
                    PairStep::Differ => return false,
                    PairStep::End => return true,
                }
            },
            Child::Other => {}
        }
        let e = TypeEntries::new().entry(x);
        match e.kind {
            // (Not the same object.)
            StructuralKind::Var | StructuralKind::Identity => return false,
            StructuralKind::Tree | StructuralKind::Dag => {}
        }
        if e.builtin {
            let c = class_of(x);
            return match (c.class, c.hooks) {
                (Class::Value, Some(h)) => Self::value_eq(x, y, h),
                (Class::Container, Some(h)) => Self::container_eq(x, y, h),
                _ => false,
            };
        }
        let Some(yd) = e.d.same_type(y) else {
            return false;
        };
        e.plan.pairs(e.d, yd).all(|(_, l, r)| Self::field_eq(l, r))
    }
}

/// The shallow hash of `a`: its own values by value and its child objects by identity,
/// one level only (see the [module docs](super), *Shallow keys*). O(`a`'s own fields):
/// nothing below its children is read. Equal under [`shallow_equal`] implies equal
/// hashes. Addresses are part of it, so it is valid in this process while the children
/// live (a [`ShallowKey`] keeps them alive).
///
/// ```
/// use object_core::prelude::*;
/// use object_core::structural::{shallow_equal, shallow_hash, structural_equal};
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.shallow_hash.Pair")]
/// struct Pair { base: Object, tag: i64, lhs: ObjectRef, rhs: ObjectRef }
///
/// let obj = || make_object(Object::new()).into_object_ref();
/// let leaf = || Pair::new(0, obj(), obj()).into_object_ref();
/// let (a, b) = (leaf(), leaf());
/// // The same children: equal, hashing alike.
/// assert!(shallow_equal(&Pair::new(1, a.clone(), b.clone()), &Pair::new(1, a.clone(), b.clone())));
/// assert_eq!(shallow_hash(&Pair::new(1, a.clone(), b.clone())), shallow_hash(&Pair::new(1, a.clone(), b.clone())));
/// // Other children, even structurally equal ones: a different key.
/// let c = leaf();
/// assert!(structural_equal(&b, &c));
/// assert!(!shallow_equal(&Pair::new(1, a.clone(), b), &Pair::new(1, a, c)));
/// ```
pub fn shallow_hash<A: FieldValue>(a: &A) -> u64 {
    Shallow::node_hash(a.borrow_value())
}

/// Whether `a` and `b` are equal as shallow keys: the same type, equal own values, and
/// identical children (the same objects), one level only (see the
/// [module docs](super), *Shallow keys*). See [`shallow_hash`] for an example.
pub fn shallow_equal<A: FieldValue, B: FieldValue>(a: &A, b: &B) -> bool {
    Shallow::node_eq(a.borrow_value(), b.borrow_value())
}

/// A value used as a hash-map key by its own values and its children's identities
/// (one level: see the [module docs](super), *Shallow keys*): equal when
/// [`shallow_equal`], hashed by its [`shallow_hash`] (computed once, in
/// [`new`](Self::new)). The key of a hash-consing pass, where children are canonical
/// already; see [`HashCons`], which keeps a table of them.
///
/// The key holds the value, and so its children: their addresses, which the hash is
/// made of, are not reused while the key lives.
///
/// ```
/// use object_core::prelude::*;
/// use object_core::structural::{ShallowKey, ShallowMap};
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.shallow_key.Neg")]
/// struct Neg { base: Object, arg: ObjectRef }
///
/// let x = make_object(Object::new()).into_object_ref();
/// let mut seen: ShallowMap<ObjectPtr<Neg>, u32> = ShallowMap::default();
/// seen.insert(ShallowKey::new(Neg::new(x.clone())), 1);
/// assert_eq!(seen.get(&ShallowKey::new(Neg::new(x))), Some(&1));
/// assert_eq!(seen.get(&ShallowKey::new(Neg::new(make_object(Object::new())))), None);
/// ```
pub struct ShallowKey<T: FieldValue> {
    value: T,
    hash: u64,
}

impl<T: FieldValue> ShallowKey<T> {
    /// Wraps `value`, hashing it (O(its own fields)).
    #[inline]
    pub fn new(value: T) -> Self {
        let hash = shallow_hash(&value);
        ShallowKey { value, hash }
    }

    /// The value.
    pub fn get(&self) -> &T {
        &self.value
    }

    /// The value, unwrapped.
    pub fn into_inner(self) -> T {
        self.value
    }

    /// The shallow hash computed at construction.
    pub fn shallow_hash(&self) -> u64 {
        self.hash
    }
}

impl<T: FieldValue> PartialEq for ShallowKey<T> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && shallow_equal(&self.value, &other.value)
    }
}

impl<T: FieldValue> Eq for ShallowKey<T> {}

impl<T: FieldValue> Hash for ShallowKey<T> {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl<T: FieldValue + Clone> Clone for ShallowKey<T> {
    fn clone(&self) -> Self {
        ShallowKey {
            value: self.value.clone(),
            hash: self.hash,
        }
    }
}

impl<T: FieldValue + fmt::Debug> fmt::Debug for ShallowKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShallowKey")
            .field("value", &self.value)
            .field("hash", &format_args!("{:#018x}", self.hash))
            .finish()
    }
}

/// A hash map keyed by [`ShallowKey`]s, hashed by the keys' shallow hashes as they are
/// ([`BuildStructuralKeyHasher`]).
pub type ShallowMap<K, V> = std::collections::HashMap<ShallowKey<K>, V, BuildStructuralKeyHasher>;

/// A hash set of [`ShallowKey`]s ([`ShallowMap`]'s set).
pub type ShallowSet<K> = std::collections::HashSet<ShallowKey<K>, BuildStructuralKeyHasher>;

/// A hash-consing table: the canonical node of each [`ShallowKey`]. Interning nodes
/// bottom-up (children first, as they are built, or with [`mutate`]: `HashCons` is a
/// [`Rewriter`]) makes every structurally equal subtree one object — common
/// subexpressions shared — at one shallow key (one hash of the node's own fields, one
/// table probe) per node: linear in the program's size however many free variables it
/// holds (a variable, compared by identity, is its own canonical node).
///
/// Alpha-equivalent functions with distinct parameter objects are *not* merged (a
/// parameter is a child like any other); compare programs up to renaming with
/// [`StructuralKey`](super::StructuralKey).
///
/// The table holds each canonical node (and so what it holds) until cleared or dropped.
///
/// ```
/// use object_core::prelude::*;
/// use object_core::structural::HashCons;
/// use object_core::transform::mutate;
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.hash_cons.Expr")]
/// struct Expr { base: Object }
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.hash_cons.Var", parent = Expr, structural = "var")]
/// struct Var { base: Expr, #[object(no_eq)] name: String }
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.hash_cons.Int", parent = Expr)]
/// struct Int { base: Expr, value: i64 }
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.hash_cons.Add", parent = Expr)]
/// struct Add { base: Expr, lhs: ObjectPtr<Expr>, rhs: ObjectPtr<Expr> }
///
/// let (x, y) = (Var::new("x").upcast::<Expr>(), Var::new("y").upcast::<Expr>());
///
/// // Interned as they are built: equal nodes are one object.
/// let mut table = HashCons::<Expr>::new();
/// let one = table.intern(Int::new(1));
/// let a = table.intern(Add::new(x.clone(), one.clone()));
/// let another_one = table.intern(Int::new(1)); // `one` itself
/// let b = table.intern(Add::new(x.clone(), another_one));
/// assert!(ObjectPtr::ptr_eq(&a, &b));
/// // Another free variable is another node (its name is `no_eq`, but it is not `x`).
/// let c = table.intern(Add::new(y.clone(), one));
/// assert!(!ObjectPtr::ptr_eq(&a, &c));
///
/// // Common-subexpression elimination of a program built without sharing: bottom-up
/// // through the mutator, each node interned once its children are canonical.
/// let x_plus_1 = || Add::new(x.clone(), Int::new(1));
/// let program = Add::new(x_plus_1(), x_plus_1()).into_object_ref();
/// let shared = mutate(&program, &mut HashCons::new())?;
/// let root = shared.downcast_ref::<Add>().unwrap();
/// assert!(ObjectPtr::ptr_eq(&root.lhs, &root.rhs));
/// # Ok::<(), object_core::transform::TransformError>(())
/// ```
///
/// [`mutate`]: crate::transform::mutate
pub struct HashCons<T: ObjectType = crate::Object> {
    table: ShallowMap<ObjectPtr<T>, ()>,
}

impl<T: ObjectType> Default for HashCons<T> {
    fn default() -> Self {
        HashCons {
            table: ShallowMap::default(),
        }
    }
}

impl<T: ObjectType> HashCons<T> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty table with room for `n` canonical nodes.
    pub fn with_capacity(n: usize) -> Self {
        HashCons {
            table: ShallowMap::with_capacity_and_hasher(n, BuildStructuralKeyHasher),
        }
    }

    /// The canonical node shallowly equal to `node` ([`shallow_equal`]: the same type,
    /// equal own values, the same children): the one interned before, or `node` itself,
    /// which becomes canonical. One shallow hash and one table probe.
    #[inline]
    pub fn intern(&mut self, node: impl IntoObjectPtr<T>) -> ObjectPtr<T> {
        match self.table.entry(ShallowKey::new(node.into_object_ptr())) {
            MapEntry::Occupied(e) => e.key().get().clone(),
            MapEntry::Vacant(e) => {
                let canonical = e.key().get().clone();
                e.insert(());
                canonical
            }
        }
    }

    /// The canonical node shallowly equal to `node`, if one is interned.
    pub fn get(&self, node: &ObjectPtr<T>) -> Option<&ObjectPtr<T>> {
        self.table
            .get_key_value(&ShallowKey::new(node.clone()))
            .map(|(k, ())| k.get())
    }

    /// The canonical nodes, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &ObjectPtr<T>> + '_ {
        self.table.keys().map(ShallowKey::get)
    }

    /// How many canonical nodes the table holds.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Forgets every canonical node, letting go of them.
    pub fn clear(&mut self) {
        self.table.clear();
    }
}

impl<T: ObjectType> fmt::Debug for HashCons<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HashCons")
            .field("len", &self.len())
            .finish()
    }
}

/// Hash-consing as a pass: [`mutate`](crate::transform::mutate) with a `HashCons`
/// interns every node of a program bottom-up (its children canonical already, or the
/// node rebuilt with them), so equal subtrees become one object. Never fails.
impl Rewriter for HashCons {
    type Error = TransformError;

    #[inline]
    fn post(
        &mut self,
        node: ObjectRef,
        _original: &ObjectRef,
    ) -> Result<ObjectRef, TransformError> {
        Ok(self.intern(node))
    }
}
