"""Wire-level formats shared by both sides of the gateway: the client dialects
(switchgate/dialects) and the provider adapters (switchgate/providers) import these,
never each other (the layering is checked by import-linter, pyproject.toml). Pure."""
