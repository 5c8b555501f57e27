//! The generic mutator: [`Rewriter`], [`mutate`], and [`RewriteTable`] (per-type
//! rewrites on a [`TypeDispatch`]). [`mutate`] recurses a bounded number of levels,
//! then continues on an explicit stack; [`map_children`] rewrites one node's children.

use core::fmt;

use super::children::{
    plan_children, push_children, push_owned_children, rebuild_node, Pending, Plan,
};
use super::dispatch::TypeDispatch;
use super::field::{ChildField, Site};
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
/// [`child`](Self::child) before each child (visit it, keep it, or put something else
/// in its place, knowing the field it sits in and its earlier siblings' results),
/// [`post`](Self::post) after the default rule has rewritten them, with the node as that
/// rule left it ("rewrite my children, then …").
///
/// For a node the walk visits (not found in the memo, not replaced by `pre`), the calls
/// come in this order, all within one [`mutate`] call: `pre(node)`, then for each child
/// `child(node, field, child, earlier)` followed, if it says
/// [`Visit`](ChildStep::Visit), by the child's own visit, and last `post(rebuilt, node)`.
/// That is enough for scopes: state pushed in `child` (at a `let`'s body, with the
/// rewritten value among `earlier`) is in force while the body is visited and popped in
/// `post` (see the [module docs](super#scoped-rewrites) for a constant folder with `let`
/// substitution and a dead-`let` eliminator).
///
/// # Memoization under scopes
///
/// A node that may be shared (held more than once) is rewritten once per [`mutate`]
/// call: its result is memoized by address and every later occurrence gets it without
/// any hook being called. A pass whose result for a node depends on its scoped state
/// (a substitution) gets, for a shared node met again in another scope, the first
/// scope's result. That is right when every variable is bound once and used only under
/// its binder (a well-scoped IR: a subtree that mentions `x` is only ever met while `x`
/// is in scope, with the same substitution). Otherwise (the same variable bound twice,
/// shadowing; or a pass that counts occurrences), say which nodes must not use the memo
/// with [`memoize`](Self::memoize): such a node is neither looked up nor stored, so it
/// is rewritten at each occurrence, in that occurrence's scope.
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

    /// Called before each child of a node being visited (after the node's `pre`, in
    /// the order of its children): `parent` is the original node, `field` where `child`
    /// sits in it (the field's name, whether it is a definition site, its position
    /// among the children), and `earlier` the results of the earlier children, already
    /// rewritten (`earlier.len() == field.position()`). The default visits every child.
    ///
    /// - [`ChildStep::Visit`]: rewrite the child as usual (memo, `pre`, its children,
    ///   `post`).
    /// - [`ChildStep::Keep`]: keep it as it is, not visited (a binder at a definition
    ///   site, a subtree the pass leaves alone).
    /// - [`ChildStep::Replace`]: put the given object in its place, not visited (and
    ///   not memoized: the choice is this occurrence's).
    ///
    /// Calls of this hook cost nothing when it is not overridden (the default inlines
    /// away).
    ///
    /// # Errors
    ///
    /// The pass's own: the walk stops and [`mutate`] returns it.
    ///
    /// ```
    /// use object_core::prelude::*;
    /// use object_core::transform::{mutate, ChildField, ChildStep, Rewriter, TransformError};
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.rc.Expr")]
    /// struct Expr { base: Object }
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.rc.Int", parent = Expr)]
    /// struct Int { base: Expr, value: i64 }
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.rc.Pair", parent = Expr)]
    /// struct Pair { base: Expr, first: ObjectPtr<Expr>, second: ObjectPtr<Expr> }
    ///
    /// // Negate every integer, except in a pair's `second` when the pair's rewritten
    /// // `first` is 0: that child is kept as it is.
    /// struct Negate;
    /// impl Rewriter for Negate {
    ///     type Error = TransformError;
    ///     fn child(
    ///         &mut self,
    ///         _: &ObjectRef,
    ///         field: ChildField,
    ///         _: &ObjectRef,
    ///         earlier: &[ObjectRef],
    ///     ) -> Result<ChildStep, TransformError> {
    ///         let zero = earlier.first().and_then(|e| e.downcast_ref::<Int>()).is_some_and(|i| i.value == 0);
    ///         Ok(if field.name() == Some("second") && zero { ChildStep::Keep } else { ChildStep::Visit })
    ///     }
    ///     fn post(&mut self, node: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
    ///         Ok(match node.downcast_ref::<Int>() {
    ///             Some(i) => Int::new(-i.value).into_object_ref(),
    ///             None => node,
    ///         })
    ///     }
    /// }
    /// let value = |e: &ObjectRef, f: fn(&Pair) -> &ObjectPtr<Expr>| {
    ///     f(e.downcast_ref::<Pair>().unwrap()).downcast_ref::<Int>().unwrap().value
    /// };
    /// let p = Pair::new(Int::new(0), Int::new(5)).into_object_ref();
    /// let out = mutate(&p, &mut Negate)?;
    /// assert_eq!((value(&out, |p| &p.first), value(&out, |p| &p.second)), (0, 5));
    /// let p = Pair::new(Int::new(1), Int::new(5)).into_object_ref();
    /// let out = mutate(&p, &mut Negate)?;
    /// assert_eq!((value(&out, |p| &p.first), value(&out, |p| &p.second)), (-1, -5));
    /// # Ok::<(), TransformError>(())
    /// ```
    #[inline]
    fn child(
        &mut self,
        parent: &ObjectRef,
        field: ChildField,
        child: &ObjectRef,
        earlier: &[ObjectRef],
    ) -> Result<ChildStep, Self::Error> {
        let _ = (parent, field, child, earlier);
        Ok(ChildStep::Visit)
    }

    /// Whether `node`'s result may come from, and go into, the memo (see [Memoization
    /// under scopes](Self#memoization-under-scopes)). Asked only for a node that may be
    /// shared (held more than once), when the walk reaches it, before `pre`; the
    /// default is `true`. `false`: the node is rewritten here as if met for the first
    /// time, and its result is not kept for later occurrences.
    ///
    /// ```
    /// use object_core::prelude::*;
    /// use object_core::transform::{mutate, Rewriter, TransformError};
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.memo.Pair")]
    /// struct Pair { base: Object, a: ObjectRef, b: ObjectRef }
    ///
    /// // Counts the visits of the plain objects (`pre` runs once per visit).
    /// struct Count { visits: usize, memo: bool }
    /// impl Rewriter for Count {
    ///     type Error = TransformError;
    ///     fn pre(&mut self, node: &ObjectRef) -> Result<Option<ObjectRef>, TransformError> {
    ///         self.visits += usize::from(!node.is::<Pair>());
    ///         Ok(None)
    ///     }
    ///     fn memoize(&mut self, _: &ObjectRef) -> bool {
    ///         self.memo
    ///     }
    /// }
    /// let leaf = make_object(Object::new()).into_object_ref();
    /// let p = Pair::new(leaf.clone(), leaf).into_object_ref();
    /// let mut once = Count { visits: 0, memo: true };
    /// mutate(&p, &mut once)?;
    /// let mut each = Count { visits: 0, memo: false };
    /// mutate(&p, &mut each)?;
    /// assert_eq!((once.visits, each.visits), (1, 2));
    /// # Ok::<(), TransformError>(())
    /// ```
    #[inline]
    fn memoize(&mut self, node: &ObjectRef) -> bool {
        let _ = node;
        true
    }
}

