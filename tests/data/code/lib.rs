//! Корзина покупателя: позиции и итоговая сумма в копейках.

use std::collections::HashMap;
use std::fmt;

/// Бесплатная доставка от этой суммы (в копейках).
pub const FREE_DELIVERY_FROM: u64 = 300_000;

/// Позиция корзины.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub sku: String,
    pub title: String,
    pub price: u64,
}

#[derive(Debug, Default)]
pub struct Cart {
    lines: HashMap<String, (Item, u32)>,
}

// Ошибки корзины.
#[derive(Debug)]
pub enum CartError {
    UnknownSku(String),
    ZeroQuantity,
}

impl Cart {
    /// Пустая корзина.
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, item: Item, qty: u32) -> Result<(), CartError> {
        if qty == 0 {
            return Err(CartError::ZeroQuantity);
        }
        let entry = self.lines.entry(item.sku.clone()).or_insert((item, 0));
        entry.1 += qty;
        Ok(())
    }

    // Сумма без доставки; доставка считается отдельно.
    pub fn total(&self) -> u64 {
        self.lines
            .values()
            .map(|(item, qty)| item.price * u64::from(*qty))
            .sum()
    }

    pub fn delivery(&self) -> u64 {
        if self.total() >= FREE_DELIVERY_FROM {
            0
        } else {
            35_000
        }
    }
}

impl fmt::Display for Cart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (item, qty) in self.lines.values() {
            writeln!(f, "{} × {} = {} коп.", item.title, qty, item.price * u64::from(*qty))?;
        }
        write!(f, "Итого: {} коп.", self.total())
    }
}

pub trait Priced {
    fn price(&self) -> u64;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_cart_costs_nothing() {
        assert_eq!(Cart::new().total(), 0);
    }
}
