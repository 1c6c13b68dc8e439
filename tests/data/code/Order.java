package shop.orders;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;

/**
 * Заказ покупателя: позиции, статус и итоговая сумма.
 */
public class Order {
    // Статусы заказа в порядке жизненного цикла.
    public enum Status { NEW, PAID, SHIPPED, DELIVERED, CANCELLED }

    /** Строка заказа. */
    public record Line(String sku, int qty, BigDecimal price) {
        public BigDecimal amount() {
            return price.multiply(BigDecimal.valueOf(qty));
        }
    }

    private final String id;
    private final List<Line> lines = new ArrayList<>();
    private Status status = Status.NEW;

    public Order(String id) {
        this.id = id;
    }

    public void add(String sku, int qty, BigDecimal price) {
        if (status != Status.NEW) {
            throw new IllegalStateException("заказ " + id + " уже оплачен");
        }
        lines.add(new Line(sku, qty, price));
    }

    // Итог по всем строкам; пустой заказ стоит ноль.
    public BigDecimal total() {
        BigDecimal sum = BigDecimal.ZERO;
        for (Line line : lines) {
            sum = sum.add(line.amount());
        }
        return sum;
    }

    @Override
    public String toString() {
        return "Заказ " + id + " (" + status + "): " + total() + " ₽";
    }

    /** Переход статуса; отменённый заказ больше не меняется. */
    public void moveTo(Status next) {
        if (status == Status.CANCELLED) {
            throw new IllegalStateException("заказ " + id + " отменён");
        }
        status = next;
    }

    interface Listener {
        void changed(Order order, Status from, Status to);
    }
}
