//! The generic visitor: [`Visitor`], [`walk`], [`for_each_child`],
//! [`for_each_child_field`].

use super::children::{each_child, push_children, push_owned_children, Pending, Plan};
use super::field::ChildField;
use super::rebuild::ChildRef;
use crate::addr_map::{addr, AddrSet};
use crate::ptr::{ObjectPtr, ObjectRef};

/// What a [`Visitor`] wants after entering a node (or, from [`Visitor::child`], before
/// entering one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Walk {
    /// Visit the node's children (from [`Visitor::child`]: enter the child).
    Continue,
    /// Do not visit this node's children (its [`leave`](Visitor::leave) is still called).
    /// From [`Visitor::child`]: do not enter the child from here (not entered, not left;
    /// another parent may still enter it).
    SkipChildren,
    /// End the walk now.
    Stop,
}

/// Receives the nodes of a graph from [`walk`]: each distinct node once, in depth-first
/// pre-order ([`enter`](Self::enter)) and post-order ([`leave`](Self::leave)), children
/// in the order their node lists them (reflected fields, the parent's first; a
/// container's items; a map's keys and values); and, if it wants them, the edges that
/// lead to them ([`child`](Self::child)): which field of which parent holds each child.
pub trait Visitor {
    /// Called when the walk reaches `node`, before its children.
    fn enter(&mut self, node: &ObjectRef) -> Walk;
    /// Called after `node`'s children (also when they were skipped).
    fn leave(&mut self, node: &ObjectRef) {
        let _ = node;
    }
    /// Called for each child of a node whose children are visited, in order, just
    /// before the walk enters it: `field` says where it sits in `parent` (a definition
    /// site or a use, say). Called for *every* edge, also when the child was entered
    /// before through another parent (a shared node, a variable's every use): the walk
    /// then does not enter it again. [`Walk::Continue`] (the default) enters it if it
    /// was not entered yet, [`Walk::SkipChildren`] leaves it out from here,
    /// [`Walk::Stop`] ends the walk.
    ///
    /// ```
    /// use object_core::prelude::*;
    /// use object_core::transform::{walk, ChildField, Visitor, Walk};
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.vc.Expr")]
    /// struct Expr { base: Object }
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.vc.Var", parent = Expr)]
    /// struct Var { base: Expr, name: String }
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.vc.Add", parent = Expr)]
    /// struct Add { base: Expr, lhs: ObjectPtr<Expr>, rhs: ObjectPtr<Expr> }
    ///
    /// #[derive(Object)]
    /// #[repr(C)]
    /// #[object(key = "doc.vc.Let", parent = Expr)]
    /// struct Let {
    ///     base: Expr,
    ///     #[object(def)]
    ///     var: ObjectPtr<Var>,
    ///     value: ObjectPtr<Expr>,
    ///     body: ObjectPtr<Expr>,
    /// }
    ///
    /// // Definitions and uses of variables: `let x = y in x + x`.
    /// struct DefUse(Vec<String>);
    /// impl Visitor for DefUse {
    ///     fn enter(&mut self, _: &ObjectRef) -> Walk {
    ///         Walk::Continue
    ///     }
    ///     fn child(&mut self, _: &ObjectRef, field: ChildField, child: &ObjectRef) -> Walk {
    ///         if let Some(v) = child.downcast_ref::<Var>() {
    ///             let what = if field.is_definition() { "def" } else { "use" };
    ///             self.0.push(format!("{what} {} in {}", v.name, field.name().unwrap_or("?")));
    ///         }
    ///         Walk::Continue
    ///     }
    /// }
    /// let (x, y) = (Var::new("x"), Var::new("y"));
    /// let body = Add::new(x.clone(), x.clone());
    /// let prog = Let::new(x, y, body).into_object_ref();
    /// let mut v = DefUse(Vec::new());
    /// assert!(walk(&prog, &mut v));
    /// // `x` is entered once, but each of its edges is reported.
    /// assert_eq!(v.0, ["def x in var", "use y in value", "use x in lhs", "use x in rhs"]);
    /// ```
    #[inline]
    fn child(&mut self, parent: &ObjectRef, field: ChildField, child: &ObjectRef) -> Walk {
        let _ = (parent, field, child);
        Walk::Continue
    }
}

impl<F: FnMut(&ObjectRef) -> Walk> Visitor for F {
    fn enter(&mut self, node: &ObjectRef) -> Walk {
        self(node)
    }
}

