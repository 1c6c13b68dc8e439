//! BM25's word count (`narezka.tokens.bm25`): `Counter(re.findall(r"[^\W_]+", text.lower()))`
//! for texts of the scripts whose case and letters this file knows.

use std::collections::HashMap;

/// Non-letters Python lowers to themselves between U+00A0 and U+00BF (the rest of that row,
/// ª ² ³ µ ¹ º ¼ ½ ¾, are letters or numbers to `str.isalnum`).
const LATIN1_ALNUM: [char; 9] = ['ª', '²', '³', 'µ', '¹', 'º', '¼', '½', '¾'];

/// The character `str.lower()` makes of `c` and whether that is alphanumeric (`[^\W_]`), for
/// the characters whose answers are known here; None for any other (Python answers).
/// `tests/tokens/test_core_words.py` checks every code point against Python.
fn fold(c: char) -> Option<(char, bool)> {
    let lower = |c: char| {
        let mut it = c.to_lowercase();
        match (it.next(), it.next()) {
            (Some(l), None) => Some((l, true)),
            _ => None,
        }
    };
    match c {
        '\0'..='\u{7f}' => Some((c.to_ascii_lowercase(), c.is_ascii_alphanumeric())),
        '\u{a0}'..='\u{bf}' => Some((c, LATIN1_ALNUM.contains(&c))),
        '\u{d7}' | '\u{f7}' => Some((c, false)),
        '\u{c0}'..='\u{ff}' => lower(c),
        '\u{482}'..='\u{489}' => Some((c, false)), // a sign and combining marks
        '\u{400}'..='\u{4ff}' => lower(c),
        '\u{2000}'..='\u{206f}' // general punctuation, spaces and invisible marks
        | '\u{2116}' // №
        | '\u{2190}'..='\u{21ff}' // arrows
        | '\u{2500}'..='\u{26ff}' // box drawing, shapes, symbols
        | '\u{2700}'..='\u{2775}' // dingbats before their circled digits
        | '\u{2794}'..='\u{27bf}'
        | '\u{fe00}'..='\u{fe0f}' // variation selectors
        | '\u{1f300}'..='\u{1faff}' => Some((c, false)), // emoji
        _ => None,
    }
}

/// Each word of `text` lowered, with how often it occurs, in order of first occurrence; None
/// when `text` holds a character [`fold`] leaves to Python.
pub fn word_counts(text: &str) -> Option<Vec<(String, usize)>> {
    let mut out: Vec<(String, usize)> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut word = String::new();
    let mut close = |word: &mut String, out: &mut Vec<(String, usize)>| {
        if word.is_empty() {
            return;
        }
        match seen.get(word.as_str()) {
            Some(&k) => out[k].1 += 1,
            None => {
                seen.insert(word.clone(), out.len());
                out.push((std::mem::take(word), 1));
            }
        }
        word.clear();
    };
    for c in text.chars() {
        let (l, alnum) = fold(c)?;
        if alnum {
            word.push(l);
        } else {
            close(&mut word, &mut out);
        }
    }
    close(&mut word, &mut out);
    Some(out)
}

