"""Whether a store in an outage answers again, found where no session waits: a hook whose store's outage wait is over
does not ask the store itself (a hung mount or Hub would hold the session's start or the end of its turn); it starts
this module as a detached process (`outage.probe_later`), which it never waits for, and answers from what is local
at once.

The probe asks the store one small question (`ensure`: the bucket's info, a stat of the folder) within its own
budget: an answer ends the outage (the next hook uses the store again), silence records the next, longer wait.
"""

from __future__ import annotations

import os
import sys

PROBE_SECONDS = 10.0  # the probe's own budget: nobody waits for it, and a store that answers does within a second


def main(uri: str) -> int:
    """Ask the store of `uri` once, online; 0 if it answered."""
    from .base import StoreError
    from .bucket import open_store
    from .budget import Budget, hearing_seconds

    # never less than the Hub is given to answer anything, and again as long to ask once more: a probe left too
    # little time to hear the store gives no verdict, and the outage would last until the next one
    seconds = max(PROBE_SECONDS, 3 * hearing_seconds())
    store = open_store(uri, budget=Budget(seconds), online=True)
    try:
        store.ensure(create=False)
    except StoreError:
        return 1  # a lasting failure was recorded by the store as the next wait
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1])
    sys.stdout.flush()
    os._exit(code)  # a call still blocked in a thread must not keep this process
