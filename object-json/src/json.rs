//! A small JSON reader and writer for the graph format: a borrowed document tree, a
//! nesting limit, positions in every error, and no panics on any input. Numbers keep
//! their integer-ness (`1` is an int, `1.0` a float); `NaN`, `Infinity` and
//! `-Infinity` are accepted and written for non-finite floats, as the tvm-ffi writer
//! does; a number literal beyond the range of `f64` (`1e400`) is an error, not
//! infinity.

use std::borrow::Cow;
use std::fmt::Write as _;

use object_core::reflection::FieldInfo;

/// Nesting deeper than this is refused (the graph format needs 5 levels).
pub(crate) const MAX_DEPTH: usize = 128;

/// A parsed JSON value, borrowing unescaped strings from the input.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json<'a> {
    Null,
    Bool(bool),
    Int(i64),
    /// A number with a fraction or exponent, or an integer beyond `i64`.
    Float(f64),
    Str(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

impl<'a> Json<'a> {
    /// The member `key` of an object.
    pub(crate) fn get(&self, key: &str) -> Option<&Json<'a>> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// What kind of value this is, for error messages.
    /// The first member name of an object that an earlier member has too.
    pub(crate) fn duplicate_member(&self) -> Option<&str> {
        let Json::Object(members) = self else {
            return None;
        };
        first_duplicate(members.iter().map(|(k, _)| k.as_ref()))
    }

    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Int(_) => "an integer",
            Json::Float(_) => "a float",
            Json::Str(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }
}

/// A parse error: what went wrong and where (line and column, 1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseError {
    pub(crate) message: String,
    pub(crate) line: usize,
    pub(crate) column: usize,
}

/// Parses a whole document.
pub(crate) fn parse(text: &str) -> Result<Json<'_>, ParseError> {
    let mut p = Parser::new(text);
    p.skip_ws();
    let v = p.value(0)?;
    p.finish()?;
    Ok(v)
}

/// The first name that comes again (a list while short, as the graph's own objects
/// are; a hash set past that, so that a hostile object of many members stays linear).
pub(crate) fn first_duplicate<'k>(names: impl Iterator<Item = &'k str>) -> Option<&'k str> {
    let mut few: Vec<&str> = Vec::new();
    let mut many: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for name in names {
        if few.len() < 16 {
            if few.contains(&name) {
                return Some(name);
            }
            few.push(name);
            if few.len() == 16 {
                many.extend(few.iter().copied());
            }
        } else if !many.insert(name) {
            return Some(name);
        }
    }
    None
}

/// The fast path's reader of a graph document: the top-level object as [`parse`]
/// reads it, except that the first `nodes` member, if it is an array, is read node by
/// node, each handed to `node` (its index, its `type`, its `data`) and then dropped.
/// It takes only nodes of the plain form `{"type": "…", "data": …}` (members in that
/// order; no `data` for `None`) whose data is a literal or an array or object of
/// literals, as `to_json_graph` writes them, and gives up (`None`) at anything else,
/// at any error, or when `node` returns `false`; the caller then reads the text with
/// [`parse`], which reports what is wrong. Returns the document with the streamed
/// member as an empty array, and the number of nodes.
pub(crate) fn stream_graph<'a>(
    text: &'a str,
    node: &mut impl NodeSink<'a>,
) -> Option<(Json<'a>, usize)> {
    let mut p = Parser::new(text);
    p.skip_ws();
    if p.peek() != Some(b'{') {
        return None;
    }
    let mut members = Vec::new();
    let mut seen_nodes = false;
    let mut count = 0;
    p.object_with(1, |p, key, depth| {
        let v = if key == "nodes" && !seen_nodes && p.peek() == Some(b'[') {
            count = p
                .plain_nodes(node)
                .ok_or_else(|| p.error("not a plain graph"))?;
            Json::Array(Vec::new())
        } else {
            p.value(depth)?
        };
        seen_nodes |= key == "nodes";
        members.push((key, v));
        Ok(())
    })
    .ok()?;
    p.finish().ok()?;
    let doc = Json::Object(members);
    if doc.duplicate_member().is_some() {
        return None; // the general path reports it
    }
    Some((doc, count))
}

