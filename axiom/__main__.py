import sys

from axiom.cli import main

sys.exit(main())
