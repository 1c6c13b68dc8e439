//! The sentence-boundary finder of `narezka.parse.sentences`, step for step, over code points.
//!
//! Python's `re` candidates (`_CANDIDATE`, `_LEAD`, `_WS`) are matched by hand with the same
//! possessive and look-ahead semantics, and its `str` predicates come from `chars.rs`, a table
//! CPython wrote; a text holding a character outside that table is left to Python.

use crate::chars::{flags, ALPHA, DECIMAL, DIGIT, SPACE, UPPER};

const MAX_WORD: usize = 9;
const MAX_NUMBER: usize = 20;
const MAX_INDENT: usize = 16;

const RU_ABBR: [&str; 44] = [
    "др",
    "пр",
    "гг",
    "вв",
    "руб",
    "коп",
    "тыс",
    "млн",
    "млрд",
    "ул",
    "кв",
    "стр",
    "им",
    "проф",
    "акад",
    "доц",
    "ст",
    "см",
    "рис",
    "табл",
    "напр",
    "мин",
    "макс",
    "ок",
    "прим",
    "кг",
    "пер",
    "пл",
    "просп",
    "обл",
    "гл",
    "ср",
    "изд",
    "ред",
    "вып",
    "зам",
    "зав",
    "тел",
    "англ",
    "лат",
    "нем",
    "фр",
    "нач",
    "кон",
];
const EN_ABBR: [&str; 29] = [
    "Mr", "Mrs", "Ms", "Dr", "Prof", "St", "Mt", "Jr", "Sr", "Inc", "Ltd", "Co", "Corp", "No",
    "Fig", "fig", "Vol", "vol", "pp", "vs", "etc", "approx", "cf", "al", "Gen", "Col", "Lt",
    "Capt", "Rev",
];

/// A text the finder can judge: its characters and their flags.
pub struct Text {
    pub chars: Vec<char>,
    pub flags: Vec<u8>,
}

impl Text {
    /// None when a character lies outside the predicate tables.
    pub fn new(text: &str) -> Option<Text> {
        let chars: Vec<char> = text.chars().collect();
        let flags = chars
            .iter()
            .map(|&c| flags(c))
            .collect::<Option<Vec<u8>>>()?;
        Some(Text { chars, flags })
    }

    pub fn len(&self) -> usize {
        self.chars.len()
    }

    fn is(&self, i: usize, flag: u8) -> bool {
        self.flags[i] & flag != 0
    }

    fn hspace(&self, i: usize) -> bool {
        self.is(i, SPACE) && self.chars[i] != '\n'
    }

    /// `\s*+` from `pos`, not past `limit`.
    fn skip_space(&self, mut pos: usize, limit: usize) -> usize {
        while pos < limit && self.is(pos, SPACE) {
            pos += 1;
        }
        pos
    }
}

fn is_punct(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…')
}

fn is_closer(c: char) -> bool {
    matches!(c, '»' | '"' | '”' | '’' | ')' | ']' | '\'' | '*' | '_')
}

fn is_abbreviation(word: &[char]) -> bool {
    let word: String = word.iter().collect();
    if RU_ABBR.contains(&word.as_str()) || EN_ABBR.contains(&word.as_str()) {
        return true;
    }
    // Capitalised Russian forms («См. рис. 2»), except names such as «Макс».
    RU_ABBR.iter().any(|w| {
        !matches!(*w, "макс" | "мин" | "ок") && {
            let mut cs = w.chars();
            let first = cs.next().expect("non-empty");
            let cap: String = first.to_uppercase().chain(cs).collect();
            cap == word
        }
    })
}

/// `\d{1,3}(?:\.\d{1,3}){0,3}[.)][^\S\n]` at `i`, with `re`'s backtracking (any way that fits).
fn list_number(t: &Text, i: usize, end: usize) -> bool {
    fn digits_then(t: &Text, i: usize, end: usize, reps_left: usize) -> bool {
        for d in (1..=3).rev() {
            if i + d > end || !(i..i + d).all(|k| t.is(k, DECIMAL)) {
                continue;
            }
            let j = i + d;
            if reps_left > 0
                && j < end
                && t.chars[j] == '.'
                && digits_then(t, j + 1, end, reps_left - 1)
            {
                return true;
            }
            if j + 1 < end && matches!(t.chars[j], '.' | ')') && t.hspace(j + 1) {
                return true;
            }
        }
        false
    }
    digits_then(t, i, end, 3)
}

