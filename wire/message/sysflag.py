# Licensed under the Apache License, Version 2.0. See LICENSE.
"""sysFlag bits, body compression and the body CRC.

``MessageSysFlag`` (``common/.../sysflag/MessageSysFlag.java``, the same in 4.9.x and 5.x) packs
into one int: bit 0 compressed, bit 1 multi-tags, bits 2–3 the transaction type, bit 4 an IPv6
born host, bit 5 an IPv6 store host, bit 6 need-unwrap, bit 7 inner batch, and bits 8–10 the
compression type (``CompressionType``: 1 LZ4, 2 ZSTD, 3 ZLIB; 0, from senders older than the
field, means ZLIB).

ZLIB bodies are ``java.util.zip`` Deflater/Inflater streams, that is zlib-wrapped deflate
(``ZlibCompressor``); producers compress at level 5 once a body reaches
``compressMsgBodyOverHowmuch`` (4096 bytes). LZ4 bodies are LZ4 frames (``Lz4Compressor`` writes
with lz4-java's ``LZ4FrameOutputStream``) and ZSTD bodies zstd frames (``ZstdCompressor``,
zstd-jni's ``ZstdOutputStream``), decoded here with PyPI ``lz4`` and ``zstandard``. Brokers store
and serve a compressed body unchanged; only readers inflate it.

The store's body CRC is ``UtilAll.crc32``: the CRC-32 of ``java.util.zip.CRC32`` with the top bit
cleared.
"""

from __future__ import annotations

import enum
import zlib

from ..errors import DecodeError, EncodeError

__all__ = [
    "COMPRESS_MSG_BODY_OVER_HOWMUCH",
    "MAX_INFLATED_BODY",
    "CompressionType",
    "TRANSACTION_TYPE_MASK",
    "MessageSysFlag",
    "TransactionType",
    "body_crc",
    "compress_body",
    "compression_type",
    "decompress_body",
    "reset_transaction_value",
    "transaction_type",
    "transaction_value",
]

#: ``DefaultMQProducer.compressMsgBodyOverHowmuch``: bodies of at least this size get compressed
COMPRESS_MSG_BODY_OVER_HOWMUCH = 4096


class MessageSysFlag(enum.IntFlag):
    """The bits of a message's sysFlag (``MessageSysFlag``); unknown bits are kept."""

    #: the body is compressed (the type is in bits 8–10)
    COMPRESSED_FLAG = 0x1
    #: the TAGS property holds several tags
    MULTI_TAGS_FLAG = 0x1 << 1
    #: transaction type bits: PREPARED
    TRANSACTION_PREPARED_TYPE = 0x1 << 2
    #: transaction type bits: COMMIT
    TRANSACTION_COMMIT_TYPE = 0x2 << 2
    #: transaction type bits: ROLLBACK (both bits)
    TRANSACTION_ROLLBACK_TYPE = 0x3 << 2
    #: the born host is a 16-byte IPv6 address
    BORNHOST_V6_FLAG = 0x1 << 4
    #: the store host is a 16-byte IPv6 address
    STOREHOSTADDRESS_V6_FLAG = 0x1 << 5
    #: the body is a batch to unwrap (5.x inner batch)
    NEED_UNWRAP_FLAG = 0x1 << 6
    #: the record is an inner batch (5.x)
    INNER_BATCH_FLAG = 0x1 << 7
    #: compression type LZ4 (bits 8–10 = 1)
    COMPRESSION_LZ4_TYPE = 0x1 << 8
    #: compression type ZSTD (bits 8–10 = 2)
    COMPRESSION_ZSTD_TYPE = 0x2 << 8
    #: compression type ZLIB (bits 8–10 = 3)
    COMPRESSION_ZLIB_TYPE = 0x3 << 8
    #: mask of the compression type bits
    COMPRESSION_TYPE_COMPARATOR = 0x7 << 8


class TransactionType(enum.IntEnum):
    """``MessageSysFlag.getTransactionValue``: the value of bits 2–3."""

    #: an ordinary message
    TRANSACTION_NOT_TYPE = 0
    #: a half (prepared) message; not dispatched to a consume queue
    TRANSACTION_PREPARED_TYPE = 0x1 << 2
    #: a committed transaction message
    TRANSACTION_COMMIT_TYPE = 0x2 << 2
    #: a rolled-back transaction message; not dispatched
    TRANSACTION_ROLLBACK_TYPE = 0x3 << 2


class CompressionType(enum.IntEnum):
    """``CompressionType``: the value of sysFlag bits 8–10."""

    #: LZ4 frame format
    LZ4 = 1
    #: zstd frame format
    ZSTD = 2
    #: zlib stream (java.util.zip)
    ZLIB = 3


