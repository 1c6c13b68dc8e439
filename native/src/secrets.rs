//! The secret rules' prefilter of `narezka.parse.redaction`: which token rules have a hint
//! in the text, and where a keyword of an assignment (`password=`, `api_key:`) may start.
//!
//! Python lowercases the text for the hints of its case-blind rules and for keywords; that
//! equals an ASCII case-blind comparison unless the text holds U+0130 or U+212A (the only
//! characters whose lowercase holds an ASCII letter) or U+0131 or U+017F (which Python's
//! case-blind search folds to i and s): such a text is left to Python.

/// `(hints, case-blind)` per rule, in the rules' order.
pub struct Rules {
    pub rules: Vec<(Vec<String>, bool)>,
}

fn lower_contains(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty()
        || hay
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
}

const FOLDED: [char; 4] = ['\u{130}', '\u{131}', '\u{17f}', '\u{212a}'];

impl Rules {
    /// The indices of the rules present, or None for a text left to Python.
    pub fn present(&self, text: &str) -> Option<Vec<usize>> {
        if text.contains(FOLDED) {
            return None;
        }
        let bytes = text.as_bytes();
        let found = self
            .rules
            .iter()
            .enumerate()
            .filter(|(_, (hints, any_case))| {
                hints.iter().any(|h| {
                    if *any_case {
                        lower_contains(bytes, h.to_ascii_lowercase().as_bytes())
                    } else {
                        text.contains(h.as_str())
                    }
                })
            })
            .map(|(i, _)| i)
            .collect();
        Some(found)
    }
}

/// `_SEPARATOR`'s look-behinds at the separator `p` (a byte offset of `:` or `=`).
fn separator(b: &[u8], p: usize) -> bool {
    let ends = |word: &[u8]| p >= word.len() && b[p - word.len()..p].eq_ignore_ascii_case(word);
    ends(b"ord")
        || ends(b"wd")
        || ends(b"ase")
        || ends(b"ret")
        || ends(b"key")
        || ends(b"ken")
        || (p >= 1 && matches!(b[p - 1], b'"' | b'\'' | b' ' | b'\t'))
}

fn run_char(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'-'
}

/// `_KEYWORD.match(w, i)`: the end of the first alternative that matches, as `re` tries them.
fn keyword_at(w: &[u8], i: usize) -> Option<usize> {
    let lit =
        |at: usize, s: &[u8]| -> Option<usize> { w[at..].starts_with(s).then_some(at + s.len()) };
    // `[_-]?` + word, the separator taken first when it leads to a match
    let sep_word = |at: usize, s: &[u8]| -> Option<usize> {
        if at < w.len() && matches!(w[at], b'_' | b'-') {
            if let Some(e) = lit(at + 1, s) {
                return Some(e);
            }
        }
        lit(at, s)
    };
    if let Some(j) = lit(i, b"pass") {
        for tail in [&b"word"[..], b"wd", b"phrase"] {
            if let Some(e) = lit(j, tail) {
                return Some(e);
            }
        }
    }
    if let Some(j) = lit(i, b"secret") {
        let j = sep_word(j, b"key").unwrap_or(j);
        return Some(sep_word(j, b"base").unwrap_or(j));
    }
    if let Some(e) = lit(i, b"token") {
        return Some(e);
    }
    for head in [&b"api"[..], b"access", b"auth", b"private"] {
        if let Some(e) = lit(i, head).and_then(|j| sep_word(j, b"key")) {
            return Some(e);
        }
    }
    lit(i, b"pwd")
}

/// `_keywords(text)` in byte offsets: (keyword start, key end) pairs, in order. The text
/// holds none of the characters `present` leaves to Python.
pub fn keywords(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for p in 0..b.len() {
        if !matches!(b[p], b':' | b'=') || !separator(b, p) {
            continue;
        }
        let mut end = p;
        while end > 0 && matches!(b[end - 1], b' ' | b'\t') {
            end -= 1;
        }
        if end > 0 && matches!(b[end - 1], b'"' | b'\'') {
            end -= 1;
        }
        let mut run = end;
        while run > 0 && run_char(b[run - 1]) {
            run -= 1;
        }
        let window = b[run..end].to_ascii_lowercase();
        let mut i = 0;
        while i < window.len() {
            match keyword_at(&window, i) {
                Some(e) => {
                    if e == window.len() {
                        out.push((run + i, end));
                    }
                    i = e;
                }
                None => i += 1,
            }
        }
    }
    out
}
