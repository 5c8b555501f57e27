//! The two engines: equality (pairs of values) and hashing (values, combined in field
//! order). Each compares or hashes the top [`RECURSION_BUDGET`] levels by recursion and
//! continues deeper subtrees on a work stack (equality: of pairs; hashing: of visits
//! and combines, with a stack of child hashes), in the same order. Neither recurses in
//! proportion to depth: the deepest graph costs heap, and a bounded amount of stack.
//!
//! Both walk the field tables. Fields of the layouts `reflection::value::FieldLayout`
//! names (`ObjectPtr`, `Option<ObjectPtr>`, 8-byte integers) are read in place, the
//! others through their table entry.
//!
//! # Tree types
//!
//! Equality without paths, and hashing without a subtree cache, take objects of a *tree
//! type*, one whose compared fields all have those layouts (held once, outside
//! definitions; a type made only of integers, such as `IntImm`, held any number of
//! times), through `reflection::raw::TreeType`, a per-type list of offsets, found per
//! object through a per-thread table (`TreeSlot`), in a loop over a stack of the pairs
//! (`TreePair`) or objects (`TreeFields`) it is inside of, kept in place
//! (`InPlaceStack`, [`TREE_FRAMES`] deep, then a step), with no step or prelude per
//! object.
//!
//! # The subtree cache
//!
//! [`SubtreeHashes`], behind `StructuralHashCache`, keeps the hashes of objects that
//! depend on nothing but the object, by address with a handle to the object, so that
//! keying every subexpression of a program costs O(n).

use core::cell::Cell;
use core::marker::PhantomData;
use std::collections::HashMap;

use super::hooks::{Contents, StructuralHooks, TensorData};
use super::in_place_stack::InPlaceStack;
use super::path::{PathStep, Paths};
use super::plan::{
    eq_plan, Child, EqPlan, InPlaceValue, PairStep, PlanField, TreeFields, TreePair, TreeSlot,
    TreeType,
};
use super::snapshot::{Keeper, Snapshots};
use super::stable::{
    combine, finish, hash_bytes, TAG_BYTES, TAG_CUT, TAG_CYCLE, TAG_FREE_VAR, TAG_IDENTITY,
    TAG_NONE, TAG_STR, TAG_TENSOR_UNREAD, TAG_VAR_DEF, TAG_VAR_USE,
};
use super::{StructuralKind, StructuralOptions};
use crate::addr_map::{addr, AddrMap, AddrSet, BuildAddrHasher};
use crate::any::{Any, AnyView};
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::reflection::raw::{describe, Described, TypeDescriber};
use crate::reflection::ValueRef;
use crate::string::{BytesObj, StringObj};
use crate::type_index as ti;

// ---------------------------------------------------------------------------------
// Shared pieces.
// ---------------------------------------------------------------------------------

/// How many levels of a graph the engines walk by recursion (each a bounded frame)
/// before they continue the deeper part of a subtree on their work stack. Recursion
/// keeps a pair (or a value) in registers instead of a trip through the work stack (a
/// balanced tree of a million nodes is 20 levels deep, so it never leaves recursion);
/// the budget bounds the native stack a walk takes, whatever the graph's depth.
const RECURSION_BUDGET: u32 = 48;

#[inline(always)]
fn shared(o: &ObjectRef) -> bool {
    ObjectPtr::strong_count(o) > 1
}

