//! The block scanner of `narezka.parse.scanner`, rule for rule, over code points.
//!
//! It works on a `Vec<char>` so that every offset is a Python `str` index (Russian text is
//! not ASCII), and it follows the Python scanner's steps exactly; whatever that scanner
//! models with markdown-it's own helpers (blockquotes, reference definitions, huge tables)
//! makes this one give up, and the Python scanner answers instead.
//!
//! A record is `(kind, start, end, level, content, run, fence_end, close_start, close_end)`
//! in offsets of `src`: `content` is a heading's raw title (not yet trimmed), `run` a fence's
//! marker; a top-level closed fence also gives its opening line's end and its closing line.

use crate::html;

pub const PARAGRAPH: u8 = 0;
pub const LIST_ITEM: u8 = 1;
pub const HEADING: u8 = 2;
pub const CODE: u8 = 3;
pub const TABLE: u8 = 4;
pub const RULE: u8 = 5;
pub const HTML: u8 = 6;

const MAX_LEVEL: usize = 18;
const AUTOCOMPLETED_CAP: usize = 0x10000;
const PARA: u8 = 0;
const TABLE_MODE: u8 = 1;
const LIST: u8 = 2;

pub struct Record {
    pub kind: u8,
    pub start: usize,
    pub end: usize,
    pub level: usize,
    pub content: String,
    pub run: String,
    pub fence_end: usize,
    pub close: (usize, usize),
}

/// The document holds a construct this scanner leaves to the Python one.
pub struct Bail;

type R<T> = Result<T, Bail>;

fn is_starter(c: char) -> bool {
    matches!(c, '`' | '~' | '>' | '*' | '-' | '_' | '+' | '[' | '<' | '#') || c.is_ascii_digit()
}

fn is_md_trim(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0b}' | '\u{0c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}'
    )
}

/// markdown-it's `mdTrim` of `s[a..b]`, as a range.
fn md_trim(s: &[char], mut a: usize, mut b: usize) -> (usize, usize) {
    while a < b && is_md_trim(s[a]) {
        a += 1;
    }
    while b > a && is_md_trim(s[b - 1]) {
        b -= 1;
    }
    (a, b)
}

/// markdown-it's `escapedSplit` of `s[a..b]`: the number of cells, first and last empty
/// ones dropped as the table rules drop them.
fn split_cells(s: &[char], a: usize, b: usize) -> usize {
    let mut cells: Vec<bool> = Vec::new(); // whether each cell is empty
    let mut escaped = false;
    let mut current_len = 0usize; // characters carried over an escaped pipe
    let mut last = a;
    for pos in a..b {
        let ch = s[pos];
        if ch == '|' {
            if !escaped {
                cells.push(current_len + (pos - last) == 0);
                current_len = 0;
                last = pos + 1;
            } else {
                current_len += pos - 1 - last;
                last = pos;
            }
        }
        escaped = ch == '\\';
    }
    cells.push(current_len + (b - last) == 0);
    let mut n = cells.len();
    let mut first = 0;
    if n > 0 && cells[0] {
        first = 1;
        n -= 1;
    }
    if n > 0 && cells[first + n - 1] {
        n -= 1;
    }
    n
}

pub struct Scan<'a> {
    s: &'a [char],
    stop: usize,
    pub out: Vec<Record>,
}

impl<'a> Scan<'a> {
    pub fn new(s: &'a [char], stop: usize) -> Self {
        Scan {
            s,
            stop,
            out: Vec::new(),
        }
    }

    fn at(&self, i: usize) -> char {
        *self.s.get(i).unwrap_or(&'\n')
    }

    fn find_nl(&self, from: usize) -> usize {
        let s = self.s;
        let mut i = from;
        while i < s.len() && s[i] != '\n' {
            i += 1;
        }
        i
    }

    fn lead(&self, bol: usize) -> (usize, usize) {
        let mut pos = bol;
        let mut col = 0;
        loop {
            match self.at(pos) {
                ' ' => col += 1,
                '\t' => col += 4 - col % 4,
                _ => return (pos, col),
            }
            pos += 1;
        }
    }

    /// The end of `(?:[ \t]*\n)*` matched at `line`.
    fn blanks(&self, line: usize) -> usize {
        let s = self.s;
        let mut end = line;
        let mut i = line;
        while i < s.len() {
            match s[i] {
                ' ' | '\t' => i += 1,
                '\n' => {
                    i += 1;
                    end = i;
                }
                _ => break,
            }
        }
        end
    }

