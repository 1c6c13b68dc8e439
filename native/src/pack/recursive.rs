//! The `recursive` strategy's packing (`narezka.split.recursive`): one packer over the
//! document's body with the separators as refiners, in characters or in cl100k_base tokens.
//! The overlap is left to Python (`with_overlap`), which extends the ranges handed back.

use pyo3::prelude::*;
use pyo3::types::PyString;

use super::tokens::Tok;
use super::{Doc, Packer, Range, Refiner};

/// The ranges, and their counts in tokens.
type Packed = (Vec<Range>, Option<Vec<i64>>);

/// `RecursiveStrategy.split`'s ranges before the overlap, with each one's exact count in
/// tokens (none in characters), or None when `text` holds a character the core leaves to
/// Python. `separators` are the refiners in order (None: sentence ends; no empty one).
/// `counter` None packs in characters: `crumb` and `frame` then answer with lengths, else
/// with texts; the rest is as `pack_headings_tokens` takes it.
#[pyfunction]
#[pyo3(signature = (
    counter, text, separators, atoms, section_starts, size, budget, start, end, crumb, frame,
    clean, changed, embed, sanitized
))]
#[allow(clippy::too_many_arguments)] // one document's state, as the context holds it
pub fn pack_recursive<'py>(
    counter: Option<PyRef<'py, crate::Cl100kCounter>>,
    text: Bound<'py, PyString>,
    separators: Vec<Option<String>>,
    atoms: Vec<(usize, usize, u8)>,
    section_starts: Vec<usize>,
    size: i64,
    budget: i64,
    start: usize,
    end: usize,
    crumb: Bound<'py, PyAny>,
    frame: Bound<'py, PyAny>,
    clean: bool,
    changed: (Vec<usize>, Vec<usize>),
    embed: Bound<'py, PyAny>,
    sanitized: Bound<'py, PyAny>,
) -> PyResult<Option<Packed>> {
    // A lone surrogate has no UTF-8 form: such a text is Python's to pack.
    let Ok(src) = text.to_str() else {
        return Ok(None);
    };
    let Some(parsed) = crate::sentences::Text::new(src) else {
        return Ok(None);
    };
    let mut refiners: Vec<Refiner> = separators
        .into_iter()
        .filter_map(|s| match s {
            None => Some(Refiner::Sentences),
            Some(s) if s.is_empty() => None,
            Some(s) => Some(Refiner::Separator(s.chars().collect())),
        })
        .collect();
    if refiners.is_empty() {
        // Only the atom bounds are left (no refiner at all: the `headings` ones).
        refiners.push(Refiner::Nothing);
    }
    let poisoned = || pyo3::exceptions::PyRuntimeError::new_err("poisoned");
    let tok = match &counter {
        Some(c) => {
            // The piece cache leaves its lock while the document is packed: the callbacks
            // count breadcrumbs and frames through the same counter.
            let cache = std::mem::take(&mut *c.cache.lock().map_err(|_| poisoned())?);
            Some(Tok::new(
                &c.counter,
                cache,
                src,
                &parsed.chars,
                clean,
                changed,
                embed,
                sanitized,
                size,
            ))
        }
        None => None,
    };
    let mut doc = Doc::new(
        &parsed,
        Vec::new(),
        Vec::new(),
        atoms,
        section_starts,
        size,
        crumb,
        frame,
        tok,
        refiners,
    );
    let probe = match &doc.tok {
        Some(tok) => tok.max_probe,
        None => size.max(1) as usize,
    };
    let packer = Packer {
        budget,
        ceiling: budget.max(size),
        max_probe: probe,
    };
    let found = packer.pack(&mut doc, start, end, 0).and_then(|ranges| {
        let counts = match doc.tok {
            Some(_) => Some(doc.chunk_counts(&ranges)?),
            None => None,
        };
        Ok((ranges, counts))
    });
    if let (Some(c), Some(tok)) = (&counter, doc.tok.take()) {
        let mut held = c.cache.lock().map_err(|_| poisoned())?;
        if held.len() < tok.cache.len() {
            *held = tok.cache;
        }
    }
    found.map(Some)
}