/// A value that is compared as a whole.
#[derive(Clone, Copy)]
enum Leaf<'a> {
    /// A plain value kind (below 64) and its payload bits; floats are not plain.
    Plain(u32, u64),
    Float(f64),
    Str(&'a str),
    Bytes(&'a [u8]),
}

enum Node<'a> {
    Leaf(Leaf<'a>),
    Obj(&'a ObjectRef),
}

#[inline(always)]
fn plain(av: AnyView<'_>) -> Leaf<'static> {
    let t = av.type_index();
    if t == ti::FLOAT {
        Leaf::Float(av.as_float().unwrap_or(0.0))
    } else {
        Leaf::Plain(t, av.payload_bits())
    }
}

#[inline(always)]
fn classify(v: ValueRef<'_>) -> Node<'_> {
    match v {
        ValueRef::Value(av) => Node::Leaf(plain(av)),
        ValueRef::Str(s) => Node::Leaf(Leaf::Str(s)),
        ValueRef::Object(o) => match o.type_index() {
            ti::STRING => match o.downcast_ref::<StringObj>() {
                Some(s) => Node::Leaf(Leaf::Str(s.as_str())),
                None => Node::Obj(o),
            },
            ti::BYTES => match o.downcast_ref::<BytesObj>() {
                Some(b) => Node::Leaf(Leaf::Bytes(b.as_bytes())),
                None => Node::Obj(o),
            },
            _ => Node::Obj(o),
        },
    }
}

/// Floats: bitwise, except that every NaN equals every NaN (so `-0.0 != 0.0`).
#[inline(always)]
fn float_eq(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[inline(always)]
fn leaf_eq(a: Leaf<'_>, b: Leaf<'_>) -> bool {
    match (a, b) {
        (Leaf::Plain(t, x), Leaf::Plain(u, y)) => t == u && x == y,
        (Leaf::Float(x), Leaf::Float(y)) => float_eq(x, y),
        (Leaf::Str(x), Leaf::Str(y)) => x == y,
        (Leaf::Bytes(x), Leaf::Bytes(y)) => x == y,
        _ => false,
    }
}

/// The canonical bits of a float: one NaN for all.
#[inline(always)]
fn float_bits(x: f64) -> u64 {
    if x.is_nan() {
        f64::NAN.to_bits()
    } else {
        x.to_bits()
    }
}

#[inline(always)]
fn leaf_hash(l: Leaf<'_>) -> u64 {
    match l {
        Leaf::Plain(ti::NONE, _) => TAG_NONE,
        // Value kinds are fixed protocol constants; addresses (opaque pointers, and an
        // object a caller put in a `ValueRef::Value`) are never hashed.
        Leaf::Plain(t, bits)
            if t < ti::STATIC_OBJECT_BEGIN && t != ti::OPAQUE_PTR && t != ti::DL_TENSOR_PTR =>
        {
            combine(u64::from(t), bits)
        }
        Leaf::Plain(t, _) => combine(TAG_IDENTITY, u64::from(t.min(ti::STATIC_OBJECT_BEGIN))),
        Leaf::Float(x) => combine(u64::from(ti::FLOAT), float_bits(x)),
        Leaf::Str(s) => hash_bytes(TAG_STR, s.as_bytes()),
        Leaf::Bytes(b) => hash_bytes(TAG_BYTES, b),
    }
}

/// How a map key is matched: the identity of an object key, the value of the others.
#[derive(PartialEq, Eq, Hash, Clone, Copy)]
enum KeyId<'a> {
    Plain(u32, u64),
    Str(&'a str),
    Bytes(&'a [u8]),
    Obj(usize),
}

fn key_id(k: &Any) -> KeyId<'_> {
    match classify(ValueRef::from_any(k)) {
        Node::Leaf(Leaf::Plain(t, b)) => KeyId::Plain(t, b),
        Node::Leaf(Leaf::Float(x)) => KeyId::Plain(ti::FLOAT, float_bits(x)),
        Node::Leaf(Leaf::Str(s)) => KeyId::Str(s),
        Node::Leaf(Leaf::Bytes(b)) => KeyId::Bytes(b),
        Node::Obj(o) => KeyId::Obj(addr(o)),
    }
}

fn ints_hash(seed: u64, xs: &[i64]) -> u64 {
    let mut h = combine(seed, xs.len() as u64);
    for x in xs {
        h = combine(h, *x as u64);
    }
    h
}

fn dtype_bits(d: crate::dtype::DataType) -> u64 {
    u64::from(d.code) | (u64::from(d.bits) << 8) | (u64::from(d.lanes) << 16)
}

/// Whether some type linked into the program is `structural = "dag"` (decided once: a
/// type registered at run time has the reflection of a linked Rust type). Identical
/// subtrees below the root are skipped only when none is, because a skipped subtree
/// would hide the pairings of the DAG nodes inside it.
pub(super) fn any_dag_type() -> bool {
    static ANY: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ANY.get_or_init(|| {
        inventory::iter::<crate::registry::LinkedType>
            .into_iter()
            .any(|t| t.0.reflection.structural.kind == StructuralKind::Dag)
    })
}

/// What the walk needs of an object's type: the object described, the type's
/// structural spec, and its field plan.
#[derive(Clone, Copy)]
struct Entry<'a> {
    d: Described<'a>,
    kind: StructuralKind,
    /// No fields to walk: hooks show the contents, or none are shown (identity).
    builtin: bool,
    plan: &'static EqPlan,
}

/// What the walks keep of a type: the [`Entry`] without the object.
#[derive(Clone, Copy)]
struct TypeEntry {
    desc: TypeDescriber,
    kind: StructuralKind,
    builtin: bool,
    plan: &'static EqPlan,
}

/// Entries of the per-thread type table (a power of two).
const TYPE_SLOTS: usize = 64;

std::thread_local! {
    /// The types the walks of this thread met, by the low bits of their index: kept
    /// from one walk to the next, since most walks are short (a `StructuralKey` per
    /// subexpression) and would otherwise meet each of their types for the first time.
    /// An entry never goes stale: types are never unregistered, and what it holds is
    /// `'static`.
    static TYPES: [Cell<Option<TypeEntry>>; TYPE_SLOTS] =
        const { [const { Cell::new(None) }; TYPE_SLOTS] };
}

/// Describes objects for a walk through this thread's table of types ([`TYPES`]):
/// describing an object of a type met before (in this walk or an earlier one) skips
/// the registry and the field table.
struct TypeEntries<'a>(PhantomData<&'a ObjectRef>);

impl<'a> TypeEntries<'a> {
    fn new() -> Self {
        TypeEntries(PhantomData)
    }

    #[inline(always)]
    fn entry(&mut self, o: &'a ObjectRef) -> Entry<'a> {
        let slot = o.type_index() as usize % TYPE_SLOTS;
        // (`try_with` fails only while the thread's locals are torn down: then no entry.)
        if let Ok(Some(e)) = TYPES.try_with(|t| t[slot].get()) {
            if let Some(d) = e.desc.describe(o) {
                return Entry {
                    d,
                    kind: e.kind,
                    builtin: e.builtin,
                    plan: e.plan,
                };
            }
        }
        Self::miss(o, slot)
    }

    #[cold]
    #[inline(never)]
    fn miss(o: &'a ObjectRef, slot: usize) -> Entry<'a> {
        let d = describe(o);
        let refl = d.reflection();
        let e = TypeEntry {
            desc: TypeDescriber::of(d.info()),
            kind: refl.structural.kind,
            builtin: refl.structural.hooks.is_some() || refl.is_opaque(),
            plan: eq_plan(refl),
        };
        let _ = TYPES.try_with(|t| t[slot].set(Some(e)));
        Entry {
            d,
            kind: e.kind,
            builtin: e.builtin,
            plan: e.plan,
        }
    }
}

/// Entries of the per-thread table of tree types (a power of two).
const TREE_SLOTS: usize = 64;

/// How many pairs (or, hashing, objects) of tree types deep the in-place walks go before
/// they take a step.
const TREE_FRAMES: usize = 32;

std::thread_local! {
    /// The types the structural walks met on this thread, by the low bits of their index, as
    /// [`TreeType`]s (whether or not they are tree types): the one look-up the in-place
    /// walk makes per object. As in [`TYPES`], an entry never goes stale.
    static TREES: [TreeSlot; TREE_SLOTS] = const { [const { TreeSlot::new() }; TREE_SLOTS] };
}

/// Finds objects' [`TreeType`]s through this thread's table ([`TREES`]).
struct TreeTypes;

impl TreeTypes {
    /// The type of `o`, whose type index is `index`, if it is a tree type.
    #[inline(always)]
    fn get(index: u32, o: &ObjectRef) -> Option<TreeType> {
        let slot = index as usize % TREE_SLOTS;
        // (`try_with` fails only while the thread's locals are torn down: then a miss.)
        match TREES.try_with(|t| t[slot].get(index)) {
            Ok(Some(t)) => t.is_tree().then_some(t),
            _ => Self::miss(o, slot),
        }
    }

    #[cold]
    #[inline(never)]
    fn miss(o: &ObjectRef, slot: usize) -> Option<TreeType> {
        let t = TreeType::of(describe(o));
        // (Strings and bytes are compared as values, never by fields.)
        let t = match t.index() {
            ti::STRING | ti::BYTES => t.never_in_place(),
            _ => t,
        };
        let _ = TREES.try_with(|table| table[slot].set(t));
        t.is_tree().then_some(t)
    }
}

/// An object of a tree type being hashed in place (see `HashEngine::tree_hash`): its
/// fields still to read, and its hash so far.
struct Hashing<'a> {
    fields: TreeFields<'a>,
    h: u64,
}

impl<'a> Hashing<'a> {
    /// An object of the type `t` whose fields are `fields`: its hash begun with the
    /// type key's hash and its plain fields in walk order (its objects, whose hashes
    /// come next, start loading meanwhile).
    #[inline(always)]
    fn start(t: TreeType, fields: TreeFields<'a>) -> Hashing<'a> {
        let mut h = t.key_hash();
        for f in fields.clone() {
            match f {
                InPlaceValue::Word(bits) => h = combine(h, combine(u64::from(ti::INT), bits)),
                InPlaceValue::None => h = combine(h, TAG_NONE),
                InPlaceValue::Object(x) => ObjectPtr::prefetch(x),
            }
        }
        Hashing { fields, h }
    }
}

// ---------------------------------------------------------------------------------
// Equality.
// ---------------------------------------------------------------------------------

struct Task<'a, I> {
    l: ValueRef<'a>,
    r: ValueRef<'a>,
    def: bool,
    lp: I,
    rp: I,
}

/// Where the two sides first differ.
pub(crate) type Mismatch<I> = (I, I);

pub(crate) struct EqEngine<'a, P: Paths> {
    opts: StructuralOptions,
    stack: Vec<Task<'a, P::Id>>,
    var_l: AddrMap<usize>,
    var_r: AddrMap<usize>,
    dag_l: AddrMap<usize>,
    dag_r: AddrMap<usize>,
    seen: AddrSet<(usize, usize)>,
    /// Bindings (of variables or DAG nodes) of an object to another one: while there
    /// are none, identical subtrees are equal without a look inside.
    non_identity: usize,
    /// Whether identical subtrees below the root may be skipped at all.
    inner_shortcut: bool,
    types: TypeEntries<'a>,
    /// Where the snapshots of mutable containers are kept until the walk ends.
    keep: Keeper<'a>,
    pub(crate) paths: P,
}

impl<'a, P: Paths> EqEngine<'a, P> {
    pub(crate) fn new(opts: StructuralOptions, paths: P, store: &'a Snapshots) -> Self {
        EqEngine {
            opts,
            // (Allocated at the first push: most walks are short and never leave recursion.)
            stack: Vec::new(),
            var_l: AddrMap::default(),
            var_r: AddrMap::default(),
            dag_l: AddrMap::default(),
            dag_r: AddrMap::default(),
            seen: AddrSet::default(),
            non_identity: 0,
            inner_shortcut: !opts.map_free_vars && !any_dag_type(),
            types: TypeEntries::new(),
            keep: Keeper::new(store),
            paths,
        }
    }

    pub(crate) fn run(&mut self, l: ValueRef<'a>, r: ValueRef<'a>) -> Result<(), Mismatch<P::Id>> {
        // The same object on both sides: equal under every mode (O(1)).
        if let (ValueRef::Object(a), ValueRef::Object(b)) = (l, r) {
            if ObjectPtr::ptr_eq(a, b) {
                return Ok(());
            }
        }
        let root = self.paths.root();
        self.visit(
            Task {
                l,
                r,
                def: false,
                lp: root,
                rp: root,
            },
            0,
        )
    }

    /// Compares the pair `t`, met at recursion depth `depth`, with everything below
    /// it: by recursion while the budget lasts, on the work stack below that. Either
    /// way the subtree is done, in walk order, when this returns.
    #[inline(always)]
    fn visit(&mut self, t: Task<'a, P::Id>, depth: u32) -> Result<(), Mismatch<P::Id>> {
        if depth < RECURSION_BUDGET {
            self.step(t, depth)
        } else {
            self.drain(t)
        }
    }

    /// Compares the pair `t` and everything below it on the work stack (no recursion).
    #[cold]
    #[inline(never)]
    fn drain(&mut self, t: Task<'a, P::Id>) -> Result<(), Mismatch<P::Id>> {
        let base = self.stack.len();
        self.stack.push(t);
        self.finish_from(base, RECURSION_BUDGET)
    }

    /// Compares the pairs on the work stack above `base` (pushed by a node at depth
    /// `depth`), in order, each with everything below it.
    fn finish_from(&mut self, base: usize, depth: u32) -> Result<(), Mismatch<P::Id>> {
        while self.stack.len() > base {
            let Some(t) = self.stack.pop() else { break };
            if depth < RECURSION_BUDGET {
                self.visit(t, depth + 1)?;
            } else {
                // On the work stack: the pair's children are pushed above `base` and
                // taken next.
                self.step(t, RECURSION_BUDGET)?;
            }
        }
        Ok(())
    }

    #[inline(always)]
    fn can_shortcut(&self, def: bool) -> bool {
        !def && self.inner_shortcut && self.non_identity == 0
    }

    /// Compares the pair `t` met at depth `depth`: its children are compared by
    /// recursion below the budget, pushed on the work stack at it.
    #[inline(always)]
    fn step(&mut self, t: Task<'a, P::Id>, depth: u32) -> Result<(), Mismatch<P::Id>> {
        match (t.l, t.r) {
            (ValueRef::Object(a), ValueRef::Object(b)) => {
                let ti = a.type_index();
                if ti != b.type_index() {
                    return Err((t.lp, t.rp));
                }
                if ti == ti::STRING || ti == ti::BYTES {
                    return self.leaves(t);
                }
                let e = self.types.entry(a);
                match Self::plain_objects(e, b) {
                    Some(true) => Ok(()),
                    Some(false) => Err((t.lp, t.rp)),
                    None => self.objects(a, b, e, t, depth),
                }
            }
            _ => self.leaves(t),
        }
    }

    /// `step` for two objects of one type (not strings or bytes), `lo`'s entry `e`.
    #[inline(always)]
    fn objects(
        &mut self,
        lo: &'a ObjectRef,
        ro: &'a ObjectRef,
        e: Entry<'a>,
        t: Task<'a, P::Id>,
        depth: u32,
    ) -> Result<(), Mismatch<P::Id>> {
        let (la, ra) = (addr(lo), addr(ro));
        match e.kind {
            StructuralKind::Identity => {
                return if la == ra { Ok(()) } else { Err((t.lp, t.rp)) };
            }
            StructuralKind::Var => return self.var(lo, ro, e, t, depth),
            StructuralKind::Tree | StructuralKind::Dag => {}
        }
        if la == ra && self.can_shortcut(t.def) {
            // (No DAG type exists, so nothing inside needs pairing.)
            return Ok(());
        }
        if (shared(lo) || shared(ro)) && !self.first_meeting(la, ra, e.kind, &t)? {
            return Ok(());
        }
        self.children(lo, ro, e, &t, depth)
    }

    /// For a pair of objects at `la` and `ra` (one of them held more than once) of a
    /// tree or DAG type: whether its fields are still to be compared (`Ok(false)` if
    /// they were, or are being, compared under this pairing), or a mismatch (a DAG node
    /// paired with another object before).
    #[inline(never)]
    fn first_meeting(
        &mut self,
        la: usize,
        ra: usize,
        kind: StructuralKind,
        t: &Task<'a, P::Id>,
    ) -> Result<bool, Mismatch<P::Id>> {
        if kind == StructuralKind::Dag {
            if let Some(&m) = self.dag_l.get(&la) {
                return if m == ra {
                    Ok(false)
                } else {
                    Err((t.lp, t.rp))
                };
            }
            if self.dag_r.contains_key(&ra) {
                return Err((t.lp, t.rp));
            }
            self.dag_l.insert(la, ra);
            self.dag_r.insert(ra, la);
            if la != ra {
                self.non_identity += 1;
            }
            Ok(true)
        } else {
            // Compared already (or being compared, in a cycle) if met before.
            Ok(self.seen.insert((la, ra)))
        }
    }

    /// A pair that is not two objects of one type (strings and bytes included):
    /// compared as leaves, or a mismatch.
    #[cold]
    fn leaves(&mut self, t: Task<'a, P::Id>) -> Result<(), Mismatch<P::Id>> {
        match (classify(t.l), classify(t.r)) {
            (Node::Leaf(a), Node::Leaf(b)) if leaf_eq(a, b) => Ok(()),
            _ => Err((t.lp, t.rp)),
        }
    }

    #[inline(never)]
    fn var(
        &mut self,
        lo: &'a ObjectRef,
        ro: &'a ObjectRef,
        e: Entry<'a>,
        t: Task<'a, P::Id>,
        depth: u32,
    ) -> Result<(), Mismatch<P::Id>> {
        let (la, ra) = (addr(lo), addr(ro));
        // (Both maps are empty until a first binding: no look-ups then.)
        if !self.var_l.is_empty() {
            if let Some(&m) = self.var_l.get(&la) {
                return if m == ra { Ok(()) } else { Err((t.lp, t.rp)) };
            }
            if self.var_r.contains_key(&ra) {
                return Err((t.lp, t.rp));
            }
        }
        if t.def || self.opts.map_free_vars {
            self.var_l.insert(la, ra);
            self.var_r.insert(ra, la);
            if la != ra {
                self.non_identity += 1;
            }
            // A definition compares the variable's own fields (say, its type).
            self.children(lo, ro, e, &t, depth)
        } else if la == ra {
            Ok(())
        } else {
            Err((t.lp, t.rp))
        }
    }

    #[inline(always)]
    fn children(
        &mut self,
        lo: &'a ObjectRef,
        ro: &'a ObjectRef,
        e: Entry<'a>,
        t: &Task<'a, P::Id>,
        depth: u32,
    ) -> Result<(), Mismatch<P::Id>> {
        if e.builtin {
            return match e.d.reflection().structural.hooks {
                Some(h) => self.builtin(h, lo, ro, t, depth),
                None if addr(lo) == addr(ro) => Ok(()),
                None => Err((t.lp, t.rp)),
            };
        }
        let Some(rd) = e.d.same_type(ro) else {
            return Err((t.lp, t.rp));
        };
        if !P::TRACK && !t.def && depth < RECURSION_BUDGET {
            match TreePair::of(lo, ro, |index| TreeTypes::get(index, lo)) {
                Child::Pair(pair) => return self.tree(pair, (t.lp, t.rp), depth),
                Child::Leaf(true) => return Ok(()),
                Child::Leaf(false) | Child::Differ => return Err((t.lp, t.rp)),
                Child::Other => {}
            }
        }
        let plan = e.plan;
        if depth < RECURSION_BUDGET {
            // Each field with everything below it, in walk order (definitions first).
            // (The later fields' objects are read after the first one's subtree: start
            // loading them now.)
            plan.prefetch_later_objects(e.d, rd);
            for (f, lv, rv) in plan.pairs(e.d, rd) {
                if let (false, ValueRef::Object(a), ValueRef::Object(b)) = (P::TRACK, lv, rv) {
                    if ObjectPtr::ptr_eq(a, b) && self.can_shortcut(t.def || f.def) {
                        // The same object while nothing is bound to another one (no
                        // path tracked): equal, whatever its kind (as `objects` and
                        // `var` would find), without a step.
                        continue;
                    }
                } else if let Some(same) = Self::leaf_pair(lv, rv) {
                    if same {
                        continue;
                    }
                    return Err((t.lp, t.rp));
                }
                let task = self.field_task(t, f, lv, rv);
                self.visit(task, depth + 1)?;
            }
        } else {
            // Pushed last field first, so that they are taken in walk order.
            for (f, lv, rv) in plan.pairs(e.d, rd).rev() {
                if let Some(same) = Self::leaf_pair(lv, rv) {
                    if same {
                        continue;
                    }
                    return Err((t.lp, t.rp));
                }
                if let (ValueRef::Object(a), ValueRef::Object(b)) = (lv, rv) {
                    // Read soon: start loading both now.
                    ObjectPtr::prefetch(a);
                    ObjectPtr::prefetch(b);
                }
                let task = self.field_task(t, f, lv, rv);
                self.stack.push(task);
            }
        }
        Ok(())
    }

    /// `children` of `pair`, a pair of objects of a tree type (see [`TreeType`]), met at
    /// depth `depth` below the budget, not under a definition, when no path is tracked
    /// (`ids` are the pair's). The child pairs of such types are compared here too, in a
    /// loop over the pairs it is inside of (kept on a stack in place, `TREE_FRAMES`
    /// deep; a pair's last child takes its place), with no task built and no look at a
    /// kind, a path or a field's name: only a pair that is not of such a type, or is held
    /// more than once (which `objects` may have to record as met; not for a type made
    /// only of integers, compared on the spot), or would be deeper than the stack, goes
    /// through a step.
    #[inline(never)]
    fn tree(
        &mut self,
        pair: TreePair<'a>,
        ids: Mismatch<P::Id>,
        depth: u32,
    ) -> Result<(), Mismatch<P::Id>> {
        let below = depth + 1;
        let mut outer = InPlaceStack::<TreePair<'a>, TREE_FRAMES>::new();
        let mut pair = pair;
        // (What `can_shortcut(false)` says: changed only by a step.)
        let mut shortcut = self.can_shortcut(false);
        loop {
            let (x, y) = match pair.next() {
                PairStep::Objects(x, y) => (x, y),
                PairStep::Differ => return Err(ids),
                PairStep::End => match outer.pop() {
                    Some(p) => {
                        pair = p;
                        continue;
                    }
                    None => return Ok(()),
                },
            };
            if ObjectPtr::ptr_eq(x, y) && shortcut {
                continue;
            }
            match TreePair::of(x, y, |index| TreeTypes::get(index, x)) {
                Child::Differ | Child::Leaf(false) => return Err(ids),
                // (A leaf, say an `IntImm`, held once or not: with nothing inside, it has
                // nothing to record.)
                Child::Leaf(true) => continue,
                // (A pair held more than once takes a step, which may record it.)
                Child::Pair(inner) if !shared(x) && !shared(y) => {
                    if pair.is_done() {
                        pair = inner;
                        continue;
                    }
                    match outer.push(core::mem::replace(&mut pair, inner)) {
                        Ok(()) => continue,
                        // (The stack is full: back to the pair, and the child takes a
                        // step.)
                        Err(p) => pair = p,
                    }
                }
                Child::Pair(_) | Child::Other => {}
            }
            let (l, r) = (ValueRef::Object(x), ValueRef::Object(y));
            let (lp, rp) = ids;
            self.visit(
                Task {
                    l,
                    r,
                    def: false,
                    lp,
                    rp,
                },
                below,
            )?;
            shortcut = self.can_shortcut(false);
        }
    }

    /// Two objects of one type (not strings or bytes; `e` is the left one's entry)
    /// compared on the spot when the type is a tree type whose fields are all plain
    /// values or strings (an `IntImm`, say), without the rest of a step (when no path
    /// is tracked): `Some(equal)`, or `None` for a pair the walk takes. Such objects hold
    /// nothing to bind or pair, so where and how often they are met changes nothing
    /// else.
    #[inline(always)]
    fn plain_objects(e: Entry<'a>, b: &'a ObjectRef) -> Option<bool> {
        if P::TRACK || e.kind != StructuralKind::Tree || e.builtin || !e.plan.plain {
            return None;
        }
        let rd = e.d.same_type(b)?;
        for (_, lv, rv) in e.plan.pairs(e.d, rd) {
            if !Self::leaf_pair(lv, rv)? {
                return Some(false);
            }
        }
        Some(true)
    }

    /// Two plain values or two string views of a field compared on the spot (when no
    /// path is tracked): `Some(equal)`, or `None` for a pair the walk takes.
    #[inline(always)]
    fn leaf_pair(lv: ValueRef<'_>, rv: ValueRef<'_>) -> Option<bool> {
        if P::TRACK {
            return None;
        }
        match (lv, rv) {
            (ValueRef::Value(a), ValueRef::Value(b)) => Some(leaf_eq(plain(a), plain(b))),
            (ValueRef::Str(a), ValueRef::Str(b)) => Some(a == b),
            _ => None,
        }
    }

    /// The pair of a field's values, under the parent pair `t`.
    #[inline(always)]
    fn field_task(
        &mut self,
        t: &Task<'a, P::Id>,
        f: &PlanField,
        lv: ValueRef<'a>,
        rv: ValueRef<'a>,
    ) -> Task<'a, P::Id> {
        let name = f.info.name();
        Task {
            l: lv,
            r: rv,
            def: t.def || f.def,
            lp: self.paths.child(t.lp, || PathStep::Field(name)),
            rp: self.paths.child(t.rp, || PathStep::Field(name)),
        }
    }

    fn both(&mut self, t: &Task<'a, P::Id>, step: impl Fn() -> PathStep) -> Mismatch<P::Id> {
        (self.paths.child(t.lp, &step), self.paths.child(t.rp, &step))
    }

    #[inline(never)]
    fn builtin(
        &mut self,
        h: &'static StructuralHooks,
        lo: &'a ObjectRef,
        ro: &'a ObjectRef,
        t: &Task<'a, P::Id>,
        depth: u32,
    ) -> Result<(), Mismatch<P::Id>> {
        let lc = self.hold((h.contents)(lo, &self.opts));
        let rc = self.hold((h.contents)(ro, &self.opts));
        match (lc, rc) {
            (Contents::Items(a), Contents::Items(b)) => {
                if a.len() != b.len() {
                    return Err(self.both(t, || PathStep::Field("len")));
                }
                let base = self.stack.len();
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    let lp = self.paths.child(t.lp, || PathStep::Index(i));
                    let rp = self.paths.child(t.rp, || PathStep::Index(i));
                    self.stack.push(Task {
                        l: ValueRef::from_any(x),
                        r: ValueRef::from_any(y),
                        def: t.def,
                        lp,
                        rp,
                    });
                }
                self.stack[base..].reverse();
                self.pushed_from(base, depth)
            }
            (Contents::Ints(a), Contents::Ints(b)) => {
                if a == b {
                    Ok(())
                } else {
                    Err((t.lp, t.rp))
                }
            }
            (Contents::Bytes(a), Contents::Bytes(b)) => {
                if a == b {
                    Ok(())
                } else {
                    Err((t.lp, t.rp))
                }
            }
            (Contents::Entries(a), Contents::Entries(b)) => {
                let base = self.stack.len();
                self.entries(a, b, t)?;
                self.pushed_from(base, depth)
            }
            (Contents::Tensor(a), Contents::Tensor(b)) => {
                if a.dtype != b.dtype {
                    return Err(self.both(t, || PathStep::Field("dtype")));
                }
                if a.shape != b.shape {
                    return Err(self.both(t, || PathStep::Field("shape")));
                }
                let same = match (&a.data, &b.data) {
                    (TensorData::Bytes(x), TensorData::Bytes(y)) => x == y,
                    (TensorData::Skipped, TensorData::Skipped) => true,
                    _ => addr(lo) == addr(ro),
                };
                if same {
                    Ok(())
                } else {
                    Err(self.both(t, || PathStep::Field("data")))
                }
            }
            (Contents::Identity, Contents::Identity) if addr(lo) == addr(ro) => Ok(()),
            _ => Err((t.lp, t.rp)),
        }
    }

    /// After a node at depth `depth` pushed its children above `base`: below the
    /// budget they are compared now (the node's caller expects its subtree done); at
    /// it, the work stack takes them next.
    fn pushed_from(&mut self, base: usize, depth: u32) -> Result<(), Mismatch<P::Id>> {
        if depth < RECURSION_BUDGET {
            self.finish_from(base, depth)
        } else {
            Ok(())
        }
    }

    /// A snapshot, kept for the rest of the walk and seen as borrowed contents.
    fn hold(&mut self, c: Contents<'a>) -> Contents<'a> {
        hold(&mut self.keep, c)
    }

    fn entries(
        &mut self,
        a: Vec<(&'a Any, &'a Any)>,
        b: Vec<(&'a Any, &'a Any)>,
        t: &Task<'a, P::Id>,
    ) -> Result<(), Mismatch<P::Id>> {
        if a.len() != b.len() {
            return Err(self.both(t, || PathStep::Field("len")));
        }
        let mut index: HashMap<KeyId<'a>, (&'a Any, &'a Any), BuildAddrHasher> =
            HashMap::with_capacity_and_hasher(b.len(), BuildAddrHasher::default());
        for (k, v) in b {
            index.insert(key_id(k), (k, v));
        }
        let base = self.stack.len();
        for (k, v) in a {
            let id = match key_id(k) {
                // A bound variable (or DAG node) matches the key it is bound to.
                KeyId::Obj(p) => KeyId::Obj(
                    self.var_l
                        .get(&p)
                        .or_else(|| self.dag_l.get(&p))
                        .copied()
                        .unwrap_or(p),
                ),
                other => other,
            };
            let Some(&(rk, rv)) = index.get(&id) else {
                return Err(self.both(t, || PathStep::Key(k.clone())));
            };
            let lp = self.paths.child(t.lp, || PathStep::Key(k.clone()));
            let rp = self.paths.child(t.rp, || PathStep::Key(rk.clone()));
            self.stack.push(Task {
                l: ValueRef::from_any(v),
                r: ValueRef::from_any(rv),
                def: t.def,
                lp,
                rp,
            });
        }
        self.stack[base..].reverse();
        Ok(())
    }
}

// ---------------------------------------------------------------------------------
// Hashing.
// ---------------------------------------------------------------------------------

/// How many mutable containers deep the hash looks: one nested deeper counts by its
/// type and length only. Equality follows a cycle until a pair repeats (and then counts
/// it equal); the hash cannot know where a cycle closes without comparing, so it hashes
/// every object as the *unfolding* of the graph below it, cut at this depth — a
/// function of what equality compares, wherever the walk entered the cycle. Fits in the
/// two address bits of the memo key.
const MAX_NEST: u8 = 3;

const _: () = assert!(core::mem::align_of::<crate::header::Object>() >= 8);

/// The hashing engine's memo: the hashes of shared objects met so far (`None` while
/// one is being hashed). The first few are kept in line and searched in order, the rest
/// in a map: most walks are small (a `StructuralKey` per subexpression), and a map
/// allocated and grown per walk cost more than such a walk.
#[derive(Default)]
struct Memo {
    few: [(usize, Option<u64>); MEMO_IN_LINE],
    len: usize,
    more: AddrMap<Option<u64>>,
}

/// How many memo entries [`Memo`] keeps before it uses its map.
const MEMO_IN_LINE: usize = 8;

impl Memo {
    #[inline]
    fn get(&self, key: usize) -> Option<Option<u64>> {
        if let Some(&(_, v)) = self.few[..self.len].iter().find(|(k, _)| *k == key) {
            return Some(v);
        }
        if self.more.is_empty() {
            return None;
        }
        self.more.get(&key).copied()
    }

    /// Enters `key`, or changes its entry.
    #[inline]
    fn set(&mut self, key: usize, value: Option<u64>) {
        if let Some(e) = self.few[..self.len].iter_mut().find(|(k, _)| *k == key) {
            e.1 = value;
        } else if self.len < MEMO_IN_LINE {
            self.few[self.len] = (key, value);
            self.len += 1;
        } else {
            self.more.insert(key, value);
        }
    }
}

enum HTask<'a> {
    Visit {
        v: ValueRef<'a>,
        def: bool,
        /// How many mutable containers (`List`, `Dict`) enclose the value.
        nest: u8,
    },
    /// Mixes the top `n` child hashes into `seed`, in order.
    Combine { seed: u64, n: usize, memo: usize },
    /// Sums the top `n` (key, value) pairs of hashes: order does not matter.
    Unordered { seed: u64, n: usize, memo: usize },
}

/// What [`HashEngine::prelude`] found: a hash, or an object's fields to hash.
enum Prelude<'a> {
    Done(u64),
    Children {
        o: &'a ObjectRef,
        e: Entry<'a>,
        seed: u64,
        memo: usize,
    },
}

