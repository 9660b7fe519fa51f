"""Inventory bookkeeping."""

from dataclasses import dataclass, field


class OutOfStock(Exception):
    pass


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
        item = self.items.get(sku)
        if item is None or item.quantity < count:
            raise OutOfStock(sku)
        item.quantity -= count
        if item.quantity == 0:
            del self.items[sku]

    def total_value(self):
        return sum(item.price * item.quantity for item in self.items.values())

    def report(self):
        lines = []
        for item in sorted(self.items.values(), key=lambda i: i.sku):
            lines.append(f"{item.sku}: {item.name} x{item.quantity}")
        return "\n".join(lines)
