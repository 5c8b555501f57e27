//! The generic mutator: [`Rewriter`], [`mutate`], and [`RewriteTable`] (per-type
//! rewrites on a [`TypeDispatch`]). [`mutate`] recurses a bounded number of levels,
//! then continues on an explicit stack; [`map_children`] rewrites one node's children.

use core::fmt;

use super::children::{plan_children, push_children, rebuild_node, Plan};
use super::dispatch::TypeDispatch;
use super::rebuild::{ChildRef, Children};
use super::TransformError;
use crate::addr_map::{addr, AddrMap};
use crate::object_type::ObjectType;
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::reflection::ValueRef;

/// A pass run by [`mutate`]: the default rule rewrites every child and rebuilds a node
/// only when one of its children changed (otherwise the node itself is kept); the two
/// hooks override it where the pass wants.
///
/// The hooks are TVM's `ExprMutator::VisitExpr_` overrides, without recursion:
/// [`pre`](Self::pre) runs before the children (return a replacement to skip them),
/// [`post`](Self::post) after the default rule has rewritten them, with the node as that
/// rule left it ("rewrite my children, then …"). Keep scoped state (bound variables)
/// by pushing in `pre` and popping in `post`.
pub trait Rewriter {
    /// The pass's error: anything a [`TransformError`] converts into.
    type Error: From<TransformError>;

    /// Called when the walk reaches `node` (the original). `Ok(Some(new))` replaces the
    /// node with `new` without visiting its children (`post` is not called);
    /// `Ok(None)` applies the default rule.
    ///
    /// # Errors
    ///
    /// The pass's own: the walk stops and [`mutate`] returns it.
    #[inline]
    fn pre(&mut self, node: &ObjectRef) -> Result<Option<ObjectRef>, Self::Error> {
        let _ = node;
        Ok(None)
    }

    /// Called after `original`'s children were rewritten: `node` is `original` itself
    /// (the same object) if none changed, else a copy holding the new children. What it
    /// returns replaces `original` in the result.
    ///
    /// # Errors
    ///
    /// The pass's own: the walk stops and [`mutate`] returns it.
    #[inline]
    fn post(&mut self, node: ObjectRef, original: &ObjectRef) -> Result<ObjectRef, Self::Error> {
        let _ = original;
        Ok(node)
    }
}

/// Rewrites the graph under `root` with `r`, bottom-up, without recursion (an explicit
/// stack: a 10,000,000-deep graph is rewritten on a 2 MiB thread).
///
/// - A node none of whose children changed is kept: the result is the very same object
///   (pointer-equal) unless a hook replaced it.
/// - Sharing is kept: a node reached more than once is rewritten once and every parent
///   gets the same result (memoized by address for this call, only for nodes whose
///   count says they may be shared).
/// - A changed node is rebuilt through its type's derive-generated rebuild (or a
///   container's hooks); run-time types keep their type index.
///
/// # Errors
///
/// A [`TransformError`] (converted into `R::Error`) of kind
/// [`WrongChildType`](super::TransformErrorKind::WrongChildType) if a new child does not
/// fit its field (a `Stmt` where the field is `ObjectPtr<Expr>`), or
/// [`NotRebuildable`](super::TransformErrorKind::NotRebuildable); or an error of the
/// pass's hooks. Nothing is leaked on error.
///
/// # Examples
///
/// ```
/// use object_core::prelude::*;
/// use object_core::transform::{mutate, Rewriter, TransformError};
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.mut.Expr")]
/// struct Expr { base: Object }
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.mut.Int", parent = Expr)]
/// struct Int { base: Expr, value: i64 }
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.mut.Add", parent = Expr)]
/// struct Add { base: Expr, lhs: ObjectPtr<Expr>, rhs: ObjectPtr<Expr> }
///
/// fn int(v: i64) -> ObjectPtr<Expr> {
///     make_object(Int { base: Expr { base: Object::new() }, value: v }).upcast()
/// }
/// fn add(l: ObjectPtr<Expr>, r: ObjectPtr<Expr>) -> ObjectPtr<Expr> {
///     make_object(Add { base: Expr { base: Object::new() }, lhs: l, rhs: r }).upcast()
/// }
///
/// // Constant folding: after the children are folded, an `Add` of two `Int`s is an `Int`.
/// struct Fold;
/// impl Rewriter for Fold {
///     type Error = TransformError;
///     fn post(&mut self, node: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
///         if let Some(a) = node.downcast_ref::<Add>() {
///             if let (Some(l), Some(r)) = (a.lhs.downcast_ref::<Int>(), a.rhs.downcast_ref::<Int>()) {
///                 return Ok(int(l.value + r.value).into_object_ref());
///             }
///         }
///         Ok(node)
///     }
/// }
///
/// let e = add(int(1), add(int(2), int(3))).into_object_ref();
/// let folded = mutate(&e, &mut Fold).unwrap();
/// assert_eq!(folded.downcast_ref::<Int>().map(|i| i.value), Some(6));
///
/// // A pass that changes nothing returns the very same object.
/// struct Nothing;
/// impl Rewriter for Nothing {
///     type Error = TransformError;
/// }
/// assert!(ObjectPtr::ptr_eq(&mutate(&e, &mut Nothing).unwrap(), &e));
/// ```
pub fn mutate<R: Rewriter + ?Sized>(root: &ObjectRef, r: &mut R) -> Result<ObjectRef, R::Error> {
    Engine::new().run(root, r)
}

