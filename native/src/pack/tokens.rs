//! The `headings` packing in cl100k_base tokens: `narezka.split.context`'s token costs and
//! `narezka.split.sizes`' estimates, with the packer's token branches in `pack.rs`.
//!
//! Python sizes a group from its pieces' counts through word ends
//! (`narezka.tokens.word_ends`); its decisions are those of the exact count of each range's
//! `embed_text`. Here the document is pre-tokenized once and every count is exact: a range's
//! own text between its first and last word end is a difference of two running totals, and
//! only its edges, with the breadcrumb before and a fence after, are tokenized. What Python
//! guesses rather than counts (a piece's own tokens summed with a token per line break, the
//! characters per token seen so far) is followed step for step, since where a guess sends the
//! packer decides where chunks end.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::rc::Rc;
use std::sync::OnceLock;

use pyo3::prelude::*;

use super::{bisect_right, Doc, Range, CODE, FENCE, TABLE};
use crate::bpe::{Counter, FxHasher};

/// Maps keyed by offsets, hashed as the ranks are.
type Fx<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// A frame text and the atom it belongs to.
type Frame = Option<(usize, Rc<str>)>;

/// What `embed_text` puts around a range: the breadcrumb (with its pair of sections) and a
/// split atom's frame before and after (none: no frame, or an empty one).
struct Around {
    key: Range,
    crumb: Rc<str>,
    before: Frame,
    after: Frame,
}

/// A frame's atom in a cache key (0: none).
fn atom_key(frame: &Frame) -> usize {
    frame.as_ref().map_or(0, |(k, _)| k + 1)
}

/// `RAW_CHARS_PER_TOKEN` of `narezka.split.sizes`.
pub const RAW_CHARS_PER_TOKEN: usize = 8;

/// One document's token state: what `DocumentContext` and `Sizes` keep for the packer.
pub struct Tok<'a, 'py> {
    pub counter: &'a Counter,
    pub cache: HashMap<Vec<u8>, u32>,
    pub text: &'a str,
    /// The byte offset of each character, and of the end.
    pub byte_at: Vec<usize>,
    /// The word ends that are pre-token starts of the whole text, ascending, and the tokens
    /// before each.
    pub ends: Vec<usize>,
    pub before: Vec<i64>,
    /// Whether the document needs no sanitizing (`DocumentContext.clean`).
    pub clean: bool,
    /// Starts and ends of the spans sanitizing may change (`WordEndSizes._changed`).
    pub changed: (Vec<usize>, Vec<usize>),
    /// `ctx.embed_text(start, end)`: asked where sanitizing may change the range.
    pub embed: Bound<'py, PyAny>,
    /// The range's own text as a piece is counted (`Sizes._sanitized`), likewise.
    pub sanitized: Bound<'py, PyAny>,
    crumbs: Fx<Range, Rc<str>>,
    frames: Fx<usize, (Rc<str>, Rc<str>)>,
    costs: Fx<Range, i64>,
    /// Exact counts of `embed_text` (`DocumentContext._tokens`).
    exact: Fx<Range, i64>,
    /// Counts of ranges' own text (`DocumentContext._body`).
    bodies: Fx<Range, i64>,
    /// Counts of the breadcrumb and frames together, by the sections and atoms.
    overheads: Fx<(Range, usize, usize), i64>,
    /// The count of a range's start to its first word end after what goes before it (by
    /// start, sections and atom), and of its end from its last word end with what goes after
    /// it: ranges tried with one start and many ends (a group grown, a hard split's
    /// bisection) share them.
    heads: Fx<(usize, Range, usize), i64>,
    tails: Fx<(usize, usize), i64>,
    /// Characters and tokens of the bodies counted so far (`DocumentContext._density`).
    pub density: (usize, usize),
    pub max_probe: usize,
    buf: String,
}

