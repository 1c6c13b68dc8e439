"""The native core (Rust): private; reach it through :mod:`narezka._native`."""

VERSION: str

def scan_blocks(
    src: str, stop: int
) -> list[tuple[int, int, int, int, str, str, int, int, int]] | None: ...
