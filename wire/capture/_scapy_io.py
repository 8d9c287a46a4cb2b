# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The one ingest module that imports scapy: pcapng reading and live recording.

scapy is used only to read and write packets here; dissection, reassembly and decoding are
ours. :func:`pcapng_records` drives scapy's ``RawPcapNgReader`` block by block with a record
size limit far above the 65,535-byte default, so long loopback segments come back whole, and
turns scapy's quiet handling of damage (a log line and an end of iteration) into a
:class:`~wire.capture.records.CaptureFileError` with the block's byte offset. :func:`record_live`
captures loopback traffic with ``AsyncSniffer`` and writes it with ``PcapWriter``.
"""

from __future__ import annotations

import logging
import os
import socket
import struct
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from .bpf import Instruction, tcp_ports
from .records import MAX_RECORD_LENGTH, CaptureFileError, CountingReader, Record

__all__ = ["RotatingPcapFiles", "pcapng_records", "record_live"]

_RECEIVE_BUFFER = 64 * 1024 * 1024


class _Collect(logging.Filter):
    """Swallows scapy's runtime log lines while a file is read, keeping them for the error message."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        self.messages.append(record.getMessage())
        return False


def pcapng_records(reader: CountingReader, path: str, magic: bytes,
                   on_progress: Callable[[int], None] | None = None, *, number: int = 0,
                   replay: Iterable[int] = (), start: int | None = None,
                   stop: int | None = None, block_offsets: list[int] | None = None) -> Iterator[Record]:
    """Records of a pcapng file whose 4-byte magic has already been read from ``reader``.

    A byte-range split of the file (:mod:`wire.capture.splits`) passes ``start`` (the offset of
    its first block), ``stop`` (blocks starting at or after it are left to the next split),
    ``number`` (records before the split) and ``replay``: the offsets of the section header and
    interface description blocks before ``start`` after the first, read again so that the
    reader knows the byte order and the interfaces there (``reader`` must then be seekable).
    With ``block_offsets``, the file offset of each record's block is appended to it before the
    record is yielded (an index of the file's records, :mod:`analysis.tasks`).
    """
    from scapy.error import Scapy_Exception
    from scapy.utils import RawPcapNgReader

    log = logging.getLogger("scapy.runtime")
    collect = _Collect()
    log.addFilter(collect)
    try:
        # The metaclass of scapy's readers opens files by name; this is what it does after
        # reading the magic itself, done on our already-open stream.
        ng: Any = object.__new__(RawPcapNgReader)
        try:
            ng.__init__(path, reader, magic)
        except (Scapy_Exception, EOFError, struct.error, OSError, zlib.error) as exc:
            detail = collect.messages[-1] if collect.messages else str(exc)
            raise CaptureFileError(f"damaged pcapng section header: {detail}", path=path, offset=0,
                                   field="section header block") from None
        for offset in replay:
            reader.seek(offset)
            ng._read_block(size=MAX_RECORD_LENGTH)
        if start is not None:
            reader.seek(start)
        last_ts = 0.0
        blocks = 0
        while True:
            start = reader.tell()
            if stop is not None and start >= stop:
                return
            try:
                res = ng._read_block(size=MAX_RECORD_LENGTH)
            except EOFError:
                if reader.tell() == start:
                    return
                detail = collect.messages[-1] if collect.messages else "block cut short"
                raise CaptureFileError(f"damaged pcapng block: {detail}", path=path, record=number + 1,
                                       offset=start, field="block") from None
            except (Scapy_Exception, struct.error, OSError, OverflowError, zlib.error, ValueError) as exc:
                raise CaptureFileError(f"damaged pcapng block: {exc}", path=path, record=number + 1,
                                       offset=start, field="block") from None
            blocks += 1
            if on_progress is not None and blocks % 1024 == 0:
                on_progress(reader.raw_position())
            if res is None:
                continue
            data, meta = res
            number += 1
            if meta.tshigh is not None:
                last_ts = ((meta.tshigh << 32) | meta.tslow) / meta.tsresol
            if block_offsets is not None:
                block_offsets.append(start)
            yield (number, last_ts, int(meta.linktype), bytes(data))
    finally:
        log.removeFilter(collect)
        if on_progress is not None:
            on_progress(reader.raw_position())