/// Calls `f` with every direct child object of `obj`: the objects its reflected fields
/// hold (an `ObjectPtr`, an `ObjectRef`, an `Any` or `Option` holding an object; strings
/// are values, not children), or a container's items (`Array`, `List`), keys and
/// values (`Map`, `Dict`).
///
/// ```
/// use object_core::prelude::*;
/// use object_core::transform::for_each_child;
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.child.Pair")]
/// struct Pair { base: Object, a: ObjectRef, n: i64, b: Option<ObjectRef> }
///
/// let leaf = make_object(Object::new());
/// let p = Pair::new(leaf.clone(), 1, None).into_object_ref();
/// let mut n = 0;
/// for_each_child(&p, |c| {
///     assert!(ObjectPtr::ptr_eq(c, &leaf));
///     n += 1;
/// });
/// assert_eq!(n, 1);
/// ```
pub fn for_each_child(obj: &ObjectRef, mut f: impl FnMut(&ObjectRef)) {
    each_child(obj, &mut |_, c: ChildRef<'_>| f(c.get()));
}

/// [`for_each_child`] with where each child sits: `f` gets its [`ChildField`] (the
/// field's name and flags, or a container value's index; its position among the
/// children) and the child.
///
/// ```
/// use object_core::prelude::*;
/// use object_core::transform::for_each_child_field;
/// use object_core::Any;
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.fcf.Call")]
/// struct Call { base: Object, callee: ObjectRef, target: Option<ObjectRef>, arg: Any }
///
/// let (f, a) = (make_object(Object::new()), make_object(Object::new()));
/// let call = Call::new(f, None, Any::from(a.clone())).into_object_ref();
/// let mut fields = Vec::new();
/// for_each_child_field(&call, |field, child| {
///     fields.push((field.name(), field.position(), field.item_index()));
///     if field.name() == Some("arg") {
///         assert!(ObjectPtr::ptr_eq(child, &a));
///     }
/// });
/// // `target` holds `None`: no child there.
/// assert_eq!(fields, [(Some("callee"), 0, None), (Some("arg"), 1, None)]);
/// ```
pub fn for_each_child_field(obj: &ObjectRef, mut f: impl FnMut(ChildField, &ObjectRef)) {
    let mut position = 0;
    each_child(obj, &mut |site, c: ChildRef<'_>| {
        f(ChildField::new(site, position), c.get());
        position += 1;
    });
}

/// Walks the graph under `root` with `v`, without recursion (an explicit stack: a
/// 10,000,000-deep graph walks on a 2 MiB thread). A node reached more than once
/// (shared) is entered once. Returns `false` if the visitor stopped the walk.
///
/// ```
/// use object_core::prelude::*;
/// use object_core::transform::{walk, Walk};
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.walk.Add")]
/// struct Add { base: Object, lhs: ObjectRef, rhs: ObjectRef }
///
/// let x = make_object(Object::new());
/// // `x` is shared: it is visited once.
/// let sum = Add::new(x.clone(), x.clone()).into_object_ref();
/// let mut keys = Vec::new();
/// let finished = walk(&sum, &mut |n: &ObjectRef| {
///     keys.push(n.type_key());
///     Walk::Continue
/// });
/// assert!(finished);
/// assert_eq!(keys, ["doc.walk.Add", "ffi.Object"]);
/// ```
pub fn walk(root: &ObjectRef, v: &mut impl Visitor) -> bool {
    /// A node whose children are being visited.
    struct Open<'a> {
        node: ChildRef<'a>,
        /// `pending.len()` before its children were pushed: when it is back to that,
        /// they are done.
        mark: usize,
        /// `pending.len()` after: where its first child was (for their positions).
        end: usize,
    }
    let mut seen = AddrSet::default();
    let mut pending: Vec<Pending<'_>> = Vec::new();
    let mut open: Vec<Open<'_>> = Vec::new();
    // The next node to enter: the root, then each child that `v.child` lets in.
    let mut next = Some(ChildRef::Borrowed(root));
    loop {
        let node = match next.take() {
            Some(n) => n,
            None => {
                let Some(top) = open.last() else { break };
                if top.mark == pending.len() {
                    if let Some(done) = open.pop() {
                        v.leave(done.node.get());
                    }
                    continue;
                }
                let Some(Pending { node: child, site }) = pending.pop() else {
                    break;
                };
                // Children were pushed first on top: the one popped is the
                // `end - 1 - len`-th.
                let field = ChildField::new(site, top.end - 1 - pending.len());
                match v.child(top.node.get(), field, child.get()) {
                    Walk::Stop => return false,
                    Walk::SkipChildren => continue,
                    Walk::Continue => child,
                }
            }
        };
        // A node held once (count 1, not a snapshot) cannot be reached again.
        let shared = match &node {
            ChildRef::Borrowed(r) => ObjectPtr::strong_count(r) > 1,
            ChildRef::Owned(_) => true,
        };
        if shared && !seen.insert(addr(node.get())) {
            continue;
        }
        match v.enter(node.get()) {
            Walk::Stop => return false,
            Walk::SkipChildren => {
                v.leave(node.get());
                continue;
            }
            Walk::Continue => {}
        }
        let mark = pending.len();
        let plan = Plan::of_object(node.get());
        match &node {
            ChildRef::Borrowed(r) => push_children(plan, r, &mut pending),
            ChildRef::Owned(o) => push_owned_children(plan, o, &mut pending),
        }
        if pending.len() == mark {
            v.leave(node.get());
            continue;
        }
        let end = pending.len();
        open.push(Open { node, mark, end });
    }
    true
}