pub(crate) struct HashEngine<'a> {
    opts: StructuralOptions,
    stack: Vec<HTask<'a>>,
    values: Vec<u64>,
    /// Hashes of shared objects (by address, the low bit for a definition context);
    /// `None` while the object is being hashed (met again: a cycle).
    memo: Memo,
    vars: AddrMap<u64>,
    next_var: u64,
    types: TypeEntries<'a>,
    keep: Keeper<'a>,
    /// Hashes of objects from earlier walks (see [`SubtreeHashes`]), if kept.
    cache: Option<&'a mut SubtreeHashes>,
    /// How many times the walk met something that makes a hash depend on where it is
    /// met: a variable's definition or a bound use, a cycle, a mutable container's or
    /// a tensor's contents — and, once any of those happened, a shared object's hash
    /// taken from the memo (it may carry one). An object whose walk leaves it unchanged
    /// has a hash of its own, which [`SubtreeHashes`] may keep.
    events: u64,
}

/// Hashes of objects met by earlier walks, by address, each with a handle that keeps
/// the object alive (so the address is not reused) and shared (so nobody gets the
/// unique access that could change it): the store behind
/// [`StructuralHashCache`](super::StructuralHashCache).
///
/// An object's hash is kept only if it depends on nothing but the object: met outside
/// any definition and any mutable container, with no variable bound or defined, no
/// cycle and no tensor below it (whose data may change). It is used only where the walk
/// is in the same state: no variable bound so far, outside definitions and mutable
/// containers — there a fresh walk of the object would compute the very same number.
#[derive(Default)]
pub(crate) struct SubtreeHashes {
    map: AddrMap<(u64, ObjectRef)>,
}

