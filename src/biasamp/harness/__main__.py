"""``python -m biasamp.harness``: the folder of the lm-evaluation-harness tasks."""

import sys

from . import main

if __name__ == "__main__":  # not when a test collector imports it
    sys.exit(main())
