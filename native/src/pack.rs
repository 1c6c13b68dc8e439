//! The `headings` strategy's packing in characters: `narezka.split.headings` with
//! `narezka.split.packer.Packer` and the character costs of `narezka.split.context`, step for
//! step, so the ranges it hands back are the ones the Python reference makes. What stays in
//! Python is asked through two callbacks, once per distinct answer: a breadcrumb's length
//! (titles, their shortening) and a split atom's frame (its repeated header or fences).

use std::collections::HashMap;

use pyo3::prelude::*;

use crate::chars::{COMBINING, SPACE};

pub mod recursive;
pub mod tokens;

/// An atom's kind bits, as `narezka.split.headings` sends them.
pub const TABLE: u8 = 1;
pub const CODE: u8 = 2;
/// A code block with an opening fence (its pieces repeat it).
pub const FENCE: u8 = 4;
/// A code block with a closing fence line.
pub const FENCE_CLOSE: u8 = 8;

#[derive(Clone, Copy)]
pub struct Atom {
    pub start: usize,
    pub end: usize,
    pub kind: u8,
}

pub type Range = (usize, usize);

/// One document's state: what `DocumentContext` holds for the packer.
pub struct Doc<'a, 'py> {
    pub chars: &'a [char],
    pub flags: &'a [u8],
    pub sentences: &'a crate::sentences::Text,
    pub block_starts: Vec<usize>,
    /// Block starts no block cut may use (after a heading or a lead-in colon), sorted.
    pub glued: Vec<usize>,
    pub atoms: Vec<Atom>,
    pub atom_starts: Vec<usize>,
    pub section_starts: Vec<usize>,
    pub budget: i64,
    /// `len(ctx.crumb(start, end))`.
    pub crumb: Bound<'py, PyAny>,
    /// `ctx.frame_lengths(k)`: the lengths of atom `k`'s frame, before and after a piece.
    pub frame: Bound<'py, PyAny>,
    pub crumbs: HashMap<Range, i64>,
    pub frames: HashMap<usize, (i64, i64)>,
    /// In tokens: their state (`crumb` and `frame` then answer with the texts).
    pub tok: Option<tokens::Tok<'a, 'py>>,
    /// The refiners, coarsest first, before the atom bounds (empty: the `headings` ones).
    pub refiners: Vec<Refiner>,
}

impl<'a, 'py> Doc<'a, 'py> {
    /// A document as the entry points receive it: atoms as `(start, end, kind)` triples in
    /// order, the caches empty.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        parsed: &'a crate::sentences::Text,
        block_starts: Vec<usize>,
        glued: Vec<usize>,
        atoms: Vec<(usize, usize, u8)>,
        section_starts: Vec<usize>,
        budget: i64,
        crumb: Bound<'py, PyAny>,
        frame: Bound<'py, PyAny>,
        tok: Option<tokens::Tok<'a, 'py>>,
        refiners: Vec<Refiner>,
    ) -> Self {
        let atoms: Vec<Atom> = atoms
            .into_iter()
            .map(|(start, end, kind)| Atom { start, end, kind })
            .collect();
        Doc {
            chars: &parsed.chars,
            flags: &parsed.flags,
            sentences: parsed,
            block_starts,
            glued,
            atom_starts: atoms.iter().map(|a| a.start).collect(),
            atoms,
            section_starts,
            budget,
            crumb,
            frame,
            crumbs: HashMap::new(),
            frames: HashMap::new(),
            tok,
            refiners,
        }
    }
}

/// A refiner of `narezka.split.cuts.Cuts`.
#[derive(Clone)]
pub enum Refiner {
    /// No cuts: a list of no separators but characters.
    Nothing,
    Sentences,
    /// `separator_cuts`: just after each occurrence of a literal separator.
    Separator(Vec<char>),
}

/// Python's `bisect_right`.
fn bisect_right(v: &[usize], x: usize) -> usize {
    v.partition_point(|&y| y <= x)
}