/// Python's `unicodedata.category(c)[0] == "L"` where `narezka.tokens.word_ends` trusts it
/// (below U+0500), as the pre-tokenizer's `\p{L}` reads it.
fn letters() -> &'static [bool] {
    static TABLE: OnceLock<Vec<bool>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let letter = regex::Regex::new(r"^\p{L}$").expect("the pattern compiles");
        (0..0x500u32)
            .map(|c| char::from_u32(c).is_some_and(|c| letter.is_match(c.encode_utf8(&mut [0; 4]))))
            .collect()
    })
}

/// `narezka.tokens.word_ends`' letters: ASCII ones, and others from U+00C0 to U+04FF.
fn trusted_letter(c: char, table: &[bool]) -> bool {
    c.is_ascii_alphabetic() || ('\u{c0}'..'\u{500}').contains(&c) && table[c as usize]
}

impl<'a, 'py> Tok<'a, 'py> {
    #[allow(clippy::too_many_arguments)] // the context's answers, once per document
    pub fn new(
        counter: &'a Counter,
        cache: HashMap<Vec<u8>, u32>,
        text: &'a str,
        chars: &[char],
        clean: bool,
        changed: (Vec<usize>, Vec<usize>),
        embed: Bound<'py, PyAny>,
        sanitized: Bound<'py, PyAny>,
        budget: i64,
    ) -> Self {
        let mut byte_at = Vec::with_capacity(chars.len() + 1);
        byte_at.extend(text.char_indices().map(|(b, _)| b));
        byte_at.push(text.len());
        let mut tok = Tok {
            counter,
            cache,
            text,
            byte_at,
            ends: Vec::new(),
            before: Vec::new(),
            clean,
            changed,
            embed,
            sanitized,
            crumbs: Fx::default(),
            frames: Fx::default(),
            costs: Fx::default(),
            exact: Fx::default(),
            bodies: Fx::default(),
            overheads: Fx::default(),
            heads: Fx::default(),
            tails: Fx::default(),
            density: (0, 0),
            max_probe: (budget.max(0) as usize * RAW_CHARS_PER_TOKEN).max(1),
            buf: String::new(),
        };
        tok.running_totals(chars);
        tok
    }

    /// The word ends of the text that start a pre-token of it, with the tokens before each:
    /// the text from one to another counts their difference (see `narezka.tokens.word_ends`:
    /// no pre-token crosses a word end, and none looks behind it).
    fn running_totals(&mut self, chars: &[char]) {
        let table = letters();
        let mut starts: Vec<(usize, i64)> = Vec::new();
        let mut total = 0i64;
        self.counter.pieces(self.text, &mut self.cache, |at, n| {
            starts.push((at, total));
            total += n as i64;
        });
        let mut k = 0;
        for p in 1..chars.len() {
            let c = chars[p];
            if !(c.is_ascii() && !c.is_ascii_alphabetic() && trusted_letter(chars[p - 1], table)) {
                continue;
            }
            let byte = self.byte_at[p];
            while k < starts.len() && starts[k].0 < byte {
                k += 1;
            }
            // Always a pre-token start; were it not, leaving it out only costs time.
            if k < starts.len() && starts[k].0 == byte {
                self.ends.push(p);
                self.before.push(starts[k].1);
            }
        }
    }

    fn count_str(&mut self, s: &str) -> i64 {
        self.counter.count(s, &mut self.cache) as i64
    }

