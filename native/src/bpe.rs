//! Token counts of tiktoken's cl100k_base, with the ranks tiktoken itself loaded.
//!
//! tiktoken pre-tokenizes with fancy-regex, whose backtracking VM runs the whole pattern
//! because of one look-ahead (`\s+(?!\S)`); that, not the merging, is most of its time. Here
//! the pattern runs without the look-ahead on the `regex` crate's automata, and a whitespace
//! run is cut afterwards exactly as the look-ahead alternatives would have cut it. The byte
//! pair merging is tiktoken's own rule (lowest rank first, leftmost on ties); only the count
//! leaves, so no token list is built.

use std::collections::HashMap;

use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

use regex_automata::meta::Regex;
use regex_automata::{Anchored, Input};

/// cl100k_base's pre-tokenizer as tiktoken spells it. Its possessive quantifiers change
/// nothing here (each is followed by nothing that could take a character back), so only the
/// whitespace alternatives need care: they become one `\s+`, cut by `whitespace_piece`.
pub const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

const WITHOUT_LOOKAHEAD: &str =
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+";

/// Pieces remembered with their counts: words recur, so most pieces are merged once.
const CACHE_LIMIT: usize = 1 << 16;

/// A multiply-rotate hash over whole words (rustc's "Fx" scheme): byte strings of a few
/// bytes, hashed once per pre-token, where SipHash's start-up cost dominated.
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

/// Byte strings to counts or ranks, hashed by [`FxHasher`].
pub type ByteMap = HashMap<Vec<u8>, u32, BuildHasherDefault<FxHasher>>;

/// A slot of [`Ranks`]: a key of up to 16 bytes in place (`len` 0: the slot is free).
#[derive(Clone, Copy, Default)]
struct Slot {
    key: u128,
    len: u32,
    rank: u32,
}

/// The ranks, the keys of up to 16 bytes (nearly all) in one open-addressed table: a
/// lookup, made for every pre-token and every pair a merge tries, reads one slot instead
/// of a bucket and then the key it points to.
struct Ranks {
    slots: Vec<Slot>,
    bits: u32,
    long: ByteMap,
}

const INLINE: usize = 16;

fn inline_key(bytes: &[u8]) -> u128 {
    let mut b = [0u8; INLINE];
    b[..bytes.len()].copy_from_slice(bytes);
    u128::from_le_bytes(b)
}

impl Ranks {
    fn new(ranks: HashMap<Vec<u8>, u32>) -> Self {
        let short = ranks.keys().filter(|k| k.len() <= INLINE).count();
        let bits = (2 * short + 16).next_power_of_two().trailing_zeros();
        let mut table = Ranks {
            slots: vec![Slot::default(); 1 << bits],
            bits,
            long: ByteMap::default(),
        };
        for (key, rank) in ranks {
            if key.is_empty() {
                continue; // never asked: a piece holds a character
            }
            if key.len() > INLINE {
                table.long.insert(key, rank);
                continue;
            }
            let k = inline_key(&key);
            let mut i = table.index(k, key.len());
            while table.slots[i].len != 0 {
                i = (i + 1) & (table.slots.len() - 1);
            }
            table.slots[i] = Slot {
                key: k,
                len: key.len() as u32,
                rank,
            };
        }
        table
    }

    fn index(&self, key: u128, len: usize) -> usize {
        let mut h = FxHasher::default();
        h.add(key as u64);
        h.add((key >> 64) as u64);
        h.add(len as u64);
        // The product's high bits are the well-mixed ones.
        (h.hash >> (64 - self.bits)) as usize
    }

    fn get(&self, key: &[u8]) -> Option<u32> {
        if key.len() > INLINE {
            return self.long.get(key).copied();
        }
        let k = inline_key(key);
        let mut i = self.index(k, key.len());
        loop {
            let slot = self.slots[i];
            if slot.len == 0 {
                return None;
            }
            if slot.key == k && slot.len as usize == key.len() {
                return Some(slot.rank);
            }
            i = (i + 1) & (self.slots.len() - 1);
        }
    }
}

pub struct Counter {
    ranks: Ranks,
    pattern: Regex,
}

impl Counter {
    pub fn new(ranks: HashMap<Vec<u8>, u32>) -> Self {
        Counter {
            ranks: Ranks::new(ranks),
            pattern: Regex::new(WITHOUT_LOOKAHEAD).expect("the pattern compiles"),
        }
    }

    /// How many tokens `text` encodes to (`len(encoding.encode_ordinary(text))`).
    pub fn count<S: BuildHasher>(&self, text: &str, cache: &mut HashMap<Vec<u8>, u32, S>) -> usize {
        let mut total = 0;
        self.pieces(text, cache, |_, n| total += n);
        total
    }

