"""Integrations with the tools researchers already use, each written once against the Suite
protocol (so every installed suite gets it) and each behind its own optional extra: inspect_ai
tasks, a verifiers environment, Hugging Face datasets and Gymnasium environments."""