    /// `count(head[0] + head[1] + text[a:b] + tail)`, tokenizing only the edges up to the range's first
    /// word end and from its last one; `head_key` and `tail_key` name `head` and `tail`.
    fn count_span(
        &mut self,
        head_key: (Range, usize),
        head: [&str; 2],
        (a, b): Range,
        tail_key: usize,
        tail: &str,
    ) -> i64 {
        let k1 = self.ends.partition_point(|&p| p <= a);
        let k2 = self.ends.partition_point(|&p| p < b);
        let mut buf = std::mem::take(&mut self.buf);
        let n = if k1 < k2 {
            let (p1, p2) = (self.ends[k1], self.ends[k2 - 1]);
            let hk = (a, head_key.0, head_key.1);
            let first = match self.heads.get(&hk) {
                Some(&n) => n,
                None => {
                    buf.clear();
                    buf.extend(head);
                    buf.push_str(&self.text[self.byte_at[a]..self.byte_at[p1]]);
                    let n = self.count_str(&buf);
                    self.heads.insert(hk, n);
                    n
                }
            };
            let last = match self.tails.get(&(b, tail_key)) {
                Some(&n) => n,
                None => {
                    buf.clear();
                    buf.push_str(&self.text[self.byte_at[p2]..self.byte_at[b]]);
                    buf.push_str(tail);
                    let n = self.count_str(&buf);
                    self.tails.insert((b, tail_key), n);
                    n
                }
            };
            first + self.before[k2 - 1] - self.before[k1] + last
        } else {
            buf.clear();
            buf.extend(head);
            buf.push_str(&self.text[self.byte_at[a]..self.byte_at[b]]);
            buf.push_str(tail);
            self.count_str(&buf)
        };
        self.buf = buf;
        n
    }

    /// `WordEndSizes._meets_change`.
    fn meets_change(&self, start: usize, end: usize) -> bool {
        let (starts, ends) = &self.changed;
        let k = bisect_right(ends, start);
        k < starts.len() && starts[k] < end
    }
}

fn floor_of(start: usize, end: usize) -> i64 {
    end.saturating_sub(start).div_ceil(RAW_CHARS_PER_TOKEN) as i64
}

impl<'a, 'py> Doc<'a, 'py> {
    fn tok(&mut self) -> &mut Tok<'a, 'py> {
        self.tok.as_mut().expect("a document packed in tokens")
    }

    /// `DocumentContext.crumb`, once per pair of sections (the pair is the key).
    fn crumb_text(&mut self, start: usize, end: usize) -> PyResult<(Range, Rc<str>)> {
        let starts = &self.section_starts;
        let key = (
            bisect_right(starts, start),
            bisect_right(starts, start.max(end.saturating_sub(1))),
        );
        if let Some(s) = self.tok().crumbs.get(&key) {
            return Ok((key, s.clone()));
        }
        let s: String = self.crumb.call1((start, end))?.extract()?;
        let s: Rc<str> = s.into();
        self.tok().crumbs.insert(key, s.clone());
        Ok((key, s))
    }

    fn frame_texts(&mut self, k: usize) -> PyResult<(Rc<str>, Rc<str>)> {
        if let Some(f) = self.tok().frames.get(&k) {
            return Ok(f.clone());
        }
        let (a, b): (String, String) = self.frame.call1((k,))?.extract()?;
        let f: (Rc<str>, Rc<str>) = (a.into(), b.into());
        self.tok().frames.insert(k, f.clone());
        Ok(f)
    }

    /// The breadcrumb and `DocumentContext._atom_context`: the frame before and after a
    /// piece of a split atom.
    fn around(&mut self, start: usize, end: usize) -> PyResult<Around> {
        let (key, crumb) = self.crumb_text(start, end)?;
        let mut around = Around {
            key,
            crumb,
            before: None,
            after: None,
        };
        if self.atoms.is_empty() {
            return Ok(around);
        }
        if let Some(k) = self.atom_at(start) {
            let a = self.atoms[k];
            let framed = if a.kind & TABLE != 0 {
                start >= self.table_body_start(a)
            } else {
                a.kind & CODE != 0 && a.kind & FENCE != 0
            };
            if framed {
                let text = self.frame_texts(k)?.0;
                around.before = (!text.is_empty()).then_some((k, text));
            }
        }
        if let Some(k) = self.atom_at(end) {
            let a = self.atoms[k];
            if a.kind & CODE != 0 && a.kind & FENCE != 0 {
                let text = self.frame_texts(k)?.1;
                around.after = (!text.is_empty()).then_some((k, text));
            }
        }
        Ok(around)
    }

