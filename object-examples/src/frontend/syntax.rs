//! The text syntax (S-expressions) and its parser, shared by both implementations
//! through the [`Builder`] trait: the parser resolves names and reports errors, each
//! implementation only says how to make a node.
//!
//! ```text
//! program := (fn NAME (NAME*) stmt)
//! stmt    := (eval expr) | (let NAME expr stmt) | (store NAME expr expr)
//!          | (seq stmt*) | (if expr stmt stmt)
//! expr    := INT | NAME | (OP expr expr) | (not expr) | (select expr expr expr)
//!          | (let NAME expr expr) | (call NAME expr*) | (tensor (DIM*) FLOAT*)
//! OP      := + | - | * | / | % | min | max | < | == | and | or
//! ```
//!
//! A tensor constant holds `f32` values, as many as its dimensions' product (`(tensor
//! (2 2) 1 0.5 -2 0.25)`, row-major); [`write_tensor`] prints one back, digits enough to
//! read the same values (Rust's shortest round-trip `Display`).
//!
//! `let` binds its name in its body only (not in its value); an inner `let` of the same
//! name shadows the outer one. A use of a name that no `let` or parameter binds is an
//! error. `;` starts a comment that runs to the end of the line.
//!
//! The parser is iterative (an explicit stack of open forms), so a program nested a
//! million deep parses on a small thread stack.

use std::collections::HashMap;
use std::fmt;

use super::ops::BinOpKind;

/// How one implementation makes nodes. The parser calls these bottom-up (children
/// first), binders before their uses.
pub trait Builder {
    /// An expression.
    type Expr;
    /// A statement.
    type Stmt;
    /// A variable (a binder; its uses are made by [`Builder::var_ref`]).
    type Var: Clone;
    /// A whole program.
    type Function;

    /// A fresh variable named `name`, for a `let` or a parameter.
    fn var(&mut self, name: &str) -> Self::Var;
    /// A use of `var`.
    fn var_ref(&mut self, var: &Self::Var) -> Self::Expr;
    /// An integer constant.
    fn int(&mut self, value: i64) -> Self::Expr;
    /// A tensor constant: `f32` values of `shape` (row-major; `data.len()` is the
    /// product of `shape`, which the parser checks).
    fn tensor(&mut self, shape: &[i64], data: &[f32]) -> Self::Expr;
    /// `(op lhs rhs)`.
    fn binary(&mut self, op: BinOpKind, lhs: Self::Expr, rhs: Self::Expr) -> Self::Expr;
    /// `(not a)`.
    fn not(&mut self, a: Self::Expr) -> Self::Expr;
    /// `(select cond then else)`.
    fn select(&mut self, cond: Self::Expr, t: Self::Expr, f: Self::Expr) -> Self::Expr;
    /// `(let var value body)`.
    fn let_(&mut self, var: Self::Var, value: Self::Expr, body: Self::Expr) -> Self::Expr;
    /// `(call name args…)`.
    fn call(&mut self, name: &str, args: Vec<Self::Expr>) -> Self::Expr;
    /// `(eval value)`.
    fn evaluate(&mut self, value: Self::Expr) -> Self::Stmt;
    /// `(let var value body)` as a statement.
    fn let_stmt(&mut self, var: Self::Var, value: Self::Expr, body: Self::Stmt) -> Self::Stmt;
    /// `(store buffer index value)`.
    fn store(&mut self, buffer: &str, index: Self::Expr, value: Self::Expr) -> Self::Stmt;
    /// `(seq stmts…)`.
    fn seq(&mut self, stmts: Vec<Self::Stmt>) -> Self::Stmt;
    /// `(if cond then else)`.
    fn if_then_else(&mut self, cond: Self::Expr, t: Self::Stmt, f: Self::Stmt) -> Self::Stmt;
    /// `(fn name (params…) body)`.
    fn function(&mut self, name: &str, params: Vec<Self::Var>, body: Self::Stmt) -> Self::Function;
}

/// What went wrong, as data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// The text ended inside a form (or before the program).
    UnexpectedEof,
    /// A `)` where something else was needed.
    UnexpectedClose,
    /// An item where the form was complete (too many operands).
    ExpectedClose,
    /// A `(` where a name was needed, or an atom that is not a name.
    ExpectedName,
    /// An atom where `(` was needed (the program must start with `(fn`).
    ExpectedOpen,
    /// A form head that does not exist in this position (statement or expression).
    UnknownForm(String),
    /// A name no `let` or parameter binds here.
    UnboundVariable(String),
    /// An integer literal out of the `i64` range.
    BadInteger(String),
    /// A tensor's dimension that is no non-negative integer, or a value that is no
    /// `f32`: the atom found.
    BadNumber(String),
    /// A tensor with another number of values than its shape holds.
    TensorSize {
        /// The product of the shape.
        expected: usize,
        /// The values written.
        found: usize,
    },
    /// A statement where an expression was needed: the atom or name found.
    ExpectedStatement(String),
    /// Text after the program.
    TrailingInput,
}

