"""The local judge (``judge``): offline and deterministic, labelled ``local`` in every record.

Its parts: claim spans and sample texts (``texts``), contradiction and detail rules
(``rules``, ``rule_hit``, ``quantities``), evidence features (``evidence``), the logistic
combiners and their JSON weights (``combiner``), abstention detection (``abstention``,
shared with the response analyzer) and the worker-thread offload (``offload``)."""
