"""One call each, over an :class:`~narezka.index.Index`: ``indexing`` (index a corpus),
``searching`` (ask it once), ``maintenance`` (calibrate a served model's budget, push to a
server) and ``evaluating`` (``narezka eval``'s runs). The CLI and scripts call these; the
machinery they call lives below, in :mod:`narezka.index` and :mod:`narezka.runs`.
"""
