"""Answers kept for a process's life by key: a file's header by its identity, a framework as one job hears it.

Why one home: each stage that asks the same question of the same file or object again (the layout of every file it
groups, every rank of its peers, every rule of its host's framework) kept its own dict, its own lock and its own bound
-- the same few lines in each.  The tab answers sessions in threads, so the map is locked; a long-running server sees
unboundedly many files, so it is bounded, the oldest answer going first."""

from __future__ import annotations

import threading
from typing import Callable, Generic, Hashable, TypeVar

V = TypeVar("V")


class Memo(Generic[V]):
    """A thread-safe map of answers by key holding at most ``most`` of them (the oldest goes first)."""

    def __init__(self, most: int) -> None:
        self._most = most
        self._answers: dict[Hashable, V] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, default: V | None = None) -> V | None:
        """The answer kept for ``key``, or ``default`` (a caller whose answers may be None tells "not asked" by its own
        ``default``)."""
        with self._lock:
            return self._answers.get(key, default)

    def put(self, key: Hashable, answer: V) -> V:
        """Keep ``answer`` for ``key`` (the oldest answer leaving a full map) and return it."""
        with self._lock:
            if key not in self._answers and len(self._answers) >= self._most:
                self._answers.pop(next(iter(self._answers)))
            self._answers[key] = answer
        return answer

    def ask(self, key: Hashable, make: Callable[[], V]) -> V:
        """The answer kept for ``key``, else ``make()``'s, kept (made outside the lock: two threads asking one new key
        at once may both make it, and the answers are equal)."""
        with self._lock:
            if key in self._answers:
                return self._answers[key]
        return self.put(key, make())

    def of(self, objects: tuple, make: Callable[[], V], values: Hashable = ()) -> V:
        """The answer kept for ``objects`` and ``values`` (a pure function of them), else ``make()``'s, kept.  Keyed on
        the objects themselves (``is``: unhashable ones, a frozen dataclass holding dicts, a module), not on their
        ids' reuse -- each answer is kept beside the objects it was made of, so an id a collected object's successor
        took asks anew -- and on ``values`` by equality."""
        key = (tuple(id(o) for o in objects), values)
        hit = self.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], objects)):
            return hit[1]
        return self.put(key, (objects, make()))[1]

    def __len__(self) -> int:
        with self._lock:
            return len(self._answers)