/// A parse error with the position (1-based line and column) of the offending token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    kind: ParseErrorKind,
    line: u32,
    column: u32,
}

impl ParseError {
    /// What went wrong.
    pub fn kind(&self) -> &ParseErrorKind {
        &self.kind
    }
    /// The line of the offending token (1-based).
    pub fn line(&self) -> u32 {
        self.line
    }
    /// The column of the offending token (1-based, in characters).
    pub fn column(&self) -> u32 {
        self.column
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: ", self.line, self.column)?;
        match &self.kind {
            ParseErrorKind::UnexpectedEof => write!(f, "unexpected end of input"),
            ParseErrorKind::UnexpectedClose => write!(f, "unexpected `)`"),
            ParseErrorKind::ExpectedClose => write!(f, "expected `)`: the form is complete"),
            ParseErrorKind::ExpectedName => write!(f, "expected a name"),
            ParseErrorKind::ExpectedOpen => write!(f, "expected `(`"),
            ParseErrorKind::UnknownForm(h) => write!(f, "unknown form `{h}` here"),
            ParseErrorKind::UnboundVariable(v) => write!(f, "unbound variable `{v}`"),
            ParseErrorKind::BadInteger(s) => write!(f, "integer `{s}` out of range"),
            ParseErrorKind::BadNumber(s) => write!(f, "`{s}` is not a number here"),
            ParseErrorKind::TensorSize { expected, found } => {
                write!(f, "a tensor of {expected} values with {found}")
            }
            ParseErrorKind::ExpectedStatement(s) => {
                write!(f, "expected a statement, found `{s}`")
            }
            ParseErrorKind::TrailingInput => write!(f, "text after the program"),
        }
    }
}

impl std::error::Error for ParseError {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok<'s> {
    Open,
    Close,
    Atom(&'s str),
    Eof,
}

/// The tokenizer: positions are tracked as it goes.
struct Lexer<'s> {
    src: &'s str,
    pos: usize,
    line: u32,
    line_start: usize,
    /// The last token's line, its byte offset and its line's start (the column is
    /// counted only when an error needs it).
    at: (u32, usize, usize),
}

impl<'s> Lexer<'s> {
    fn new(src: &'s str) -> Self {
        Lexer {
            src,
            pos: 0,
            line: 1,
            line_start: 0,
            at: (1, 0, 0),
        }
    }

