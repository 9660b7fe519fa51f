"""Inventory bookkeeping."""

from dataclasses import dataclass, field


@dataclass
class Item:
    sku: str
    name: str
    price: float
    quantity: int = 0


@dataclass
class Inventory:
    items: dict = field(default_factory=dict)

    def add(self, item):
        if item.sku in self.items:
            self.items[item.sku].quantity += item.quantity
        else:
            self.items[item.sku] = item

    def remove(self, sku, count):
        item = self.items[sku]
        item.quantity -= count
        if item.quantity <= 0:
            del self.items[sku]

    def total_value(self):
        total = 0
        for item in self.items.values():
            total += item.price * item.quantity
        return total

    def report(self):
        lines = []
        for item in self.items.values():
            lines.append(f"{item.sku}: {item.name} x{item.quantity}")
        return "\n".join(lines)
