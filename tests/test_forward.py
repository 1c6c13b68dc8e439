from dataclasses import dataclass

import pytest

from narezka._forward import Forward


@dataclass
class _Inner:
    size: int


@dataclass(frozen=True, slots=True)
class _Wrapper:
    inner: _Inner

    size = Forward[int]("inner")


def test_a_forwarded_attribute_reads_the_wrapped_objects_current_value() -> None:
    inner = _Inner(3)
    wrapper = _Wrapper(inner)
    inner.size = 5
    assert wrapper.size == 5


def test_a_forwarded_attribute_cannot_be_set_on_the_wrapper() -> None:
    class Plain:
        size = Forward[int]("inner")

        def __init__(self) -> None:
            self.inner = _Inner(1)

    with pytest.raises(AttributeError, match=r"inner\.size"):
        Plain().size = 2


def test_the_class_attribute_is_the_descriptor_itself() -> None:
    assert isinstance(_Wrapper.size, Forward)