    /// The exact count of the range's `embed_text`.
    pub(super) fn exact_count(&mut self, start: usize, end: usize) -> PyResult<i64> {
        let around = self.around(start, end)?;
        let tok = self.tok();
        let framed = around.before.is_some() || around.after.is_some();
        if !tok.clean && (framed || tok.meets_change(start, end)) {
            // Sanitizing may change it: Python makes the text.
            let text: String = tok.embed.call1((start, end))?.extract()?;
            return Ok(tok.count_str(&text));
        }
        let head = [
            &*around.crumb,
            around.before.as_ref().map_or("", |(_, b)| b),
        ];
        let tail = around.after.as_ref().map_or("", |(_, t)| t);
        let head_key = (around.key, atom_key(&around.before));
        Ok(tok.count_span(head_key, head, (start, end), atom_key(&around.after), tail))
    }

    /// `DocumentContext.cost` in tokens (a document without secrets).
    pub(super) fn token_cost(&mut self, start: usize, end: usize) -> PyResult<i64> {
        if let Some(&v) = self.tok().costs.get(&(start, end)) {
            return Ok(v);
        }
        // A cheap lower bound settles far-too-long ranges without tokenizing them.
        let floor = floor_of(start, end);
        let value = if floor > self.budget {
            floor
        } else {
            let exact = self.exact_count(start, end)?;
            self.tok().exact.insert((start, end), exact);
            exact.max(floor)
        };
        self.tok().costs.insert((start, end), value);
        Ok(value)
    }

    /// `Sizes.overhead_tokens`: the breadcrumb and frame around a range, counted together.
    pub(super) fn overhead(&mut self, start: usize, end: usize) -> PyResult<i64> {
        let around = self.around(start, end)?;
        let key = (
            around.key,
            atom_key(&around.before),
            atom_key(&around.after),
        );
        let tok = self.tok();
        if let Some(&n) = tok.overheads.get(&key) {
            return Ok(n);
        }
        let mut s = around.crumb.to_string();
        for (_, frame) in [&around.before, &around.after].into_iter().flatten() {
            s.push_str(frame);
        }
        let n = tok.count_str(&s);
        tok.overheads.insert(key, n);
        Ok(n)
    }

    fn own_count(&mut self, start: usize, end: usize) -> PyResult<i64> {
        let tok = self.tok();
        if tok.clean || !tok.meets_change(start, end) {
            // (no section pair is (MAX, MAX): the key of an empty head)
            let none = ((usize::MAX, usize::MAX), 0);
            return Ok(tok.count_span(none, ["", ""], (start, end), 0, ""));
        }
        let text: String = tok.sanitized.call1((start, end))?.extract()?;
        Ok(tok.count_str(&text))
    }

    /// `Sizes.body_tokens`: the range's own tokens, the packer's summand.
    pub(super) fn body_tokens(&mut self, start: usize, end: usize) -> PyResult<i64> {
        if let Some(&n) = self.tok().bodies.get(&(start, end)) {
            return Ok(n);
        }
        if end - start > self.tok().max_probe {
            return Ok(floor_of(start, end));
        }
        let n = self.own_count(start, end)?;
        let tok = self.tok();
        tok.bodies.insert((start, end), n);
        tok.density = (tok.density.0 + end - start, tok.density.1 + n as usize);
        Ok(n)
    }

    /// `Sizes.count_bodies`: the pieces one merge will group, counted before it (only a
    /// batch of two or more: the density moves as Python's does).
    pub(super) fn count_bodies(&mut self, pieces: &[Range]) -> PyResult<()> {
        let tok = self.tok();
        let cap = tok.max_probe;
        let todo: Vec<Range> = pieces
            .iter()
            .copied()
            .filter(|&(s, e)| !tok.bodies.contains_key(&(s, e)) && e - s <= cap)
            .collect();
        if todo.len() < 2 {
            return Ok(());
        }
        let (mut chars, mut tokens) = (0, 0);
        for &(s, e) in &todo {
            let n = self.own_count(s, e)?;
            self.tok().bodies.insert((s, e), n);
            chars += e - s;
            tokens += n as usize;
        }
        let tok = self.tok();
        tok.density = (tok.density.0 + chars, tok.density.1 + tokens);
        Ok(())
    }