/// Whether `a` and `b` are the same bytes: for the short strings of a graph (keys,
/// type keys), compared in line, without a call to `memcmp`.
#[inline]
pub(crate) fn short_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[at..at + 8]);
        u64::from_le_bytes(w)
    };
    match n {
        // The first eight bytes and the last eight (which may overlap them).
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        // Eight at a time, then the last eight.
        17..=32 => {
            let mut at = 0;
            while at + 8 < n {
                if word(a, at) != word(b, at) {
                    return false;
                }
                at += 8;
            }
            word(a, n - 8) == word(b, n - 8)
        }
        0..=7 => a.iter().zip(b).all(|(x, y)| x == y),
        _ => a == b,
    }
}

/// How [`Parser::plain_node`] read a node.
enum NodeRead {
    /// Built by the sink.
    Built,
    /// The sink refused it: give up.
    Refused,
    /// Not written as the quick reading expects: read it again as one value.
    Unusual,
}

/// What [`stream_graph`] hands each node to. (Types come as the `Cow` they were read
/// as: a sink keeps a borrowed one, not an owned one.)
#[allow(clippy::ptr_arg)]
pub(crate) trait NodeSink<'a> {
    /// Node `i`'s type `ty`, read before its data: the fields its data's members are
    /// expected to name, in order (skipped fields are passed over). Each member's key is
    /// compared with the next expected name first, as bytes; a key that is that name is
    /// handed on as the field's own `'static` name (so that it compares by address).
    fn expected_fields(&mut self, i: usize, ty: &Cow<'a, str>) -> &'static [FieldInfo];

    /// Node `i`, read: its type and data. `false` to give up.
    fn node(&mut self, i: usize, ty: &Cow<'a, str>, data: Option<&Json<'a>>) -> bool;

    /// Node `i`, of type `ty`, built straight from the text, before its data is read:
    /// `p` stands right after the type's string. `Some(true)`: built, and `p` stands
    /// after the data (the node's own `}` is next); `Some(false)`: give up; `None`:
    /// not built here, `p` where it stood (the data is read and handed to
    /// [`node`](Self::node)).
    fn node_in_place(&mut self, i: usize, ty: &Cow<'a, str>, p: &mut Parser<'a>) -> Option<bool>;
}

