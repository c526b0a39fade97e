"""A test helper: count the bytes a ``distributed`` client's TCP comms receive and send.

Used by tests/test_dask.py and scripts/bench_dask.py (which loads this file by path). It patches
``distributed.comm.tcp`` while the block runs; it is not part of fastboost.
"""
import contextlib


@contextlib.contextmanager
def client_comm_bytes(client):
    """Count the bytes the client process's comms to the cluster receive and send while the block runs.

    A diagnostic for tests and benchmarks: it wraps ``distributed``'s TCP comm and counts the
    frames of the comms that belong to ``client`` (its scheduler stream and its connection
    pool, which carries actor calls and gathers), not those of a scheduler running in the same
    process. Yields a dict {"received": bytes, "sent": bytes}, updated live.
    """
    import contextvars

    from distributed.comm import tcp

    counts = {"received": 0, "sent": 0}
    current = contextvars.ContextVar("fastboost_comm", default=None)
    read, write, unpack = tcp.TCP.read, tcp.TCP.write, tcp.unpack_frames

    def mine(comm):
        if comm is None:
            return False
        if getattr(comm, "name", None) == "Client->Scheduler" or comm is getattr(
                getattr(client, "scheduler_comm", None), "comm", None):
            return True
        pool = getattr(comm, "_pool", None)
        return pool is not None and pool() is client.rpc

    async def counted_read(self, deserializers=None):
        token = current.set(self)
        try:
            return await read(self, deserializers)
        finally:
            current.reset(token)

    def counted_unpack(frames, *args, **kwargs):
        out = unpack(frames, *args, **kwargs)
        if mine(current.get()):
            counts["received"] += 8 + memoryview(frames).nbytes + sum(out[1])
        return out

    async def counted_write(self, msg, serializers=None, on_error="message"):
        n = await write(self, msg, serializers=serializers, on_error=on_error)
        if mine(self):
            counts["sent"] += n
        return n

    tcp.TCP.read, tcp.TCP.write, tcp.unpack_frames = counted_read, counted_write, counted_unpack
    try:
        yield counts
    finally:
        tcp.TCP.read, tcp.TCP.write, tcp.unpack_frames = read, write, unpack
