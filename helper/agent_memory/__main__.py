"""`python -m agent_memory`: the same as the `agent-memory` command."""

import sys

from .entry import main

sys.exit(main())