/// `node` with each direct child object `c` (the objects [`for_each_child`] gives, in
/// its order) replaced by `f(c)`: the very same object if every `f(c)` is `c` itself
/// (pointer-equal), otherwise a copy through the type's [`Rebuild`] (or a container's
/// hooks) with the new children. One level only, and no walk state: the step a pass
/// takes at one node (rewrite the arguments of this call, say) without starting a
/// [`mutate`] for it.
///
/// [`for_each_child`]: super::for_each_child
/// [`Rebuild`]: super::Rebuild
///
/// # Errors
///
/// A [`TransformError`] of kind
/// [`WrongChildType`](super::TransformErrorKind::WrongChildType) if a new child does not
/// fit its field, or [`NotRebuildable`](super::TransformErrorKind::NotRebuildable) if
/// a child changed and the type has no rebuild.
///
/// ```
/// use object_core::prelude::*;
/// use object_core::transform::map_children;
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.mapc.Expr")]
/// struct Expr { base: Object }
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.mapc.Int", parent = Expr)]
/// struct Int { base: Expr, value: i64 }
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.mapc.Add", parent = Expr)]
/// struct Add { base: Expr, lhs: ObjectPtr<Expr>, rhs: ObjectPtr<Expr> }
///
/// let (one, two) = (Int::new(1).upcast::<Expr>(), Int::new(2).upcast::<Expr>());
/// let sum = Add::new(one.clone(), two).into_object_ref();
///
/// // Double every integer child: a new `Add`, the old one untouched.
/// let doubled = map_children(&sum, |c| match c.downcast_ref::<Int>() {
///     Some(i) => Int::new(2 * i.value).into_object_ref(),
///     None => c.clone(),
/// })?;
/// let add = doubled.downcast_ref::<Add>().unwrap();
/// assert_eq!(add.rhs.downcast_ref::<Int>().map(|i| i.value), Some(4));
///
/// // Nothing changed: the very same object.
/// let same = map_children(&sum, |c| c.clone())?;
/// assert!(ObjectPtr::ptr_eq(&same, &sum));
/// # Ok::<(), object_core::transform::TransformError>(())
/// ```
pub fn map_children(
    node: &ObjectRef,
    mut f: impl FnMut(&ObjectRef) -> ObjectRef,
) -> Result<ObjectRef, TransformError> {
    let plan = Plan::of_object(node);
    // Nothing is collected until a child changes (the common case allocates nothing):
    // `unchanged` counts the children before the first change, and `kids` holds the
    // results from there on.
    let mut unchanged = 0usize;
    let mut kids = Vec::new();
    plan_children(plan, node, &mut |c| {
        let new = f(c.get());
        if kids.is_empty() && addr(&new) == addr(c.get()) {
            unchanged += 1;
        } else {
            kids.push(new);
        }
    });
    if kids.is_empty() {
        return Ok(node.clone());
    }
    // The unchanged children before the first change, then the results from it on.
    let mut all = Vec::with_capacity(unchanged + kids.len());
    plan_children(plan, node, &mut |c| {
        if all.len() < unchanged {
            all.push(c.get().clone());
        }
    });
    all.append(&mut kids);
    let out = rebuild_node(plan, node, &mut Children::new(all.drain(..)));
    out
}

