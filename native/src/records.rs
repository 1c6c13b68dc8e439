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

/// `sanitize.needs_sanitizing(text)` and `sanitize.removed_characters(text)` in one pass:
/// whether it holds five newlines in a row, a run of ten spaces or tabs (`_SPACE_RUN`), a
/// dropped character, or a run of non-blanks long enough for `_LONG_RUN` (`(?<!\S)\S{204,}`:
/// any maximal run of that length); and how many characters it drops.
pub fn body_scan(text: &str) -> (bool, usize) {
    let mut needs = text.contains("\n\n\n\n\n");
    let (mut blanks, mut word, mut removed) = (0usize, 0usize, 0usize);
    for c in text.chars() {
        if dropped(c) {
            removed += 1;
        }
        if needs {
            continue; // only the count is still open
        }
        if c == ' ' || c == '\t' {
            blanks += 1;
        } else {
            blanks = 0;
        }
        if py_space(c) {
            word = 0;
        } else {
            word += 1;
        }
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
