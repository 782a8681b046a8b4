"""Alembic environment: runs on the sync connection that storage/migrate.py hands it."""

from alembic import context

from switchgate.storage.tables import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through switchgate.storage.migrate")

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=True,  # SQLite needs batch mode to alter tables
    compare_type=True,
    # storage/migrate.py's progress callback (the CLI's progress bar), if any
    on_version_apply=context.config.attributes.get("on_version_apply"),
)
with context.begin_transaction():
    context.run_migrations()