    /// `Sizes.likely_fits`: short for the document's budget at the characters per token
    /// seen so far (a guess that decides which ranges are tried whole).
    pub(super) fn likely_fits(&mut self, start: usize, end: usize) -> bool {
        let (chars, tokens) = self.tok().density;
        let per_token = if tokens >= 100 {
            chars as f64 / tokens as f64
        } else {
            2.0
        };
        (end - start) as f64 <= 0.8 * self.budget as f64 * per_token
    }

    /// The exact count of each range's `embed_text` (what `make_chunks` would count).
    pub fn chunk_counts(&mut self, ranges: &[Range]) -> PyResult<Vec<i64>> {
        ranges
            .iter()
            .map(|&r| match self.tok().exact.get(&r) {
                Some(&n) => Ok(n),
                None => self.exact_count(r.0, r.1),
            })
            .collect()
    }
}

/// `narezka.split.headings`' ranges in cl100k_base tokens for a document without secrets,
/// with each one's exact count, or None when `text` holds a character the core leaves to
/// Python. `crumb` answers with a breadcrumb's text, `frame` with a split atom's two frame
/// texts; `embed` (`ctx.embed_text`) and `sanitized` are asked only where `changed` (the
/// spans sanitizing may change, in a document that is not `clean`) meets the range.
#[pyfunction]
#[allow(clippy::too_many_arguments)] // one document's state, as the context holds it
pub fn pack_headings_tokens<'py>(
    counter: PyRef<'py, crate::Cl100kCounter>,
    text: Bound<'py, pyo3::types::PyString>,
    bounds: Vec<usize>,
    headings: Vec<(usize, usize)>,
    block_starts: Vec<usize>,
    mut glued: Vec<usize>,
    atoms: Vec<(usize, usize, u8)>,
    section_starts: Vec<usize>,
    budget: i64,
    min_chars: usize,
    crumb: Bound<'py, PyAny>,
    frame: Bound<'py, PyAny>,
    clean: bool,
    changed: (Vec<usize>, Vec<usize>),
    embed: Bound<'py, PyAny>,
    sanitized: Bound<'py, PyAny>,
) -> PyResult<Option<(Vec<Range>, Vec<i64>)>> {
    // A lone surrogate has no UTF-8 form: such a text is Python's to pack.
    let Ok(src) = text.to_str() else {
        return Ok(None);
    };
    let Some(parsed) = crate::sentences::Text::new(src) else {
        return Ok(None);
    };
    glued.sort_unstable();
    // The piece cache leaves its lock while the document is packed: the callbacks count
    // breadcrumbs and frames through the same counter.
    let poisoned = || pyo3::exceptions::PyRuntimeError::new_err("poisoned");
    let cache = std::mem::take(&mut *counter.cache.lock().map_err(|_| poisoned())?);
    let tok = Tok::new(
        &counter.counter,
        cache,
        src,
        &parsed.chars,
        clean,
        changed,
        embed,
        sanitized,
        budget,
    );
    let mut doc = Doc::new(
        &parsed,
        block_starts,
        glued,
        atoms,
        section_starts,
        budget,
        crumb,
        frame,
        Some(tok),
        Vec::new(),
    );
    let headings: HashMap<usize, usize> = headings.into_iter().collect();
    let found = super::pack_headings(&mut doc, &bounds, &headings, min_chars)
        .and_then(|ranges| Ok((doc.chunk_counts(&ranges)?, ranges)));
    if let Some(tok) = doc.tok.take() {
        let mut held = counter.cache.lock().map_err(|_| poisoned())?;
        if held.len() < tok.cache.len() {
            *held = tok.cache;
        }
    }
    let (counts, ranges) = found?;
    Ok(Some((ranges, counts)))
}
