"""``python -m mttui.cli``: the same as the ``mttui`` script."""

import sys

from .main import main

sys.exit(main())