    /// Each pre-token of `text` in order: its byte offset and its count.
    pub fn pieces<S: BuildHasher>(
        &self,
        text: &str,
        cache: &mut HashMap<Vec<u8>, u32, S>,
        mut each: impl FnMut(usize, usize),
    ) {
        let mut at = 0;
        while at < text.len() {
            // Every character starts some alternative: the match starts where the last ended.
            let input = Input::new(text).range(at..).anchored(Anchored::Yes);
            let Some(found) = self.pattern.find(input) else {
                break; // unreachable
            };
            let mut end = found.end();
            if text[at..end].chars().all(char::is_whitespace) {
                end = whitespace_piece(text, at, end);
            }
            each(at, self.piece(&text.as_bytes()[at..end], cache));
            at = end;
        }
    }

    fn piece<S: BuildHasher>(&self, piece: &[u8], cache: &mut HashMap<Vec<u8>, u32, S>) -> usize {
        if self.ranks.get(piece).is_some() {
            return 1;
        }
        if let Some(&n) = cache.get(piece) {
            return n as usize;
        }
        let n = self.merge(piece);
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(piece.to_vec(), n as u32);
        n
    }

    /// The number of tokens byte pair merging leaves of `piece` (tiktoken's
    /// `byte_pair_merge`: merge the adjacent pair of the lowest rank, the leftmost of equals).
    fn merge(&self, piece: &[u8]) -> usize {
        // parts[i] = (start of part i, rank of the pair part i + part i+1)
        let rank = |parts: &[(usize, u32)], i: usize| -> u32 {
            if i + 3 < parts.len() {
                self.ranks
                    .get(&piece[parts[i].0..parts[i + 3].0])
                    .unwrap_or(u32::MAX)
            } else {
                u32::MAX
            }
        };
        let mut parts: Vec<(usize, u32)> = (0..=piece.len()).map(|i| (i, u32::MAX)).collect();
        for i in 0..parts.len().saturating_sub(2) {
            parts[i].1 = self
                .ranks
                .get(&piece[parts[i].0..parts[i + 2].0])
                .unwrap_or(u32::MAX);
        }
        loop {
            let mut best = (u32::MAX, 0);
            for (i, &(_, r)) in parts[..parts.len() - 1].iter().enumerate() {
                if r < best.0 {
                    best = (r, i);
                }
            }
            if best.0 == u32::MAX {
                break;
            }
            let i = best.1;
            if i > 0 {
                parts[i - 1].1 = rank(&parts, i - 1);
            }
            parts[i].1 = rank(&parts, i);
            parts.remove(i + 1);
        }
        parts.len() - 1
    }
}

/// Where the piece starting a whitespace run `text[start..end]` (the whole run) ends, as
/// cl100k's alternatives `\s++$ | \s*[\r\n] | \s+(?!\S) | \s` cut it: all of a run that ends
/// the text; else up to its last line break; else all but its last character (which goes
/// with the word after it); else its one character.
fn whitespace_piece(text: &str, start: usize, end: usize) -> usize {
    if end == text.len() {
        return end;
    }
    let run = &text[start..end];
    if let Some(last) = run.rfind(['\r', '\n']) {
        return start + last + 1;
    }
    match run.char_indices().last() {
        Some((last, _)) if last > 0 => start + last,
        _ => end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_held_in_place_and_long_ones_answer_alike() {
        let keys: Vec<Vec<u8>> = vec![
            b"a".to_vec(),
            b"ab".to_vec(),
            vec![0],
            vec![0, 0],
            b"sixteen bytes ok".to_vec(),
            b"seventeen bytes!!".to_vec(),
            "приветствие".as_bytes().to_vec(),
        ];
        let ranks: HashMap<Vec<u8>, u32> = keys.iter().cloned().zip(0..).collect();
        let table = Ranks::new(ranks);
        for (rank, key) in keys.iter().enumerate() {
            assert_eq!(table.get(key), Some(rank as u32), "{key:?}");
        }
        // A key that is another one padded with zero bytes is not that one.
        for absent in [&b"b"[..], &[0, 0, 0], b"a\0", b"seventeen bytes!?", b""] {
            assert_eq!(table.get(absent), None, "{absent:?}");
        }
    }

    #[test]
    fn every_byte_and_none_of_its_zero_paddings() {
        // cl100k's first 256 ranks are the bytes: their padded forms probe the same table.
        let ranks: HashMap<Vec<u8>, u32> = (0..=255u8).map(|b| (vec![b], u32::from(b))).collect();
        let table = Ranks::new(ranks);
        for b in 0..=255u8 {
            assert_eq!(table.get(&[b]), Some(u32::from(b)));
            for pad in 1..INLINE {
                let mut key = vec![b];
                key.resize(1 + pad, 0);
                assert_eq!(table.get(&key), None, "{key:?}");
            }
        }
    }
}
