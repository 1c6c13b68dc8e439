//! The chunk records' per-document and per-chunk work: the sanitizing checks of a body, and
//! frozen slotted dataclass instances made without their `__init__`.

use crate::html::py_space;

/// `narezka.parse.sanitize.LONG_RUN`: a run of non-blanks longer than this plus 3 is cut.
const LONG_RUN: usize = 200;

/// `sanitize._DROP`'s class: C0 controls but `\t` and `\n`, DEL and C1 controls, U+FFFD, and
/// the invisible format characters.
fn dropped(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}'
        | '\u{b}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{fffd}'
        | '\u{ad}'
        | '\u{180e}'
        | '\u{200b}'..='\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{206f}'
        | '\u{feff}')
}

/// Lead bytes of the only non-ASCII characters that are dropped or blank: U+0080..U+00BF
/// (C2), U+1680 and U+180E (E1), U+2000..U+206F (E2), U+3000 (E3), U+FEFF and U+FFFD (EF).
/// Any other character (Cyrillic above all) is skipped by its length alone.
fn may_matter(lead: u8) -> bool {
    matches!(lead, 0xc2 | 0xe1 | 0xe2 | 0xe3 | 0xef)
}

/// `sanitize.needs_sanitizing(text)` and `sanitize.removed_characters(text)` in one pass:
/// whether it holds five newlines in a row, a run of ten spaces or tabs (`_SPACE_RUN`), a
/// dropped character, or a run of non-blanks long enough for `_LONG_RUN` (`(?<!\S)\S{204,}`:
/// any maximal run of that length); and how many characters it drops.
pub fn body_scan(text: &str) -> (bool, usize) {
    let bytes = text.as_bytes();
    let mut needs = text.contains("\n\n\n\n\n");
    let (mut blanks, mut word, mut removed) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let (drop, space, blank, width) = if b < 0x80 {
            let drop = (b < 0x20 && b != b'\t' && b != b'\n') || b == 0x7f;
            let space = b == b' ' || (0x09..=0x0d).contains(&b) || (0x1c..=0x1f).contains(&b);
            (drop, space, b == b' ' || b == b'\t', 1)
        } else {
            let width = match b {
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                _ => 4,
            };
            if may_matter(b) {
                let c = text[i..i + width].chars().next().unwrap_or('\0');
                (dropped(c), py_space(c), false, width)
            } else {
                (false, false, false, width)
            }
        };
        i += width;
        if drop {
            removed += 1;
        }
        if needs {
            continue; // only the count is still open
        }
        blanks = if blank { blanks + 1 } else { 0 };
        word = if space { 0 } else { word + 1 };
        needs = blanks >= 10 || removed > 0 || word >= LONG_RUN + 4;
    }
    (needs, removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needs(text: &str) -> bool {
        body_scan(text).0
    }

    #[test]
    fn each_rule_and_its_edge() {
        assert!(!needs("plain text\n\n\n\nfour newlines"));
        assert!(needs("a\n\n\n\n\nb"));
        assert!(!needs(&format!("a{}b", " ".repeat(9))));
        assert!(needs(&format!("a{}b", " ".repeat(10))));
        assert!(needs("a \t \t \t \t \tb"));
        assert!(!needs("tab\tand\nnewline"));
        assert!(!needs(&"ж".repeat(203)));
        assert!(needs(&format!(" {}", "ж".repeat(204))));
        // a Unicode blank (an em space) ends a run
        assert!(!needs(&format!(
            "{}\u{2003}{}",
            "x".repeat(150),
            "x".repeat(150)
        )));
    }

    #[test]
    fn dropped_characters_are_counted_to_the_end() {
        assert_eq!(body_scan("zero\u{200b}width"), (true, 1));
        assert_eq!(body_scan("\n\n\n\n\n\u{7}bell\u{feff}"), (true, 2));
        assert_eq!(body_scan("tab\tand\nnewline, ё"), (false, 0));
    }
}
