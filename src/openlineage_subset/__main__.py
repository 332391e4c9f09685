"""``python -m openlineage_subset``: the same as the ``ol-subset`` command."""

import sys

from openlineage_subset.cli import main

sys.exit(main())
