import sys

from axiom.cli.main import main

sys.exit(main())
