"""Imported only by the ``--jobs`` fork server (:func:`narezka.runs.workers.start_server`
names it in the server's preload list): imports the parent's main script and runs the pool's
``prepare`` function, once each, before the server forks any worker.

What ``prepare`` loads, a tokenizer's model, is then in every worker from its first instant,
shared copy-on-write with the server, where each worker would otherwise load its own copy
(USE's SentencePiece model: 0.2–0.4 s of CPU a process).

The main script: a worker runs the file its parent runs as ``__main__`` (the ``narezka``
console script) as ``__mp_main__`` before its first task, unless its fork server has. A
server would, given ``'__main__'`` in its preload list, but it is never handed the path
(it asks for a ``main_path`` key that ``get_preparation_data`` calls ``init_main_from_path``;
CPython gh-126631, fixed only in releases of late 2025), so every worker imported the CLI
again: 0.25–0.33 s of CPU each. Here the server does it, and the workers forked from it find
it done. (The script sees the server's ``sys.argv``: a worker's import would have seen the
parent's, which may be too long for an environment variable; the console script reads it
only when it is ``__main__``.)

Both come in environment variables because a fork server reads no input before it forks,
and the environment is what it inherits.
"""

from __future__ import annotations

import pickle

from narezka import environment
from narezka.runs.workers import MAIN_ENV, PREPARE_ENV


def import_main() -> bool:
    """Import the script in :data:`~narezka.runs.workers.MAIN_ENV` as ``__mp_main__``,
    as multiprocessing does in a worker; whether it did. A failure is not raised: each
    worker then imports the script itself, and meets the error there, as it would have."""
    path = environment.take(MAIN_ENV)
    if not path:
        return False
    from multiprocessing import process, spawn

    # As multiprocessing marks a worker's import of it: a script that starts processes at
    # import (no ``if __name__ == "__main__"``) is refused, not run again and again.
    current = process.current_process()
    current._inheriting = True  # type: ignore[attr-defined]
    try:
        spawn.import_main_path(path)
    except (Exception, SystemExit):  # see the docstring
        return False
    finally:
        del current._inheriting  # type: ignore[attr-defined]
    return True


def run_prepare() -> bool:
    """Run the ``prepare`` in :data:`~narezka.runs.workers.PREPARE_ENV`, if any; whether
    it ran. Nothing it raises escapes: the fork server must keep serving, and a worker that
    needs what failed to load loads it itself, and reports the error for its own files."""
    blob = environment.take(PREPARE_ENV)
    if not blob:
        return False
    try:
        function, args = pickle.loads(bytes.fromhex(blob))
        function(*args)
    except Exception:  # anything: see the docstring
        return False
    return True


import_main()
run_prepare()