/// How deep [`mutate`] recurses before it continues with its explicit stack: a bound
/// (not proportional to the graph's depth), so that shallow graphs take the cheaper
/// recursive path and deep ones still run in constant stack.
const RECURSION_LIMIT: u32 = 96;

/// A node whose children are being rewritten on the explicit stack.
struct Frame<'a> {
    node: ChildRef<'a>,
    /// `pending.len()` once its children were taken: when it is back to that, every
    /// child has its result.
    mark: usize,
    /// Where its children's results start in `results`.
    start: usize,
    shared: bool,
    /// Whether a child's result differs from the child.
    changed: bool,
}

/// The walk's state: results (a stack: a node's children's results, in order, end up
/// on top of it), and for the part below [`RECURSION_LIMIT`], nodes waiting to be
/// entered (`pending`, the next on top) and nodes whose children are in progress
/// (`frames`).
struct Engine<'a> {
    pending: Vec<ChildRef<'a>>,
    frames: Vec<Frame<'a>>,
    results: Vec<ObjectRef>,
    memo: AddrMap<ObjectRef>,
    /// Containers whose items are being rewritten (their frames are open): reaching
    /// one again means a cycle, which only containers (`List`, `Dict`) can close.
    open: AddrMap<()>,
}

impl<'a> Engine<'a> {
    fn new() -> Self {
        Engine {
            pending: Vec::new(),
            frames: Vec::new(),
            results: Vec::new(),
            memo: AddrMap::default(),
            open: AddrMap::default(),
        }
    }

    fn run<R: Rewriter + ?Sized>(
        mut self,
        root: &'a ObjectRef,
        r: &mut R,
    ) -> Result<ObjectRef, R::Error> {
        self.recurse(root, 0, r)?;
        // The root's result is the only one left.
        match self.results.pop() {
            Some(out) => Ok(out),
            None => Err(TransformError::not_rebuildable(root.type_key()).into()),
        }
    }

    /// Rewrites `node`, recursing into its children while `depth` is below the limit
    /// and handing deeper subtrees (and containers) to [`iterate`](Self::iterate).
    /// Pushes the result; returns whether it differs from `node`.
    fn recurse<R: Rewriter + ?Sized>(
        &mut self,
        node: &'a ObjectRef,
        depth: u32,
        r: &mut R,
    ) -> Result<bool, R::Error> {
        let plan = Plan::of_object(node);
        if depth >= RECURSION_LIMIT || matches!(plan, Plan::Container(_)) {
            return self.iterate(ChildRef::Borrowed(node), r);
        }
        // A node held once (count 1) cannot be reached again: no memo for it.
        let shared = ObjectPtr::strong_count(node) > 1;
        if shared {
            if let Some(done) = self.memo.get(&addr(node)) {
                let done = done.clone();
                return Ok(self.push_result(node, done, false));
            }
        }
        if let Some(new) = r.pre(node)? {
            return Ok(self.push_result(node, new, shared));
        }
        let start = self.results.len();
        let mut changed = false;
        if let Plan::Fields { desc, kids } = plan {
            if let Some(d) = desc.describe(node) {
                for &k in kids {
                    if let Some(ValueRef::Object(child)) = d.view_at(usize::from(k)) {
                        changed |= self.recurse(child, depth + 1, r)?;
                    }
                }
            }
        }
        let kept = self.kept(plan, node, start, changed)?;
        let new = r.post(kept, node)?;
        Ok(self.push_result(node, new, shared))
    }

    /// Rewrites `node` with the explicit stack (no recursion). Pushes the result;
    /// returns whether it differs from `node`.
    fn iterate<R: Rewriter + ?Sized>(
        &mut self,
        node: ChildRef<'a>,
        r: &mut R,
    ) -> Result<bool, R::Error> {
        let base_frames = self.frames.len();
        let base_pending = self.pending.len();
        let mut root_changed = false;
        self.pending.push(node);
        loop {
            let changed = match self.frames.last() {
                Some(top) if self.frames.len() > base_frames && top.mark == self.pending.len() => {
                    let frame = self.frames.pop().expect("a frame is on top");
                    self.exit(frame, r)?
                }
                _ => {
                    if self.pending.len() == base_pending {
                        break;
                    }
                    let node = self.pending.pop().expect("a node is pending");
                    match self.enter(node, r)? {
                        Some(changed) => changed,
                        // Its children are pending now.
                        None => continue,
                    }
                }
            };
            // Tell the parent (or, for the subtree's root, the caller).
            if self.frames.len() > base_frames {
                if let Some(parent) = self.frames.last_mut() {
                    parent.changed |= changed;
                }
            } else {
                root_changed = changed;
            }
        }
        Ok(root_changed)
    }

