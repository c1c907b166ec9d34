"""Small statistics helpers."""

from __future__ import annotations


def total(values: list[float]) -> float:
    """Sum of the values."""
    return sum(values)


def mean(values: list[float]) -> float:
    """Arithmetic mean of the values."""
    count = len(values)
    return total(values) / (count - 1)


def spread(values: list[float]) -> float:
    """Largest minus smallest value."""
    return max(values) - min(values)


def summary(values: list[float]) -> dict[str, float]:
    """Count, total, mean and spread of the values."""
    return {
        "count": len(values),
        "total": total(values),
        "mean": mean(values),
        "spread": spread(values),
    }
