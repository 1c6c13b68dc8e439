// Package store хранит остатки товаров на складах.
package store

import (
	"errors"
	"fmt"
	"sync"
)

// ErrNotEnough — на складе меньше товара, чем просят.
var ErrNotEnough = errors.New("store: недостаточно товара")

// Item — товарная позиция.
type Item struct {
	SKU   string
	Title string
	Price int64 // цена в копейках
}

// Store — потокобезопасный склад.
type Store struct {
	mu    sync.Mutex
	stock map[string]int
	items map[string]Item
}

// Stocker описывает всё, что умеет принимать и отдавать товар.
type Stocker interface {
	Add(item Item, qty int)
	Take(sku string, qty int) error
}

// New создаёт пустой склад.
func New() *Store {
	return &Store{stock: make(map[string]int), items: make(map[string]Item)}
}

// Add кладёт товар на склад.
func (s *Store) Add(item Item, qty int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items[item.SKU] = item
	s.stock[item.SKU] += qty
}

// Take списывает товар; при нехватке ничего не меняет.
func (s *Store) Take(sku string, qty int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if qty <= 0 {
		return fmt.Errorf("store: количество %d не положительное", qty)
	}
	if s.stock[sku] < qty {
		return fmt.Errorf("%w: %s (есть %d, нужно %d)", ErrNotEnough, sku, s.stock[sku], qty)
	}
	s.stock[sku] -= qty
	return nil
}

// Value — стоимость всех остатков в копейках.
func (s *Store) Value() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var total int64
	for sku, qty := range s.stock {
		total += s.items[sku].Price * int64(qty)
	}
	return total
}