/// Python's `bisect_left`.
fn bisect_left(v: &[usize], x: usize) -> usize {
    v.partition_point(|&y| y < x)
}

impl Doc<'_, '_> {
    fn space(&self, i: usize) -> bool {
        self.flags[i] & SPACE != 0
    }

    /// `text.find("\n", a, b)`.
    fn find_nl(&self, a: usize, b: usize) -> Option<usize> {
        let b = b.min(self.chars.len());
        (a..b).find(|&i| self.chars[i] == '\n')
    }

    /// `text.rfind("\n", a, b)`.
    fn rfind_nl(&self, a: usize, b: usize) -> Option<usize> {
        let b = b.min(self.chars.len());
        (a..b).rev().find(|&i| self.chars[i] == '\n')
    }

    /// `DocumentContext.atom_at`: the index of the atom strictly containing `pos`.
    fn atom_at(&self, pos: usize) -> Option<usize> {
        let k = bisect_right(&self.atom_starts, pos).checked_sub(1)?;
        let a = self.atoms[k];
        (a.start < pos && pos < a.end).then_some(k)
    }

    /// `DocumentContext.atom_range`.
    fn atom_range(&self, start: usize, end: usize) -> Option<Range> {
        if end <= start + 1 {
            return None;
        }
        let a = self.atoms[self.atom_at(start + 1)?];
        (a.start <= start && end <= a.end).then_some((a.start, a.end))
    }

    /// `DocumentContext.table_body_start`.
    fn table_body_start(&self, a: Atom) -> usize {
        let mut pos = a.start;
        for _ in 0..2 {
            match self.find_nl(pos, a.end) {
                Some(nl) => pos = nl + 1,
                None => return a.end,
            }
        }
        pos
    }

    /// `DocumentContext.trim`.
    pub fn trim(&self, start: usize, end: usize) -> Range {
        let (mut s, mut e) = (start, end);
        while s < e && self.space(s) {
            s += 1;
        }
        while e > s && self.space(e - 1) {
            e -= 1;
        }
        if s < e && !self.atoms.is_empty() {
            if let Some(k) = bisect_right(&self.atom_starts, s).checked_sub(1) {
                let a = self.atoms[k];
                if start <= a.start && a.start < s && s < a.end {
                    s = a.start;
                }
            }
            if let Some(k) = bisect_right(&self.atom_starts, e).checked_sub(1) {
                let a = self.atoms[k];
                if a.start < e && e < a.end && a.end <= end {
                    e = a.end;
                }
            }
        }
        (s, e)
    }

    fn frame(&mut self, k: usize) -> PyResult<(i64, i64)> {
        if let Some(&f) = self.frames.get(&k) {
            return Ok(f);
        }
        let f: (i64, i64) = self.frame.call1((k,))?.extract()?;
        self.frames.insert(k, f);
        Ok(f)
    }

    /// `DocumentContext.crumb`'s length, by the sections the range touches.
    fn crumb_len(&mut self, start: usize, end: usize) -> PyResult<i64> {
        let starts = &self.section_starts;
        let key = (
            bisect_right(starts, start),
            bisect_right(starts, start.max(end.saturating_sub(1))),
        );
        if let Some(&n) = self.crumbs.get(&key) {
            return Ok(n);
        }
        let n: i64 = self.crumb.call1((start, end))?.extract()?;
        self.crumbs.insert(key, n);
        Ok(n)
    }

