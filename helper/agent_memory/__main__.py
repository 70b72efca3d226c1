"""`python -m agent_memory`: the same as the `agent-memory` command."""

import sys

from .start import main

sys.exit(main())