def _whole_frame_socket(iface: str, ports: Iterable[int] = ()) -> Any:
    """scapy's layer-2 socket for ``iface``, reading up to 256 KiB per frame.

    Differences from what ``sniff(iface=...)`` opens: frames are received whole (scapy's
    socket reads ``MTU`` = 65,535 bytes by default, and loopback frames reach 65,549); on
    Linux the copy of each outgoing frame is dropped, as libpcap does, so loopback traffic is
    recorded once rather than twice (scapy's L2 socket, unlike its listen-only socket, skips
    PACKET_OUTGOING); and on Linux the kernel keeps only TCP frames of ``ports`` (a BPF program,
    :mod:`wire.capture.bpf`), so other traffic never fills the socket's buffer.
    """
    from scapy.config import conf

    base: Any = conf.L2socket

    class WholeFrames(base):  # type: ignore[misc]  # scapy's socket classes are untyped
        def recv(self, x: int = 262144, **kwargs: Any) -> Any:
            return super().recv(262144, **kwargs)

    sock = WholeFrames(iface=iface)
    ins = getattr(sock, "ins", None)
    if ins is not None and sys.platform.startswith("linux"):
        _attach_filter(ins, tcp_ports(ports))
    # A deep kernel buffer, as tcpdump -B gives: a Python reader falls behind bursts on loopback.
    # SO_RCVBUFFORCE (Linux, needs CAP_NET_ADMIN) passes net.core.rmem_max; else keep what we got.
    if ins is not None:
        for option in (getattr(socket, "SO_RCVBUFFORCE", 33), socket.SO_RCVBUF):
            try:
                ins.setsockopt(socket.SOL_SOCKET, option, _RECEIVE_BUFFER)
                break
            except OSError:
                continue
    return sock


def _attach_filter(ins: socket.socket, program: list[Instruction]) -> None:
    """SO_ATTACH_FILTER (Linux): the kernel runs ``program`` on every frame before queueing it. If
    the kernel refuses, frames are still filtered in user space (slower under load)."""
    import ctypes

    code = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in program))
    fprog = struct.pack("HL", len(program), ctypes.addressof(code))  # struct sock_fprog
    try:
        ins.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_ATTACH_FILTER", 26), fprog)
    except OSError as err:
        logging.getLogger(__name__).warning("no kernel filter on the capture socket (%s); filtering "
                                            "in user space", err)


class RotatingPcapFiles:
    """pcap files in a directory, one after another, each closed after ``seconds`` or ``size`` bytes.

    A file is written under a name that starts with ``.`` and renamed to its final name
    (``<prefix>-<UTC time>-<n>.pcap``) once it is complete, so a reader that skips dot-files (Spark's
    file source: ``mqctl analyze --follow``) only ever sees whole files. Names are never reused: a
    name that exists already is skipped. :meth:`write` and :meth:`tick` may be called from
    different threads.
    """

    def __init__(self, directory: str | Path, *, seconds: float | None = None, size: int | None = None,
                 prefix: str = "capture", snaplen: int = 262144,
                 clock: Callable[[], float] = time.monotonic) -> None:
        import threading

        self.directory = Path(directory)
        self.seconds = seconds
        self.size = size
        self.prefix = prefix
        self.snaplen = snaplen
        self.clock = clock
        self.lock = threading.Lock()
        self.writer: Any = None
        self.part: Path | None = None
        self.final: Path | None = None
        self.opened = 0.0
        self.bytes = 0
        self.number = 0
        #: the complete files, in order
        self.done: list[Path] = []

    def _open(self) -> None:
        from scapy.utils import PcapWriter

        while True:
            self.number += 1
            stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
            final = self.directory / f"{self.prefix}-{stamp}-{self.number:04d}.pcap"
            if not final.exists() and not (self.directory / f".{final.name}").exists():
                break
        self.final = final
        self.part = self.directory / f".{final.name}"
        self.writer = PcapWriter(str(self.part), sync=True, snaplen=self.snaplen)
        self.opened = self.clock()
        self.bytes = 0

    def _due(self) -> bool:
        return self.writer is not None and self.bytes > 0 and (
            (self.seconds is not None and self.clock() - self.opened >= self.seconds)
            or (self.size is not None and self.bytes >= self.size))

    def _rotate(self) -> None:
        writer, part, final = self.writer, self.part, self.final
        self.writer = None
        if writer is None or part is None or final is None:
            return
        writer.close()
        if self.bytes:
            os.replace(part, final)
            self.done.append(final)
        else:
            part.unlink(missing_ok=True)

    def write(self, pkt: Any) -> None:
        with self.lock:
            if self._due():
                self._rotate()
            if self.writer is None:
                self._open()
            self.writer.write(pkt)
            self.bytes += len(pkt)

    def tick(self) -> None:
        """Close the current file if it is due, even while no packet comes."""
        with self.lock:
            if self._due():
                self._rotate()

    def close(self) -> None:
        with self.lock:
            self._rotate()


