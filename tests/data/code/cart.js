// Корзина интернет-магазина: позиции, скидки и итоговая сумма.
import { formatPrice } from "./money.js";

const FREE_DELIVERY_FROM = 3000; // бесплатная доставка от этой суммы, ₽

/**
 * Позиция корзины.
 * @param {string} sku артикул
 */
export class CartItem {
  constructor(sku, title, price, qty = 1) {
    this.sku = sku;
    this.title = title;
    this.price = price;
    this.qty = qty;
  }

  // Сумма по позиции без скидок.
  get total() {
    return this.price * this.qty;
  }
}

export class Cart {
  #items = new Map();

  add(item) {
    const existing = this.#items.get(item.sku);
    if (existing) {
      existing.qty += item.qty;
    } else {
      this.#items.set(item.sku, item);
    }
    return this;
  }

  remove(sku) {
    this.#items.delete(sku);
  }

  /** Итог с учётом промокода; доставка бесплатна от FREE_DELIVERY_FROM. */
  total(promo = null) {
    let sum = 0;
    for (const item of this.#items.values()) {
      sum += item.total;
    }
    if (promo && promo.percent > 0) {
      // Скидка не больше половины суммы — так решил отдел продаж.
      sum -= Math.min(sum * promo.percent / 100, sum / 2);
    }
    const delivery = sum >= FREE_DELIVERY_FROM ? 0 : 350;
    return { sum, delivery, toPay: sum + delivery };
  }

  summary() {
    const lines = [...this.#items.values()].map(
      (item) => `${item.title} × ${item.qty} = ${formatPrice(item.total)}`,
    );
    return lines.join("\n");
  }
}

// Проверка промокода на сервере.
export async function checkPromo(code) {
  const response = await fetch(`/api/promo/${encodeURIComponent(code)}`);
  if (!response.ok) {
    throw new Error(`промокод не найден: ${code}`);
  }
  return response.json();
}

export const emptyCart = () => new Cart();
