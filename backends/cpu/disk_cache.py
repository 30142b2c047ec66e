"""The CPU backend's persistent compilation cache: object files on disk, so that a later process
running the same program links the object instead of running the pass pipeline and LLVM.

Enabled by ``mlax.config.update("compilation_cache_dir", path)`` (jax's name
``jax_compilation_cache_dir`` is accepted too; ``MLAX_COMPILATION_CACHE_DIR`` is read once, by
mlax.config). It is the native CPU backend's own: the XLA backend is left alone (jax has its own
cache, ``jax.config.update("jax_compilation_cache_dir", ...)``, which mlax does not set for the
user, as mlax's options never change what the real jax does).

**Key.** Everything that decides the machine code (`cache_key`): the program as the in-memory
compile cache keys it (printed without locations, backends/registry.py), the entry, the CPU
pipeline text with its stages expanded, LLVM's code generation settings (orc.CODEGEN), mlax's
version plus a fingerprint of its compiler's sources (names, sizes and mtimes of dialect/,
passes/ and backends/: an edited checkout never links a stale object), the LLVM version and the
identity of the LLVM/MLIR libraries, and the host's target triple, CPU name and CPU features.
The entry's symbol in the object is named after the key's SHA-256, so the object is linked as
it was written and two executables of one program in a process share its code.

**Entries.** One file per key, ``<sha256 of the key>.mlaxobj``: a header (magic, format
version, the lengths below and the SHA-256 of the object), the full key, the entry's symbol
name, the object file. A read checks all of it, so a truncated, corrupted or foreign entry
(another key under this name, another format) is a miss: the program is compiled and its entry
rewritten. Writes go to a temporary file in the directory, renamed over the entry
(``os.replace``), so readers in other processes see a whole entry or none. Programs that call
host callbacks are not cached (their objects hold this process's callback ids), nor programs
binding user primitives (their text names this process's ids, not the primitives' rules).

**Bound.** ``compilation_cache_max_size`` bytes (1 GiB by default; jax's name
``jax_compilation_cache_max_size``; 0: no cache, -1: no limit): after a write, the least
recently used entries (by mtime; a hit touches its entry) are deleted until the rest fit.
Temporary files older than an hour (a writer that died) are deleted by the same scan.

**Failures.** A directory that cannot be created, read or written gives one warning and no
cache (compiles go on as without one); never an error.
"""

from __future__ import annotations

import functools
import hashlib
import os
import struct
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from mlax.backends.cpu import orc
from mlax.configuration import config

MAGIC = b"MLAXCPU\0"
FORMAT = 1
SUFFIX = ".mlaxobj"
_TEMPORARY = ".tmp-"
_STALE_TEMPORARY_S = 3600
# magic, format, key length, symbol name length, object length, SHA-256 of the object
_HEADER = struct.Struct("<8sIQQQ32s")


@dataclass
class Stats:
    """What the cache did in this process (tests read it)."""

    hits: int = 0
    misses: int = 0
    writes: int = 0
    rejected: int = 0  # entries present but unusable (corrupt, truncated, foreign)
    evicted: int = 0


stats = Stats()


@functools.cache
def compiler_fingerprint() -> str:
    """mlax's version and the names, sizes and mtimes of its compiler's sources."""
    import importlib.metadata

    try:
        version = importlib.metadata.version("mlax")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    digest = hashlib.sha256()
    for line in _compiler_sources():
        digest.update(line.encode())
    return f"{version} {digest.hexdigest()}"


def _compiler_sources() -> list[str]:
    """One line per source file of mlax.dialect, mlax.passes and mlax.backends (~150 files,
    about a millisecond): its path, size and mtime."""
    import mlax.backends
    import mlax.dialect
    import mlax.passes

    lines = []
    for package in (mlax.dialect, mlax.passes, mlax.backends):
        for root in package.__path__:
            for folder, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(f for f in files if f.endswith((".py", ".mlir"))):
                    path = os.path.join(folder, name)
                    info = os.stat(path)
                    lines.append(f"{package.__name__} {os.path.relpath(path, root)} {info.st_size} "
                                 f"{info.st_mtime_ns}\n")
    return lines


def cache_key(program: str, entry: str, pipeline: str) -> bytes:
    """The key of ``program``'s ``entry`` compiled by ``pipeline`` (expanded text) on this host."""
    triple, cpu, features = orc.host()
    head = (f"mlax CPU object, format {FORMAT}\nmlax {compiler_fingerprint()}\nllvm {orc.llvm_version()}\n"
            f"codegen {orc.CODEGEN}\nhost {triple} {cpu} {features}\npipeline {pipeline}\nentry {entry}\n")
    return head.encode() + program.encode()


