"""Training on the environments.

Light (no deep-learning framework): rewards shared with the metrics
(:mod:`~travelgym.training.rewards`), SFT export of run directories
(:mod:`~travelgym.training.sft`, :mod:`~travelgym.training.chat`), Gymnasium-style text
environments (:mod:`~travelgym.training.trip_env`, :mod:`~travelgym.training.compass_env`) and
TRL environment classes (:mod:`~travelgym.training.trl_env`).

Heavy (the ``train`` extra: torch, transformers, trl): multi-turn rollouts with the loss mask
(:mod:`~travelgym.training.rollout`), GRPO (:mod:`~travelgym.training.grpo`), SFT
(:mod:`~travelgym.training.sft_train`) and the tiny test model (:mod:`~travelgym.training.tiny`);
only the ``train`` commands import them. The submodules are imported on demand (the command line
loads :mod:`~travelgym.training.cli` and ``train_cli`` only, which import no framework).
"""