    /// `DocumentContext.cost` in characters, for a document without secrets.
    pub fn cost(&mut self, start: usize, end: usize) -> PyResult<i64> {
        if self.tok.is_some() {
            return self.token_cost(start, end);
        }
        let mut value = self.crumb_len(start, end)? + end as i64 - start as i64;
        if self.atoms.is_empty() {
            return Ok(value);
        }
        if let Some(k) = self.atom_at(start) {
            let a = self.atoms[k];
            let before = if a.kind & TABLE != 0 {
                start >= self.table_body_start(a)
            } else {
                a.kind & CODE != 0 && a.kind & FENCE != 0
            };
            if before {
                value += self.frame(k)?.0;
            }
        }
        if let Some(k) = self.atom_at(end) {
            let a = self.atoms[k];
            if a.kind & CODE != 0 && a.kind & FENCE != 0 {
                value += self.frame(k)?.1;
            }
        }
        Ok(value)
    }

    /// `DocumentContext.flat_cost` (no secrets here).
    fn flat_cost(&mut self, pieces: &[Range]) -> PyResult<Option<i64>> {
        let (start, end) = (pieces[0].0, pieces[pieces.len() - 1].1);
        if end <= start {
            return Ok(None);
        }
        let starts = &self.section_starts;
        if bisect_right(starts, start) != bisect_right(starts, end - 1) {
            return Ok(None);
        }
        if !self.atoms.is_empty()
            && pieces
                .iter()
                .any(|&(s, e)| self.atom_at(s).is_some() || self.atom_at(e).is_some())
        {
            return Ok(None);
        }
        Ok(Some(self.crumb_len(start, end)?))
    }

    // ---- refiners (`narezka.split.cuts.Cuts`) --------------------------------------------

    fn atom_row_cuts(&self, start: usize, end: usize) -> Vec<usize> {
        let Some(k) = self.atom_at(start).or_else(|| self.atom_at(start + 1)) else {
            return Vec::new();
        };
        let a = self.atoms[k];
        if !(a.start <= start && end <= a.end) {
            return Vec::new();
        }
        let mut first = if a.kind & TABLE != 0 {
            self.table_body_start(a)
        } else {
            a.start
        };
        if a.kind & CODE != 0 && a.kind & FENCE != 0 {
            first = self.find_nl(a.start, a.end).map_or(0, |nl| nl + 1);
        }
        let mut cuts = Vec::new();
        let mut pos = self.find_nl(start.max(first.saturating_sub(1)), end);
        while let Some(p) = pos {
            if p + 1 >= end {
                break;
            }
            if p + 1 > first {
                cuts.push(p + 1);
            }
            pos = self.find_nl(p + 1, end);
        }
        if a.kind & CODE != 0 && a.kind & FENCE_CLOSE != 0 && !cuts.is_empty() {
            let last_line = self.rfind_nl(a.start, a.end).map_or(0, |nl| nl + 1);
            cuts.retain(|&c| c != last_line);
        }
        cuts
    }

    fn outside_atoms(&self, start: usize, end: usize, cuts: Vec<usize>) -> Vec<usize> {
        if self.atom_range(start, end).is_some() {
            let rows = self.atom_row_cuts(start, end);
            return if rows.is_empty() { cuts } else { rows };
        }
        cuts.into_iter()
            .filter(|&c| self.atom_at(c).is_none())
            .collect()
    }

    fn block_cuts(&self, start: usize, end: usize) -> Vec<usize> {
        let lo = bisect_right(&self.block_starts, start);
        let hi = bisect_left(&self.block_starts, end);
        (lo..hi)
            .map(|k| self.block_starts[k])
            .filter(|c| self.glued.binary_search(c).is_err())
            .collect()
    }

    fn sentence_cuts(&self, start: usize, end: usize) -> Vec<usize> {
        let ends = if start < end && end <= self.chars.len() {
            crate::sentences::sentence_ends(self.sentences, start, end)
        } else {
            Vec::new()
        };
        let ends = ends.into_iter().filter(|&c| start < c && c < end).collect();
        self.outside_atoms(start, end, ends)
    }

    fn line_cuts(&self, start: usize, end: usize) -> Vec<usize> {
        let cuts = (start..end.min(self.chars.len()))
            .filter(|&i| self.chars[i] == '\n' && start < i + 1 && i + 1 < end)
            .map(|i| i + 1)
            .collect();
        self.outside_atoms(start, end, cuts)
    }

