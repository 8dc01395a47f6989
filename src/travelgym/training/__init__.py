"""Training on the environments, without a deep-learning framework: rewards shared with the
metrics (:mod:`~travelgym.training.rewards`), SFT export of run directories
(:mod:`~travelgym.training.sft`, :mod:`~travelgym.training.chat`) and Gymnasium-style text
environments (:mod:`~travelgym.training.trip_env`, :mod:`~travelgym.training.compass_env`).

Nothing here imports torch, transformers or trl; a trainer builds on these pieces. The
submodules are imported on demand (the command line loads :mod:`~travelgym.training.cli` only).
"""