#: the transaction type bits, 2–3 (``MessageSysFlag.getTransactionValue`` masks with
#: ``TRANSACTION_ROLLBACK_TYPE``, which has both); the one place the mask is written
TRANSACTION_TYPE_MASK = 0x3 << 2


def transaction_value(sys_flag: int) -> int:
    """``MessageSysFlag.getTransactionValue``: bits 2–3 of ``sys_flag`` as they stand (compare
    with the :class:`TransactionType` values; the int form is for hot paths)."""
    return sys_flag & TRANSACTION_TYPE_MASK


def reset_transaction_value(sys_flag: int, value: int) -> int:
    """``MessageSysFlag.resetTransactionValue``: ``sys_flag`` with bits 2–3 set to ``value``."""
    return (sys_flag & ~TRANSACTION_TYPE_MASK) | value


def transaction_type(sys_flag: int) -> TransactionType:
    """Bits 2–3 of ``sys_flag``."""
    return TransactionType(sys_flag & TRANSACTION_TYPE_MASK)


def compression_type(sys_flag: int) -> CompressionType | int:
    """Bits 8–10 of ``sys_flag``; 0 reads as ZLIB (``CompressionType.findByValue``), and an
    undefined value (4–7) comes back as the plain int."""
    v = (sys_flag & MessageSysFlag.COMPRESSION_TYPE_COMPARATOR) >> 8
    if v == 0:
        return CompressionType.ZLIB
    try:
        return CompressionType(v)
    except ValueError:
        return v


def body_crc(body: bytes | bytearray | memoryview) -> int:
    """``UtilAll.crc32``: CRC-32 of the body with bit 31 cleared."""
    return zlib.crc32(body) & 0x7FFFFFFF


_TYPE_BITS = {
    CompressionType.ZLIB: MessageSysFlag.COMPRESSION_ZLIB_TYPE,
    CompressionType.LZ4: MessageSysFlag.COMPRESSION_LZ4_TYPE,
    CompressionType.ZSTD: MessageSysFlag.COMPRESSION_ZSTD_TYPE,
}


def compress_body(body: bytes, level: int = 5,
                  compression: CompressionType = CompressionType.ZLIB) -> tuple[bytes, int]:
    """Compress a body as the Java 5.0.0 producer does; returns the bytes and the sysFlag bits to
    OR in (``COMPRESSED_FLAG`` plus the type bits: 0x301 for ZLIB, 0x101 LZ4, 0x201 ZSTD).

    The frames are those of Java's compressors, so that every Java consumer reads them:
    ZLIB a ``Deflater`` stream at ``level``; LZ4 what ``LZ4FrameOutputStream`` writes (independent
    blocks of up to 4 MiB, no content size or checksum: lz4-java's reader refuses linked blocks,
    which ``lz4.frame.compress`` makes); ZSTD a stream written, flushed and closed as through
    ``ZstdOutputStream`` at ``level`` (no content size). ZLIB and LZ4 come out byte for byte as
    Java's, ZSTD too at the default level 5 (``tests/interop/test_java_compression.py``)."""
    data = bytes(body)
    if compression is CompressionType.ZLIB:
        packed = zlib.compress(data, level)
    elif compression is CompressionType.LZ4:
        import lz4.frame

        lz4c = lz4.frame.LZ4FrameCompressor(block_size=lz4.frame.BLOCKSIZE_MAX4MB, block_linked=False,
                                            content_checksum=False)
        packed = lz4c.begin() + lz4c.compress(data) + lz4c.flush()
    elif compression is CompressionType.ZSTD:
        import zstandard

        zc = zstandard.ZstdCompressor(level=level).compressobj()
        packed = (zc.compress(data) + zc.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
                  + zc.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH))
    else:  # pragma: no cover - the enum has no other member
        raise EncodeError(f"unknown compression {compression!r}", field="sysFlag")
    return packed, MessageSysFlag.COMPRESSED_FLAG | _TYPE_BITS[compression]


#: the most a compressed body is inflated to unless a caller says otherwise: zstd packs 256 MiB
#: of zeros into 8 KB, so without a bound a few kilobytes of a capture or a peer's message can
#: ask for gigabytes (Java's consumers inflate without a bound; 64 MiB is 16 times the largest
#: body a 4.9.8 broker stores before compression)
MAX_INFLATED_BODY = 64 * 1024 * 1024
#: compressed bytes fed to the zstd decoder at a time, so that its output is checked against the
#: bound every 8 MiB at most (a zstd block of one repeated byte is 4 bytes for 128 KiB)
_ZSTD_STEP = 256


