"""mlax.numpy.einsum: Einstein summation as a sequence of pairwise lax.dot_general calls.

Subscripts are parsed into one list of labels per operand (ellipsis dims get labels of
their own, aligned from the right). Each operand is then simplified on its own: size-1
dims that broadcast against a larger size are dropped, repeated labels become diagonals,
labels used nowhere else are summed out. Pairs are contracted in the order opt_einsum
chooses (``optimize``), keeping as batch dims the shared labels still needed later.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import opt_einsum

from mlax import lax
from mlax.numpy.manipulation import diagonal
from mlax.numpy.util import asarray, promote_dtypes
from mlax.source_info import where

__all__ = ["einsum", "einsum_path"]

_ELLIPSIS = "..."
Shape = tuple[int, ...]


def _interleaved_to_subscripts(args: Sequence[Any]) -> tuple[str, list[Any]]:
    """``einsum(op0, sublist0, op1, sublist1, ..., [sublist_out])`` as a subscripts string."""
    def term(sublist: Any) -> str:
        out = ""
        for s in sublist:
            if s is Ellipsis:
                out += _ELLIPSIS
            elif isinstance(s, int) and 0 <= s < 52:  # NumPy's symbols: A-Z, then a-z
                out += chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26)
            else:
                raise ValueError(f"einsum: sublist entries must be Ellipsis or ints in [0, 52), got {s!r}"
                                 f"{where()}")
        return out

    output = args[-1] if len(args) % 2 else None
    pairs = args[:len(args) - len(args) % 2]
    subscripts = ",".join(term(s) for s in pairs[1::2])
    return subscripts + ("" if output is None else "->" + term(output)), list(pairs[0::2])


def _parse_term(term: str, ndim: int | None, n_ellipsis: int, index: int) -> list[str]:
    """Labels of one term; the ellipsis stands for the trailing ``n_ellipsis`` broadcast labels."""
    head, dots, tail = term.partition(_ELLIPSIS)
    letters = head + tail
    if _ELLIPSIS in tail or any(c in ".,->" or c.isspace() for c in letters):  # any other symbol, as jax's
        raise ValueError(f"einsum: invalid subscript {term!r}: use letters and at most one '...'{where()}")
    if ndim is not None:
        if (len(letters) > ndim) if dots else (len(letters) != ndim):
            raise ValueError(f"einsum: subscript {term!r} does not contain the correct number of indices "
                             f"for operand {index} (rank {ndim}){where()}")
        n_ellipsis = ndim - len(letters)
    broadcast = [f"{_ELLIPSIS}{k}" for k in range(-n_ellipsis, 0)] if dots else []
    return list(head) + broadcast + list(tail)


def _parse(subscripts: str, shapes: list[Shape]) -> tuple[list[list[str]], list[str], dict[str, int]]:
    subscripts = subscripts.replace(" ", "")
    lhs, arrow, rhs = subscripts.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: {len(terms)} subscript terms for {len(shapes)} operands{where()}")
    inputs = [_parse_term(t, len(s), 0, i) for i, (t, s) in enumerate(zip(terms, shapes, strict=True))]
    n_ellipsis = max((sum(lab.startswith(_ELLIPSIS) for lab in labels) for labels in inputs), default=0)
    sizes: dict[str, int] = {}
    for i, (labels, shape) in enumerate(zip(inputs, shapes, strict=True)):
        for label, size in zip(labels, shape, strict=True):
            known = sizes.setdefault(label, size)
            if size != known and 1 not in (size, known):
                raise ValueError(f"einsum: size of label {label!r} for operand {i} ({size}) does not match "
                                 f"previous terms ({known}){where()}")
            sizes[label] = max(size, known)
    if arrow:
        output = _parse_term(rhs, None, n_ellipsis, -1)
        for label in output:
            if label not in sizes:
                raise ValueError(f"einsum: output subscript {label!r} does not appear in the inputs{where()}")
        if len(set(output)) != len(output):
            raise ValueError(f"einsum: output subscript {rhs!r} repeats a label{where()}")
    else:
        counts: dict[str, int] = {}
        for labels in inputs:
            for label in labels:
                counts[label] = counts.get(label, 0) + 1
        broadcast = [f"{_ELLIPSIS}{k}" for k in range(-n_ellipsis, 0)]
        output = broadcast + sorted(lab for lab, c in counts.items() if c == 1 and lab not in broadcast)
    return inputs, output, sizes


def _sum_out(x: Any, labels: list[str], keep: set[str], dtype: Any) -> tuple[Any, list[str]]:
    """Sum the labels not in ``keep`` (in ``dtype``: preferred_element_type, as JAX accumulates)."""
    axes = tuple(i for i, lab in enumerate(labels) if lab not in keep)
    if not axes:
        return x, labels
    if dtype is not None:
        x = lax.convert_element_type(x, dtype)
    return lax.reduce_sum(x, axes), [lab for lab in labels if lab in keep]


def _simplify(x: Any, labels: list[str], sizes: dict[str, int], keep: set[str],
              dtype: Any) -> tuple[Any, list[str]]:
    """Drop broadcasting size-1 dims, take diagonals of repeated labels, sum unneeded labels."""
    drop = [i for i, lab in enumerate(labels) if x.shape[i] == 1 and sizes[lab] != 1]
    if drop:
        x = lax.reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in drop))
        labels = [lab for i, lab in enumerate(labels) if i not in drop]
    while len(set(labels)) != len(labels):
        label = next(lab for lab in labels if labels.count(lab) > 1)
        first = labels.index(label)
        second = labels.index(label, first + 1)
        x = diagonal(x, 0, first, second)
        labels = [lab for i, lab in enumerate(labels) if i not in (first, second)] + [label]
    return _sum_out(x, labels, keep, dtype)


def _contract_pair(a: Any, la: list[str], b: Any, lb: list[str], keep: set[str],
                   preferred_element_type: Any, precision: Any) -> tuple[Any, list[str]]:
    shared = [lab for lab in la if lab in lb]
    batch = [lab for lab in shared if lab in keep]
    contract = [lab for lab in shared if lab not in keep]
    dims = (([la.index(c) for c in contract], [lb.index(c) for c in contract]),
            ([la.index(c) for c in batch], [lb.index(c) for c in batch]))
    out = lax.dot_general(a, b, dims, precision, preferred_element_type)
    return out, batch + [lab for lab in la if lab not in lb] + [lab for lab in lb if lab not in la]


def _path(optimize: Any, inputs: list[list[str]], output: list[str], shapes: list[Shape]) -> list[Any]:
    """Pairs (positions in the shrinking operand list) to contract, as opt_einsum's paths read."""
    if len(inputs) < 2:
        return []
    if optimize is False or optimize is None:
        return [(0, 1)] * (len(inputs) - 1)
    if isinstance(optimize, (list, tuple)):
        return [p for p in optimize if p != "einsum_path"]
    symbols: dict[str, str] = {}
    for label in [lab for labels in inputs for lab in labels]:
        symbols.setdefault(label, opt_einsum.get_symbol(len(symbols)))
    spec = ",".join("".join(symbols[lab] for lab in labels) for labels in inputs)
    spec += "->" + "".join(symbols[lab] for lab in output)
    strategy = "auto" if optimize is True else optimize
    path, _ = opt_einsum.contract_path(spec, *shapes, shapes=True, optimize=strategy)
    return list(path)