/// MurmurHash3 x86 32-bit of `data` (seed 0): the hash Qdrant's BM25 takes token ids from.
pub fn murmur3_32(data: &[u8]) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mix = |k: u32| k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    let mut h: u32 = 0;
    let mut blocks = data.chunks_exact(4);
    for b in &mut blocks {
        h ^= mix(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let rest = blocks.remainder();
    if !rest.is_empty() {
        let k = rest
            .iter()
            .enumerate()
            .fold(0u32, |k, (i, &b)| k | (u32::from(b) << (8 * i)));
        h ^= mix(k);
    }
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// `bm25.token_id`: the absolute value of the signed murmur3 of the stem's UTF-8.
pub fn token_id(stem: &str) -> u32 {
    (murmur3_32(stem.as_bytes()) as i32).unsigned_abs()
}

/// What [`Terms::encode`] answers.
pub enum Encoded {
    /// A character outside [`fold`]'s: Python encodes the text.
    Unknown,
    /// Words with no stem known yet: Python stems them and asks again.
    Unstemmed(Vec<String>),
    /// The sparse vector: sorted token ids and their weights.
    Vector(Vec<u32>, Vec<f64>),
}

/// `Bm25Encoder.encode_document` for an analyzer with no title weight and no identifiers:
/// the words' stems come from Python (a Snowball stemmer or a lemmatizer) and are held here.
pub struct Terms {
    pub k1: f64,
    pub b: f64,
    pub avg_len: f64,
    pub held: usize,
    pub stems: HashMap<String, String>,
}

impl Terms {
    /// The text's vector, with `extra` stems for words not held (remembered while there is
    /// room, as the encoder's own table is).
    pub fn encode(&mut self, text: &str, extra: Option<HashMap<String, String>>) -> Encoded {
        let Some(words) = word_counts(text) else {
            return Encoded::Unknown;
        };
        let extra = extra.unwrap_or_default();
        for (word, stem) in &extra {
            if self.stems.len() < self.held && !self.stems.contains_key(word) {
                self.stems.insert(word.clone(), stem.clone());
            }
        }
        let mut unstemmed = Vec::new();
        // Each stem's count, in order of its first word (a Counter's order)
        let mut counts: Vec<(&str, usize)> = Vec::new();
        let mut at: HashMap<&str, usize> = HashMap::new();
        let mut length = 0usize;
        for (word, tf) in &words {
            let stem = match self.stems.get(word).or_else(|| extra.get(word)) {
                Some(stem) => stem.as_str(),
                None => {
                    unstemmed.push(word.clone());
                    continue;
                }
            };
            if stem.is_empty() || !unstemmed.is_empty() {
                continue;
            }
            match at.get(stem) {
                Some(&k) => counts[k].1 += tf,
                None => {
                    at.insert(stem, counts.len());
                    counts.push((stem, *tf));
                }
            }
            length += tf;
        }
        if !unstemmed.is_empty() {
            return Encoded::Unstemmed(unstemmed);
        }
        if length == 0 {
            return Encoded::Vector(Vec::new(), Vec::new());
        }
        // Python's float operations in Python's order: the same weights to the last bit
        let norm = self.k1 * (1.0 - self.b + self.b * length as f64 / self.avg_len);
        let mut weights: Vec<(u32, f64)> = Vec::with_capacity(counts.len());
        let mut slot: HashMap<u32, usize> = HashMap::new();
        for (stem, tf) in counts {
            let tf = tf as f64;
            let w = tf * (self.k1 + 1.0) / (tf + norm);
            let tid = token_id(stem);
            match slot.get(&tid) {
                // two stems sharing an id: their weights add (unique indices)
                Some(&k) => weights[k].1 += w,
                None => {
                    slot.insert(tid, weights.len());
                    weights.push((tid, 0.0 + w));
                }
            }
        }
        weights.sort_unstable_by_key(|&(tid, _)| tid);
        Encoded::Vector(
            weights.iter().map(|&(t, _)| t).collect(),
            weights.iter().map(|&(_, w)| w).collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(text: &str) -> Vec<(String, usize)> {
        word_counts(text).unwrap()
    }

    fn owned(pairs: &[(&str, usize)]) -> Vec<(String, usize)> {
        pairs.iter().map(|&(w, n)| (w.to_owned(), n)).collect()
    }

    #[test]
    fn words_lowered_and_counted_in_first_order() {
        assert_eq!(
            counts("Ёлка, ёлка и FastAPI_app — fastapi²!"),
            owned(&[
                ("ёлка", 2),
                ("и", 1),
                ("fastapi", 1),
                ("app", 1),
                ("fastapi²", 1)
            ])
        );
        assert_eq!(counts(""), owned(&[]));
        assert_eq!(counts("__ -- 😀"), owned(&[]));
    }

    #[test]
    fn murmur3_of_known_inputs() {
        // the reference implementation's values (seed 0)
        assert_eq!(murmur3_32(b""), 0);
        assert_eq!(murmur3_32(b"hello"), 0x248b_fa47);
        assert_eq!(
            murmur3_32(b"The quick brown fox jumps over the lazy dog"),
            0x2e4f_f723
        );
    }

    #[test]
    fn other_scripts_are_left_to_python() {
        assert!(word_counts("Σίσυφος").is_none());
        assert!(word_counts("漢字").is_none());
        assert!(word_counts("İ").is_none());
    }
}
