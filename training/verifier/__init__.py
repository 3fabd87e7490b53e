"""Training scripts of the learned claim verifier (not part of the product)."""
