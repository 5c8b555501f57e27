//! Appending the graph's text (the saver's pieces, and every integer the crate writes)
//! with copies whose sizes are known when compiled: a piece is kept padded, pushed
//! whole (`&padded[..PIECE]` is a `str` of a constant length, so the copy is a few
//! moves, not a call of `memcpy`) and the text cut back to its real end; a number is
//! pushed as groups of three digits from a table the same way. No `unsafe`, and nothing to check afterwards: every push is a `str`.

/// The padded size of a [`Piece`]: long enough for a node's head with a dotted type
/// key and a field name (`,{"type":"relax.expr.Call","data":{"op":`).
const PIECE: usize = 64;

/// Text written many times (a type's node head, the text before a field's value), kept
/// padded so that it is copied with one fixed-size copy.
#[derive(Clone)]
pub(crate) struct Piece {
    /// The text, then spaces up to at least `PIECE` bytes.
    padded: Box<str>,
    /// The text's length.
    len: usize,
}

impl Piece {
    pub(crate) fn new(text: &str) -> Self {
        let mut padded = String::with_capacity(text.len().max(PIECE));
        padded.push_str(text);
        while padded.len() < PIECE {
            padded.push(' ');
        }
        Piece {
            padded: padded.into(),
            len: text.len(),
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.padded[..self.len]
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends the piece to `out`.
    #[inline(always)]
    pub(crate) fn push_to(&self, out: &mut String) {
        if self.len <= PIECE {
            let end = out.len() + self.len;
            out.push_str(&self.padded[..PIECE]);
            out.truncate(end);
        } else {
            out.push_str(self.as_str());
        }
    }
}

/// The numbers 0 to 999, three bytes each: without leading zeros (a number's first
/// group), padded with spaces.
static LEADING: [&str; 1000] = groups(false);
/// The numbers 0 to 999 as three digits (a number's later groups).
static GROUPS: [&str; 1000] = groups(true);

/// The table of 3-byte groups (see `LEADING` and `GROUPS`).
const fn groups(zeros: bool) -> [&'static str; 1000] {
    const TEXT: [&[u8; 3000]; 2] = [&group_text(false), &group_text(true)];
    let text = TEXT[zeros as usize];
    let mut table = [""; 1000];
    let mut i = 0;
    while i < 1000 {
        let (_, rest) = text.split_at(i * 3);
        let (group, _) = rest.split_at(3);
        table[i] = match core::str::from_utf8(group) {
            Ok(s) => s,
            Err(_) => panic!("the groups are ASCII"),
        };
        i += 1;
    }
    table
}

/// `0  1  2  … 999` (or `000001002…999`), three bytes a number.
const fn group_text(zeros: bool) -> [u8; 3000] {
    let mut text = [b' '; 3000];
    let mut i = 0;
    while i < 1000 {
        let digits = [(i / 100) as u8, (i / 10 % 10) as u8, (i % 10) as u8];
        let skip = if zeros || i >= 100 {
            0
        } else if i >= 10 {
            1
        } else {
            2
        };
        let mut d = skip;
        while d < 3 {
            text[i * 3 + d - skip] = b'0' + digits[d];
            d += 1;
        }
        i += 1;
    }
    text
}

/// Appends the first group of a number: `n` (below 1,000) without leading zeros.
#[inline(always)]
fn push_leading(out: &mut String, n: usize) {
    let digits = 1 + (n >= 10) as usize + (n >= 100) as usize;
    let end = out.len() + digits;
    out.push_str(&LEADING[n][..3]);
    out.truncate(end);
}

/// Appends `n` (below 1,000) as three digits.
#[inline(always)]
fn push_group(out: &mut String, n: usize) {
    out.push_str(&GROUPS[n][..3]);
}

/// Appends `n` in decimal.
#[inline(always)]
pub(crate) fn push_u64(out: &mut String, n: u64) {
    if n < 1_000 {
        push_leading(out, n as usize);
    } else if n < 1_000_000 {
        push_leading(out, (n / 1_000) as usize);
        push_group(out, (n % 1_000) as usize);
    } else if n < 1_000_000_000 {
        let (high, low) = ((n / 1_000) as usize, (n % 1_000) as usize);
        push_leading(out, high / 1_000);
        push_group(out, high % 1_000);
        push_group(out, low);
    } else {
        push_u64_long(out, n);
    }
}

/// `push_u64` for numbers of ten digits or more.
#[cold]
fn push_u64_long(out: &mut String, n: u64) {
    let mut groups = [0usize; 7];
    let (mut n, mut count) = (n, 0);
    while n >= 1_000 {
        groups[count] = (n % 1_000) as usize;
        n /= 1_000;
        count += 1;
    }
    push_leading(out, n as usize);
    for &g in groups[..count].iter().rev() {
        push_group(out, g);
    }
}

/// Appends `i` in decimal.
#[inline]
pub(crate) fn push_i64(out: &mut String, i: i64) {
    if i < 0 {
        out.push('-');
    }
    push_u64(out, i.unsigned_abs());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers of every length, and the edges between lengths, read as Rust writes
    /// them; negative numbers with their sign, `i64::MIN` included.
    #[test]
    fn numbers_are_written_as_rust_writes_them() {
        let mut cases = vec![0u64, 1, 9, u64::MAX, u64::MAX - 1];
        let mut n: u64 = 1;
        for _ in 0..19 {
            cases.extend([n - 1, n, n + 1, n * 9 + n - 1, n * 5 + 7]);
            n *= 10;
        }
        cases.extend([n - 1, n, n + 1]);
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        // (A few under Miri, which interprets them slowly: there is no unsafe code here.)
        for _ in 0..if cfg!(miri) { 20 } else { 2_000 } {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            cases.extend([seed, seed >> (seed % 64)]);
        }
        for c in cases {
            let mut out = String::from("x");
            push_u64(&mut out, c);
            assert_eq!(out, format!("x{c}"));
        }
        for i in [
            0i64,
            -1,
            -9,
            -10,
            -999,
            -1_000,
            -123_456,
            i64::MIN,
            i64::MAX,
        ] {
            let mut out = String::new();
            push_i64(&mut out, i);
            assert_eq!(out, i.to_string());
        }
    }

    /// Pieces shorter than, as long as and longer than the padding, non-ASCII ones
    /// included, each appended as itself.
    #[test]
    fn pieces_are_appended_as_their_text() {
        let texts = [
            String::new(),
            "a".to_owned(),
            ",\"ℓabel\":".to_owned(),
            "x".repeat(PIECE - 1),
            "y".repeat(PIECE),
            "z".repeat(PIECE + 1),
            "日本".repeat(40),
        ];
        let mut out = String::from("head:");
        let mut expected = out.clone();
        for t in &texts {
            let piece = Piece::new(t);
            assert_eq!(
                (piece.as_str(), piece.is_empty()),
                (t.as_str(), t.is_empty())
            );
            piece.push_to(&mut out);
            expected.push_str(t);
            assert_eq!(out, expected);
        }
    }
}
