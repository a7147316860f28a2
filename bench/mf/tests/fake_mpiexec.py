#!/usr/bin/env python3
"""A stand-in for mpiexec in the tests of mf_bench.py: `-n P --oversubscribe CMD...` runs CMD
once with FAKE_RANKS=P (the fake rotor then reports P times faster epochs)."""

import os
import subprocess
import sys

if __name__ == "__main__":
    assert sys.argv[1] == "-n" and sys.argv[3] == "--oversubscribe", sys.argv
    assert os.environ.get("OMPI_ALLOW_RUN_AS_ROOT") == "1"
    env = dict(os.environ, FAKE_RANKS=sys.argv[2])
    sys.exit(subprocess.run(sys.argv[4:], env=env).returncode)
