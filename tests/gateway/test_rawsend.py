"""`services.gateway.rawsend` on a real uvicorn server (websockets-sansio, the gateway's
default): the session's direct write finds uvicorn's protocol behind the scope's ``send``,
writes the bytes it is given as one text frame each, in order, and writes nothing once the
connection is closed (the session then awaits ``send``, which raises as it always did).
Should a uvicorn upgrade rename what it reads, `text_writer` answers None and the first test
fails: the gateway still works, only slower, and this says so."""

from __future__ import annotations

import asyncio
from typing import Any

import uvicorn
from litestar import Litestar, WebSocket, websocket
from websockets.asyncio.client import connect
from websockets.frames import Frame, Opcode

from services.gateway.rawsend import RAW_SEND, keep_raw_send, text_frame_bytes, text_writer

FRAMES = [b'{"type":"event","n":1}', '{"type":"clock","who":"Zoë ♠"}'.encode(), b"[1,2,3]"]


async def serve(
    handler: Any, *, deflate: bool = False
) -> tuple[uvicorn.Server, asyncio.Task[None], int]:
    app = keep_raw_send(Litestar([handler], logging_config=None))
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        ws="websockets-sansio",
        log_config=None,
        access_log=False,
        lifespan="off",
        ws_per_message_deflate=deflate,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    for _ in range(3000):  # uvicorn offers no event to wait on
        if server.started or task.done():
            break
        await asyncio.sleep(0.01)
    assert server.started, "uvicorn did not start"
    return server, task, server.servers[0].sockets[0].getsockname()[1]


async def test_the_direct_write_sends_the_bytes_as_text_frames_in_order() -> None:
    found: list[bool] = []
    written: list[bool] = []

    @websocket("/ws")
    async def handler(socket: WebSocket[Any, Any, Any]) -> None:
        await socket.accept()
        write = text_writer(socket.scope[RAW_SEND])  # type: ignore[literal-required]
        found.append(write is not None)
        if write is not None:
            written.extend(write(data) for data in FRAMES)
        await socket.receive()  # until the client leaves

    server, task, port = await serve(handler)
    try:
        async with connect(f"ws://127.0.0.1:{port}/ws", compression=None) as ws:
            received = [await asyncio.wait_for(ws.recv(), 30) for _ in FRAMES]
    finally:
        server.should_exit = True
        await task
    assert found == [True], "text_writer no longer recognises uvicorn's protocol"
    assert written == [True] * len(FRAMES)
    assert received == [data.decode() for data in FRAMES]  # text frames, same bytes, in order


async def test_the_direct_write_writes_nothing_once_the_client_left() -> None:
    after: list[bool] = []
    left = asyncio.Event()

    @websocket("/ws")
    async def handler(socket: WebSocket[Any, Any, Any]) -> None:
        await socket.accept()
        write = text_writer(socket.scope[RAW_SEND])  # type: ignore[literal-required]
        assert write is not None
        message = await socket.receive()
        assert message["type"] == "websocket.disconnect"
        after.append(write(b'{"type":"late"}'))
        left.set()

    server, task, port = await serve(handler)
    try:
        async with connect(f"ws://127.0.0.1:{port}/ws", compression=None):
            pass  # connects, then closes
        await asyncio.wait_for(left.wait(), 30)
    finally:
        server.should_exit = True
        await task
    assert after == [False]


def test_a_send_that_is_not_uvicorns_gets_no_direct_write() -> None:
    async def send(message: Any) -> None:
        raise AssertionError("not called")

    assert text_writer(send) is None


def test_the_direct_frame_is_what_websockets_serializes() -> None:
    for size in (0, 1, 125, 126, 127, 65535, 65536, 70000):
        data = bytes(size % 251 for size in range(size))
        assert text_frame_bytes(data) == Frame(Opcode.TEXT, data).serialize(mask=False), size


async def test_frames_of_every_header_size_arrive_whole_with_and_without_compression() -> None:
    """Up to 125 bytes, up to 64 KiB and past it (the three lengths of a frame's header); with
    permessage-deflate negotiated the frames go through websockets' own send_text."""
    sizes = (5, 125, 126, 4000, 65535, 65536, 70000)
    frames = [b'"' + b"x" * (size - 2) + b'"' for size in sizes]
    written: list[bool] = []

    @websocket("/ws")
    async def handler(socket: WebSocket[Any, Any, Any]) -> None:
        await socket.accept()
        write = text_writer(socket.scope[RAW_SEND])  # type: ignore[literal-required]
        assert write is not None
        written.extend(write(data) for data in frames)
        await socket.receive()

    for deflate in (False, True):
        written.clear()
        server, task, port = await serve(handler, deflate=deflate)
        try:
            compression = "deflate" if deflate else None
            async with connect(f"ws://127.0.0.1:{port}/ws", compression=compression) as ws:
                received = [await asyncio.wait_for(ws.recv(), 30) for _ in frames]
                assert bool(ws.protocol.extensions) is deflate
        finally:
            server.should_exit = True
            await task
        assert written == [True] * len(frames)
        assert received == [data.decode() for data in frames]
