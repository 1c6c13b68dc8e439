"""Read-only attributes that hand on the same-named attribute of another one of the owner's.

A wrapper (a cached embedder, a config around its params) answers for the object it wraps
without a property per name that only says ``return self.inner.name``.
"""

from __future__ import annotations

from typing import Any, Generic, Self, TypeVar, overload

T = TypeVar("T")


class Forward(Generic[T]):
    """``size = Forward[int]("config")`` reads ``self.config.size``; it cannot be set."""

    __slots__ = ("name", "via")

    def __init__(self, via: str) -> None:
        self.via = via
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Self: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...

    def __get__(self, obj: object | None, owner: type | None = None) -> Self | T:
        if obj is None:
            return self
        value: T = getattr(getattr(obj, self.via), self.name)
        return value

    def __set__(self, obj: object, value: Any) -> None:
        # A data descriptor: an instance dict must not shadow the object it answers for.
        raise AttributeError(f"{self.name} is {self.via}.{self.name}, read-only")