def einsum(subscripts: Any, /, *operands: Any, out: None = None, optimize: Any = "auto",
           precision: Any = None, preferred_element_type: Any = None, _dot_general: Any = None) -> Any:
    """``jnp.einsum``: explicit or implicit output, ellipses, diagonals, interleaved sublists."""
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved_to_subscripts((subscripts, *operands))
    if not operands:
        raise ValueError(f"einsum: at least one operand is required{where()}")
    operands = promote_dtypes(*(asarray(x) for x in operands))
    inputs, output, sizes = _parse(subscripts, [x.shape for x in operands])

    def needed(skip: set[int], labels_list: list[list[str]]) -> set[str]:
        return set(output).union(*(set(labs) for k, labs in enumerate(labels_list) if k not in skip))

    arrays, labels_list = [], []
    for k, (x, labels) in enumerate(zip(operands, inputs, strict=True)):
        x, labels = _simplify(x, labels, sizes, needed({k}, inputs), preferred_element_type)
        arrays.append(x)
        labels_list.append(labels)
    for step in _path(optimize, labels_list, output, [x.shape for x in arrays]):
        positions = sorted(step, reverse=True)
        picked = [(arrays.pop(p), labels_list.pop(p)) for p in positions][::-1]
        x, labels = picked[0]
        for i, (y, y_labels) in enumerate(picked[1:], start=2):
            keep = needed(set(), labels_list + [lab for _, lab in picked[i:]])
            x, labels = _contract_pair(x, labels, y, y_labels, keep, preferred_element_type, precision)
        arrays.append(x)
        labels_list.append(labels)
    (x,), (labels,) = arrays, labels_list
    x, labels = _sum_out(x, labels, set(output), preferred_element_type)
    x = lax.transpose(x, tuple(labels.index(lab) for lab in output)) if labels != output else x
    if preferred_element_type is not None:
        x = lax.convert_element_type(x, preferred_element_type)
    return x


def einsum_path(subscripts: str, *operands: Any, optimize: Any = "greedy") -> tuple[list[Any], str]:
    """``jnp.einsum_path``: opt_einsum's contraction order and its report for these operands."""
    shapes = [asarray(x).shape for x in operands]
    path, info = opt_einsum.contract_path(subscripts, *shapes, shapes=True, optimize=optimize)
    return ["einsum_path", *path], str(info)
