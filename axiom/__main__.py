import os
import signal
import sys

from axiom.cli.main import INTERRUPTED, main

code = main()
if code == INTERRUPTED:  # die by the signal, so that a shell loop running axiom stops too
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
sys.exit(code)
