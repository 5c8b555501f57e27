//! A deterministic generator of random programs in the text syntax, so that both
//! implementations build the very same program (they parse the same text).
//!
//! A program is a chain of blocks, each `(let xI VALUE (seq STMT… NEXT))`, so it nests
//! about two levels per block: a 1,000,000-node program is some 60,000 deep. Its
//! expressions mix constant-only subtrees (for folding, including divisions by zero,
//! which must stay), subexpressions repeated verbatim within a statement (for CSE),
//! `let`s whose variable is never used (for dead-let elimination, some of them in
//! chains), `let`s of constants (substituted by folding), shadowed names (every
//! expression-level `let` binds `y`), and small `f32` tensor constants (`(tensor (2 2)
//! …)`, a few percent of the leaves).
//!
//! Each block binds a new variable `xI`, so a program has one variable per block: some
//! 12,000 in a 1,000,000-node program. Leaves mostly use the last few (so older ones
//! often end up dead), and one variable leaf in eight any of them: the `let`-free
//! expressions that CSE keys hold thousands of distinct free variables in all, which
//! is what keeps structural keys from colliding, or not.
//!
//! The generator recurses only into single expressions, whose depth it bounds by
//! [`MAX_EXPR_DEPTH`]; the nesting of the program itself is written iteratively.

/// How deep one generated expression may nest.
pub const MAX_EXPR_DEPTH: u32 = 6;

/// SplitMix64: small, fast and the same on every platform.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// True with probability `percent`%.
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A subexpression kept for reuse: its text and node count.
#[derive(Clone)]
struct Piece {
    text: String,
    nodes: usize,
}

struct Gen {
    rng: Rng,
    /// Block variables in scope (never shadowed), newest last.
    vars: Vec<String>,
    /// How many expression-level `let y` are open around the expression being made.
    locals: u32,
    /// Recent subexpressions over block variables only (valid anywhere later).
    pool: Vec<Piece>,
    nodes: usize,
}

const OPS: [&str; 11] = [
    "+", "-", "*", "/", "%", "min", "max", "<", "==", "and", "or",
];

impl Gen {
    /// An expression of at most `depth` levels; `consts` asks for constants only.
    /// Returns the piece and whether it uses an expression-level `y`.
    fn expr(&mut self, depth: u32, consts: bool) -> (Piece, bool) {
        let r = self.rng.below(100);
        if depth == 0 || r < 25 {
            return self.leaf(consts);
        }
        if !consts && r < 35 && !self.pool.is_empty() {
            let i = self.rng.below(self.pool.len() as u64) as usize;
            return (self.pool[i].clone(), false);
        }
        let consts = consts || self.rng.chance(12);
        let (text, nodes, local) = match r {
            35..=79 => {
                let op = OPS[self.rng.below(OPS.len() as u64) as usize];
                let (a, la) = self.expr(depth - 1, consts);
                let (b, lb) = self.expr(depth - 1, consts);
                (
                    format!("({op} {} {})", a.text, b.text),
                    1 + a.nodes + b.nodes,
                    la || lb,
                )
            }
            80..=83 => {
                let (a, la) = self.expr(depth - 1, consts);
                (format!("(not {})", a.text), 1 + a.nodes, la)
            }
            84..=89 => {
                let (c, lc) = self.expr(depth - 1, consts);
                let (a, la) = self.expr(depth - 1, consts);
                let (b, lb) = self.expr(depth - 1, consts);
                let text = format!("(select {} {} {})", c.text, a.text, b.text);
                (text, 1 + c.nodes + a.nodes + b.nodes, lc || la || lb)
            }
            90..=94 if !consts => {
                let (v, lv) = self.expr(depth - 1, false);
                self.locals += 1;
                let (b, _) = self.expr(depth - 1, false);
                self.locals -= 1;
                (
                    format!("(let y {} {})", v.text, b.text),
                    1 + v.nodes + b.nodes,
                    lv,
                )
            }
            _ => {
                let n = self.rng.below(3);
                let mut text = format!("(call f{n}");
                let (mut nodes, mut local) = (1, false);
                for _ in 0..n {
                    let (a, la) = self.expr(depth - 1, consts);
                    text.push(' ');
                    text.push_str(&a.text);
                    nodes += a.nodes;
                    local |= la;
                }
                text.push(')');
                (text, nodes, local)
            }
        };
        let piece = Piece { text, nodes };
        if !local && nodes > 2 {
            if self.pool.len() < 12 {
                self.pool.push(piece.clone());
            } else {
                let i = self.rng.below(12) as usize;
                self.pool[i] = piece.clone();
            }
        }
        (piece, local)
    }