/// What [`Rewriter::child`] (or a [`RewriteTable`]'s [`child`](RewriteTable::child)
/// hook) decides for one child of a node.
///
/// ```
/// use object_core::prelude::*;
/// use object_core::transform::{ChildStep, RewriteTable};
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.cs.Pair")]
/// struct Pair { base: Object, a: ObjectRef, b: ObjectRef }
///
/// // Put the state's object in every pair's `b`; keep `a` as it is, unvisited.
/// let mut t: RewriteTable<ObjectRef> = RewriteTable::new();
/// t.child::<Pair>(|fresh, _, field, _, _| {
///     Ok(match field.name() {
///         Some("b") => ChildStep::Replace(fresh.clone()),
///         _ => ChildStep::Keep,
///     })
/// });
/// let leaf = || make_object(Object::new()).into_object_ref();
/// let (a, mut fresh) = (leaf(), leaf());
/// let out = t.run(&Pair::new(a.clone(), leaf()).into_object_ref(), &mut fresh)?;
/// let out = out.downcast_ref::<Pair>().unwrap();
/// assert!(ObjectPtr::ptr_eq(&out.a, &a) && ObjectPtr::ptr_eq(&out.b, &fresh));
/// # Ok::<(), object_core::transform::TransformError>(())
/// ```
#[derive(Debug, Clone)]
pub enum ChildStep {
    /// Rewrite the child as usual.
    Visit,
    /// Keep the child as it is, without visiting it: its result is the child itself.
    Keep,
    /// Put this object in the child's place, without visiting the child or the object.
    Replace(ObjectRef),
}