/// Alternative 2's look-ahead after the `\n` at `nl`: blank line or list-item line.
fn break_ahead(t: &Text, nl: usize, end: usize) -> bool {
    let mut i = nl + 1;
    while i < end && t.hspace(i) {
        i += 1;
    }
    if i >= end {
        return false;
    }
    let c = t.chars[i];
    if c == '\n' {
        return true;
    }
    if matches!(c, '-' | '*' | '+' | '•') {
        return i + 1 < end && t.hspace(i + 1);
    }
    list_number(t, i, end)
}

fn not_end_dot(t: &Text, dot: usize) -> bool {
    let s = &t.chars;
    let lo = dot.saturating_sub(MAX_WORD);
    let mut j = dot;
    while j > lo && t.is(j - 1, ALPHA) {
        j -= 1;
    }
    if j < dot {
        let word = &s[j..dot];
        if word.len() == 1 {
            return word[0] != 'я'; // an initial, or «т. е.», «e.g.»
        }
        return is_abbreviation(word);
    }
    let lo = dot.saturating_sub(MAX_NUMBER);
    let mut j = dot;
    while j > lo && (t.is(j - 1, DIGIT) || s[j - 1] == '.') {
        j -= 1;
    }
    if j == dot || !t.is(j, DIGIT) {
        return false;
    }
    let lo = j.saturating_sub(MAX_INDENT);
    while j > lo && matches!(s[j - 1], ' ' | '\t') {
        j -= 1;
    }
    j == 0 || s[j - 1] == '\n'
}

fn is_punct_end(t: &Text, first: usize, after: usize, gap_end: usize) -> bool {
    let s = &t.chars;
    let n = t.len();
    if gap_end == n {
        return true;
    }
    let c = s[gap_end];
    if matches!(c, '—' | '–') && s[after..gap_end].contains(&'\n') {
        return true; // a dialogue line opens a new sentence whatever follows the dash
    }
    // _LEAD: (?:[—–][^\S\n]*+)?[*_`]{0,3}
    let mut i = gap_end;
    if matches!(s[i], '—' | '–') {
        i += 1;
        while i < n && t.hspace(i) {
            i += 1;
        }
    }
    let mut k = 0;
    while k < 3 && i < n && matches!(s[i], '*' | '_' | '`') {
        i += 1;
        k += 1;
    }
    if i == n {
        return true;
    }
    let c = s[i];
    if !(t.is(i, UPPER)
        || t.is(i, DIGIT)
        || matches!(c, '«' | '“' | '„' | '"' | '\'' | '‘' | '(' | '['))
    {
        return false;
    }
    !(after - first == 1 && s[first] == '.' && not_end_dot(t, first))
}

/// `sentence_ends(text, start, end)` with `0 <= start < end <= len(text)`.
pub fn sentence_ends(t: &Text, start: usize, end: usize) -> Vec<usize> {
    let s = &t.chars;
    let n = t.len();
    let mut pos = start;
    while pos > 0 && (is_punct(s[pos - 1]) || is_closer(s[pos - 1])) {
        pos -= 1;
    }
    let endpos = n.min(t.skip_space(end, n) + 32);
    let mut ends: Vec<usize> = Vec::new();
    let mut i = pos;
    while i < endpos {
        let c = s[i];
        let bound;
        if is_punct(c) {
            let first = i;
            while i < endpos && is_punct(s[i]) {
                i += 1;
            }
            while i < endpos && is_closer(s[i]) {
                i += 1;
            }
            let b = i;
            let gap_end = t.skip_space(b, endpos);
            i = b; // the match ends before the gap (a look-ahead)
            if b > end {
                break;
            }
            if (gap_end == b && b < n) || !is_punct_end(t, first, b, gap_end) {
                continue;
            }
            bound = b;
        } else if c == '\n' && break_ahead(t, i, endpos) {
            let first = i;
            i = t.skip_space(i + 1, endpos);
            let mut b = first;
            while b > 0 && s[b - 1] != '\n' && t.is(b - 1, SPACE) {
                b -= 1;
            }
            bound = b;
        } else {
            i += 1;
            continue;
        }
        if start < bound && bound <= end && ends.last() != Some(&bound) {
            ends.push(bound);
        }
    }
    if t.skip_space(end, n) == n {
        let mut last = end;
        while last > start && t.is(last - 1, SPACE) {
            last -= 1;
        }
        if last > start && ends.last() != Some(&last) {
            ends.push(last);
        }
    }
    ends
}