def decompress_body(body: bytes | bytearray | memoryview, sys_flag: int, *,
                    max_size: int | None = MAX_INFLATED_BODY, offset: int = 0) -> bytes:
    """The body as the application sees it: inflated when ``sys_flag`` has COMPRESSED_FLAG.

    Mirrors ``MessageDecoder.decode`` with ``deCompressBody``: the compression type comes from
    bits 8–10. A ZLIB stream that is corrupt, truncated, or inflates past ``max_size`` raises
    :class:`wire.DecodeError` (``offset`` is where the body starts, for the error). Bytes after
    the end of the stream are ignored, as ``InflaterInputStream`` ignores them. LZ4 and ZSTD
    frames are decoded the same way (corrupt, truncated or too large: :class:`wire.DecodeError`);
    an undefined compression type (4–7) is a :class:`wire.DecodeError` naming it. ``max_size``
    (:data:`MAX_INFLATED_BODY` unless given; None for no bound) is checked as the body inflates,
    never after.
    """
    if not sys_flag & MessageSysFlag.COMPRESSED_FLAG:
        return bytes(body)
    kind = compression_type(sys_flag)
    if kind is CompressionType.LZ4:
        return _lz4_decompress(body, max_size, offset)
    if kind is CompressionType.ZSTD:
        return _zstd_decompress(body, max_size, offset)
    if kind is not CompressionType.ZLIB:
        raise DecodeError(f"body compression type {kind} is not defined", offset=offset, field="sysFlag",
                          expected="1 LZ4, 2 ZSTD or 3 ZLIB", found=str(kind))
    d = zlib.decompressobj()
    try:
        out = d.decompress(bytes(body), max_size or 0)
    except zlib.error as exc:
        raise DecodeError(f"compressed body does not inflate: {exc}", offset=offset, field="body",
                          expected="a zlib stream", found=bytes(body[:4]).hex()) from None
    if not d.eof and max_size is not None and len(out) >= max_size:
        raise DecodeError(f"compressed body inflates past {max_size} bytes", offset=offset,
                          field="body", expected=f"<= {max_size}", found="more")
    if not d.eof:
        # mirrors InflaterInputStream: "Unexpected end of ZLIB input stream"
        raise DecodeError("compressed body ends before its zlib stream does", offset=offset + len(body),
                          field="body", expected="the end of the zlib stream", found=len(body))
    return out


def _too_large(max_size: int, offset: int) -> DecodeError:
    return DecodeError(f"compressed body inflates past {max_size} bytes", offset=offset, field="body",
                       expected=f"<= {max_size}", found="more")


def _lz4_decompress(body: bytes | bytearray | memoryview, max_size: int | None, offset: int) -> bytes:
    """An LZ4 frame (``LZ4FrameInputStream``)."""
    import lz4.frame

    d = lz4.frame.LZ4FrameDecompressor()
    try:
        out = d.decompress(bytes(body), max_length=-1 if max_size is None else max_size + 1)
    except RuntimeError as exc:
        raise DecodeError(f"LZ4 body does not decode: {exc}", offset=offset, field="body",
                          expected="an LZ4 frame", found=bytes(body[:4]).hex()) from None
    if max_size is not None and len(out) > max_size:
        raise _too_large(max_size, offset)
    if not d.eof:
        raise DecodeError("compressed body ends before its LZ4 frame does", offset=offset + len(body),
                          field="body", expected="the end of the LZ4 frame", found=len(body))
    return bytes(out)


def _zstd_decompress(body: bytes | bytearray | memoryview, max_size: int | None, offset: int) -> bytes:
    """A zstd frame (``ZstdInputStream``); the frame need not declare its content size."""
    import zstandard

    d = zstandard.ZstdDecompressor().decompressobj()
    data = bytes(body)
    out = bytearray()
    try:
        # fed a piece at a time: the output is bounded as it grows, not after a bomb has gone off
        step = _ZSTD_STEP if max_size is not None else max(1, len(data))
        for start in range(0, len(data), step):
            out += d.decompress(data[start:start + step])
            if max_size is not None and len(out) > max_size:
                raise _too_large(max_size, offset)
            if d.eof:  # bytes after the frame are ignored, as before
                break
    except zstandard.ZstdError as exc:
        raise DecodeError(f"ZSTD body does not decode: {exc}", offset=offset, field="body",
                          expected="a zstd frame", found=bytes(body[:4]).hex()) from None
    if not d.eof:
        raise DecodeError("compressed body ends before its zstd frame does", offset=offset + len(body),
                          field="body", expected="the end of the zstd frame", found=len(body))
    return bytes(out)