def record_live(out: str | Path, ports: Iterable[int], *, iface: str = "lo", duration: float | None = None,
                count: int | None = None, on_packet: Callable[[int, int], None] | None = None,
                stop: Callable[[], bool] | None = None, rotate_seconds: float | None = None,
                rotate_bytes: int | None = None,
                on_start: Callable[[], None] | None = None) -> tuple[int, int]:
    """Capture TCP traffic to or from ``ports`` on ``iface`` into the pcap file ``out``.

    Runs until ``duration`` seconds have passed, ``count`` packets were written, or ``stop()``
    returns true (checked ten times a second); Ctrl-C also ends it cleanly (what the kernel holds by
    then is written first). Returns
    ``(packets written, bytes written)``. ``on_packet(packets, bytes)`` is called after each
    packet. Needs the rights to open a packet socket (root, or CAP_NET_RAW). With
    ``rotate_seconds`` or ``rotate_bytes``, ``out`` is a directory that receives one file after
    another (:class:`RotatingPcapFiles`). ``on_start()`` is called once the packet socket is open:
    from then on no packet is missed (the kernel holds them until they are read).
    """
    from scapy.layers.inet import TCP
    from scapy.sendrecv import AsyncSniffer
    from scapy.utils import PcapWriter

    wanted = frozenset(int(p) for p in ports)
    writer: Any
    if rotate_seconds is not None or rotate_bytes is not None:
        writer = RotatingPcapFiles(out, seconds=rotate_seconds, size=rotate_bytes)
    else:
        writer = PcapWriter(str(out), sync=True, snaplen=262144)
    counts = [0, 0]

    def keep(pkt: Any) -> bool:
        if TCP not in pkt:
            return False
        tcp = pkt[TCP]
        return not wanted or tcp.sport in wanted or tcp.dport in wanted

    def write(pkt: Any) -> None:
        if count is not None and counts[0] >= count:
            return
        writer.write(pkt)
        counts[0] += 1
        counts[1] += len(pkt)
        if on_packet is not None:
            on_packet(counts[0], counts[1])

    sock = _whole_frame_socket(iface, wanted)
    sniffer = AsyncSniffer(opened_socket=sock, store=False, lfilter=keep, prn=write)
    deadline = None if duration is None else time.monotonic() + duration
    try:
        sniffer.start()
        if on_start is not None:
            on_start()
        while True:
            time.sleep(0.1)
            if deadline is not None and time.monotonic() >= deadline:
                break
            if count is not None and counts[0] >= count:
                break
            if stop is not None and stop():
                break
            if not sniffer.running:
                break
            if isinstance(writer, RotatingPcapFiles):
                writer.tick()
    except KeyboardInterrupt:
        pass
    finally:
        if sniffer.running:
            if count is None or counts[0] < count:
                _drain(sock)
            sniffer.stop()
        writer.close()
    return counts[0], counts[1]


def _drain(sock: Any, limit: float = 5.0) -> None:
    """Before the sniffer stops: let it read what the kernel already holds for ``sock`` (stopping
    drops it), until the socket has nothing left to read or ``limit`` seconds have passed; a second
    Ctrl-C ends the wait. The packet the sniffer is writing when it stops is written whole."""
    import select

    deadline = time.monotonic() + limit
    try:
        while time.monotonic() < deadline and select.select([sock], [], [], 0)[0]:
            time.sleep(0.02)
    except (KeyboardInterrupt, OSError, ValueError):
        pass