/// The position of the first byte of `s` that ends a plain string's run: `"`, `\\` or a
/// control character (below 0x20); `None` if there is none.
///
/// Eight bytes at a time (the word tricks of "Bit Twiddling Hacks"): in each lane of
/// `x ^ Q` a zero marks a quote, and `lanes(v) = (v - 0x01…) & !v & 0x80…` flags a
/// lane that is zero; `(x - 0x20…) & !x & 0x80…` flags one below 0x20. A borrow only
/// runs from a flagged lane upwards, so the lowest flag (little-endian: the first byte)
/// is exact, which is all this needs.
#[inline]
fn string_end(s: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    #[inline(always)]
    fn zero_lanes(v: u64) -> u64 {
        v.wrapping_sub(ONES) & !v & HIGH
    }
    let mut i = 0;
    while let Some(chunk) = s.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let found = zero_lanes(x ^ (ONES * u64::from(b'"')))
            | zero_lanes(x ^ (ONES * u64::from(b'\\')))
            | (x.wrapping_sub(ONES * 0x20) & !x & HIGH);
        if found != 0 {
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    s[i..]
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .map(|p| i + p)
}

/// A reader of JSON text (see [`parse`] and [`stream_graph`]).
pub(crate) struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
        }
    }

    fn finish(&mut self) -> Result<(), ParseError> {
        self.skip_ws();
        if self.pos != self.bytes.len() {
            return Err(self.error("trailing characters after the JSON value"));
        }
        Ok(())
    }

    fn error(&self, message: impl Into<String>) -> ParseError {
        let upto = &self.bytes[..self.pos.min(self.bytes.len())];
        let line = upto.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = upto.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
        ParseError {
            message: message.into(),
            line,
            column,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.pos += 1;
        }
    }

    fn expect_word(&mut self, word: &str) -> Result<(), ParseError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.error(format!("invalid literal, expected `{word}`")))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json<'a>, ParseError> {
        match self.peek() {
            None => Err(self.error("unexpected end of input, expected a value")),
            Some(b'{') => {
                let mut members = Vec::new();
                self.object_with(depth + 1, |p, key, depth| {
                    let v = p.value(depth)?;
                    members.push((key, v));
                    Ok(())
                })?;
                Ok(Json::Object(members))
            }
            Some(b'[') => {
                let mut items = Vec::new();
                self.array_with(depth + 1, |p, depth| {
                    let v = p.value(depth)?;
                    items.push(v);
                    Ok(())
                })?;
                Ok(Json::Array(items))
            }
            Some(b'"') => self.string().map(Json::Str),
            Some(b't') => self.expect_word("true").map(|()| Json::Bool(true)),
            Some(b'f') => self.expect_word("false").map(|()| Json::Bool(false)),
            Some(b'n') => self.expect_word("null").map(|()| Json::Null),
            Some(b'N') => self.expect_word("NaN").map(|()| Json::Float(f64::NAN)),
            Some(b'I') => self
                .expect_word("Infinity")
                .map(|()| Json::Float(f64::INFINITY)),
            Some(b'-') if self.bytes[self.pos..].starts_with(b"-Infinity") => {
                self.pos += "-Infinity".len();
                Ok(Json::Float(f64::NEG_INFINITY))
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(c) => Err(self.error(format!(
                "unexpected character `{}`, expected a value",
                char::from(c).escape_default()
            ))),
        }
    }

    /// An object at nesting `depth` (the `{` is next): `member` reads each value
    /// (the next thing after the `:`), given its key and `depth`.
    fn object_with(
        &mut self,
        depth: usize,
        mut member: impl FnMut(&mut Self, Cow<'a, str>, usize) -> Result<(), ParseError>,
    ) -> Result<(), ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a string key"));
            }
            let key = self.string()?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.error("expected `:` after an object key"));
            }
            self.pos += 1;
            self.skip_ws();
            member(self, key, depth)?;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                None => return Err(self.error("unexpected end of input inside an object")),
                Some(_) => return Err(self.error("expected `,` or `}` in an object")),
            }
        }
    }

    /// An array at nesting `depth` (the `[` is next): `item` reads each item (the
    /// next thing), given `depth`.
    fn array_with(
        &mut self,
        depth: usize,
        mut item: impl FnMut(&mut Self, usize) -> Result<(), ParseError>,
    ) -> Result<(), ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.skip_ws();
            item(self, depth)?;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                None => return Err(self.error("unexpected end of input inside an array")),
                Some(_) => return Err(self.error("expected `,` or `]` in an array")),
            }
        }
    }

    /// The `nodes` array (the `[` is next) for [`stream_graph`]; the node count, or
    /// `None` to give up.
    ///
    /// Each node is read the quick way ([`plain_node`](Self::plain_node)): its start and
    /// end as the saver writes them, its data built in place or read as literals and
    /// arrays of them. A node written otherwise (other spacing is fine; other member
    /// order, nesting, escapes in its type) is read again from its start as one JSON
    /// value and handed to the sink the same way ([`general_node`](Self::general_node)),
    /// and reading goes on at the next node: nothing but a node the sink refuses (an
    /// error, or a reference to a later node) makes the loader start over.
    fn plain_nodes(&mut self, node: &mut impl NodeSink<'a>) -> Option<usize> {
        // The storage of the data's arrays and objects, reused from node to node.
        let mut items: Vec<Json<'a>> = Vec::new();
        let mut members: Vec<(Cow<'a, str>, Json<'a>)> = Vec::new();
        let mut count = 0;
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Some(0);
        }
        loop {
            let start = self.pos;
            match self.plain_node(count, node, &mut items, &mut members) {
                NodeRead::Built => {
                    // The node's end and the comma after it, as `to_json_graph` writes
                    // them.
                    if self.eat_text(b"},") {
                        count += 1;
                        continue;
                    }
                    self.skip_ws();
                    self.eat(b'}')?;
                }
                NodeRead::Refused => return None,
                NodeRead::Unusual => {
                    items.clear();
                    members.clear();
                    self.rewind(start);
                    self.general_node(count, node)?;
                }
            }
            count += 1;
            self.skip_ws();
            if self.eat(b',').is_none() {
                self.eat(b']')?;
                return Some(count);
            }
        }
    }

    /// Node `i` read the quick way (see [`plain_nodes`](Self::plain_nodes)); when
    /// `Built`, `p` stands before the node's closing `}`.
    #[allow(clippy::ptr_arg)] // (as `NodeSink`)
    fn plain_node(
        &mut self,
        i: usize,
        node: &mut impl NodeSink<'a>,
        items: &mut Vec<Json<'a>>,
        members: &mut Vec<(Cow<'a, str>, Json<'a>)>,
    ) -> NodeRead {
        // A node's start as `to_json_graph` writes it, else in any spacing.
        if self.eat_text(b"{\"type\":") {
            self.skip_ws();
        } else {
            self.skip_ws();
            if self.eat(b'{').is_none() {
                return NodeRead::Unusual;
            }
            self.skip_ws();
            if self.plain_key_is(b"type").is_none() {
                return NodeRead::Unusual;
            }
        }
        if self.peek() != Some(b'"') {
            return NodeRead::Unusual;
        }
        let Some(ty) = self.plain_string() else {
            return NodeRead::Unusual;
        };
        match node.node_in_place(i, &ty, self) {
            Some(true) => NodeRead::Built,
            Some(false) => NodeRead::Refused,
            None => {
                let Some(data) = self.node_data(i, &ty, node, items, members) else {
                    return NodeRead::Unusual;
                };
                self.skip_ws();
                if self.peek() != Some(b'}') {
                    return NodeRead::Unusual; // a member after `data`
                }
                let go = node.node(i, &ty, data.as_ref());
                match data {
                    Some(Json::Array(mut v)) => {
                        v.clear();
                        *items = v;
                    }
                    Some(Json::Object(mut v)) => {
                        v.clear();
                        *members = v;
                    }
                    _ => {}
                }
                if go {
                    NodeRead::Built
                } else {
                    NodeRead::Refused
                }
            }
        }
    }

    /// Node `i` read as one JSON value (from its `{`, through its `}`) and handed to
    /// the sink; `None` to give up: the text is not an object with a string `type` and
    /// no member twice, or the sink refused it.
    fn general_node(&mut self, i: usize, node: &mut impl NodeSink<'a>) -> Option<()> {
        self.skip_ws();
        if self.peek() != Some(b'{') {
            return None;
        }
        // The document, the `nodes` array, then the node: two levels in.
        let n = self.value(2).ok()?;
        if n.duplicate_member().is_some() {
            return None; // the general path reports it
        }
        let Json::Object(members) = n else {
            return None;
        };
        // Other members are passed over, as the general path passes them over.
        let (mut ty, mut data) = (None, None);
        for (key, value) in members {
            match (key.as_ref(), value) {
                ("type", Json::Str(t)) => ty = Some(t),
                ("type", _) => return None,
                ("data", v) => data = Some(v),
                _ => {}
            }
        }
        let ty = ty?;
        if let Some(d) = &data {
            if d.duplicate_member().is_some() {
                return None; // the general path reports it
            }
        }
        node.node(i, &ty, data.as_ref()).then_some(())
    }

    /// The `data` of node `i` of type `ty` after its type (`None` for a node without),
    /// read into `items` or `members` (storage reused from node to node), for
    /// [`NodeSink::node`]; `p` stands after it. `None` (give up) for data that is not a
    /// literal or an array or object of literals.
    #[allow(clippy::ptr_arg)] // (as `NodeSink`)
    fn node_data(
        &mut self,
        i: usize,
        ty: &Cow<'a, str>,
        node: &mut impl NodeSink<'a>,
        items: &mut Vec<Json<'a>>,
        members: &mut Vec<(Cow<'a, str>, Json<'a>)>,
    ) -> Option<Option<Json<'a>>> {
        self.skip_ws();
        if self.peek()? == b'}' {
            return Some(None);
        }
        self.eat(b',')?;
        self.skip_ws();
        self.plain_key_is(b"data")?;
        let data = match self.peek()? {
            b'[' => {
                self.pos += 1;
                self.skip_ws();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                } else {
                    loop {
                        self.skip_ws();
                        items.push(self.literal()?);
                        self.skip_ws();
                        if self.eat(b',').is_none() {
                            self.eat(b']')?;
                            break;
                        }
                    }
                }
                Json::Array(std::mem::take(items))
            }
            b'{' => {
                self.pos += 1;
                self.skip_ws();
                let mut expected = node
                    .expected_fields(i, ty)
                    .iter()
                    .filter(|f| f.is_reflected());
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                } else {
                    loop {
                        self.skip_ws();
                        let key = match expected.next() {
                            Some(f) if self.key_is(f.name().as_bytes()) => Cow::Borrowed(f.name()),
                            _ => self.plain_key()?,
                        };
                        members.push((key, self.member_value()?));
                        self.skip_ws();
                        if self.eat(b',').is_none() {
                            self.eat(b'}')?;
                            break;
                        }
                    }
                }
                Json::Object(std::mem::take(members))
            }
            _ => self.literal()?,
        };
        Some(Some(data))
    }

    /// Where the reader stands (for [`rewind`](Self::rewind)).
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Back to `position`, a place it stood before.
    pub(crate) fn rewind(&mut self, position: usize) {
        self.pos = position;
    }

    /// Consumes `text` if it comes next, exactly (no white space is skipped).
    #[inline]
    pub(crate) fn eat_text(&mut self, text: &[u8]) -> bool {
        let end = self.pos + text.len();
        match self.bytes.get(self.pos..end) {
            Some(next) if short_eq(next, text) => {
                self.pos = end;
                true
            }
            _ => false,
        }
    }

    /// Consumes `b` if it is next.
    fn eat(&mut self, b: u8) -> Option<()> {
        if self.peek() == Some(b) {
            self.pos += 1;
            Some(())
        } else {
            None
        }
    }

    /// The key `key` (written without escapes) and its `:`, then white space; `None`
    /// (the caller gives up) for any other key, or the same one written with escapes.
    #[inline]
    fn plain_key_is(&mut self, key: &[u8]) -> Option<()> {
        let end = self.pos + key.len() + 1;
        if self.peek() != Some(b'"')
            || self.bytes.get(self.pos + 1..end) != Some(key)
            || self.bytes.get(end) != Some(&b'"')
        {
            return None;
        }
        self.pos = end + 1;
        self.skip_ws();
        self.eat(b':')?;
        self.skip_ws();
        Some(())
    }

    /// Whether the key `key` (written without escapes) is next: then it and its `:`
    /// are consumed, and white space after them; nothing is consumed if not.
    #[inline]
    fn key_is(&mut self, key: &[u8]) -> bool {
        let end = self.pos + key.len() + 1;
        // (Compared byte by byte: field names are short, and a call to `memcmp` cost
        // more than the loop.)
        let same = self.bytes.get(self.pos..=end).is_some_and(|s| {
            s[0] == b'"' && s[key.len() + 1] == b'"' && short_eq(&s[1..=key.len()], key)
        });
        let mut after = end + 1;
        while matches!(self.bytes.get(after), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            after += 1;
        }
        if !same || self.bytes.get(after) != Some(&b':') {
            return false;
        }
        self.pos = after + 1;
        self.skip_ws();
        true
    }

    /// A key and its `:`, then white space (the `"` must be next).
    fn plain_key(&mut self) -> Option<Cow<'a, str>> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let key = self.plain_string()?;
        self.skip_ws();
        self.eat(b':')?;
        self.skip_ws();
        Some(key)
    }

    /// A member's value in a node's `data` object: a literal, or (as a tensor's
    /// `shape` and `device` are) an array or object, read as `value` reads it at that
    /// depth (the document, `nodes`, the node, its data: four levels in).
    fn member_value(&mut self) -> Option<Json<'a>> {
        match self.peek()? {
            b'[' | b'{' => self.value(4).ok(),
            _ => self.literal(),
        }
    }

    /// A value that is not an array or object, as `value` reads it.
    pub(crate) fn literal(&mut self) -> Option<Json<'a>> {
        match self.peek()? {
            b'[' | b'{' => None,
            b'"' => self.plain_string().map(Json::Str),
            b'-' | b'0'..=b'9' => match self.plain_int() {
                Some(i) => Some(Json::Int(i)),
                None => self.value(0).ok(),
            },
            _ => self.value(0).ok(),
        }
    }

    /// A string (the `"` is next) as `string` reads it, found quickly when it has no
    /// escapes.
    fn plain_string(&mut self) -> Option<Cow<'a, str>> {
        let start = self.pos + 1;
        let rest = self.bytes.get(start..)?;
        let len = string_end(rest)?;
        if rest[len] == b'"' {
            // The text is UTF-8 and the quotes are ASCII: the slice is on boundaries.
            let s = self.text.get(start..start + len)?;
            self.pos = start + len + 1;
            return Some(Cow::Borrowed(s));
        }
        self.string().ok()
    }

    /// An integer in the `i64` range without fraction or exponent, as `number` reads
    /// it; `None` (and nothing consumed) for any other number.
    pub(crate) fn plain_int(&mut self) -> Option<i64> {
        let negative = self.peek() == Some(b'-');
        let first = self.pos + usize::from(negative);
        let mut end = first;
        // (Summed without checks: 19 digits or fewer stay below `u64::MAX`, and more are
        // refused below.)
        let mut magnitude = 0u64;
        while let Some(&c) = self.bytes.get(end) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            magnitude = magnitude.wrapping_mul(10).wrapping_add(u64::from(d));
            end += 1;
        }
        let digits = end - first;
        if digits == 0
            || digits > 19
            || (digits > 1 && self.bytes[first] == b'0')
            || matches!(self.bytes.get(end), Some(b'.' | b'e' | b'E'))
        {
            return None;
        }
        let v = if negative {
            // (`i64::MIN`'s magnitude is one more than `i64::MAX`.)
            0i64.checked_sub_unsigned(magnitude)?
        } else {
            i64::try_from(magnitude).ok()?
        };
        self.pos = end;
        Some(v)
    }

    fn number(&mut self) -> Result<Json<'a>, ParseError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let digits = |p: &mut Self| {
            let s = p.pos;
            while let Some(b'0'..=b'9') = p.peek() {
                p.pos += 1;
            }
            p.pos - s
        };
        let int_digits = digits(self);
        if int_digits == 0 {
            return Err(self.error("expected digits in a number"));
        }
        if int_digits > 1 && self.bytes[self.pos - int_digits] == b'0' {
            self.pos = start;
            return Err(self.error("leading zeros are not allowed in a number"));
        }
        let mut is_float = false;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            is_float = true;
            if digits(self) == 0 {
                return Err(self.error("expected digits after the decimal point"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            is_float = true;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return Err(self.error("expected digits in the exponent"));
            }
        }
        let text = &self.text[start..self.pos];
        if !is_float {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Json::Int(i));
            }
        }
        match text.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Json::Float(x)),
            // Rust reads `1e400` as infinity: refuse it rather than change the value
            // (infinity has its own spelling).
            Ok(_) => {
                self.pos = start;
                Err(self.error("number out of the range of a 64-bit float"))
            }
            Err(_) => Err(self.error("invalid number")),
        }
    }

    fn string(&mut self) -> Result<Cow<'a, str>, ParseError> {
        self.pos += 1; // the opening quote
        let start = self.pos;
        // Fast path: no escapes.
        loop {
            match self.peek() {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    let s = &self.text[start..self.pos];
                    self.pos += 1;
                    return Ok(Cow::Borrowed(s));
                }
                Some(b'\\') => break,
                Some(c) if c < 0x20 => {
                    return Err(self.error("control character in a string"));
                }
                Some(_) => self.pos += 1,
            }
        }
        let mut out = String::from(&self.text[start..self.pos]);
        loop {
            match self.peek() {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let Some(e) = self.peek() else {
                        return Err(self.error("unterminated escape"));
                    };
                    self.pos += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let c = if (0xD800..0xDC00).contains(&hi) {
                                if !self.bytes[self.pos..].starts_with(b"\\u") {
                                    return Err(self.error("unpaired surrogate in a string"));
                                }
                                self.pos += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(self.error("invalid low surrogate in a string"));
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else {
                                hi
                            };
                            match char::from_u32(c) {
                                Some(c) => out.push(c),
                                None => return Err(self.error("invalid \\u escape")),
                            }
                        }
                        _ => return Err(self.error("invalid escape in a string")),
                    }
                }
                Some(c) if c < 0x20 => {
                    return Err(self.error("control character in a string"));
                }
                Some(_) => {
                    // Copy a run of plain characters (the input is valid UTF-8, and
                    // runs end only at ASCII bytes, so the slice is on boundaries).
                    let s = self.pos;
                    while let Some(c) = self.peek() {
                        if c == b'"' || c == b'\\' || c < 0x20 {
                            break;
                        }
                        self.pos += 1;
                    }
                    out.push_str(&self.text[s..self.pos]);
                }
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let Some(h) = self.bytes.get(self.pos..self.pos + 4) else {
            return Err(self.error("truncated \\u escape"));
        };
        let mut v = 0u32;
        for &b in h {
            let d = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                b'A'..=b'F' => b - b'A' + 10,
                _ => return Err(self.error("invalid hex digit in a \\u escape")),
            };
            v = v * 16 + u32::from(d);
        }
        self.pos += 4;
        Ok(v)
    }
}