    fn next(&mut self) -> Tok<'s> {
        let bytes = self.src.as_bytes();
        loop {
            match bytes.get(self.pos) {
                Some(b'\n') => {
                    self.pos += 1;
                    self.line += 1;
                    self.line_start = self.pos;
                }
                Some(b' ' | b'\t' | b'\r') => self.pos += 1,
                Some(b';') => {
                    while bytes.get(self.pos).is_some_and(|&b| b != b'\n') {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
        self.at = (self.line, self.pos, self.line_start);
        let start = self.pos;
        match bytes.get(start) {
            None => Tok::Eof,
            Some(b'(') => {
                self.pos += 1;
                Tok::Open
            }
            Some(b')') => {
                self.pos += 1;
                Tok::Close
            }
            Some(_) => {
                while bytes.get(self.pos).is_some_and(|&b| {
                    !matches!(b, b'(' | b')' | b';' | b' ' | b'\t' | b'\r' | b'\n')
                }) {
                    self.pos += 1;
                }
                Tok::Atom(&self.src[start..self.pos])
            }
        }
    }

    fn error(&self, kind: ParseErrorKind) -> ParseError {
        ParseError {
            kind,
            line: self.at.0,
            column: self.src[self.at.2..self.at.1].chars().count() as u32 + 1,
        }
    }
}

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_int(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The open forms, each waiting for its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Binary(BinOpKind),
    Not,
    Select,
    Let,
    Call,
    Eval,
    LetStmt,
    Store,
    Seq,
    If,
    /// The program's body.
    Function,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    Expr,
    Stmt,
    Close,
    /// An expression, or `)`.
    ExprOrClose,
    /// A statement, or `)`.
    StmtOrClose,
}

struct Frame<'s, V> {
    form: Form,
    /// Where this form's operands start on the value stacks.
    exprs: usize,
    stmts: usize,
    /// The binder (`let`) and the name (`let`, `store`, `call`, `fn`).
    var: Option<V>,
    name: &'s str,
    /// The function's parameters.
    params: Vec<V>,
}

/// Names in scope, innermost binding last.
type Scope<'s, V> = HashMap<&'s str, Vec<V>>;

impl Form {
    fn is_expr(self) -> bool {
        matches!(
            self,
            Form::Binary(_) | Form::Not | Form::Select | Form::Let | Form::Call
        )
    }

    fn want(self, exprs: usize, stmts: usize) -> Want {
        use Want::*;
        match (self, exprs, stmts) {
            (Form::Binary(_), 0 | 1, _) | (Form::Not, 0, _) | (Form::Select, 0..=2, _) => Expr,
            (Form::Let, 0 | 1, _) | (Form::Eval, 0, _) => Expr,
            (Form::LetStmt, 0, _) | (Form::Store, 0 | 1, _) | (Form::If, 0, _) => Expr,
            (Form::LetStmt, 1, 0) | (Form::If, 1, 0 | 1) | (Form::Function, _, 0) => Stmt,
            (Form::Call, _, _) => ExprOrClose,
            (Form::Seq, _, _) => StmtOrClose,
            _ => Close,
        }
    }
}

/// Parses a program, building it with `b`.
///
/// ```
/// use object_examples::frontend::{parse, enum_ir::EnumBuilder, enum_ir::print};
/// let f = parse("(fn f (x) (eval (+ x 1)))", &mut EnumBuilder::default()).unwrap();
/// assert_eq!(print(&f), "(fn f (x) (eval (+ x 1)))");
/// let e = parse("(fn f (x) (eval (+ y 1)))", &mut EnumBuilder::default()).unwrap_err();
/// assert_eq!((e.line(), e.column()), (1, 20));
/// ```
pub fn parse<B: Builder>(src: &str, b: &mut B) -> Result<B::Function, ParseError> {
    let mut lx = Lexer::new(src);
    let mut scope: Scope<'_, B::Var> = HashMap::new();
    // The program header: `(fn NAME (params…)`.
    match lx.next() {
        Tok::Open => {}
        Tok::Eof => return Err(lx.error(ParseErrorKind::UnexpectedEof)),
        _ => return Err(lx.error(ParseErrorKind::ExpectedOpen)),
    }
    match lx.next() {
        Tok::Atom("fn") => {}
        Tok::Atom(h) => return Err(lx.error(ParseErrorKind::UnknownForm(h.to_owned()))),
        Tok::Eof => return Err(lx.error(ParseErrorKind::UnexpectedEof)),
        _ => return Err(lx.error(ParseErrorKind::ExpectedName)),
    }
    let name = expect_name(&mut lx)?;
    if lx.next() != Tok::Open {
        return Err(lx.error(ParseErrorKind::ExpectedOpen));
    }
    let mut params = Vec::new();
    loop {
        match lx.next() {
            Tok::Close => break,
            Tok::Atom(p) if is_name(p) => {
                let v = b.var(p);
                scope.entry(p).or_default().push(v.clone());
                params.push(v);
            }
            Tok::Eof => return Err(lx.error(ParseErrorKind::UnexpectedEof)),
            _ => return Err(lx.error(ParseErrorKind::ExpectedName)),
        }
    }
    let mut stack = vec![Frame {
        form: Form::Function,
        exprs: 0,
        stmts: 0,
        var: None,
        name,
        params,
    }];
    let mut exprs: Vec<B::Expr> = Vec::new();
    let mut stmts: Vec<B::Stmt> = Vec::new();
    loop {
        let top = stack
            .last()
            .ok_or_else(|| lx.error(ParseErrorKind::TrailingInput))?;
        let want = top
            .form
            .want(exprs.len() - top.exprs, stmts.len() - top.stmts);
        let tok = lx.next();
        match (tok, want) {
            (Tok::Eof, _) => return Err(lx.error(ParseErrorKind::UnexpectedEof)),
            (Tok::Close, Want::Close | Want::ExprOrClose | Want::StmtOrClose) => {
                let Some(frame) = stack.pop() else {
                    return Err(lx.error(ParseErrorKind::UnexpectedClose));
                };
                if frame.form == Form::Function {
                    let body = stmts
                        .pop()
                        .ok_or_else(|| lx.error(ParseErrorKind::UnexpectedClose))?;
                    if lx.next() != Tok::Eof {
                        return Err(lx.error(ParseErrorKind::TrailingInput));
                    }
                    return Ok(b.function(frame.name, frame.params, body));
                }
                if matches!(frame.form, Form::Let | Form::LetStmt) {
                    if let Some(vars) = scope.get_mut(frame.name) {
                        vars.pop();
                    }
                }
                let expr_form = frame.form.is_expr();
                finish(b, frame, &mut exprs, &mut stmts)
                    .ok_or_else(|| lx.error(ParseErrorKind::UnexpectedClose))?;
                if expr_form {
                    bind_after_value(&stack, exprs.len(), &mut scope);
                }
            }
            (Tok::Close, _) => return Err(lx.error(ParseErrorKind::UnexpectedClose)),
            (_, Want::Close) => return Err(lx.error(ParseErrorKind::ExpectedClose)),
            (Tok::Atom(a), Want::Expr | Want::ExprOrClose) => {
                let e = if is_int(a) {
                    let v = a
                        .parse()
                        .map_err(|_| lx.error(ParseErrorKind::BadInteger(a.to_owned())))?;
                    b.int(v)
                } else if is_name(a) {
                    match scope.get(a).and_then(|vars| vars.last()) {
                        Some(v) => b.var_ref(v),
                        None => return Err(lx.error(ParseErrorKind::UnboundVariable(a.to_owned()))),
                    }
                } else {
                    return Err(lx.error(ParseErrorKind::ExpectedName));
                };
                exprs.push(e);
                bind_after_value(&stack, exprs.len(), &mut scope);
            }
            (Tok::Atom(a), _) => {
                return Err(lx.error(ParseErrorKind::ExpectedStatement(a.to_owned())))
            }
            (Tok::Open, want) => {
                let head = match lx.next() {
                    Tok::Atom(h) => h,
                    Tok::Eof => return Err(lx.error(ParseErrorKind::UnexpectedEof)),
                    _ => return Err(lx.error(ParseErrorKind::ExpectedName)),
                };
                let stmt = matches!(want, Want::Stmt | Want::StmtOrClose);
                if !stmt && head == "tensor" {
                    // A leaf: read whole here, up to its `)`.
                    let (shape, data) = tensor_literal(&mut lx)?;
                    exprs.push(b.tensor(&shape, &data));
                    bind_after_value(&stack, exprs.len(), &mut scope);
                    continue;
                }
                let form = match (stmt, head) {
                    (false, "not") => Form::Not,
                    (false, "select") => Form::Select,
                    (false, "let") => Form::Let,
                    (false, "call") => Form::Call,
                    (true, "eval") => Form::Eval,
                    (true, "let") => Form::LetStmt,
                    (true, "store") => Form::Store,
                    (true, "seq") => Form::Seq,
                    (true, "if") => Form::If,
                    (false, h) => match BinOpKind::from_symbol(h) {
                        Some(op) => Form::Binary(op),
                        None => return Err(lx.error(ParseErrorKind::UnknownForm(h.to_owned()))),
                    },
                    (true, h) => return Err(lx.error(ParseErrorKind::UnknownForm(h.to_owned()))),
                };
                let mut frame = Frame {
                    form,
                    exprs: exprs.len(),
                    stmts: stmts.len(),
                    var: None,
                    name: "",
                    params: Vec::new(),
                };
                if matches!(form, Form::Let | Form::LetStmt | Form::Store | Form::Call) {
                    let name = expect_name(&mut lx)?;
                    if matches!(form, Form::Let | Form::LetStmt) {
                        frame.var = Some(b.var(name));
                    }
                    frame.name = name;
                }
                stack.push(frame);
            }
        }
    }
}

/// The rest of `(tensor (DIM*) FLOAT*)` after its head, through its `)`.
fn tensor_literal(lx: &mut Lexer<'_>) -> Result<(Vec<i64>, Vec<f32>), ParseError> {
    fn atom<'s>(lx: &mut Lexer<'s>) -> Result<Option<&'s str>, ParseError> {
        match lx.next() {
            Tok::Atom(a) => Ok(Some(a)),
            Tok::Close => Ok(None),
            Tok::Eof => Err(lx.error(ParseErrorKind::UnexpectedEof)),
            Tok::Open => Err(lx.error(ParseErrorKind::BadNumber("(".into()))),
        }
    }
    match lx.next() {
        Tok::Open => {}
        Tok::Eof => return Err(lx.error(ParseErrorKind::UnexpectedEof)),
        _ => return Err(lx.error(ParseErrorKind::ExpectedOpen)),
    }
    let (mut shape, mut data) = (Vec::new(), Vec::new());
    let mut expected = 1usize;
    while let Some(a) = atom(lx)? {
        let d: i64 = a
            .parse()
            .ok()
            .filter(|d| *d >= 0)
            .ok_or_else(|| lx.error(ParseErrorKind::BadNumber(a.to_owned())))?;
        expected = usize::try_from(d)
            .ok()
            .and_then(|d| expected.checked_mul(d))
            .ok_or_else(|| lx.error(ParseErrorKind::BadNumber(a.to_owned())))?;
        shape.push(d);
    }
    while let Some(a) = atom(lx)? {
        let v = a
            .parse()
            .map_err(|_| lx.error(ParseErrorKind::BadNumber(a.to_owned())))?;
        data.push(v);
    }
    if data.len() != expected {
        let found = data.len();
        return Err(lx.error(ParseErrorKind::TensorSize { expected, found }));
    }
    Ok((shape, data))
}