@functools.lru_cache(maxsize=16)
def _digest(key: bytes) -> str:
    """SHA-256 of ``key`` (a key is hashed several times per compile; it may be megabytes)."""
    return hashlib.sha256(key).hexdigest()


def symbol_name(key: bytes) -> str:
    """The entry's symbol in the object of ``key``."""
    return f"mlax.cached.{_digest(key)[:32]}"


class DiskCache:
    """The entries of one directory (see the module docstring)."""

    def __init__(self, directory: str) -> None:
        self.directory = Path(directory)
        self.usable = True
        self._made = False

    def _fail(self, doing: str, error: OSError) -> None:
        """Turn the cache off for this directory, with one warning."""
        if self.usable:
            self.usable = False
            warnings.warn(f"mlax: the compilation cache directory {str(self.directory)!r} cannot be used "
                          f"({doing}: {error}); compiling without a persistent cache", RuntimeWarning,
                          stacklevel=2)

    def _path(self, key: bytes) -> Path:
        return self.directory / (_digest(key) + SUFFIX)

    def get(self, key: bytes) -> bytes | None:
        """The object file stored under ``key``, or None (a miss, or an unusable entry)."""
        path = self._path(key)
        try:
            with open(path, "rb") as file:
                data = file.read()
        except OSError:  # none yet, or unreadable: compiled, and written if the directory allows
            stats.misses += 1
            return None
        found = _parse(data, key)
        if found is None:
            stats.rejected += 1
            stats.misses += 1
            return None
        try:
            os.utime(path)  # most recently used
        except OSError:
            pass  # a read-only cache still serves hits
        stats.hits += 1
        return found

    def put(self, key: bytes, obj: bytes, max_size: int) -> None:
        """Store ``obj`` under ``key`` atomically, then evict beyond ``max_size`` bytes (-1: no
        limit). An entry larger than the bound is not written."""
        name = symbol_name(key).encode()
        entry = _HEADER.pack(MAGIC, FORMAT, len(key), len(name), len(obj), hashlib.sha256(obj).digest())
        entry += key + name + obj
        if max_size != -1 and len(entry) > max_size:
            return
        try:
            if not self._made:
                self.directory.mkdir(parents=True, exist_ok=True)
                self._made = True
            handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=_TEMPORARY)
            try:
                with os.fdopen(handle, "wb") as file:
                    file.write(entry)
                os.replace(temporary, self._path(key))
            except BaseException:
                _remove(temporary)
                raise
        except OSError as error:
            self._fail("writing", error)
            return
        stats.writes += 1
        if max_size != -1:
            self._evict(max_size)

    def _evict(self, max_size: int) -> None:
        """Delete the least recently used entries until the rest take at most ``max_size``
        bytes, and temporary files a dead writer left."""
        entries, total, now = [], 0, time.time()
        try:
            with os.scandir(self.directory) as found:
                for item in found:
                    try:
                        info = item.stat()
                    except OSError:
                        continue  # deleted meanwhile
                    if item.name.endswith(SUFFIX):
                        entries.append((info.st_mtime_ns, info.st_size, item.path))
                        total += info.st_size
                    elif item.name.startswith(_TEMPORARY) and now - info.st_mtime > _STALE_TEMPORARY_S:
                        _remove(item.path)
        except OSError:
            return
        for _, size, path in sorted(entries):
            if total <= max_size:
                break
            if _remove(path):
                stats.evicted += 1
            total -= size


def _remove(path: str | os.PathLike) -> bool:
    try:
        os.remove(path)
        return True
    except OSError:
        return False  # another process removed it first


def _parse(data: bytes, key: bytes) -> bytes | None:
    """The object of an entry, if ``data`` is a whole, intact entry for ``key``."""
    if len(data) < _HEADER.size:
        return None
    magic, version, key_size, name_size, obj_size, checksum = _HEADER.unpack_from(data)
    if magic != MAGIC or version != FORMAT or len(data) != _HEADER.size + key_size + name_size + obj_size:
        return None
    start = _HEADER.size
    if data[start:start + key_size] != key:
        return None
    start += key_size
    if data[start:start + name_size] != symbol_name(key).encode():
        return None
    obj = data[start + name_size:]
    if hashlib.sha256(obj).digest() != checksum:
        return None
    return obj


_CACHES: dict[str, DiskCache] = {}
_LOCK = threading.Lock()


def active() -> tuple[DiskCache, int] | None:
    """The cache of ``config.compilation_cache_dir`` and the size bound, or None when there is
    none (unset, a bound of 0, or a directory found unusable)."""
    directory, max_size = config.compilation_cache_dir, config.compilation_cache_max_size
    if not directory or max_size == 0:
        return None
    with _LOCK:
        cache = _CACHES.get(directory)
        if cache is None:
            cache = _CACHES[directory] = DiskCache(directory)
    return (cache, max_size) if cache.usable else None
