"""A small TCP proxy the tests put between a client and a server, to freeze the network.

`freeze()` stops forwarding in both directions without closing anything: bytes sent meanwhile
are held (the sockets stay open, as in a black-hole partition where no RST arrives), and new
connections are accepted but get nothing through. `thaw()` lets everything held through, in
order, and forwarding goes on. It runs in the test's own event loop, so processes started by
the test connect to ``127.0.0.1:port``.
"""

from __future__ import annotations

import asyncio
import contextlib


class FreezableProxy:
    """Forward ``127.0.0.1:port`` to ``target_host:target_port``; freeze and thaw on demand."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target_host = target_host
        self.target_port = target_port
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._closing = False

    @classmethod
    def to_url(cls, url: str) -> FreezableProxy:
        """Return a proxy (not started) to a ``nats://host:port`` URL."""
        host, _, port = url.rpartition("://")[2].rpartition(":")
        return cls(host, int(port))

    @property
    def port(self) -> int:
        assert self._server is not None, "start the proxy first"
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    @property
    def frozen(self) -> bool:
        return not self._flowing.is_set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)

    def freeze(self) -> None:
        """Stop forwarding (both ways); hold what arrives."""
        self._flowing.clear()

    def thaw(self) -> None:
        """Forward again, what was held first."""
        self._flowing.set()

    async def close(self) -> None:
        """Stop accepting, cut every connection, and wait until every socket is closed."""
        self._closing = True
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        for writer in list(self._writers):
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
        self._writers.clear()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def _accept(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        me = asyncio.current_task()
        assert me is not None
        self._tasks.add(me)
        self._writers.add(client_w)
        try:
            await self._flowing.wait()  # a frozen network lets nothing through, not even a connect
            if self._closing:
                client_w.close()
                return
            server_r, server_w = await asyncio.open_connection(self.target_host, self.target_port)
        except Exception:
            client_w.close()
            return
        finally:
            self._tasks.discard(me)
        self._writers.add(server_w)
        for reader, writer in ((client_r, server_w), (server_r, client_w)):
            task = asyncio.create_task(self._pipe(reader, writer))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                await self._flowing.wait()
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()