/// Writes a tensor constant in the text syntax: `(tensor (2 2) 1 0.5 -2 0.25)` (each
/// value with Rust's shortest `Display` that reads back as the same `f32`). Both
/// printers use it, so they cannot disagree.
///
/// ```
/// let mut out = String::new();
/// object_examples::frontend::syntax::write_tensor(&mut out, &[2, 2], &[1.0, 0.5, -2.0, 0.25]);
/// assert_eq!(out, "(tensor (2 2) 1 0.5 -2 0.25)");
/// ```
pub fn write_tensor(out: &mut String, shape: &[i64], data: &[f32]) {
    use std::fmt::Write as _;
    out.push_str("(tensor (");
    for (i, d) in shape.iter().enumerate() {
        let sep = if i == 0 { "" } else { " " };
        let _ = write!(out, "{sep}{d}");
    }
    out.push(')');
    for v in data {
        let _ = write!(out, " {v}");
    }
    out.push(')');
}

fn expect_name<'s>(lx: &mut Lexer<'s>) -> Result<&'s str, ParseError> {
    match lx.next() {
        Tok::Atom(n) if is_name(n) => Ok(n),
        Tok::Eof => Err(lx.error(ParseErrorKind::UnexpectedEof)),
        _ => Err(lx.error(ParseErrorKind::ExpectedName)),
    }
}

