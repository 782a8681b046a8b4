"""`python -m switchgate` runs the operator CLI."""

from switchgate.cli.main import main

raise SystemExit(main())