impl SubtreeHashes {
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    pub(crate) fn clear(&mut self) {
        self.map.clear();
    }
}

impl<'a> HashEngine<'a> {
    pub(crate) fn new(opts: StructuralOptions, store: &'a Snapshots) -> Self {
        HashEngine {
            opts,
            // (Allocated at the first push: most walks are short and stay in recursion.)
            stack: Vec::new(),
            values: Vec::new(),
            memo: Memo::default(),
            vars: AddrMap::default(),
            next_var: 0,
            types: TypeEntries::new(),
            keep: Keeper::new(store),
            cache: None,
            events: 0,
        }
    }

    /// An engine that uses and fills `cache` (default options only: the cache's hashes
    /// are those of [`structural_hash`](super::structural_hash)).
    pub(crate) fn with_cache(store: &'a Snapshots, cache: &'a mut SubtreeHashes) -> Self {
        let mut e = HashEngine::new(StructuralOptions::new(), store);
        e.cache = Some(cache);
        e
    }

    /// Whether a hash met in this state may be taken from, or kept in, the cache.
    #[inline(always)]
    fn cacheable(&self, def: bool, nest: u8) -> bool {
        self.cache.is_some() && !def && nest == 0
    }

    pub(crate) fn run(&mut self, v: ValueRef<'a>) -> u64 {
        finish(self.hash(v, false, 0, 0))
    }

