"""A user agent module that fails as it is imported (a bug in the user's code): refused in one
line by ``--agent tests.agent_import_error:make``."""

raise RuntimeError("this agent module is broken")
