"""Imported only by the ``--jobs`` fork server (:func:`narezka.pipeline.workers.start_server`
names it in the server's preload list): runs the pool's ``prepare`` function once, before the
server forks any worker.

What it loads, a tokenizer's model, is then in every worker from its first instant, shared
copy-on-write with the server, where each worker would otherwise load its own copy (USE's
SentencePiece model: 0.2–0.4 s of CPU a process). The function comes pickled in an
environment variable because a fork server reads no input before it forks, and the
environment is what it inherits.
"""

from __future__ import annotations

import os
import pickle

from narezka.pipeline.workers import PREPARE_ENV


def run_prepare() -> bool:
    """Run the ``prepare`` in :data:`~narezka.pipeline.workers.PREPARE_ENV`, if any; whether
    it ran. Nothing it raises escapes: the fork server must keep serving, and a worker that
    needs what failed to load loads it itself, and reports the error for its own files."""
    blob = os.environ.pop(PREPARE_ENV, "")
    if not blob:
        return False
    try:
        function, args = pickle.loads(bytes.fromhex(blob))
        function(*args)
    except Exception:  # anything: see the docstring
        return False
    return True


run_prepare()
