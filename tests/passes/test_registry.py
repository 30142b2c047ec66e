"""The pass registry: registration rules, option parsing, documentation of every pass."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mlir import ir

from mlax.passes import registry
from mlax.passes.registry import ModulePass, option, register_pass

DOCS = Path(__file__).resolve().parents[2] / "docs" / "passes.md"


@dataclass
class OptionsPass(ModulePass):
    """Not registered by default: the fixture below registers it for one test."""

    argument = "mlax-test-options"
    summary = "a pass with one option of each kind"

    count: int = option(3, "an int")
    scale: float = option(0.5, "a float")
    enabled: bool = option(False, "a bool")
    label: str = option("x", "a string")
    axes: tuple[int, ...] = option((), "a list of ints")

    def run(self, module: ir.Operation) -> None:
        pass


@pytest.fixture
def options_pass() -> Iterator[type[OptionsPass]]:
    register_pass(OptionsPass)
    yield OptionsPass
    del registry.PASSES[OptionsPass.argument]


@pytest.mark.parametrize(("text", "expected"), [
    ("", {}),
    ("count=7", {"count": 7}),
    ("count=-2 scale=1e-3", {"count": -2, "scale": 1e-3}),
    ("enabled", {"enabled": True}),
    ("enabled=false", {"enabled": False}),
    ("enabled=1", {"enabled": True}),
    ("enabled=TRUE", {"enabled": True}),
    ('label="two words"', {"label": "two words"}),
    ("axes=1,0,2", {"axes": (1, 0, 2)}),
    ("axes={3, 4}", {"axes": (3, 4)}),
    ("axes=", {"axes": ()}),
    ("  count=1   label=y ", {"count": 1, "label": "y"}),
])
def test_parse_options(options_pass: type[OptionsPass], text: str, expected: dict) -> None:
    assert registry.parse_options(options_pass, text) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("colour=red",
     "mlax-test-options: unknown option 'colour' (options: count, scale, enabled, label, axes)"),
    ("count=many", "mlax-test-options: option 'count' expects int, got 'many'"),
    ("enabled=maybe", "mlax-test-options: option 'enabled' expects bool, got 'maybe'"),
    ("axes=1,x", "mlax-test-options: option 'axes' expects int, got 'x'"),
    ("count", "mlax-test-options: option 'count' needs a value"),
])
def test_bad_options_name_pass_and_option(options_pass: type[OptionsPass], text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        registry.parse_options(options_pass, text)


def test_make_pass_builds_configured_instance(options_pass: type[OptionsPass]) -> None:
    instance = registry.make_pass("mlax-test-options", "count=9 axes=2")
    assert isinstance(instance, OptionsPass)
    assert (instance.count, instance.axes, instance.label) == (9, (2,), "x")


def test_describe_options(options_pass: type[OptionsPass]) -> None:
    described = registry.describe_options(options_pass)
    assert [d[0] for d in described] == ["count", "scale", "enabled", "label", "axes"]
    assert described[0] == ("count", "int", 3, "an int")


def test_unknown_pass_lists_registered() -> None:
    with pytest.raises(ValueError, match=r"unknown mlax pass 'mlax-nope' \(registered: .*mlax-cleanup"):
        registry.get_pass("mlax-nope")


def test_registration_rules() -> None:
    class NotADataclass(ModulePass):
        argument = "mlax-not-a-dataclass"

    with pytest.raises(TypeError, match="must be a dataclass"):
        register_pass(NotADataclass)

    @dataclass
    class BadName(ModulePass):
        argument = "cleanup"

    with pytest.raises(ValueError, match="must look like 'mlax-name'"):
        register_pass(BadName)

    @dataclass
    class Duplicate(ModulePass):
        argument = "mlax-cleanup"

    with pytest.raises(ValueError, match="registered twice"):
        register_pass(Duplicate)


def test_base_run_is_abstract() -> None:
    with pytest.raises(NotImplementedError):
        ModulePass().run(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("argument", sorted(registry.registered_passes()))
def test_every_pass_is_documented(argument: str) -> None:
    """docs/passes.md has a section per pass that names each of its options."""
    docs = DOCS.read_text()
    section = f"## `{argument}`"
    assert section in docs, f"docs/passes.md has no section '{section}'"
    body = docs.split(section, 1)[1].split("\n## ", 1)[0]
    for name, *_ in registry.describe_options(registry.get_pass(argument)):
        assert f"`{name}`" in body, f"docs/passes.md does not describe option {name} of {argument}"


def test_pass_modules_name_every_pass() -> None:
    """`PASS_MODULES` (a lookup imports that module only) names the module of every registered
    pass of `PASS_PACKAGES`, and nothing else."""
    ours = {argument: cls.__module__ for argument, cls in registry.registered_passes().items()
            if cls.__module__.startswith(tuple(f"{package}." for package in registry.PASS_PACKAGES))
            or cls.__module__ in registry.PASS_PACKAGES}
    assert registry.PASS_MODULES == ours


def test_lookup_imports_only_the_named_pass() -> None:
    """A pipeline of one mlax pass and upstream passes imports that pass's module, not the rest
    (a fresh interpreter: this one has imported them all)."""

    code = ("import sys\n"
            "from mlax.passes.pipeline import parse_pipeline\n"
            "elements = parse_pipeline('builtin.module(mlax-cleanup, canonicalize, func.func(cse))')\n"
            "assert [e.is_mlax for e in elements] == [True, False, False], elements\n"
            "loaded = sorted(m for m in sys.modules if m.startswith('mlax.passes.') and m.count('.') == 2)\n"
            "print(' '.join(loaded))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    out = result.stdout.split()
    assert "mlax.passes.cleanup" in out
    assert not {"mlax.passes.lower_to_linalg", "mlax.passes.autodiff", "mlax.passes.partition",
                "mlax.passes.lower_to_stablehlo"} & set(out), out
