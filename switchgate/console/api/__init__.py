"""The JSON management API under /api: one module per resource, each with a ROUTES list."""