    fn leaf(&mut self, consts: bool) -> (Piece, bool) {
        let text = if !consts && self.rng.chance(3) {
            self.tensor()
        } else if consts || self.rng.chance(40) {
            (self.rng.below(12) as i64 - 2).to_string()
        } else if self.locals > 0 && self.rng.chance(40) {
            return (
                Piece {
                    text: "y".to_owned(),
                    nodes: 1,
                },
                true,
            );
        } else {
            // Mostly recent variables, so older ones often end up dead; sometimes any.
            let n = self.vars.len() as u64;
            let back = if self.rng.chance(12) {
                self.rng.below(n)
            } else {
                self.rng.below(n.min(6))
            };
            self.vars[(n - 1 - back) as usize].clone()
        };
        (Piece { text, nodes: 1 }, false)
    }

    /// A small tensor constant: 2, 4 or 6 values, multiples of 1/4.
    fn tensor(&mut self) -> String {
        let shape: &[i64] = match self.rng.below(3) {
            0 => &[2],
            1 => &[2, 2],
            _ => &[2, 3],
        };
        let data: Vec<f32> = (0..shape.iter().product::<i64>())
            .map(|_| (self.rng.below(33) as f32 - 16.0) * 0.25)
            .collect();
        let mut text = String::new();
        super::syntax::write_tensor(&mut text, shape, &data);
        text
    }

    fn top_expr(&mut self) -> String {
        let depth = 2 + self.rng.below(u64::from(MAX_EXPR_DEPTH) - 1) as u32;
        let (p, _) = self.expr(depth, false);
        self.nodes += p.nodes;
        p.text
    }

    fn stmt(&mut self, out: &mut String) {
        match self.rng.below(10) {
            0..=4 => {
                let (i, v) = (self.top_expr(), self.top_expr());
                out.push_str(&format!("(store buf {i} {v})"));
            }
            5..=7 => {
                let e = self.top_expr();
                out.push_str(&format!("(eval {e})"));
            }
            _ => {
                let c = self.top_expr();
                let (i, v) = (self.top_expr(), self.top_expr());
                let e = self.top_expr();
                out.push_str(&format!("(if {c} (store out {i} {v}) (eval {e}))"));
                self.nodes += 3;
            }
        }
        self.nodes += 1;
    }
}

/// A random program of about `nodes` nodes (at least one block), the same for the same
/// `seed` on every platform.
///
/// ```
/// use object_examples::frontend::{generate, parse, enum_ir::{print, EnumBuilder}};
/// let text = generate(200, 7);
/// assert_eq!(text, generate(200, 7));
/// let f = parse(&text, &mut EnumBuilder::default()).unwrap();
/// assert!(print(&f).starts_with("(fn main (a b c) (let x0 "));
/// ```
pub fn generate(nodes: usize, seed: u64) -> String {
    let mut g = Gen {
        rng: Rng(seed),
        vars: vec!["a".into(), "b".into(), "c".into()],
        locals: 0,
        pool: Vec::new(),
        nodes: 0,
    };
    let mut out = String::from("(fn main (a b c)\n");
    let mut open = 1;
    let mut block = 0;
    while block == 0 || g.nodes < nodes {
        let name = format!("x{block}");
        let value = g.top_expr();
        out.push_str(&format!("(let {name} {value}\n (seq"));
        g.nodes += 2;
        open += 2;
        g.vars.push(name);
        for _ in 0..1 + g.rng.below(3) {
            out.push(' ');
            g.stmt(&mut out);
        }
        out.push('\n');
        block += 1;
    }
    out.push_str(" (eval ");
    let e = g.top_expr();
    out.push_str(&e);
    out.push(')');
    out.extend(std::iter::repeat_n(')', open));
    out.push('\n');
    out
}