/// Rewrites the graph under `root` with `r`, bottom-up, without recursion (an explicit
/// stack: a 10,000,000-deep graph is rewritten on a 2 MiB thread).
///
/// - A node none of whose children changed is kept: the result is the very same object
///   (pointer-equal) unless a hook replaced it.
/// - Sharing is kept: a node reached more than once is rewritten once and every parent
///   gets the same result (memoized by address for this call, only for nodes whose
///   count says they may be shared, and that [`Rewriter::memoize`] lets in).
/// - The hooks run in one walk: `pre`, then `child` before each child, then `post`;
///   state a pass keeps across them (scopes) needs no nested `mutate` call (see
///   [Scoped rewrites](super#scoped-rewrites)).
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
/// // Constant folding: after the children are folded, an `Add` of two `Int`s is an `Int`.
/// struct Fold;
/// impl Rewriter for Fold {
///     type Error = TransformError;
///     fn post(&mut self, node: ObjectRef, _: &ObjectRef) -> Result<ObjectRef, TransformError> {
///         if let Some(a) = node.downcast_ref::<Add>() {
///             if let (Some(l), Some(r)) = (a.lhs.downcast_ref::<Int>(), a.rhs.downcast_ref::<Int>()) {
///                 return Ok(Int::new(l.value + r.value).into_object_ref());
///             }
///         }
///         Ok(node)
///     }
/// }
///
/// let e = Add::new(Int::new(1), Add::new(Int::new(2), Int::new(3))).into_object_ref();
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
/// (pointer-equal), otherwise a copy through the type's field table (or a container's
/// hooks) with the new children. One level only, and no walk state: the step a pass
/// takes at one node (rewrite the arguments of this call, say) without starting a
/// [`mutate`] for it.
///
/// [`for_each_child`]: super::for_each_child
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
    plan_children(plan, node, &mut |_, c| {
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
    plan_children(plan, node, &mut |_, c| {
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
    /// Children waiting to be entered, with where they sit (for [`Rewriter::child`]).
    pending: Vec<Pending<'a>>,
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
        let shared = ObjectPtr::strong_count(node) > 1 && r.memoize(node);
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
                let mut position = 0;
                for &k in kids {
                    if let Some((info, ValueRef::Object(child))) = d.entry_at(usize::from(k)) {
                        let field = ChildField::new(Site::Field(info), position);
                        position += 1;
                        let earlier = self.results.get(start..).unwrap_or_default();
                        changed |= match r.child(node, field, child, earlier)? {
                            ChildStep::Visit => self.recurse(child, depth + 1, r)?,
                            step => self.push_step(child, step),
                        };
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
        // (The subtree's root: the caller asked `r.child` about it already.)
        self.pending.push(Pending {
            node,
            site: Site::Item(0),
        });
        loop {
            let changed = match self.frames.last() {
                Some(top) if self.frames.len() > base_frames && top.mark == self.pending.len() => {
                    let frame = self.frames.pop().expect("a frame is on top");
                    self.exit(frame, r)?
                }
                parent => {
                    if self.pending.len() == base_pending {
                        break;
                    }
                    let Pending { node, site } = self.pending.pop().expect("a node is pending");
                    // A child of the top frame (every pending node but the subtree's root,
                    // which is alone when no frame of this call is open): ask the pass.
                    let step = match parent {
                        Some(p) if self.frames.len() > base_frames => {
                            // Each earlier sibling left one result above the frame's start.
                            let earlier = self.results.get(p.start..).unwrap_or_default();
                            let field = ChildField::new(site, earlier.len());
                            r.child(p.node.get(), field, node.get(), earlier)?
                        }
                        _ => ChildStep::Visit,
                    };
                    match step {
                        ChildStep::Visit => match self.enter(node, r)? {
                            Some(changed) => changed,
                            // Its children are pending now.
                            None => continue,
                        },
                        step => self.push_step(node.get(), step),
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
        } && r.memoize(node.get());
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
            ChildRef::Owned(o) => push_owned_children(plan, o, &mut self.pending),
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

    /// Pushes the result of a child that [`Rewriter::child`] did not let in (kept, or
    /// replaced: not memoized); returns whether it differs from the child.
    #[inline]
    fn push_step(&mut self, child: &ObjectRef, step: ChildStep) -> bool {
        match step {
            ChildStep::Replace(new) => self.push_result(child, new, false),
            ChildStep::Keep | ChildStep::Visit => {
                self.results.push(child.clone());
                false
            }
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
type ChildHook<S> = Box<
    dyn Fn(
            &mut S,
            &ObjectRef,
            ChildField,
            &ObjectRef,
            &[ObjectRef],
        ) -> Result<ChildStep, TransformError>
        + Send
        + Sync,
>;
type MemoHook<S> = Box<dyn Fn(&S, &ObjectRef) -> bool + Send + Sync>;

/// A [`Rewriter`] made of per-type hooks on [`TypeDispatch`] tables (a hook for a type
/// applies to its descendants without one), sharing a state `S` that every hook gets as
/// `&mut S`. Types without hooks follow the default rule.
///
/// The hooks are [`Rewriter`]'s: [`pre`](Self::pre), [`post`](Self::post), and
/// [`child`](Self::child), per type of the parent, which gives a table scopes: push a
/// binding into `S` at a `let`'s body, substitute in `pre` of a variable, pop in `post`
/// of the `let`, all in one walk with one memo (see the [module
/// docs](super#scoped-rewrites)); [`memoize`](Self::memoize) is the memo's way out.
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
/// // Rename `x` to `y`, counting the renames in the state.
/// let mut t: RewriteTable<usize> = RewriteTable::new();
/// t.post::<Var>(|count, v, _| {
///     if v.name == "x" {
///         *count += 1;
///         return Ok(Var::new("y").into_object_ref());
///     }
///     Ok(v.into_object_ref())
/// });
/// let e = Neg::new(Var::new("x")).into_object_ref();
/// let mut renamed = 0;
/// let out = t.run(&e, &mut renamed).unwrap();
/// assert_eq!(renamed, 1);
/// let arg = &out.downcast_ref::<Neg>().unwrap().arg;
/// assert_eq!(arg.downcast_ref::<Var>().unwrap().name, "y");
/// ```
pub struct RewriteTable<S> {
    pre: TypeDispatch<PreHook<S>>,
    post: TypeDispatch<PostHook<S>>,
    child: TypeDispatch<ChildHook<S>>,
    memoize: Option<MemoHook<S>>,
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
            .field("child", &self.child)
            .field("memoize", &self.memoize.is_some())
            .finish()
    }
}

impl<S> RewriteTable<S> {
    /// No hooks: the identity pass.
    pub fn new() -> Self {
        RewriteTable {
            pre: TypeDispatch::new(),
            post: TypeDispatch::new(),
            child: TypeDispatch::new(),
            memoize: None,
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

    /// Sets the hook run before each child of `T` nodes (see [`Rewriter::child`]): it
    /// gets the state, the parent, where the child sits, the child, and the results of
    /// the parent's earlier children, and says whether to visit the child, keep it, or
    /// replace it.
    ///
    /// ```
    /// use object_core::prelude::*;
    /// use object_core::transform::{ChildStep, RewriteTable};
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.tc.Expr")]
    /// struct Expr { base: Object }
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.tc.Var", parent = Expr)]
    /// struct Var { base: Expr, name: String }
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.tc.Lambda", parent = Expr)]
    /// struct Lambda { base: Expr, #[object(def)] param: ObjectPtr<Var>, body: ObjectPtr<Expr> }
    ///
    /// // Rename every variable to `v`, but never a binder: definition sites are kept.
    /// let mut t: RewriteTable<()> = RewriteTable::new();
    /// t.child::<Lambda>(|_, _, field, _, _| {
    ///     Ok(if field.is_definition() { ChildStep::Keep } else { ChildStep::Visit })
    /// })
    /// .pre::<Var>(|_, _| Ok(Some(Var::new("v").into_object_ref())));
    /// let x = Var::new("x");
    /// let f = Lambda::new(x.clone(), x).into_object_ref();
    /// let out = t.run(&f, &mut ())?;
    /// let lam = out.downcast_ref::<Lambda>().unwrap();
    /// assert_eq!((lam.param.name.as_str(), lam.body.downcast_ref::<Var>().unwrap().name.as_str()), ("x", "v"));
    /// # Ok::<(), object_core::transform::TransformError>(())
    /// ```
    pub fn child<T: ObjectType>(
        &mut self,
        f: impl Fn(
                &mut S,
                &ObjectPtr<T>,
                ChildField,
                &ObjectRef,
                &[ObjectRef],
            ) -> Result<ChildStep, TransformError>
            + Send
            + Sync
            + 'static,
    ) -> &mut Self {
        self.child.set_dispatch::<T>(Box::new(
            move |s, parent, field, child, earlier| match parent.downcast_ptr_ref::<T>() {
                Some(p) => f(s, p, field, child, earlier),
                None => Ok(ChildStep::Visit),
            },
        ));
        self
    }

    /// Sets the test of which nodes may use the memo (see [`Rewriter::memoize`]; without
    /// one, every node may): asked with the state for each node that may be shared.
    ///
    /// ```
    /// use object_core::prelude::*;
    /// use object_core::transform::RewriteTable;
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.tm.Pair")]
    /// struct Pair { base: Object, a: ObjectRef, b: ObjectRef }
    ///
    /// // Count the visits of plain objects, with the memo off: once per occurrence.
    /// let mut t: RewriteTable<usize> = RewriteTable::new();
    /// t.pre::<Object>(|n, node| {
    ///     *n += usize::from(!node.is::<Pair>());
    ///     Ok(None)
    /// })
    /// .memoize(|_, _| false);
    /// let leaf = make_object(Object::new()).into_object_ref();
    /// let mut visits = 0;
    /// t.run(&Pair::new(leaf.clone(), leaf).into_object_ref(), &mut visits)?;
    /// assert_eq!(visits, 2);
    /// # Ok::<(), object_core::transform::TransformError>(())
    /// ```
    pub fn memoize(
        &mut self,
        f: impl Fn(&S, &ObjectRef) -> bool + Send + Sync + 'static,
    ) -> &mut Self {
        self.memoize = Some(Box::new(f));
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

    #[inline]
    fn child(
        &mut self,
        parent: &ObjectRef,
        field: ChildField,
        child: &ObjectRef,
        earlier: &[ObjectRef],
    ) -> Result<ChildStep, TransformError> {
        if self.table.child.is_empty() {
            return Ok(ChildStep::Visit);
        }
        match self.table.child.get(parent) {
            Some(f) => f(self.state, parent, field, child, earlier),
            None => Ok(ChildStep::Visit),
        }
    }

    #[inline]
    fn memoize(&mut self, node: &ObjectRef) -> bool {
        match &self.table.memoize {
            Some(f) => f(self.state, node),
            None => true,
        }
    }
}
