"""Складской учёт: остатки, резервы и перемещения товаров между складами.

Модуль держит состояние в памяти; сохранение делает ``Repo.save`` через JSON-файл.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache, wraps
from pathlib import Path
from typing import Any, Callable, Iterator

log = logging.getLogger(__name__)

# Склад по умолчанию, если в заказе он не указан.
DEFAULT_WAREHOUSE = "msk-1"
MAX_RESERVE_DAYS = 7
VAT_RATE = 0.2  # НДС, доля от цены без налога


class InventoryError(Exception):
    """Ошибка складской операции; сообщение пригодно для показа оператору."""


def retry(times: int = 3, *, exceptions: tuple[type[BaseException], ...] = (OSError,)) -> Callable[..., Any]:
    """Повторяет вызов при временных сбоях файловой системы."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for attempt in range(1, times + 1):
                try:
                    return func(*args, **kwargs)
                except exceptions:
                    # Последняя попытка: пусть ошибка уйдёт наверх.
                    if attempt == times:
                        raise
                    log.warning("повтор %s из %s", attempt, times)
            return None

        return wrapper

    return decorate


@dataclass(frozen=True)
class Item:
    """Товарная позиция: артикул, название и цена за единицу в рублях."""

    sku: str
    title: str
    price: float
    tags: tuple[str, ...] = ()

    @property
    def price_with_vat(self) -> float:
        return round(self.price * (1 + VAT_RATE), 2)


class Warehouse:
    """Один склад: остатки по артикулам и резервы под заказы."""

    class Cell:
        """Ячейка хранения (стеллаж, полка)."""

        def __init__(self, code: str, capacity: int) -> None:
            self.code = code
            self.capacity = capacity
            self.items: dict[str, int] = {}

        def free(self) -> int:
            # Свободное место считаем в штуках, без учёта габаритов.
            return self.capacity - sum(self.items.values())

        class Label:
            """Этикетка ячейки для печати."""

            def render(self, cell: "Warehouse.Cell") -> str:
                return f"[{cell.code}] свободно {cell.free()}"

    def __init__(self, code: str) -> None:
        self.code = code
        self.stock: dict[str, int] = defaultdict(int)
        self.reserved: dict[str, int] = defaultdict(int)
        self.cells: list[Warehouse.Cell] = []

    def available(self, sku: str) -> int:
        """Сколько можно продать прямо сейчас."""
        return self.stock[sku] - self.reserved[sku]

    # Резерв снимается автоматически через MAX_RESERVE_DAYS дней.
    def reserve(self, sku: str, qty: int) -> None:
        if qty <= 0:
            raise InventoryError(f"количество должно быть положительным: {qty}")
        if self.available(sku) < qty:
            raise InventoryError(f"на складе {self.code} не хватает {sku}")
        self.reserved[sku] += qty

    @staticmethod
    @lru_cache(maxsize=128)
    def normalize_sku(raw: str) -> str:
        return raw.strip().upper().replace(" ", "-")


class Repo:
    """Хранилище складов с сохранением в JSON."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.warehouses: dict[str, Warehouse] = {}

    def get(self, code: str = DEFAULT_WAREHOUSE) -> Warehouse:
        if code not in self.warehouses:
            self.warehouses[code] = Warehouse(code)
        return self.warehouses[code]

    @retry(times=5, exceptions=(OSError, TimeoutError))
    def save(self) -> None:
        """Пишет состояние атомарно: сначала во временный файл, потом переименование."""
        data = {
            code: {"stock": dict(w.stock), "reserved": dict(w.reserved)}
            for code, w in self.warehouses.items()
        }
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
        tmp.replace(self.path)

    def __iter__(self) -> Iterator[Warehouse]:
        return iter(self.warehouses.values())


def transfer_report(repo: Repo, moves: list[dict[str, Any]], *, strict: bool = False) -> str:
    """Проводит перемещения между складами и возвращает текстовый отчёт.

    Каждое перемещение: ``{"sku": ..., "from": ..., "to": ..., "qty": ...}``. В строгом
    режиме первая ошибка прерывает проведение; иначе ошибки собираются в отчёт.
    """
    lines: list[str] = []
    errors: list[str] = []
    totals: dict[str, int] = defaultdict(int)
    # Сначала проверяем все перемещения, чтобы не провести половину пакета.
    for number, move in enumerate(moves, 1):
        sku = Warehouse.normalize_sku(str(move.get("sku", "")))
        source = repo.get(str(move.get("from", DEFAULT_WAREHOUSE)))
        target = repo.get(str(move.get("to", DEFAULT_WAREHOUSE)))
        qty = int(move.get("qty", 0))
        if source is target:
            errors.append(f"{number}: склад-источник совпадает со складом-получателем")
            continue
        if qty <= 0:
            errors.append(f"{number}: количество {qty} не положительное")
            continue
        if source.available(sku) < qty:
            message = f"{number}: на {source.code} доступно {source.available(sku)} шт. {sku}"
            if strict:
                raise InventoryError(message)
            errors.append(message)
            continue
        totals[sku] += qty
    # Проводим только проверенные перемещения.
    for move in moves:
        sku = Warehouse.normalize_sku(str(move.get("sku", "")))
        if sku not in totals:
            continue
        source = repo.get(str(move.get("from", DEFAULT_WAREHOUSE)))
        target = repo.get(str(move.get("to", DEFAULT_WAREHOUSE)))
        qty = int(move.get("qty", 0))
        source.stock[sku] -= qty
        target.stock[sku] += qty
        lines.append(f"{sku}: {source.code} → {target.code}, {qty} шт.")
    with_errors = len(errors)
    header = f"Перемещений: {len(lines)}, ошибок: {with_errors}"
    if errors:
        lines.append("")
        lines.append("Ошибки:")
        lines.extend(f"  {e}" for e in errors)
    try:
        repo.save()
    except OSError as exc:
        log.error("не удалось сохранить склады: %s", exc)
        lines.append(f"Внимание: состояние не сохранено ({exc})")
    else:
        log.info("склады сохранены в %s", repo.path)
    finally:
        log.debug("отчёт о перемещениях готов")
    summary = "\n".join(lines)
    return header + "\n\n" + summary


# ---- вспомогательные функции отчётов ----

def format_price(value: float) -> str:
    # Рубли с неразрывным пробелом между разрядами: 12 345,50 ₽
    whole, frac = f"{value:,.2f}".split(".")
    return whole.replace(",", "\u00a0") + "," + frac + " ₽"


def top_items(items: list[Item], n: int = 5) -> list[Item]:
    return sorted(items, key=lambda item: item.price, reverse=True)[:n]


if __name__ == "__main__":
    repo = Repo(Path("склады.json"))
    repo.get().stock["ЛАМПА-1"] = 10
    print(transfer_report(repo, [{"sku": "лампа 1", "from": "msk-1", "to": "spb-2", "qty": 3}]))
