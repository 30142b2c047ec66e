"""A bounded, thread-safe LRU map with one computation per key: the shape of every mlax cache.

jit keeps two kinds of cache (traced signatures per function, compiled programs per process).
Both meet the same demands: a bound from ``mlax.config`` (JAX bounds its caches too: a
function called on ever new shapes must not grow the process without limit), safety when
several threads ask for the same missing key at once (one trace or compile runs, the
others wait for its result instead of repeating it), and dropping evicted values, so that
what they hold (an LLVM engine) is freed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class _Pending:
    """A value some thread is computing: others wait on ``done``."""

    def __init__(self) -> None:
        self.owner = threading.get_ident()
        self.done = threading.Event()


class LRUCache(Generic[V]):
    """At most ``capacity()`` entries, least recently used evicted first.

    ``capacity`` is read on every insertion, so changing the config option takes effect at
    the next miss.
    """

    def __init__(self, capacity: Callable[[], int]) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[Hashable, V] = OrderedDict()
        self._pending: dict[Hashable, _Pending] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        """The value of ``key`` (now the most recently used), or None. Lock-free, for jit's
        fast path: each OrderedDict operation is atomic under the GIL."""
        value = self._entries.get(key)
        if value is not None:
            try:
                self._entries.move_to_end(key)
            except KeyError:  # evicted by another thread in between
                pass
        return value

    def get_or_create(self, key: Hashable, create: Callable[[], V]) -> V:
        """The value of ``key``, computed by ``create()`` on a miss. Concurrent callers of
        one missing key wait for the first one's result; if it fails, each retries (and
        meets its own error, raised in its own thread)."""
        while True:
            with self._lock:
                value = self._entries.get(key)
                if value is not None:
                    self._entries.move_to_end(key)
                    return value
                pending = self._pending.get(key)
                if pending is None:
                    pending = self._pending[key] = _Pending()
                    break
            if pending.owner == threading.get_ident():
                return create()  # re-entered while computing this key: compute it uncached
            pending.done.wait()
        try:
            return self.put(key, create())
        finally:
            with self._lock:
                del self._pending[key]
            pending.done.set()

    def put(self, key: Hashable, value: V) -> V:
        """Store ``value`` as the most recently used entry (replacing any), evicting the
        least recently used beyond the capacity; returns ``value``."""
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > max(self._capacity(), 1):
                self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
