"""The native core (Rust): private; reach it through :mod:`narezka._native`."""

VERSION: str
