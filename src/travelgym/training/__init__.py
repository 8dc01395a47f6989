"""Training on the environments, for every suite through the Suite protocol's training section
(:class:`travelgym.core.suite.Suite`: ``training_env``, ``reward``, ``sft_keep``, ``sft_chat``
...): this package never names a suite; each suite keeps its environment, reward and chats in
its own package (``travelgym.suites.<suite>.environment`` and ``.training``).

Light (no deep-learning framework): rewards (:mod:`~travelgym.training.rewards`), SFT export of
run directories (:mod:`~travelgym.training.sft`, :mod:`~travelgym.training.chat`), what the
Gymnasium-style text environments share (:mod:`~travelgym.training.base`) and every suite's
environment as a TRL ``environment_factory`` (:mod:`~travelgym.training.trl_env`).

Heavy (the ``train`` extra: torch, transformers, trl): multi-turn rollouts with the loss mask
(:mod:`~travelgym.training.rollout`), GRPO (:mod:`~travelgym.training.grpo`), SFT
(:mod:`~travelgym.training.sft_train`) and the tiny test model (:mod:`~travelgym.training.tiny`);
only the ``train`` commands import them. The submodules are imported on demand (the command line
loads :mod:`travelgym.cli.export` and :mod:`travelgym.cli.train` only, which import no framework).
"""