    /// The ends of the whitespace runs (`\s+`) strictly inside the range.
    fn word_cuts(&self, start: usize, end: usize) -> Vec<usize> {
        let mut cuts = Vec::new();
        let mut i = start;
        while i < end {
            if self.space(i) {
                let mut j = i;
                while j < end && self.space(j) {
                    j += 1;
                }
                if start < j && j < end {
                    cuts.push(j);
                }
                i = j;
            } else {
                i += 1;
            }
        }
        self.outside_atoms(start, end, cuts)
    }

    fn atom_bounds(&self, start: usize, end: usize) -> Vec<usize> {
        if self.atom_range(start, end).is_some() {
            return Vec::new();
        }
        let mut cuts: Vec<usize> = Vec::new();
        let mut k = bisect_right(&self.atom_starts, start).saturating_sub(1);
        while k < self.atoms.len() && self.atoms[k].start < end {
            for pos in [self.atoms[k].start, self.atoms[k].end] {
                if start < pos && pos < end && cuts.last().is_none_or(|&l| l < pos) {
                    cuts.push(pos);
                }
            }
            k += 1;
        }
        cuts
    }

    /// `Cuts.separator_cuts`: after every occurrence of `sep` that lies in the range.
    fn separator_cuts(&self, sep: &[char], start: usize, end: usize) -> Vec<usize> {
        let mut cuts = Vec::new();
        let end_in = end.min(self.chars.len());
        let mut pos = start;
        while pos + sep.len() <= end_in {
            if self.chars[pos..pos + sep.len()] == *sep {
                let cut = pos + sep.len();
                if start < cut && cut < end {
                    cuts.push(cut);
                }
                pos = cut;
            } else {
                pos += 1;
            }
        }
        self.outside_atoms(start, end, cuts)
    }

    /// How many refiners the packer has, the atom bounds last.
    fn refiner_count(&self) -> usize {
        if self.refiners.is_empty() {
            REFINERS
        } else {
            self.refiners.len() + 1
        }
    }

    fn refine(&self, depth: usize, start: usize, end: usize) -> Vec<usize> {
        if !self.refiners.is_empty() {
            return match self.refiners.get(depth) {
                Some(Refiner::Nothing) => Vec::new(),
                Some(Refiner::Sentences) => self.sentence_cuts(start, end),
                Some(Refiner::Separator(sep)) => self.separator_cuts(sep, start, end),
                None => self.atom_bounds(start, end),
            };
        }
        match depth {
            0 => self.block_cuts(start, end),
            1 => self.sentence_cuts(start, end),
            2 => self.line_cuts(start, end),
            3 => self.word_cuts(start, end),
            _ => self.atom_bounds(start, end),
        }
    }
}

const REFINERS: usize = 5;

/// `narezka.split.packer.Packer` as `DocumentContext.packer` makes it in characters.
#[derive(Clone, Copy)]
pub struct Packer {
    pub budget: i64,
    pub ceiling: i64,
    pub max_probe: usize,
}

impl Packer {
    pub fn fits(&self, d: &mut Doc, start: usize, end: usize) -> PyResult<bool> {
        let cost = d.cost(start, end)?;
        if cost <= self.budget {
            return Ok(true);
        }
        if cost > self.ceiling {
            return Ok(false);
        }
        match d.atom_range(start, end) {
            Some((a, b)) => Ok(d.cost(a, b)? <= self.ceiling),
            None => Ok(false),
        }
    }

