//! markdown-it's seven HTML block kinds (`HTML_SEQUENCES`): which one a line opens, and
//! whether a line closes it; hand-written matchers of its patterns, over code points.

/// Python's `\s` in a `str` pattern (`str.isspace`): Unicode White_Space plus U+001C..U+001F.
pub fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

const RAW_TAGS: [&str; 4] = ["script", "pre", "style", "textarea"];
const BLOCK_TAGS: [&str; 62] = [
    "address",
    "article",
    "aside",
    "base",
    "basefont",
    "blockquote",
    "body",
    "caption",
    "center",
    "col",
    "colgroup",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hr",
    "html",
    "iframe",
    "legend",
    "li",
    "link",
    "main",
    "menu",
    "menuitem",
    "nav",
    "noframes",
    "ol",
    "optgroup",
    "option",
    "p",
    "param",
    "search",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "track",
    "ul",
];

/// Whether `t[at..]` starts with `word`, ASCII letters in any case.
fn starts_ci(t: &[char], at: usize, word: &str) -> bool {
    let n = word.len();
    at + n <= t.len()
        && word
            .chars()
            .zip(&t[at..at + n])
            .all(|(w, &c)| c.is_ascii() && c.eq_ignore_ascii_case(&w))
}

fn starts(t: &[char], at: usize, word: &str) -> bool {
    let n = word.chars().count();
    at + n <= t.len() && word.chars().zip(&t[at..at + n]).all(|(w, &c)| c == w)
}

fn contains(t: &[char], word: &str) -> bool {
    (0..t.len()).any(|i| starts(t, i, word))
}

/// The sequence (0..7, markdown-it's order) whose start pattern `text` matches, if any.
pub fn start(t: &[char]) -> Option<usize> {
    if t.first() != Some(&'<') {
        return None;
    }
    let after = |i: usize, slash_gt: bool| -> bool {
        match t.get(i) {
            None => true,
            Some(&c) => {
                py_space(c) || c == '>' || (slash_gt && c == '/' && t.get(i + 1) == Some(&'>'))
            }
        }
    };
    if RAW_TAGS
        .iter()
        .any(|w| starts_ci(t, 1, w) && after(1 + w.len(), false))
    {
        return Some(0);
    }
    if starts(t, 1, "!--") {
        return Some(1);
    }
    if starts(t, 1, "?") {
        return Some(2);
    }
    if t.len() > 2 && t[1] == '!' && t[2].is_ascii_alphabetic() {
        return Some(3);
    }
    if starts(t, 1, "![CDATA[") {
        return Some(4);
    }
    let at = if t.get(1) == Some(&'/') { 2 } else { 1 };
    if BLOCK_TAGS
        .iter()
        .any(|w| starts_ci(t, at, w) && after(at + w.len(), true))
    {
        return Some(5);
    }
    if tag_line(t) {
        return Some(6);
    }
    None
}

/// Whether `t` closes a block of sequence `seq` (kinds 5 and 6 close on an empty line).
pub fn closes(seq: usize, t: &[char]) -> bool {
    match seq {
        0 => (0..t.len()).any(|i| {
            starts(t, i, "</")
                && RAW_TAGS
                    .iter()
                    .any(|w| starts_ci(t, i + 2, w) && t.get(i + 2 + w.len()) == Some(&'>'))
        }),
        1 => contains(t, "-->"),
        2 => contains(t, "?>"),
        3 => t.contains(&'>'),
        4 => contains(t, "]]>"),
        _ => t.is_empty(),
    }
}

/// markdown-it's open or closing tag alone on its line (`HTML_OPEN_CLOSE_TAG_STR\s*$`).
fn tag_line(t: &[char]) -> bool {
    let n = t.len();
    let at = |i: usize| t.get(i).copied().unwrap_or('\0');
    let name = |mut i: usize| -> usize {
        while i < n && (t[i].is_ascii_alphanumeric() || t[i] == '-') {
            i += 1;
        }
        i
    };
    let spaces = |mut i: usize| -> usize {
        while i < n && py_space(t[i]) {
            i += 1;
        }
        i
    };
    let mut i;
    if at(1) == '/' {
        if !at(2).is_ascii_alphabetic() {
            return false;
        }
        i = spaces(name(3));
        if at(i) != '>' {
            return false;
        }
        i += 1;
    } else {
        if !at(1).is_ascii_alphabetic() {
            return false;
        }
        i = name(2);
        loop {
            let j = spaces(i);
            let c = at(j);
            if j == i || !(c.is_ascii_alphabetic() || c == '_' || c == ':') {
                break;
            }
            let mut k = j + 1;
            while k < n && (t[k].is_ascii_alphanumeric() || matches!(t[k], ':' | '.' | '_' | '-')) {
                k += 1;
            }
            let v = spaces(k);
            if at(v) == '=' {
                if let Some(end) = value(t, spaces(v + 1)) {
                    k = end;
                }
            }
            i = k;
        }
        i = spaces(i);
        if at(i) == '/' {
            i += 1;
        }
        if at(i) != '>' {
            return false;
        }
        i += 1;
    }
    spaces(i) == n
}

/// An attribute value at `v`: unquoted, 'single' or "double" quoted; its end.
fn value(t: &[char], v: usize) -> Option<usize> {
    let c = *t.get(v)?;
    if c == '\'' || c == '"' {
        let close = t[v + 1..].iter().position(|&x| x == c)?;
        return Some(v + 1 + close + 1);
    }
    let mut k = v;
    while k < t.len() && !matches!(t[k], '"' | '\'' | '=' | '<' | '>' | '`') && t[k] > '\u{20}' {
        k += 1;
    }
    (k > v).then_some(k)
}
