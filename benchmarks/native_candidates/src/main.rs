//! `sha RECORDS`: best of 5 runs of SHA-256 over length-prefixed records, each digest's first
//! 16 bytes turned into hex (what a chunk id keeps). `stem WORDS`: the Snowball stem of each
//! `lang\tword` line, printed as `lang\tword\tstem`, and the time taken on stderr.
use sha2::{Digest, Sha256};
use std::io::Read;
use std::time::Instant;

fn records(buf: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < buf.len() {
        let n = u32::from_le_bytes(buf[i..i + 4].try_into().unwrap()) as usize;
        out.push(&buf[i + 4..i + 4 + n]);
        i += 4 + n;
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut buf = Vec::new();
    std::fs::File::open(&args[2]).unwrap().read_to_end(&mut buf).unwrap();
    if args[1] == "sha" {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let recs = records(&buf);
        let (mut best, mut acc) = (f64::MAX, 0u8);
        for _ in 0..5 {
            let t = Instant::now();
            for r in &recs {
                let d = Sha256::digest(r);
                let mut hex = [0u8; 32];
                for (k, b) in d[..16].iter().enumerate() {
                    hex[2 * k] = HEX[(b >> 4) as usize];
                    hex[2 * k + 1] = HEX[(b & 15) as usize];
                }
                acc ^= hex[0]; // keeps the work from being optimised away
            }
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!("{} {:.4} {}", recs.len(), best, acc);
    } else {
        let text = String::from_utf8(buf).unwrap();
        let ru = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::Russian);
        let en = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
        let mut out = String::new();
        let t = Instant::now();
        for line in text.lines() {
            let (lang, w) = line.split_once('\t').unwrap();
            let s = if lang == "ru" { ru.stem(w) } else { en.stem(w) };
            out.push_str(&format!("{lang}\t{w}\t{s}\n"));
        }
        eprintln!("{:.4}", t.elapsed().as_secs_f64());
        print!("{out}");
    }
}