    /// Enters `node` on the explicit stack: `Some(changed)` once its result is pushed
    /// (memoized, replaced by `pre`, or without children), `None` if its children are
    /// pending.
    #[inline(always)]
    fn enter<R: Rewriter + ?Sized>(
        &mut self,
        node: ChildRef<'a>,
        r: &mut R,
    ) -> Result<Option<bool>, R::Error> {
        // A node held once (count 1, not a snapshot) cannot be reached again: no memo.
        let shared = match &node {
            ChildRef::Borrowed(n) => ObjectPtr::strong_count(n) > 1,
            ChildRef::Owned(_) => true,
        };
        if shared {
            if let Some(done) = self.memo.get(&addr(node.get())) {
                let done = done.clone();
                return Ok(Some(self.push_result(node.get(), done, false)));
            }
        }
        if let Some(new) = r.pre(node.get())? {
            return Ok(Some(self.push_result(node.get(), new, shared)));
        }
        let mark = self.pending.len();
        let plan = Plan::of_object(node.get());
        let container = matches!(plan, Plan::Container(_));
        if container && self.open.insert(addr(node.get()), ()).is_some() {
            return Err(TransformError::cycle(node.get().type_key()).into());
        }
        match &node {
            ChildRef::Borrowed(n) => push_children(plan, n, &mut self.pending),
            ChildRef::Owned(o) => {
                let pending = &mut self.pending;
                plan_children(plan, o, &mut |c| {
                    pending.push(ChildRef::Owned(c.get().clone()));
                });
                pending[mark..].reverse();
            }
        }
        if self.pending.len() == mark {
            if container {
                self.open.remove(&addr(node.get()));
            }
            // No children: the fast path.
            let kept = node.get().clone();
            let new = r.post(kept, node.get())?;
            return Ok(Some(self.push_result(node.get(), new, shared)));
        }
        self.frames.push(Frame {
            node,
            mark,
            start: self.results.len(),
            shared,
            changed: false,
        });
        Ok(None)
    }

    /// Leaves a frame whose children all have results: pushes its result, returns
    /// whether it differs from the node.
    #[inline(always)]
    fn exit<R: Rewriter + ?Sized>(
        &mut self,
        frame: Frame<'a>,
        r: &mut R,
    ) -> Result<bool, R::Error> {
        let plan = Plan::of_object(frame.node.get());
        if matches!(plan, Plan::Container(_)) {
            self.open.remove(&addr(frame.node.get()));
        }
        let kept = self.kept(plan, frame.node.get(), frame.start, frame.changed)?;
        let new = r.post(kept, frame.node.get())?;
        Ok(self.push_result(frame.node.get(), new, frame.shared))
    }

    /// `node` as the default rule leaves it, given its children's results (from
    /// `start` on): itself if none changed, else a rebuilt copy. Takes the results.
    #[inline(always)]
    fn kept(
        &mut self,
        plan: Plan,
        node: &ObjectRef,
        start: usize,
        changed: bool,
    ) -> Result<ObjectRef, TransformError> {
        if changed {
            let mut children = Children::new(self.results.drain(start..));
            rebuild_node(plan, node, &mut children)
        } else {
            self.results.truncate(start);
            Ok(node.clone())
        }
    }

    /// Pushes `new` as the result for `original` (memoized if `original` may be
    /// shared); returns whether it differs from `original`.
    #[inline(always)]
    fn push_result(&mut self, original: &ObjectRef, new: ObjectRef, memo: bool) -> bool {
        let changed = addr(&new) != addr(original);
        if memo {
            self.memo.insert(addr(original), new.clone());
        }
        self.results.push(new);
        changed
    }
}

type PreHook<S> =
    Box<dyn Fn(&mut S, &ObjectRef) -> Result<Option<ObjectRef>, TransformError> + Send + Sync>;
type PostHook<S> =
    Box<dyn Fn(&mut S, ObjectRef, &ObjectRef) -> Result<ObjectRef, TransformError> + Send + Sync>;