    fn push(&mut self, kind: u8, start: usize, end: usize, level: usize) {
        self.out.push(Record {
            kind,
            start,
            end,
            level,
            content: String::new(),
            run: String::new(),
            fence_end: 0,
            close: (0, 0),
        });
    }

    fn text(&self, a: usize, b: usize) -> String {
        self.s[a..b].iter().collect()
    }

    pub fn run(
        &mut self,
        mut line: usize,
        blk: usize,
        li: isize,
        depth: usize,
        ov: isize,
        ovp: usize,
        ovc: usize,
    ) -> R<usize> {
        if 2 * depth >= MAX_LEVEL {
            return Err(Bail);
        }
        let stop = self.stop;
        loop {
            let (pos, col);
            if line as isize == ov && self.at(ovp) != '\n' {
                pos = ovp;
                col = ovc;
            } else {
                if line as isize == ov {
                    line = ovp + 1;
                }
                let mut c = if line < stop { self.at(line) } else { '\n' };
                if c == '\n' || c == ' ' || c == '\t' {
                    line = self.blanks(line);
                    if line >= stop {
                        return Ok(stop);
                    }
                    c = self.at(line);
                }
                if c == ' ' || c == '\t' {
                    let (p, cl) = self.lead(line);
                    pos = p;
                    col = cl;
                } else {
                    pos = line;
                    col = 0;
                }
            }
            if col < blk {
                return Ok(line);
            }
            let first = line as isize == ov;
            line = self.block(line, pos, col, blk, li, depth, first)?;
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn block(
        &mut self,
        line: usize,
        pos: usize,
        col: usize,
        blk: usize,
        li: isize,
        depth: usize,
        ov: bool,
    ) -> R<usize> {
        let eol = self.find_nl(pos);
        let nxt = eol + 1;
        if col >= blk + 4 {
            return Ok(self.code(line, nxt, blk, depth));
        }
        if nxt < self.stop && matches!(self.at(nxt), '|' | '-' | ':' | ' ' | '\t') {
            let end = self.table(line, pos, col, eol, nxt, blk, li, depth)?;
            if let Some(end) = end {
                return Ok(end);
            }
        }
        let c = self.at(pos);
        if !is_starter(c) {
            return self.paragraph(line, pos, eol, blk, li, depth, ov);
        }
        if c == '`' || c == '~' {
            let run = self.fence_run(line, pos);
            if run > 0 {
                return self.fence(line, nxt, blk, depth, c, run);
            }
        } else if c == '>' {
            return Err(Bail); // blockquotes: the Python scanner's
        }
        if matches!(c, '*' | '-' | '_') && self.hr(pos) {
            self.push(RULE, line, eol, depth);
            return Ok(nxt);
        }
        if matches!(c, '*' | '-' | '+') || c.is_ascii_digit() {
            if let Some(end) = self.list(line, pos, col, blk, li, depth)? {
                return Ok(end);
            }
        } else if c == '[' {
            if self.reference(pos, eol)? {
                return Ok(nxt);
            }
        } else if c == '<' {
            if let Some(end) = self.html(line, pos, eol, blk, depth) {
                return Ok(end);
            }
        } else if c == '#' {
            if let Some(end) = self.atx(pos) {
                let mut b = eol;
                while b > end && matches!(self.s[b - 1], ' ' | '\t') {
                    b -= 1;
                }
                let mut bare = b;
                while bare > end && self.s[bare - 1] == '#' {
                    bare -= 1;
                }
                if bare > end && matches!(self.s[bare - 1], ' ' | '\t') {
                    b = bare; // closing #s count only after a space
                }
                let content = self.text(end, b);
                self.heading(line, eol, end - pos, content);
                return Ok(nxt);
            }
        }
        self.paragraph(line, pos, eol, blk, li, depth, ov)
    }

    fn heading(&mut self, bol: usize, eol: usize, level: usize, content: String) {
        self.push(HEADING, bol, eol, level);
        self.out.last_mut().expect("pushed").content = content;
    }

    /// `#{1,6}(?=[ \t\n])` at `pos`: the end of the hashes.
    fn atx(&self, pos: usize) -> Option<usize> {
        let mut i = pos;
        while self.at(i) == '#' {
            i += 1;
        }
        let n = i - pos;
        if (1..=6).contains(&n) && matches!(self.at(i), ' ' | '\t' | '\n') {
            Some(i)
        } else {
            None
        }
    }

    /// `([-*_])(?:[ \t]*\1){2,}[ \t]*\n` at `pos`.
    fn hr(&self, pos: usize) -> bool {
        let c = self.at(pos);
        let mut n = 0;
        let mut i = pos;
        loop {
            let x = self.at(i);
            if x == c {
                n += 1;
            } else if x == '\n' {
                return n >= 3;
            } else if x != ' ' && x != '\t' {
                return false;
            }
            i += 1;
        }
    }

    /// `([0-9]{1,9})[.)](?=[ \t\n])` at `pos`: (end, number).
    fn ordered(&self, pos: usize) -> Option<(usize, u64)> {
        let mut i = pos;
        let mut value: u64 = 0;
        while self.at(i).is_ascii_digit() {
            value = value * 10 + (self.at(i) as u64 - '0' as u64);
            i += 1;
            if i - pos > 9 {
                return None;
            }
        }
        if i == pos
            || !matches!(self.at(i), '.' | ')')
            || !matches!(self.at(i + 1), ' ' | '\t' | '\n')
        {
            return None;
        }
        Some((i + 1, value))
    }

    /// `[-*+](?=[ \t\n])` at `pos`.
    fn bullet(&self, pos: usize) -> Option<usize> {
        if matches!(self.at(pos), '-' | '*' | '+') && matches!(self.at(pos + 1), ' ' | '\t' | '\n')
        {
            Some(pos + 1)
        } else {
            None
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn term(
        &self,
        bol: usize,
        pos: usize,
        col: usize,
        blk: usize,
        li: isize,
        mode: u8,
        eol: usize,
    ) -> R<bool> {
        if col >= blk + 4 {
            return Ok(false);
        }
        let c = self.at(pos);
        if c == '`' || c == '~' {
            return Ok(self.fence_run(bol, pos) > 0);
        }
        if c == '>' || (matches!(c, '*' | '-' | '_') && self.hr(pos)) {
            return Ok(true);
        }
        if mode == LIST {
            return Ok(false);
        }
        if matches!(c, '*' | '-' | '+') || c.is_ascii_digit() {
            if li >= 0 && col as isize - li >= 4 && col < blk {
                return Ok(false);
            }
            let para = mode == PARA && col >= blk;
            let end = match self.ordered(pos) {
                Some((end, value)) => {
                    if para && value != 1 {
                        return Ok(false);
                    }
                    end
                }
                None => match self.bullet(pos) {
                    Some(end) => end,
                    None => return Ok(false),
                },
            };
            return Ok(!para || self.s[end..eol].iter().any(|&x| x != ' ' && x != '\t'));
        }
        if c == '<' {
            return Ok(html::start(&self.s[pos..eol]).is_some_and(|seq| seq != 6));
        }
        Ok(c == '#' && self.atx(pos).is_some())
    }

    #[allow(clippy::too_many_arguments)]
    fn paragraph(
        &mut self,
        line: usize,
        pos: usize,
        eol: usize,
        blk: usize,
        li: isize,
        depth: usize,
        ov: bool,
    ) -> R<usize> {
        let stop = self.stop;
        let mut k = eol + 1;
        while k < stop {
            let h = self.hot(k);
            if h >= stop {
                k = stop;
                break;
            }
            if self.at(h) == '\n' {
                k = h;
                break;
            }
            let (hp, hc) = self.lead(h);
            let ch = self.at(hp);
            if h > k && matches!(ch, '|' | '-' | ':') {
                // the plain line above may head a table
                let p = self.rfind_nl(h - 1).map_or(0, |i| i + 1);
                let (pp, pc) = self.lead(p);
                if pc <= blk + 3 && self.table_head(pp, pc, h - 1, h, blk) > 0 {
                    k = p;
                    break;
                }
            }
            if ch == '\n' {
                k = h;
                break;
            }
            let he = self.find_nl(hp);
            if hc > blk + 3 {
                k = he + 1; // lazy continuation, whatever it looks like
                continue;
            }
            if hc >= blk && matches!(ch, '=' | '-') && self.underline(hp) {
                let content = self.lines(line, pos, h, blk, ov)?;
                self.heading(line, he, if ch == '=' { 1 } else { 2 }, content);
                return Ok(he + 1);
            }
            if (he + 1 < stop && self.table_head(hp, hc, he, he + 1, blk) > 0)
                || self.term(h, hp, hc, blk, li, PARA, he)?
            {
                k = h;
                break;
            }
            k = he + 1;
        }
        let kind = if depth > 0 { LIST_ITEM } else { PARAGRAPH };
        self.push(kind, line, k - 1, depth);
        Ok(k)
    }

    /// `_HOT` searched from `k - 1`: the start of the next line that may end a paragraph
    /// (blank, or starting with one of its characters after blanks), else `stop`.
    fn hot(&self, k: usize) -> usize {
        let s = self.s;
        let mut bol = k;
        while bol < s.len() {
            let mut i = bol;
            while i < s.len() && (s[i] == ' ' || s[i] == '\t') {
                i += 1;
            }
            if i >= s.len() {
                return self.stop;
            }
            let c = s[i];
            if c == '\n'
                || matches!(
                    c,
                    '-' | '#' | '>' | '`' | '~' | '=' | '<' | '*' | '+' | '_' | '|' | ':'
                )
                || c.is_ascii_digit()
            {
                return bol;
            }
            bol = self.find_nl(i) + 1;
        }
        self.stop
    }

    fn rfind_nl(&self, before: usize) -> Option<usize> {
        let s = self.s;
        let mut i = before;
        while i > 0 {
            i -= 1;
            if s[i] == '\n' {
                return Some(i);
            }
        }
        None
    }

    /// `(?:=+|-+)[ \t]*\n` at `pos`.
    fn underline(&self, pos: usize) -> bool {
        let c = self.at(pos);
        let mut i = pos;
        while self.at(i) == c {
            i += 1;
        }
        while matches!(self.at(i), ' ' | '\t') {
            i += 1;
        }
        self.at(i) == '\n'
    }

    /// markdown-it's `getLines` before `end`, minus `blk` columns (not yet trimmed).
    fn lines(&self, line: usize, pos: usize, end: usize, blk: usize, ov: bool) -> R<String> {
        let mut out = String::new();
        let mut k = line;
        while k < end {
            let e = self.find_nl(k);
            let s = if ov && k == line {
                pos
            } else {
                let mut s = k;
                while s < k + blk && self.at(s) == ' ' {
                    s += 1;
                }
                if blk > 0 && self.at(s) == '\t' {
                    return Err(Bail);
                }
                s
            };
            if k != line {
                out.push('\n');
            }
            out.extend(&self.s[s..e]);
            k = e + 1;
        }
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn table(
        &mut self,
        line: usize,
        pos: usize,
        col: usize,
        eol: usize,
        nxt: usize,
        blk: usize,
        li: isize,
        depth: usize,
    ) -> R<Option<usize>> {
        let width = self.table_head(pos, col, eol, nxt, blk);
        if width == 0 {
            return Ok(None);
        }
        let stop = self.stop;
        let mut k = self.find_nl(nxt) + 1;
        let mut rows = 0usize;
        while k < stop {
            let (p, c) = self.lead(k);
            let e = self.find_nl(p);
            if c < blk || self.term(k, p, c, blk, li, TABLE_MODE, e)? {
                break;
            }
            let (a, b) = md_trim(self.s, p, e);
            if a == b || c >= blk + 4 {
                break;
            }
            rows += 1;
            k = e + 1;
        }
        if rows * width > AUTOCOMPLETED_CAP {
            return Err(Bail); // markdown-it may end it early: the Python scanner counts cells
        }
        self.push(TABLE, line, k - 1, depth);
        Ok(Some(k))
    }

    /// Column count when this line and the next open a GFM table, else 0.
    fn table_head(&self, pos: usize, col: usize, eol: usize, nxt: usize, blk: usize) -> usize {
        if col >= blk + 4 {
            return 0;
        }
        let (dp, dc) = self.lead(nxt);
        if dc < blk || dc >= blk + 4 || !self.delim(dp) {
            return 0;
        }
        let de = self.find_nl(dp);
        let s = self.s;
        // the delimiter row's cells, split on every pipe
        let mut bounds = vec![dp];
        for (i, &ch) in s[dp..de].iter().enumerate() {
            if ch == '|' {
                bounds.push(dp + i + 1);
            }
        }
        let ncells = bounds.len();
        let mut aligns = 0;
        for i in 0..ncells {
            let a = bounds[i];
            let b = if i + 1 < ncells {
                bounds[i + 1] - 1
            } else {
                de
            };
            let (ta, tb) = md_trim(s, a, b);
            if ta == tb {
                if i == 0 || i == ncells - 1 {
                    continue;
                }
                return 0;
            }
            // ^:?-+:?$
            let mut x = ta;
            if s[x] == ':' {
                x += 1;
            }
            let dashes = x;
            while x < tb && s[x] == '-' {
                x += 1;
            }
            if x == dashes {
                return 0;
            }
            if x < tb && s[x] == ':' {
                x += 1;
            }
            if x != tb {
                return 0;
            }
            aligns += 1;
        }
        let (ha, hb) = md_trim(s, pos, eol);
        if !s[ha..hb].contains(&'|') {
            return 0;
        }
        let cols = split_cells(s, ha, hb);
        if cols > 0 && cols == aligns {
            cols
        } else {
            0
        }
    }

    /// `(?:[|:][-|: \t]|-[-|:])[-|: \t]*\n` at `dp`.
    fn delim(&self, dp: usize) -> bool {
        let c0 = self.at(dp);
        let c1 = self.at(dp + 1);
        let ok = match c0 {
            '|' | ':' => matches!(c1, '-' | '|' | ':' | ' ' | '\t'),
            '-' => matches!(c1, '-' | '|' | ':'),
            _ => false,
        };
        if !ok {
            return false;
        }
        let mut i = dp + 2;
        while matches!(self.at(i), '-' | '|' | ':' | ' ' | '\t') {
            i += 1;
        }
        self.at(i) == '\n'
    }

    #[allow(clippy::too_many_arguments)]
    fn list(
        &mut self,
        line: usize,
        mut pos: usize,
        mut col: usize,
        blk: usize,
        li: isize,
        depth: usize,
    ) -> R<Option<usize>> {
        let stop = self.stop;
        if li >= 0 && col as isize - li >= 4 && col < blk {
            return Ok(None);
        }
        let ordered = self.ordered(pos).is_some();
        let marker_end = |this: &Self, p: usize| -> Option<usize> {
            if ordered {
                this.ordered(p).map(|(e, _)| e)
            } else {
                this.bullet(p)
            }
        };
        let mut after = match marker_end(self, pos) {
            Some(e) => e,
            None => match self.bullet(pos) {
                Some(e) => e,
                None => return Ok(None),
            },
        };
        let mark = self.at(after - 1);
        let mut k = line;
        loop {
            if self.s[k..pos].contains(&'\t') {
                return Err(Bail);
            }
            let mut q = after;
            while self.at(q) == ' ' {
                q += 1;
            }
            if self.at(q) == '\t' {
                return Err(Bail);
            }
            let spaces = q - after;
            let initial = col + after - pos;
            let empty = self.at(q) == '\n';
            let indent = initial + if empty || spaces > 4 { 1 } else { spaces };
            if empty && (q + 1 >= stop || self.blank_line_at(q)) {
                // an empty item followed by a blank line is closed two lines down
                k = if q + 1 >= stop {
                    q + 1
                } else {
                    self.find_nl(q + 1) + 1
                };
                k = k.min(stop);
            } else {
                let one = if empty || spaces > 4 {
                    None
                } else {
                    self.one_line_item(k, q, indent, blk, depth)
                };
                k = match one {
                    Some(end) => end,
                    None => self.run(
                        k,
                        indent,
                        blk as isize,
                        depth + 1,
                        k as isize,
                        q,
                        initial + spaces,
                    )?,
                };
            }
            if k >= stop {
                return Ok(Some(stop));
            }
            let (p, c) = self.lead(k);
            pos = p;
            col = c;
            let e = self.find_nl(pos);
            if col < blk || col >= blk + 4 || self.term(k, pos, col, blk, li, LIST, e)? {
                return Ok(Some(k));
            }
            match marker_end(self, pos) {
                Some(end) if self.at(end - 1) == mark => after = end,
                _ => return Ok(Some(k)),
            }
        }
    }

    /// `\n[ \t]*\n` matched at `q` (a newline).
    fn blank_line_at(&self, q: usize) -> bool {
        let mut i = q + 1;
        while matches!(self.at(i), ' ' | '\t') {
            i += 1;
        }
        i < self.s.len() && self.s[i] == '\n'
    }

    fn one_line_item(
        &mut self,
        bol: usize,
        q: usize,
        indent: usize,
        blk: usize,
        depth: usize,
    ) -> Option<usize> {
        let stop = self.stop;
        if is_starter(self.at(q)) || 2 * (depth + 1) >= MAX_LEVEL {
            return None;
        }
        let nxt = self.find_nl(q) + 1;
        if nxt >= stop {
            return None;
        }
        let mut end = self.blanks(nxt);
        if end >= stop {
            end = stop;
        } else {
            let (pos, col) = self.lead(end);
            if col >= indent {
                return None;
            }
            if end == nxt {
                let c = self.at(pos);
                if col >= blk + 4 || !(matches!(c, '*' | '-' | '+') || c.is_ascii_digit()) {
                    return None;
                }
                if self.ordered(pos).is_none() && self.bullet(pos).is_none() {
                    return None;
                }
            }
        }
        self.push(LIST_ITEM, bol, nxt - 1, depth + 1);
        Some(end)
    }

    fn code(&mut self, line: usize, nxt: usize, blk: usize, depth: usize) -> usize {
        let stop = self.stop;
        let mut last = nxt - 1;
        if blk == 0 {
            let e0 = match self.code_end(nxt - 1) {
                Some(m) => m.min(stop - 1),
                None => stop - 1,
            };
            let mut e = e0;
            while e > last {
                // drop trailing blank lines
                let b = self.rfind_nl(e).map_or(0, |i| i + 1);
                if self.s[b..e].iter().any(|&x| x != ' ' && x != '\t') {
                    break;
                }
                e = b - 1;
            }
            last = last.max(e);
        } else {
            let mut k = nxt;
            while k < stop {
                let (p, c) = self.lead(k);
                let e = self.find_nl(p);
                if self.at(p) != '\n' {
                    if c < blk + 4 {
                        break;
                    }
                    last = e;
                }
                k = e + 1;
            }
        }
        self.push(CODE, line, last, depth);
        last + 1
    }

    /// `\n {0,3}[^ \t\n]` searched from `from`: the newline before the first line no
    /// longer in a top-level code block.
    fn code_end(&self, from: usize) -> Option<usize> {
        let s = self.s;
        let mut i = from;
        while i < s.len() {
            if s[i] == '\n' {
                let mut j = i + 1;
                while j < s.len() && j - (i + 1) < 3 && s[j] == ' ' {
                    j += 1;
                }
                if j < s.len() && !matches!(s[j], ' ' | '\t' | '\n') {
                    return Some(i);
                }
            }
            i += 1;
        }
        None
    }

    /// The length of the fence marker run opening a fence at `pos`, or 0.
    fn fence_run(&self, bol: usize, pos: usize) -> usize {
        let c = self.at(pos);
        if c != '`' && c != '~' {
            return 0;
        }
        let mut i = pos;
        while self.at(i) == c {
            i += 1;
        }
        let n = i - pos;
        if n < 3 {
            return 0;
        }
        if c == '`' {
            let eol = self.find_nl(i);
            let info = &self.s[i..eol];
            if info.contains(&'`') {
                // The lenient fence: ` {0,3}` then the run, and no run as long in the info.
                if pos - bol > 3 || self.s[bol..pos].iter().any(|&x| x != ' ') {
                    return 0;
                }
                if info.windows(n).any(|w| w.iter().all(|&x| x == '`')) {
                    return 0;
                }
            }
        }
        n
    }

    fn fence(
        &mut self,
        line: usize,
        nxt: usize,
        blk: usize,
        depth: usize,
        mark: char,
        run: usize,
    ) -> R<usize> {
        let stop = self.stop;
        let found = self.closer(nxt - 1, blk, mark, run);
        let end;
        match found {
            None => end = stop,
            Some((start, _, _)) if start >= stop => end = stop,
            Some((_, Closer::Tab, _)) if blk > 0 => return Err(Bail),
            Some((start, Closer::Outdent, _)) if blk > 0 => end = start + 1,
            Some((start, _, m_end)) if blk == 0 => {
                // both fence lines are whole lines: Python strips them from these ranges
                let run_text: String = std::iter::repeat(mark).take(run).collect();
                self.out.push(Record {
                    kind: CODE,
                    start: line,
                    end: m_end - 1,
                    level: depth,
                    content: String::new(),
                    run: run_text,
                    fence_end: nxt - 1,
                    close: (start + 1, m_end - 1),
                });
                return Ok(m_end);
            }
            Some((_, _, m_end)) => end = m_end,
        }
        let run_text: String = std::iter::repeat(mark).take(run).collect();
        self.push(CODE, line, (end.max(1) - 1).max(nxt - 1), depth);
        self.out.last_mut().expect("pushed").run = run_text;
        Ok(end.max(nxt))
    }

    /// `_closer(run, indent)` searched from `from`: (newline offset, which branch, match end).
    fn closer(
        &self,
        from: usize,
        indent: usize,
        mark: char,
        run: usize,
    ) -> Option<(usize, Closer, usize)> {
        let s = self.s;
        let mut i = from;
        while i < s.len() {
            if s[i] == '\n' {
                let mut j = i + 1;
                while j < s.len() && s[j] == ' ' {
                    j += 1;
                }
                let lead = j - (i + 1);
                let next = if j < s.len() { s[j] } else { '\0' };
                if indent > 0 && lead < indent && j < s.len() && !matches!(next, ' ' | '\t' | '\n')
                {
                    return Some((i, Closer::Outdent, j + 1));
                }
                if indent > 0 && next == '\t' {
                    return Some((i, Closer::Tab, j + 1));
                }
                let (lo, hi) = if indent == 0 {
                    (0, 3)
                } else {
                    (indent, indent + 3)
                };
                if lead >= lo && lead <= hi && next == mark {
                    let mut k = j;
                    while k < s.len() && s[k] == mark {
                        k += 1;
                    }
                    if k - j >= run {
                        while k < s.len() && (s[k] == ' ' || s[k] == '\t') {
                            k += 1;
                        }
                        if k < s.len() && s[k] == '\n' {
                            return Some((i, Closer::Line, k + 1));
                        }
                    }
                }
            }
            i += 1;
        }
        None
    }

    /// An HTML block of markdown-it's seven kinds: up to its end condition; None if none.
    fn html(
        &mut self,
        line: usize,
        pos: usize,
        eol: usize,
        blk: usize,
        depth: usize,
    ) -> Option<usize> {
        let stop = self.stop;
        let seq = html::start(&self.s[pos..eol])?;
        let on_blank = seq >= 5; // kinds 6 and 7 end before a blank line
        let mut k = eol + 1;
        if !html::closes(seq, &self.s[pos..eol]) {
            if blk == 0 && on_blank {
                k = match self.blank_line_from(k - 1) {
                    Some(m) => (m + 1).min(stop),
                    None => stop,
                };
            }
            while k < stop && !(blk == 0 && on_blank) {
                let (p, c) = self.lead(k);
                let e = self.find_nl(p);
                if c < blk && (on_blank || self.at(p) != '\n') {
                    break;
                }
                if html::closes(seq, &self.s[p..e]) {
                    if e > p {
                        k = e + 1;
                    }
                    break;
                }
                k = e + 1;
            }
        }
        self.push(HTML, line, k - 1, depth);
        Some(k)
    }

    /// `\n[ \t]*\n` searched from `from`: the first newline followed by a blank line.
    fn blank_line_from(&self, from: usize) -> Option<usize> {
        let s = self.s;
        (from..s.len()).find(|&i| s[i] == '\n' && self.blank_line_at(i))
    }

    /// A one-line link reference definition is left to the Python scanner (markdown-it's
    /// link normalization decides it); whether this line can be none at all is decided here.
    fn reference(&self, pos: usize, eol: usize) -> R<bool> {
        let s = self.s;
        let found = (pos + 1..eol).find(|&i| matches!(s[i], '[' | ']' | '\\'));
        match found {
            None => Err(Bail),
            Some(i) if s[i] == '\\' => Err(Bail),
            Some(i) if s[i] == '[' || self.at(i + 1) != ':' => Ok(false),
            Some(_) => Err(Bail),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Closer {
    Outdent,
    Tab,
    Line,
}