    /// The hash of `v` (under a definition if `def`, inside `nest` mutable containers),
    /// met at recursion depth `depth`: by recursion while the budget lasts, on the work
    /// stack below that. Children are hashed in the same order either way, so variables
    /// are numbered alike and the hash is the same.
    fn hash(&mut self, v: ValueRef<'a>, def: bool, nest: u8, depth: u32) -> u64 {
        if depth >= RECURSION_BUDGET {
            return self.hash_on_stack(v, def, nest);
        }
        if let (ValueRef::Object(o), false, true) = (v, def, self.cache.is_none()) {
            if !shared(o) {
                if let Some((t, fields)) = Self::tree_fields(o) {
                    return self.tree_hash(t, fields, nest, depth);
                }
            }
        }
        match self.prelude(v, def, nest) {
            Prelude::Done(h) => h,
            Prelude::Children { o, e, seed, memo } => {
                let events = self.events;
                let (h, inner) = self.object_by_recursion(o, e, seed, def, nest, memo, depth);
                // (An object without objects inside is quicker to hash again than to
                // keep.)
                if inner && self.events == events && self.cacheable(def, nest) {
                    if let Some(c) = self.cache.as_deref_mut() {
                        c.map.insert(addr(o), (h, o.clone()));
                    }
                }
                h
            }
        }
    }

