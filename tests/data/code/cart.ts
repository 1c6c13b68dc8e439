// Типизированная корзина: те же правила, что и в cart.js.
import { formatPrice } from "./money";

export interface Promo {
  code: string;
  /** Скидка в процентах, от 1 до 50. */
  percent: number;
}

export type Totals = { sum: number; delivery: number; toPay: number };

export enum DeliveryKind {
  Courier = "courier",
  Pickup = "pickup", // самовывоз из пункта выдачи
}

const FREE_DELIVERY_FROM = 3000;

export class CartItem {
  constructor(
    public readonly sku: string,
    public readonly title: string,
    public readonly price: number,
    public qty: number = 1,
  ) {}

  get total(): number {
    return this.price * this.qty;
  }
}

export class Cart {
  private items = new Map<string, CartItem>();

  add(item: CartItem): this {
    const existing = this.items.get(item.sku);
    if (existing) {
      existing.qty += item.qty;
    } else {
      this.items.set(item.sku, item);
    }
    return this;
  }

  // Итог с учётом промокода и способа доставки.
  total(promo?: Promo, kind: DeliveryKind = DeliveryKind.Courier): Totals {
    let sum = 0;
    for (const item of this.items.values()) {
      sum += item.total;
    }
    if (promo) {
      sum -= Math.min((sum * promo.percent) / 100, sum / 2);
    }
    const delivery = kind === DeliveryKind.Pickup || sum >= FREE_DELIVERY_FROM ? 0 : 350;
    return { sum, delivery, toPay: sum + delivery };
  }

  summary(): string {
    return [...this.items.values()]
      .map((item) => `${item.title} × ${item.qty} = ${formatPrice(item.total)}`)
      .join("\n");
  }
}

export namespace Checkout {
  // Оформление заказа: корзина превращается в заявку для склада.
  export function toOrder(cart: Cart, promo?: Promo): { lines: string; totals: Totals } {
    return { lines: cart.summary(), totals: cart.total(promo) };
  }
}

export function isPromo(value: unknown): value is Promo {
  return typeof value === "object" && value !== null && "code" in value && "percent" in value;
}
