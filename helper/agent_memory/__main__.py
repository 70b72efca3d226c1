"""`python -m agent_memory`: the same as the `agent-memory` command."""

import sys

from .cli import main

sys.exit(main())