    /// [`hash`](Self::hash) of `o`, an object of the tree type `t` held once (no memo
    /// to keep) whose fields are `fields`, met outside definitions when no hashes are
    /// kept for later walks: its fields read in place (see [`TreeType`]), with no
    /// prelude, and its children of such types the same way, in a loop over the objects
    /// it is inside of (kept on a stack in place, `TREE_FRAMES` deep): only an object
    /// that is not of such a type, or is held more than once (unless its type holds only
    /// integers), or would be deeper than that stack, goes through `hash`. The same
    /// number as the general path: the type key's hash, the plain fields in walk order,
    /// then each object's hash.
    #[inline(never)]
    fn tree_hash(&mut self, t: TreeType, fields: TreeFields<'a>, nest: u8, depth: u32) -> u64 {
        let below = depth + 1;
        let mut outer = InPlaceStack::<Hashing<'a>, TREE_FRAMES>::new();
        let mut cur = Hashing::start(t, fields);
        loop {
            let next = cur.fields.by_ref().find_map(|f| match f {
                InPlaceValue::Object(x) => Some(x),
                _ => None,
            });
            let Some(x) = next else {
                let h = cur.h;
                match outer.pop() {
                    Some(up) => {
                        cur = up;
                        cur.h = combine(cur.h, h);
                        continue;
                    }
                    None => return h,
                }
            };
            if let Some((t, fields)) = Self::tree_fields(x) {
                if t.words_only() {
                    // (A leaf, say an `IntImm`, held once or not: nothing inside it is
                    // numbered or kept.)
                    cur.h = combine(cur.h, Hashing::start(t, fields).h);
                    continue;
                }
                if !shared(x) {
                    match outer.push(core::mem::replace(&mut cur, Hashing::start(t, fields))) {
                        Ok(()) => continue,
                        // (The stack is full: back to the object, and the child through
                        // `hash`.)
                        Err(up) => cur = up,
                    }
                }
            }
            let hx = self.hash(ValueRef::Object(x), false, nest, below);
            cur.h = combine(cur.h, hx);
        }
    }