    pub fn pack(
        &self,
        d: &mut Doc,
        start: usize,
        end: usize,
        level: usize,
    ) -> PyResult<Vec<Range>> {
        let (start, end) = d.trim(start, end);
        if start >= end {
            return Ok(Vec::new());
        }
        // In tokens the whole range is tried first only inside an atom or when it is likely
        // to fit: grouping its pieces answers it too, from counts of its pieces.
        let tokens = d.tok.is_some();
        let first = !tokens || d.atom_range(start, end).is_some() || d.likely_fits(start, end);
        if first && self.fits(d, start, end)? {
            return Ok(vec![(start, end)]);
        }
        for depth in level..d.refiner_count() {
            let cuts = d.refine(depth, start, end);
            if !cuts.is_empty() {
                return self.merge(d, start, end, &cuts, depth);
            }
        }
        if tokens && !first && self.fits(d, start, end)? {
            return Ok(vec![(start, end)]);
        }
        self.hard_split(d, start, end)
    }

    fn merge(
        &self,
        d: &mut Doc,
        start: usize,
        end: usize,
        cuts: &[usize],
        depth: usize,
    ) -> PyResult<Vec<Range>> {
        let mut pieces = Vec::with_capacity(cuts.len() + 1);
        let mut prev = start;
        for &c in cuts.iter().chain(std::iter::once(&end)) {
            let (a, b) = d.trim(prev, c);
            if a < b {
                pieces.push((a, b));
            }
            prev = c;
        }
        let tokens = d.tok.is_some();
        if tokens {
            d.count_bodies(&pieces)?;
        }
        let constant = if pieces.is_empty() || tokens {
            None
        } else {
            d.flat_cost(&pieces)?
        };
        let ends: Vec<usize> = pieces.iter().map(|p| p.1).collect();
        let mut out = Vec::new();
        let (mut i, n) = (0, pieces.len());
        while i < n {
            let j = match constant {
                None if tokens => self.grow_tokens(d, &pieces, i)?,
                None => self.grow(d, &pieces, i)?,
                Some(c) => {
                    let limit = pieces[i].0 as i64 + self.budget - c;
                    let at = if limit < 0 {
                        0
                    } else {
                        bisect_right(&ends, limit as usize)
                    };
                    i.max(at.saturating_sub(1))
                }
            };
            if j > i || self.fits(d, pieces[i].0, pieces[i].1)? {
                out.push((pieces[i].0, pieces[j].1));
            } else {
                out.extend(self.pack(d, pieces[i].0, pieces[i].1, depth + 1)?);
            }
            i = j + 1;
        }
        Ok(out)
    }

    fn grow(&self, d: &mut Doc, pieces: &[Range], i: usize) -> PyResult<usize> {
        let mut j = i;
        while j + 1 < pieces.len() && d.cost(pieces[i].0, pieces[j + 1].1)? <= self.budget {
            j += 1;
        }
        Ok(j)
    }

    /// `Packer._grow` with estimates: the pieces' own tokens summed (a line break between
    /// two is one more), then the group confirmed by its exact count, backing off.
    fn grow_tokens(&self, d: &mut Doc, pieces: &[Range], i: usize) -> PyResult<usize> {
        let mut j = i;
        let mut total =
            d.overhead(pieces[i].0, pieces[i].1)? + d.body_tokens(pieces[i].0, pieces[i].1)?;
        while j + 1 < pieces.len() {
            let next = pieces[j + 1];
            let gap = i64::from(d.find_nl(pieces[j].1, next.0).is_some());
            let grown = total + gap + d.body_tokens(next.0, next.1)?;
            if grown > self.budget {
                break;
            }
            (total, j) = (grown, j + 1);
        }
        while j > i && d.cost(pieces[i].0, pieces[j].1)? > self.budget {
            j -= 1;
        }
        Ok(j)
    }

