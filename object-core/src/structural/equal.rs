//! The equality engine, [`EqEngine`]: pairs of values compared in walk order, the top
//! `RECURSION_BUDGET` levels by recursion and deeper subtrees on a work stack of pairs
//! (neither in proportion to depth: the deepest graph costs heap, and a bounded amount
//! of stack). It keeps the bindings of variables (and the pairings of DAG nodes) both
//! ways, the pairs of shared objects met so far (so a DAG costs its size and a cycle
//! ends), and compares tree types' objects in place (see `walk.rs`). Map entries are
//! matched by key ([`KeyId`]: the identity of an object key, through its binding, the
//! value of the others). With paths tracked (`first_mismatch`) it reports where the
//! two sides first differ.

use std::collections::HashMap;

use super::hooks::{self, Contents, TensorData};
use super::in_place_stack::InPlaceStack;
use super::path::{PathStep, Paths};
use super::plan::{Child, PairStep, PlanField, TreePair};
use super::snapshot::{Keeper, Snapshots};
use super::walk::{
    classify, float_bits, hold, plain, shared, Entry, Leaf, Node, TreeTypes, TypeEntries,
    RECURSION_BUDGET, TREE_FRAMES,
};
use super::{StructuralKind, StructuralOptions};
use crate::addr_map::{addr, AddrMap, AddrSet, BuildAddrHasher};
use crate::any::Any;
use crate::builtin::BuiltinHooks;
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::reflection::ValueRef;
use crate::type_index as ti;

/// Floats: bitwise, except that every NaN equals every NaN (so `-0.0 != 0.0`).
#[inline(always)]
fn float_eq(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[inline(always)]
pub(super) fn leaf_eq(a: Leaf<'_>, b: Leaf<'_>) -> bool {
    match (a, b) {
        (Leaf::Plain(t, x), Leaf::Plain(u, y)) => t == u && x == y,
        (Leaf::Float(x), Leaf::Float(y)) => float_eq(x, y),
        (Leaf::Str(x), Leaf::Str(y)) => x == y,
        (Leaf::Bytes(x), Leaf::Bytes(y)) => x == y,
        _ => false,
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

/// Whether some type linked into the program is `structural = "dag"` (decided once: a
/// type registered at run time has the reflection of a linked Rust type). Identical
/// subtrees below the root are skipped only when none is, because a skipped subtree
/// would hide the pairings of the DAG nodes inside it.
pub(super) fn any_dag_type() -> bool {
    static ANY: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ANY.get_or_init(|| {
        inventory::iter::<crate::registry::LinkedType>
            .into_iter()
            .any(|t| t.0.reflection.structural_kind() == StructuralKind::Dag)
    })
}

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
            return match e.d.reflection().builtin() {
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

    /// `children` of `pair`, a pair of objects of a tree type (see [`TreeType`](super::plan::TreeType)), met at
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
        h: &'static BuiltinHooks,
        lo: &'a ObjectRef,
        ro: &'a ObjectRef,
        t: &Task<'a, P::Id>,
        depth: u32,
    ) -> Result<(), Mismatch<P::Id>> {
        let lc = self.hold(hooks::contents(h, lo, &self.opts));
        let rc = self.hold(hooks::contents(h, ro, &self.opts));
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
