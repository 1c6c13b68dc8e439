//! narezka's native core: the hot path's pieces, each beside its Python reference.

use pyo3::prelude::*;

mod html;
mod scanner;

type Row = (u8, usize, usize, usize, String, String, usize, usize, usize);

/// The leaf blocks of `src` (a body plus one sentinel newline; lines end before `stop`),
/// or None where the Python scanner must answer.
#[pyfunction]
fn scan_blocks(py: Python<'_>, src: &str, stop: usize) -> Option<Vec<Row>> {
    let chars: Vec<char> = src.chars().collect();
    let out = py.allow_threads(|| {
        let mut scan = scanner::Scan::new(&chars, stop);
        scan.run(0, 0, -1, 0, -1, 0, 0).ok().map(|_| scan.out)
    })?;
    Some(
        out.into_iter()
            .map(|r| (r.kind, r.start, r.end, r.level, r.content, r.run, r.fence_end, r.close.0, r.close.1))
            .collect(),
    )
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(scan_blocks, m)?)?;
    Ok(())
}