    /// The tree type of `o` and its fields, if it has one.
    #[inline(always)]
    fn tree_fields(o: &'a ObjectRef) -> Option<(TreeType, TreeFields<'a>)> {
        let t = TreeTypes::get(o.type_index(), o)?;
        Some((t, t.fields(o)?))
    }

    /// [`hash`](Self::hash) for an object whose fields (or contents) are to be hashed,
    /// and whether it holds other objects (or values hashed through their own walk).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn object_by_recursion(
        &mut self,
        o: &'a ObjectRef,
        e: Entry<'a>,
        seed: u64,
        def: bool,
        nest: u8,
        memo: usize,
        depth: u32,
    ) -> (u64, bool) {
        if e.builtin {
            // An `Array`'s items by recursion, as the work stack's combine would mix
            // them; other contents on the work stack.
            let contents = self.builtin_contents(o, e);
            if let Contents::Items(items) = contents {
                let mut h = combine(seed, items.len() as u64);
                for x in items {
                    h = combine(h, self.hash(ValueRef::from_any(x), def, nest, depth + 1));
                }
                if memo != 0 {
                    self.memo.set(memo, Some(h));
                }
                return (h, !items.is_empty());
            }
            let base = self.stack.len();
            self.contents(contents, seed, def, nest, memo);
            return (self.drain(base), true);
        }
        // The plain fields first, then each object's hash, in field order: the
        // order the work stack combines them in.
        let plan = e.plan;
        let mut h = seed;
        let mut objects = 0;
        for (_, v) in plan.views(e.d) {
            match v {
                ValueRef::Value(av) => h = combine(h, leaf_hash(plain(av))),
                ValueRef::Str(s) => h = combine(h, hash_bytes(TAG_STR, s.as_bytes())),
                ValueRef::Object(o) => {
                    ObjectPtr::prefetch(o);
                    objects += 1;
                }
            }
        }
        if objects > 0 {
            for (f, v) in plan.views(e.d) {
                if let ValueRef::Object(_) = v {
                    let x = self.hash(v, def || f.def, nest, depth + 1);
                    h = combine(h, x);
                }
            }
        }
        if memo != 0 {
            self.memo.set(memo, Some(h));
        }
        (h, objects > 0)
    }

    /// The hash of `v` and everything below it, on the work stack (no recursion).
    #[cold]
    #[inline(never)]
    fn hash_on_stack(&mut self, v: ValueRef<'a>, def: bool, nest: u8) -> u64 {
        let base = self.stack.len();
        self.stack.push(HTask::Visit { v, def, nest });
        self.drain(base)
    }

    /// Runs the work stack down to `base` and takes the one hash it left.
    fn drain(&mut self, base: usize) -> u64 {
        while self.stack.len() > base {
            let Some(t) = self.stack.pop() else { break };
            match t {
                HTask::Visit { v, def, nest } => self.visit(v, def, nest),
                HTask::Combine { seed, n, memo } => {
                    let start = self.values.len() - n;
                    let mut h = seed;
                    for x in &self.values[start..] {
                        h = combine(h, *x);
                    }
                    self.values.truncate(start);
                    self.done(h, memo);
                }
                HTask::Unordered { seed, n, memo } => {
                    let start = self.values.len() - 2 * n;
                    let mut acc = 0u64;
                    for pair in self.values[start..].chunks_exact(2) {
                        acc = acc.wrapping_add(finish(combine(pair[0], pair[1])));
                    }
                    self.values.truncate(start);
                    self.done(combine(seed, acc), memo);
                }
            }
        }
        self.values.pop().unwrap_or(TAG_NONE)
    }

    #[inline(always)]
    fn done(&mut self, h: u64, memo: usize) {
        self.values.push(h);
        if memo != 0 {
            self.memo.set(memo, Some(h));
        }
    }

    /// Hashes `v` on the work stack: its hash pushed on the values, or its children's
    /// visits pushed before a combine.
    #[inline]
    fn visit(&mut self, v: ValueRef<'a>, def: bool, nest: u8) {
        match self.prelude(v, def, nest) {
            Prelude::Done(h) => self.values.push(h),
            Prelude::Children { o, e, seed, memo } => self.children(o, e, seed, def, nest, memo),
        }
    }

    /// What hashing `v` takes: its hash at once (a leaf, an identity, a variable in use,
    /// a shared object met before), or its fields under `seed` (with the memo key to
    /// fill, 0 for none).
    #[inline(always)]
    fn prelude(&mut self, v: ValueRef<'a>, def: bool, nest: u8) -> Prelude<'a> {
        let o = match classify(v) {
            Node::Leaf(l) => return Prelude::Done(leaf_hash(l)),
            Node::Obj(o) => o,
        };
        let a = addr(o);
        // Hashed by an earlier walk, in the state this one is in (nothing bound yet).
        if self.cacheable(def, nest) && self.vars.is_empty() {
            if let Some(&(h, _)) = self.cache.as_deref().and_then(|c| c.map.get(&a)) {
                return Prelude::Done(h);
            }
        }
        let e = self.types.entry(o);
        let mut seed = e.d.info().key_hash();
        match e.kind {
            StructuralKind::Identity => {
                return Prelude::Done(combine(seed, TAG_IDENTITY));
            }
            StructuralKind::Var => {
                if let Some(&i) = self.vars.get(&a) {
                    self.events += 1;
                    return Prelude::Done(combine(combine(seed, TAG_VAR_USE), i));
                }
                if def || self.opts.map_free_vars {
                    self.events += 1;
                    let i = self.next_var;
                    self.next_var += 1;
                    self.vars.insert(a, i);
                    let seed = combine(combine(seed, TAG_VAR_DEF), i);
                    return Prelude::Children {
                        o,
                        e,
                        seed,
                        memo: 0,
                    };
                }
                seed = combine(seed, TAG_FREE_VAR);
            }
            StructuralKind::Tree | StructuralKind::Dag => {}
        }
        let mut memo = 0;
        if shared(o) {
            // The hash of an object depends on whether it is under a definition and on
            // how many mutable containers enclose it (the cut-off below): both go into
            // the key, in the address's low bits (objects are 8-aligned).
            let key = a | usize::from(def) | (usize::from(nest) << 1);
            match self.memo.get(key) {
                Some(Some(h)) => {
                    // Computed earlier in this walk: context-free if nothing made any
                    // hash depend on its context so far; else it may carry such a
                    // dependence (a bound variable inside), and so does what holds it.
                    if self.events > 0 {
                        self.events += 1;
                    }
                    return Prelude::Done(h);
                }
                Some(None) => {
                    self.events += 1;
                    return Prelude::Done(combine(seed, TAG_CYCLE));
                }
                None => {
                    self.memo.set(key, None);
                    memo = key;
                }
            }
        }
        Prelude::Children { o, e, seed, memo }
    }

    #[inline(always)]
    fn children(
        &mut self,
        o: &'a ObjectRef,
        e: Entry<'a>,
        seed: u64,
        def: bool,
        nest: u8,
        memo: usize,
    ) {
        if e.builtin {
            let contents = self.builtin_contents(o, e);
            return self.contents(contents, seed, def, nest, memo);
        }
        let at = self.stack.len();
        self.stack.push(HTask::Combine { seed, n: 0, memo });
        let base = self.stack.len();
        let mut h = seed;
        let mut n = 0;
        let plan = e.plan;
        for (f, v) in plan.views(e.d) {
            match v {
                ValueRef::Value(av) => h = combine(h, leaf_hash(plain(av))),
                ValueRef::Str(s) => h = combine(h, hash_bytes(TAG_STR, s.as_bytes())),
                ValueRef::Object(o) => {
                    ObjectPtr::prefetch(o);
                    self.stack.push(HTask::Visit {
                        v,
                        def: def || f.def,
                        nest,
                    });
                    n += 1;
                }
            }
        }
        if n == 0 {
            // Plain fields only (a literal): no child to wait for.
            self.stack.truncate(at);
            return self.done(h, memo);
        }
        self.stack[base..].reverse();
        self.stack[at] = HTask::Combine { seed: h, n, memo };
    }

    /// What a built-in (`e.builtin`) shows of itself: its hooks' contents, or its
    /// identity for an opaque type without hooks.
    fn builtin_contents(&self, o: &'a ObjectRef, e: Entry<'a>) -> Contents<'a> {
        match e.d.reflection().structural.hooks {
            Some(hooks) => (hooks.contents)(o, &self.opts),
            None => Contents::Identity,
        }
    }

    /// Hashes a built-in's `contents` on the work stack (its hash pushed on the values,
    /// or its children's visits pushed before a combine).
    fn contents(&mut self, contents: Contents<'a>, seed: u64, def: bool, nest: u8, memo: usize) {
        let mut contents = contents;
        let mut nest = nest;
        if let Contents::SnapshotItems(_) | Contents::SnapshotEntries(_) | Contents::Tensor(_) =
            contents
        {
            // (Contents that may change: no hash of what holds them is kept.)
            self.events += 1;
        }
        if let Contents::SnapshotItems(_) | Contents::SnapshotEntries(_) = contents {
            if nest >= MAX_NEST {
                // Deep enough: a mutable container this far down counts by its type and
                // length only, so that a cycle through mutable containers ends.
                let len = match &contents {
                    Contents::SnapshotItems(v) => v.len(),
                    Contents::SnapshotEntries(v) => v.len(),
                    _ => 0,
                };
                return self.done(combine(combine(seed, TAG_CUT), len as u64), memo);
            }
            nest += 1;
            contents = hold(&mut self.keep, contents);
        }
        match contents {
            Contents::Items(items) => {
                self.stack.push(HTask::Combine {
                    seed: combine(seed, items.len() as u64),
                    n: items.len(),
                    memo,
                });
                let base = self.stack.len();
                for x in items {
                    self.stack.push(HTask::Visit {
                        v: ValueRef::from_any(x),
                        def,
                        nest,
                    });
                }
                self.stack[base..].reverse();
            }
            Contents::Entries(mut entries) => {
                // A canonical order where keys are values, so that variables met in the
                // entries are numbered alike whatever the insertion order.
                entries.sort_by_key(|(k, _)| match classify(ValueRef::from_any(k)) {
                    Node::Leaf(l) => leaf_hash(l),
                    Node::Obj(_) => 0,
                });
                self.stack.push(HTask::Unordered {
                    seed: combine(seed, entries.len() as u64),
                    n: entries.len(),
                    memo,
                });
                let base = self.stack.len();
                for (k, v) in entries {
                    self.stack.push(HTask::Visit {
                        v: ValueRef::from_any(k),
                        def,
                        nest,
                    });
                    self.stack.push(HTask::Visit {
                        v: ValueRef::from_any(v),
                        def,
                        nest,
                    });
                }
                self.stack[base..].reverse();
            }
            Contents::Ints(xs) => self.done(ints_hash(seed, xs), memo),
            Contents::Bytes(b) => self.done(combine(seed, hash_bytes(TAG_BYTES, &b)), memo),
            Contents::Tensor(tc) => {
                let mut h = combine(seed, dtype_bits(tc.dtype));
                h = ints_hash(h, tc.shape);
                h = match &tc.data {
                    TensorData::Bytes(b) => combine(h, hash_bytes(TAG_BYTES, b)),
                    TensorData::Skipped => h,
                    TensorData::Unreadable => combine(h, TAG_TENSOR_UNREAD),
                };
                self.done(h, memo);
            }
            Contents::Identity => self.done(combine(seed, TAG_IDENTITY), memo),
            // Made borrowed above.
            Contents::SnapshotItems(_) | Contents::SnapshotEntries(_) => {
                self.done(combine(seed, TAG_IDENTITY), memo)
            }
        }
    }
}

/// A snapshot (of a `List` or `Dict`), kept in `keep` for the rest of the walk and seen
/// as borrowed contents; other contents as they are.
fn hold<'a>(keep: &mut Keeper<'a>, c: Contents<'a>) -> Contents<'a> {
    match c {
        Contents::SnapshotItems(items) => Contents::Items(keep.items(items)),
        Contents::SnapshotEntries(entries) => {
            Contents::Entries(keep.entries(entries).iter().map(|(k, v)| (k, v)).collect())
        }
        other => other,
    }
}
