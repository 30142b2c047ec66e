"""Run the explicit-sharding cases (explicit_sharding_cases.py) on N CPU devices, jax against
mlax, in a process of its own (the device count is fixed when jaxlib's backend starts):
``python explicit_sharding_worker.py N``. Prints one line per difference and exits 1 if any."""

from __future__ import annotations

import sys
from pathlib import Path


def main(count: int) -> int:
    import jax

    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_num_cpu_devices", count)
    sys.path.insert(0, str(Path(__file__).parent))
    import explicit_sharding_cases as cases

    shape = {1: (1, 1), 2: (2, 1), 4: (2, 2), 8: (4, 2)}[count]
    mesh = jax.make_mesh(shape, ("x", "y"))  # Explicit axes: jax 0.10.2's default
    problems = []
    for name, case in cases.CASES.items():
        for jitted in (False, True):
            problems += [f"{name} (jit={jitted}): {p}" for p in cases.compare(case, mesh, jitted)]
    for name, case in cases.JIT_ONLY.items():
        problems += [f"{name}: {p}" for p in cases.compare(case, mesh, True)]
    for name, case in cases.ERRORS.items():
        for jitted in (False, True):
            problems += [f"{name} (jit={jitted}): {p}" for p in cases.compare_error(case, mesh, jitted)]
    for line in problems:
        print(line)
    checked = 2 * len(cases.CASES) + len(cases.JIT_ONLY) + 2 * len(cases.ERRORS)
    print(f"{checked} checks on {count} device(s), {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
