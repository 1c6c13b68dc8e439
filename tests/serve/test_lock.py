"""The index's read/write lock under a server's load: a waiting sync goes before new
searches (else overlapping searches starve it), and a nested read never deadlocks."""

from __future__ import annotations

import threading

from narezka.index.sharing import ReadWriteLock


def waiting_writers(lock: ReadWriteLock) -> int:
    with lock._cond:
        return lock._waiting


def test_a_waiting_writer_goes_before_new_readers() -> None:
    lock = ReadWriteLock()
    order: list[str] = []
    first_in, release_first = threading.Event(), threading.Event()

    def first_reader() -> None:
        with lock.read():
            first_in.set()
            release_first.wait(30)

    def writer() -> None:
        with lock.write():
            order.append("writer")

    def late_reader() -> None:
        with lock.read():
            order.append("reader")

    a = threading.Thread(target=first_reader)
    a.start()
    assert first_in.wait(30)
    w = threading.Thread(target=writer)
    w.start()
    with lock._cond:
        assert lock._cond.wait_for(lambda: lock._waiting == 1, timeout=30)
    b = threading.Thread(target=late_reader)
    b.start()
    release_first.set()
    for t in (a, w, b):
        t.join(30)
    assert order == ["writer", "reader"]


def test_a_thread_that_reads_may_read_again_while_a_writer_waits() -> None:
    lock = ReadWriteLock()
    inner_done = threading.Event()
    outer_in, go_on = threading.Event(), threading.Event()

    def reader() -> None:
        with lock.read():
            outer_in.set()
            go_on.wait(30)
            with lock.read():  # as Index.neighbours reads points inside its own read
                inner_done.set()

    def writer() -> None:
        with lock.write():
            pass

    r = threading.Thread(target=reader)
    r.start()
    assert outer_in.wait(30)
    w = threading.Thread(target=writer)
    w.start()
    with lock._cond:
        assert lock._cond.wait_for(lambda: lock._waiting == 1, timeout=30)
    go_on.set()
    assert inner_done.wait(30), "the nested read deadlocked behind the waiting writer"
    r.join(30)
    w.join(30)
    assert not w.is_alive() and waiting_writers(lock) == 0