/// Appends `s` as a JSON string literal.
pub(crate) fn write_str(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Appends `x` so that it reads back as the same float (and as a float).
pub(crate) fn write_f64(out: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str("NaN");
    } else if x.is_infinite() {
        out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        // `{:?}` is the shortest text that reads back exactly, and keeps a `.0`.
        let _ = write!(out, "{x:?}");
    }
}

#[cfg(test)]
mod tests {

    /// The word-at-a-time scan agrees with a byte loop: every length up to 40, the stop
    /// byte at every position, and bytes that are near the stop bytes or above 0x7f.
    /// (Not under Miri: 40,000 scans of plain byte slices, in a crate that forbids unsafe
    /// code and touching no object, took minutes there and could find nothing.)
    #[test]
    #[cfg_attr(miri, ignore = "safe code over byte slices only; minutes under Miri")]
    fn string_end_agrees_with_a_byte_loop() {
        fn naive(s: &[u8]) -> Option<usize> {
            s.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        }
        let fillers = [b'a', b'!', b'#', b'[', b']', 0x20, 0x7f, 0x80, 0xc3, 0xff];
        let stops = [b'"', b'\\', 0x00, 0x1f, b'\n'];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..40 {
            for &fill in &fillers {
                let plain = vec![fill; len];
                assert_eq!(super::string_end(&plain), naive(&plain));
                for at in 0..len {
                    for &stop in &stops {
                        let mut s = plain.clone();
                        s[at] = stop;
                        // A second stop further on must not be reported first.
                        if at + 3 < len {
                            s[at + 3] = b'"';
                        }
                        assert_eq!(super::string_end(&s), Some(at), "{s:?}");
                    }
                }
            }
            // Random bytes.
            for _ in 0..50 {
                let s: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        (seed >> 24) as u8
                    })
                    .collect();
                assert_eq!(super::string_end(&s), naive(&s), "{s:?}");
            }
        }
    }
    use super::*;

    #[test]
    fn parses_and_writes() {
        let v = parse(
            r#" {"a": [1, -2.5, 1e3, "x\n\u00e9\ud83d\ude00", true, null, NaN, -Infinity]} "#,
        )
        .unwrap();
        let Json::Object(m) = &v else { panic!() };
        let Json::Array(items) = &m[0].1 else {
            panic!()
        };
        assert_eq!(items[0], Json::Int(1));
        assert_eq!(items[1], Json::Float(-2.5));
        assert_eq!(items[2], Json::Float(1000.0));
        assert_eq!(items[3], Json::Str("x\né😀".into()));
        assert!(matches!(items[6], Json::Float(x) if x.is_nan()));
        assert_eq!(parse("99999999999999999999").unwrap(), Json::Float(1e20));
        assert_eq!(parse("1e-400").unwrap(), Json::Float(0.0));
        assert_eq!(
            parse("-1.7976931348623157e308").unwrap(),
            Json::Float(f64::MIN)
        );
        for i in [0, 7, -1, 10, -10, 1 << 40, i64::MAX, i64::MIN] {
            let mut s = String::new();
            crate::text::push_i64(&mut s, i);
            assert_eq!(s, i.to_string());
        }
        let mut s = String::new();
        crate::text::push_u64(&mut s, u64::MAX);
        assert_eq!(s, u64::MAX.to_string());
        let mut s = String::new();
        write_str(&mut s, "a\"\\\u{1}é");
        assert_eq!(s, r#""a\"\\\u0001é""#);
        assert_eq!(parse(&s).unwrap(), Json::Str("a\"\\\u{1}é".into()));
    }

    #[test]
    fn the_fast_reader_reads_literals_as_value_does() {
        for text in [
            "0",
            "-0",
            "7",
            "-12",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "-9223372036854775809",
            "99999999999999999999",
            "9999999999999999999",
            "-9999999999999999999",
            "1234567890123456789",
            "-1234567890123456789",
            "18446744073709551615",
            "18446744073709551616",
            "00",
            "-01",
            "1.5",
            "-2e3",
            "1E2",
            "01",
            "-",
            "-a",
            "-Infinity",
            "NaN",
            "true",
            "null",
            "\"a\"",
            "\"a\\nb\"",
            "\"é\"",
            "\"\u{1}\"",
            "\"open",
        ] {
            let expected = parse(text).ok();
            let mut p = Parser::new(text);
            let fast = p.literal().filter(|_| p.pos == text.len());
            match (&expected, &fast) {
                (Some(Json::Float(a)), Some(Json::Float(b))) if a.is_nan() => assert!(b.is_nan()),
                _ => assert_eq!(fast, expected, "{text}"),
            }
        }
    }

    #[test]
    fn errors_have_positions() {
        for (text, line, col) in [
            ("{\"a\": }", 1, 7),
            ("[1,\n 2,,]", 2, 4),
            ("\"abc", 1, 5),
            ("01", 1, 1),
            ("[1] x", 1, 5),
            ("[1, 1e400]", 1, 5),
            ("[\n -2e308]", 2, 2),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!((e.line, e.column), (line, col), "{text}: {e:?}");
        }
        assert!(parse("1e400")
            .unwrap_err()
            .message
            .contains("out of the range"));
        let deep = "[".repeat(MAX_DEPTH + 1);
        assert!(parse(&deep).unwrap_err().message.contains("nesting"));
    }
}