/// After a `let`'s value, its name is in scope for the body.
fn bind_after_value<'s, V: Clone>(
    stack: &[Frame<'s, V>],
    n_exprs: usize,
    scope: &mut Scope<'s, V>,
) {
    if let Some(top) = stack.last() {
        if matches!(top.form, Form::Let | Form::LetStmt) && n_exprs - top.exprs == 1 {
            if let Some(v) = &top.var {
                scope.entry(top.name).or_default().push(v.clone());
            }
        }
    }
}

/// Builds the node of a closed form from its operands and pushes it. `None` only if
/// the operands are not there, which the parser's state machine rules out.
fn finish<B: Builder>(
    b: &mut B,
    frame: Frame<'_, B::Var>,
    exprs: &mut Vec<B::Expr>,
    stmts: &mut Vec<B::Stmt>,
) -> Option<()> {
    match frame.form {
        Form::Binary(op) => {
            let (r, l) = (exprs.pop()?, exprs.pop()?);
            let e = b.binary(op, l, r);
            exprs.push(e);
        }
        Form::Not => {
            let a = exprs.pop()?;
            let e = b.not(a);
            exprs.push(e);
        }
        Form::Select => {
            let (f, t, c) = (exprs.pop()?, exprs.pop()?, exprs.pop()?);
            let e = b.select(c, t, f);
            exprs.push(e);
        }
        Form::Let => {
            let (body, value) = (exprs.pop()?, exprs.pop()?);
            let e = b.let_(frame.var?, value, body);
            exprs.push(e);
        }
        Form::Call => {
            let args = exprs.split_off(frame.exprs);
            let e = b.call(frame.name, args);
            exprs.push(e);
        }
        Form::Eval => {
            let v = exprs.pop()?;
            let s = b.evaluate(v);
            stmts.push(s);
        }
        Form::LetStmt => {
            let (body, value) = (stmts.pop()?, exprs.pop()?);
            let s = b.let_stmt(frame.var?, value, body);
            stmts.push(s);
        }
        Form::Store => {
            let (v, i) = (exprs.pop()?, exprs.pop()?);
            let s = b.store(frame.name, i, v);
            stmts.push(s);
        }
        Form::Seq => {
            let seq = stmts.split_off(frame.stmts);
            let s = b.seq(seq);
            stmts.push(s);
        }
        Form::If => {
            let (f, t, c) = (stmts.pop()?, stmts.pop()?, exprs.pop()?);
            let s = b.if_then_else(c, t, f);
            stmts.push(s);
        }
        Form::Function => return None,
    }
    Some(())
}