/// A [`Rewriter`] made of per-type hooks on [`TypeDispatch`] tables (a hook for a type
/// applies to its descendants without one), sharing a state `S` that every hook gets as
/// `&mut S`. Types without hooks follow the default rule.
///
/// ```
/// use object_core::prelude::*;
/// use object_core::transform::RewriteTable;
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.table.Expr")]
/// struct Expr { base: Object }
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.table.Var", parent = Expr)]
/// struct Var { base: Expr, name: String }
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.table.Neg", parent = Expr)]
/// struct Neg { base: Expr, arg: ObjectPtr<Expr> }
///
/// fn var(n: &str) -> ObjectPtr<Expr> {
///     make_object(Var { base: Expr { base: Object::new() }, name: n.into() }).upcast()
/// }
///
/// // Rename `x` to `y`, counting the renames in the state.
/// let mut t: RewriteTable<usize> = RewriteTable::new();
/// t.post::<Var>(|count, v, _| {
///     if v.name == "x" {
///         *count += 1;
///         return Ok(var("y").into_object_ref());
///     }
///     Ok(v.into_object_ref())
/// });
/// let e = make_object(Neg { base: Expr { base: Object::new() }, arg: var("x") }).into_object_ref();
/// let mut renamed = 0;
/// let out = t.run(&e, &mut renamed).unwrap();
/// assert_eq!(renamed, 1);
/// let arg = &out.downcast_ref::<Neg>().unwrap().arg;
/// assert_eq!(arg.downcast_ref::<Var>().unwrap().name, "y");
/// ```
pub struct RewriteTable<S> {
    pre: TypeDispatch<PreHook<S>>,
    post: TypeDispatch<PostHook<S>>,
}

impl<S> Default for RewriteTable<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S> fmt::Debug for RewriteTable<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RewriteTable")
            .field("pre", &self.pre)
            .field("post", &self.post)
            .finish()
    }
}

impl<S> RewriteTable<S> {
    /// No hooks: the identity pass.
    pub fn new() -> Self {
        RewriteTable {
            pre: TypeDispatch::new(),
            post: TypeDispatch::new(),
        }
    }

    /// Sets the hook run before the children of `T` nodes (see [`Rewriter::pre`]);
    /// `Ok(Some(new))` replaces the node without visiting its children.
    pub fn pre<T: ObjectType>(
        &mut self,
        f: impl Fn(&mut S, &ObjectPtr<T>) -> Result<Option<ObjectRef>, TransformError>
            + Send
            + Sync
            + 'static,
    ) -> &mut Self {
        self.pre.set_dispatch::<T>(Box::new(move |s, node| {
            match node.downcast_ptr_ref::<T>() {
                Some(n) => f(s, n),
                None => Ok(None),
            }
        }));
        self
    }

    /// Sets the hook run after the children of `T` nodes were rewritten (see
    /// [`Rewriter::post`]): it gets the node as the default rule left it (the original
    /// if no child changed) and the original.
    pub fn post<T: ObjectType>(
        &mut self,
        f: impl Fn(&mut S, ObjectPtr<T>, &ObjectRef) -> Result<ObjectRef, TransformError>
            + Send
            + Sync
            + 'static,
    ) -> &mut Self {
        self.post
            .set_dispatch::<T>(Box::new(move |s, node, orig| match node.downcast::<T>() {
                Ok(n) => f(s, n, orig),
                // A hook's type matched the original; a rebuilt copy has the same type.
                Err(n) => Ok(n),
            }));
        self
    }

    /// Rewrites `root` with these hooks and `state` (see [`mutate`]).
    ///
    /// # Errors
    ///
    /// As [`mutate`], and the hooks' errors.
    pub fn run(&self, root: &ObjectRef, state: &mut S) -> Result<ObjectRef, TransformError> {
        let mut r = TableRewriter { table: self, state };
        mutate(root, &mut r)
    }
}

struct TableRewriter<'t, S> {
    table: &'t RewriteTable<S>,
    state: &'t mut S,
}

impl<S> Rewriter for TableRewriter<'_, S> {
    type Error = TransformError;

    #[inline]
    fn pre(&mut self, node: &ObjectRef) -> Result<Option<ObjectRef>, TransformError> {
        match self.table.pre.get(node) {
            Some(f) => f(self.state, node),
            None => Ok(None),
        }
    }

    #[inline]
    fn post(&mut self, node: ObjectRef, original: &ObjectRef) -> Result<ObjectRef, TransformError> {
        match self.table.post.get(original) {
            Some(f) => f(self.state, node, original),
            None => Ok(node),
        }
    }
}
