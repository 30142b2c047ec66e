"""`mlax.install_as_jax()`: after it, ``import jax`` anywhere in the process gives mlax.

The `pymysql.install_as_MySQLdb()` idiom (CONVENTIONS.md item 13): the names ``jax``,
``jax.numpy``, ... in ``sys.modules`` become shim modules that answer each attribute from
the table in `mlax.jax_modules`. Code of jax itself, of jaxlib and of mlax keeps seeing the
real jax through the same shims: a shim looks at the module its caller belongs to, so the
real jax's own lazy ``import jax.numpy`` (and mlax's use of jax for pytrees, dtypes and XLA)
are never redirected. Nothing is rewritten in already imported modules: a library imported
before the call keeps the real jax (install_as_jax warns about it).
"""

from __future__ import annotations

import sys
import threading
import types
import warnings
from typing import Any

from mlax import jax_modules
from mlax.jax_modules import MISSING, PASSTHROUGH_MODULES, REDIRECTS

_INTERNAL_PACKAGES = ("jax", "jaxlib", "mlax")
_LOCK = threading.Lock()
_SHIMS: dict[str, JaxModule] = {}


def _caller_is_internal() -> bool:
    """Whether the code asking for an attribute (skipping the import machinery) is jax's,
    jaxlib's or mlax's own."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("importlib"):
        frame = frame.f_back
    name = frame.f_globals.get("__name__", "") if frame is not None else ""
    package = name.partition(".")[0]
    return package in _INTERNAL_PACKAGES


class JaxModule(types.ModuleType):
    """A jax module name after install_as_jax: user code gets the table's answer, jax's and
    mlax's own code the real module's attribute."""

    def __init__(self, name: str, real: types.ModuleType) -> None:
        super().__init__(name, real.__doc__)
        for attribute in ("__file__", "__path__", "__spec__", "__loader__", "__package__"):
            if hasattr(real, attribute):
                self.__dict__[attribute] = getattr(real, attribute)
        self.__dict__["_mlax_real"] = real
        self.__dict__["_mlax_resolved"] = {}

    def __getattr__(self, name: str) -> Any:
        real = self.__dict__["_mlax_real"]
        if name.startswith("_") or _caller_is_internal():
            return getattr(real, name)
        resolved = self.__dict__["_mlax_resolved"]
        value = resolved.get(name, MISSING)
        if value is MISSING:
            value = jax_modules.resolve(self.__name__, name, _SHIMS)
            if value is MISSING:
                raise AttributeError(jax_modules.missing_message(self.__name__, name))
            resolved[name] = value
        return value

    def __dir__(self) -> list[str]:
        real = self.__dict__["_mlax_real"]
        names = [n for n in jax_modules.public_names(real)
                 if jax_modules.status(self.__name__, n) != "missing"]
        prefix = self.__name__ + "."
        children = [m[len(prefix):] for m in (*REDIRECTS, *PASSTHROUGH_MODULES)
                    if m.startswith(prefix) and "." not in m[len(prefix):]]
        return sorted(names + children)

    def __repr__(self) -> str:
        return f"<module {self.__name__!r} (mlax.install_as_jax)>"


def _modules_holding_real_jax() -> list[str]:
    """Already imported modules (not jax's or mlax's) that bound a real jax module."""
    real = {id(jax_modules.real_module(name)) for name in REDIRECTS}
    holders = []
    for module_name, module in list(sys.modules.items()):
        package = module_name.partition(".")[0]
        if package in _INTERNAL_PACKAGES or not isinstance(module, types.ModuleType):
            continue
        values = getattr(module, "__dict__", {})
        if any(id(v) in real for v in list(values.values()) if isinstance(v, types.ModuleType)):
            holders.append(module_name)
    return sorted(holders)


def install_as_jax() -> None:
    """Make ``import jax`` and ``import jax.X`` give mlax's modules in the whole process (see
    docs/compatibility.md for what is redirected and what is passed through). Idempotent;
    call it before importing the libraries that should run on mlax."""
    with _LOCK:
        if _SHIMS:
            return
        for name in PASSTHROUGH_MODULES:
            jax_modules.real_module(name)
        stale = _modules_holding_real_jax()
        shims = {name: JaxModule(name, jax_modules.real_module(name)) for name in REDIRECTS}
        _SHIMS.update(shims)
        sys.modules.update(shims)
    if stale:
        warnings.warn("mlax.install_as_jax(): these modules were imported before it and keep using the "
                      f"real jax: {', '.join(stale[:10])}{' ...' if len(stale) > 10 else ''}",
                      RuntimeWarning, stacklevel=2)
