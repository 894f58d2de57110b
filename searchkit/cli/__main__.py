"""``python -m searchkit.cli``."""
import sys

from searchkit.cli import main

sys.exit(main())
