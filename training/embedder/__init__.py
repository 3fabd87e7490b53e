"""The local embedder's model rebuilt for onnxruntime's int8 kernels (``int8_kernels``)."""
