//! The hashing engine, [`HashEngine`]: values hashed with their fields combined in
//! walk order, the top `RECURSION_BUDGET` levels by recursion and deeper subtrees on a
//! work stack of visits and combines (with a stack of child hashes), in the same
//! order, so the number is the same either way. It numbers variables in the order they
//! are bound, keeps the hashes of shared objects met so far ([`Memo`]: a DAG costs its
//! size, a cycle hashes as a cycle tag), cuts the unfolding at [`MAX_NEST`] nested
//! mutable containers, and hashes tree types' objects in place (see `walk.rs`).
//!
//! # The subtree cache
//!
//! [`SubtreeHashes`], behind `StructuralHashCache`, keeps the hashes of objects that
//! depend on nothing but the object, by address with a handle to the object, so that
//! keying every subexpression of a program costs O(n).

use super::hooks::{self, Contents, TensorData};
use super::in_place_stack::InPlaceStack;
use super::plan::{InPlaceValue, TreeFields, TreeType};
use super::snapshot::{Keeper, Snapshots};
use super::stable::{
    combine, finish, hash_bytes, TAG_BYTES, TAG_CUT, TAG_CYCLE, TAG_FREE_VAR, TAG_IDENTITY,
    TAG_NONE, TAG_STR, TAG_TENSOR_UNREAD, TAG_VAR_DEF, TAG_VAR_USE,
};
use super::walk::{
    classify, float_bits, hold, plain, shared, Entry, Leaf, Node, TreeTypes, TypeEntries,
    RECURSION_BUDGET, TREE_FRAMES,
};
use super::{StructuralKind, StructuralOptions};
use crate::addr_map::{addr, AddrMap};
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::reflection::ValueRef;
use crate::type_index as ti;

#[inline(always)]
pub(super) fn leaf_hash(l: Leaf<'_>) -> u64 {
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

pub(super) fn ints_hash(seed: u64, xs: &[i64]) -> u64 {
    let mut h = combine(seed, xs.len() as u64);
    for x in xs {
        h = combine(h, *x as u64);
    }
    h
}

fn dtype_bits(d: crate::dtype::DataType) -> u64 {
    u64::from(d.code) | (u64::from(d.bits) << 8) | (u64::from(d.lanes) << 16)
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
            if let Contents::Identity = contents {
                // Equal only to itself (an opaque built-in, say a function): the number
                // `children` gives it on the work stack.
                let h = self.identity_hash(seed, addr(o));
                if memo != 0 {
                    self.memo.set(memo, Some(h));
                }
                return (h, false);
            }
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

    /// The hash of an object equal only to itself (of an `identity` type, or an opaque
    /// type without hooks), seeded with its type: by its address, unless the options ask
    /// for content only (then by its type alone, the same in every process).
    #[inline]
    fn identity_hash(&self, seed: u64, a: usize) -> u64 {
        let h = combine(seed, TAG_IDENTITY);
        if self.opts.hashes_content_only() {
            h
        } else {
            combine(h, a as u64)
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
                return Prelude::Done(self.identity_hash(seed, a));
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
                if !self.opts.hashes_content_only() {
                    // Equal only to itself: its identity is its hash.
                    return Prelude::Done(combine(combine(seed, TAG_FREE_VAR), a as u64));
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
            if let Contents::Identity = contents {
                return self.done(self.identity_hash(seed, addr(o)), memo);
            }
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
    #[inline(always)]
    fn builtin_contents(&self, o: &'a ObjectRef, e: Entry<'a>) -> Contents<'a> {
        match e.d.reflection().builtin() {
            Some(hooks) => hooks::contents(hooks, o, &self.opts),
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
            // (The callers, which know the object, hash it by identity first.)
            Contents::Identity => self.done(combine(seed, TAG_IDENTITY), memo),
            // Made borrowed above.
            Contents::SnapshotItems(_) | Contents::SnapshotEntries(_) => {
                self.done(combine(seed, TAG_IDENTITY), memo)
            }
        }
    }
}