    fn hard_split(&self, d: &mut Doc, mut start: usize, mut end: usize) -> PyResult<Vec<Range>> {
        let mut out = Vec::new();
        while start < end {
            (start, end) = d.trim(start, end);
            if start >= end {
                break;
            }
            let limit = end.min(start + self.max_probe);
            if limit == end && d.cost(start, end)? <= self.budget {
                out.push((start, end));
                break;
            }
            let (mut lo, mut hi) = (start + 1, limit);
            if d.cost(start, lo)? > self.budget {
                out.push((start, lo));
                start = lo;
                continue;
            }
            while lo < hi {
                let mid = (lo + hi).div_ceil(2);
                if d.cost(start, mid)? <= self.budget {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            let mut piece_end = lo;
            while piece_end < end && piece_end - 1 > start && d.flags[piece_end] & COMBINING != 0 {
                piece_end -= 1;
            }
            let (s, e) = d.trim(start, piece_end);
            if s < e {
                out.push((s, e));
            }
            start = piece_end;
        }
        Ok(out)
    }
}

/// `narezka.split.headings.pack_under_heading`.
fn pack_under_heading(
    d: &mut Doc,
    packer: Packer,
    heading_end: usize,
    start: usize,
    end: usize,
) -> PyResult<Vec<Range>> {
    let ranges = packer.pack(d, heading_end, end, 0)?;
    if ranges.is_empty() {
        return packer.pack(d, start, heading_end, 0);
    }
    if packer.fits(d, start, ranges[0].1)? {
        let mut out = vec![(start, ranges[0].1)];
        out.extend_from_slice(&ranges[1..]);
        return Ok(out);
    }
    let room = d.budget - d.cost(start, heading_end)?;
    if room > d.budget.div_euclid(4) {
        let tight = Packer {
            budget: room,
            ceiling: room.max(d.budget),
            max_probe: packer.max_probe,
        }
        .pack(d, ranges[0].0, ranges[0].1, 0)?;
        if !tight.is_empty() && packer.fits(d, start, tight[0].1)? {
            let mut out = vec![(start, tight[0].1)];
            out.extend_from_slice(&tight[1..]);
            out.extend_from_slice(&ranges[1..]);
            return Ok(out);
        }
    }
    let mut out = packer.pack(d, start, heading_end, 0)?;
    out.extend(ranges);
    Ok(out)
}

/// `narezka.split.headings.merge_short` (in characters a joined cost is the group's cost).
fn merge_short(d: &mut Doc, ranges: Vec<Range>, min_chars: usize) -> PyResult<Vec<Range>> {
    if min_chars == 0 {
        return Ok(ranges);
    }
    let mut out = ranges;
    let mut i = 0;
    while i < out.len() {
        let (start, end) = out[i];
        if end - start < min_chars {
            if i + 1 < out.len() && d.cost(start, out[i + 1].1)? <= d.budget {
                out[i] = (start, out[i + 1].1);
                out.remove(i + 1);
                continue;
            }
            if i > 0 && d.cost(out[i - 1].0, end)? <= d.budget {
                out[i - 1] = (out[i - 1].0, end);
                out.remove(i);
                i -= 1;
                continue;
            }
        }
        i += 1;
    }
    Ok(out)
}

/// The ranges of `HeadingsStrategy.split` before `make_chunks`: each section between
/// `bounds` packed, a lone heading line glued to what follows, short ranges merged.
/// `headings` maps every heading block's start to its end.
pub fn pack_headings(
    d: &mut Doc,
    bounds: &[usize],
    headings: &HashMap<usize, usize>,
    min_chars: usize,
) -> PyResult<Vec<Range>> {
    let probe = match &d.tok {
        Some(tok) => tok.max_probe,
        None => d.budget.max(1) as usize,
    };
    let packer = Packer {
        budget: d.budget,
        ceiling: d.budget,
        max_probe: probe,
    };
    let mut ranges = Vec::new();
    for w in bounds.windows(2) {
        let (start, end) = (w[0], w[1]);
        let mut section = packer.pack(d, start, end, 0)?;
        if let Some(&heading_end) = headings.get(&start) {
            if section.len() > 1 && section[0] == (start, heading_end) {
                section = pack_under_heading(d, packer, heading_end, start, end)?;
            }
        }
        ranges.extend(section);
    }
    merge_short(d, ranges, min_chars)
}
