"""What the project's two IPFS test servers share (kubo-testnode/kubo-testnode.py and
pinning-service/pinning-service.py): an HTTP server bound to 127.0.0.1 that never asks DNS for its
name, and settings with a lock and a stop that runs once (on SIGTERM/SIGINT, or asked by a request).

    server = LoopbackServer(("127.0.0.1", port), Handler)
    Handler.S = MySettings(args, server)      # a subclass of StoppableSettings
    Handler.S.stop_on_signals()
    server.serve_forever(poll_interval=0.1)   # returns once stop() ran
"""
import signal
import socketserver
import threading
from http.server import ThreadingHTTPServer


class LoopbackServer(ThreadingHTTPServer):
    """A threading HTTP server (request threads are daemons) for 127.0.0.1."""

    def server_bind(self):                         # no getfqdn(): it may wait on DNS
        socketserver.TCPServer.server_bind(self)   # SO_REUSEADDR: restarts on the same port
        self.server_name, self.server_port = "127.0.0.1", self.server_address[1]


class StoppableSettings:
    """The state a server's request threads share: `lock` guards it; `stop()` shuts the server down once."""

    def __init__(self, server):
        self.server, self.lock, self.stopping = server, threading.Lock(), False

    def stop(self):
        """Ends serve_forever (from any thread, a request's included); later calls do nothing."""
        with self.lock:
            if self.stopping:
                return
            self.stopping = True
        # shutdown() waits for serve_forever to return: never on the thread that serves a request.
        threading.Thread(target=self.server.shutdown, daemon=True).start()

    def stop_on_signals(self):
        """SIGTERM and SIGINT stop the server cleanly (the guard's watchdog sends SIGTERM)."""
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.stop())
