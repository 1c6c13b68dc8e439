//! narezka's native core: the hot path's pieces, each beside its Python reference.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple, PyType};

mod chars;
mod html;
mod scanner;
mod sentences;

use std::sync::Mutex;

/// The fields of `narezka.types.Block`, in its order (`leaf_blocks._FIELDS` checks it too).
const FIELDS: [&str; 8] = ["kind", "start", "end", "level", "title", "anchor", "fence", "fence_close"];

/// A fix-up Python makes to block `index`: a heading's raw title (trimmed, anchored and
/// slugged by `syntax.heading_title` and `slugify`), or a contained fence's marker run
/// (its lines found by `syntax.fence_lines`).
type Fix = (usize, String, String);

/// Python's `str.strip()` of `s[a..b]`.
fn py_strip(s: &[char], mut a: usize, mut b: usize) -> String {
    while a < b && html::py_space(s[a]) {
        a += 1;
    }
    while b > a && html::py_space(s[b - 1]) {
        b -= 1;
    }
    s[a..b].iter().collect()
}

/// `block_type` instances made as `leaf_blocks._block` makes them: `object.__new__`, then
/// each slot set through the type's descriptors (the frozen dataclass's `__setattr__` is not
/// in the way of `PyObject_GenericSetAttr`).
struct Maker<'py> {
    py: Python<'py>,
    block_type: Bound<'py, PyType>,
    new: Bound<'py, PyAny>,
    names: Vec<Bound<'py, PyString>>,
    kinds: Bound<'py, PyTuple>,
    empty: Bound<'py, PyString>,
}

impl<'py> Maker<'py> {
    fn make(&self, kind: u8, start: usize, end: usize, level: usize, fence: Option<(String, String)>)
            -> PyResult<Bound<'py, PyAny>> {
        let obj = self.new.call1((&self.block_type,))?;
        let py = self.py;
        let (f, c) = match fence {
            Some((f, c)) => (PyString::new(py, &f).into_any(), PyString::new(py, &c).into_any()),
            None => (self.empty.clone().into_any(), self.empty.clone().into_any()),
        };
        let values: [Bound<'py, PyAny>; 8] = [
            self.kinds.get_item(kind as usize)?,
            start.into_pyobject(py)?.into_any(),
            end.into_pyobject(py)?.into_any(),
            level.into_pyobject(py)?.into_any(),
            self.empty.clone().into_any(),
            self.empty.clone().into_any(),
            f,
            c,
        ];
        for (name, value) in self.names.iter().zip(values.iter()) {
            // SAFETY: all three are live objects held by this frame.
            let rc = unsafe { ffi::PyObject_GenericSetAttr(obj.as_ptr(), name.as_ptr(), value.as_ptr()) };
            if rc != 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(obj)
    }
}

/// The leaf blocks of `src` (a body plus one sentinel newline; lines end before `stop`) as
/// `block_type` instances with offsets moved by `off`, `kinds` giving the kind objects in
/// the scanner's code order, and the fix-ups left to Python; None where the Python scanner
/// must answer.
#[pyfunction]
fn scan_blocks<'py>(py: Python<'py>, src: &str, stop: usize, off: usize,
                    block_type: Bound<'py, PyType>, kinds: Bound<'py, PyTuple>)
                    -> PyResult<Option<(Vec<Bound<'py, PyAny>>, Vec<Fix>)>> {
    let chars: Vec<char> = src.chars().collect();
    let rows = py.allow_threads(|| {
        let mut scan = scanner::Scan::new(&chars, stop);
        scan.run(0, 0, -1, 0, -1, 0, 0).ok().map(|_| scan.out)
    });
    let Some(rows) = rows else { return Ok(None) };
    let maker = Maker {
        py,
        new: py.get_type::<pyo3::types::PyAny>().getattr("__new__")?,
        block_type,
        names: FIELDS.iter().map(|n| PyString::intern(py, n)).collect(),
        kinds,
        empty: PyString::intern(py, ""),
    };
    let mut blocks = Vec::with_capacity(rows.len());
    let mut fixes = Vec::new();
    for (i, r) in rows.into_iter().enumerate() {
        let fence = if r.kind == scanner::CODE && r.fence_end > 0 {
            Some((py_strip(&chars, r.start, r.fence_end), py_strip(&chars, r.close.0, r.close.1)))
        } else {
            None
        };
        if r.kind == scanner::HEADING {
            fixes.push((i, r.content, String::new()));
        } else if r.kind == scanner::CODE && !r.run.is_empty() && r.fence_end == 0 {
            fixes.push((i, String::new(), r.run));
        }
        blocks.push(maker.make(r.kind, r.start + off, r.end + off, r.level, fence)?);
    }
    Ok(Some((blocks, fixes)))
}

/// The last text `sentence_ends` was asked about, held (so its address names it) with its
/// characters: the chunker asks about ranges of one document many times in a row.
static LAST_TEXT: Mutex<Option<(Py<PyString>, Option<sentences::Text>)>> = Mutex::new(None);

/// `narezka.parse.sentences.sentence_ends` for `0 <= start < end <= len(text)`, or None
/// when `text` holds a character the core leaves to Python.
#[pyfunction]
fn sentence_ends(text: Bound<'_, PyString>, start: usize, end: usize) -> PyResult<Option<Vec<usize>>> {
    let mut last = LAST_TEXT.lock().map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("poisoned"))?;
    let same = matches!(&*last, Some((held, _)) if held.as_ptr() == text.as_ptr());
    if !same {
        let parsed = sentences::Text::new(text.to_str()?);
        *last = Some((text.clone().unbind(), parsed));
    }
    let Some((_, Some(parsed))) = &*last else { return Ok(None) };
    if start >= end || end > parsed.len() {
        return Ok(Some(Vec::new()));
    }
    Ok(Some(sentences::sentence_ends(parsed, start, end)))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(scan_blocks, m)?)?;
    m.add_function(wrap_pyfunction!(sentence_ends, m)?)?;
    Ok(())
}
