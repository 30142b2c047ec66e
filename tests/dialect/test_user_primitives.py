"""`mlax.user_primitive` declarations: built, read back, verified; a bad id is refused."""

from __future__ import annotations

import pytest
from mlir import ir

from mlax.dialect import make_context
from mlax.dialect.transforms import DeclarationError, verify_transforms
from mlax.dialect.user_primitives import declare_user_primitive, read_user_primitive


def test_declare_read_and_verify() -> None:
    with make_context(), ir.Location.unknown():
        module = ir.Module.create()
        f32 = ir.RankedTensorType.get([3], ir.F32Type.get())
        op = declare_user_primitive(module, "ma_prim", [f32] * 3, [f32], id=7, primitive_name="multiply_add")
        transform = read_user_primitive(op)
        assert transform is not None and transform.fields == {"id": 7, "name": "multiply_add"}
        assert 'mlax.user_primitive = {id = 7 : i64, name = "multiply_add"}' in str(module)
        verify_transforms(module)
        with pytest.raises(DeclarationError, match="id must be >= 0"):
            declare_user_primitive(module, "bad", [f32], [f32], id=-1, primitive_name="p")
