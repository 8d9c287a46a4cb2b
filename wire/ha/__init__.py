# Licensed under the Apache License, Version 2.0. See LICENSE.
"""HA replication: frames of the 4.x and 5.x AutoSwitch protocols, stream decoders, epoch file.

Theory of operation
-------------------
A slave connects to its master's HA port (the remoting port + 1) and the two exchange raw frames,
with no remoting framing. Which frames depends on the protocol variant (:class:`HAProtocol`):

* ``V4`` -- 4.x, and 5.x brokers outside controller mode: the slave reports its max CommitLog offset
  in 8 bytes; the master answers with a 12-byte header (offset, body size) and CommitLog bytes,
  starting where the slave stands (or at the master's last CommitLog file when the slave reports 0).
* ``AUTOSWITCH_*`` -- 5.x controller mode: both sides prefix each frame with their connection state.
  The slave's HANDSHAKE carries its address (5.0.0, 5.1.0) or broker id (5.1.1+); the master answers
  with its epoch entries; the slave truncates its log to the point where both agree
  (:func:`find_consistent_point`) and acks from there; the master then sends TRANSFER frames that
  carry the epoch and the confirm offset besides the data.

:mod:`wire.ha.frames` declares each layout once (construct) with a frozen view and encode/decode
functions; :mod:`wire.ha.stream` cuts a byte stream into frames, sans-IO, per variant and direction,
and guesses the variant of a captured stream; :mod:`wire.ha.epoch` reads and writes the epoch file and
holds the pure rules both ends apply (consistent point, where the master starts sending).
"""

from __future__ import annotations

from .epoch import (
    DEFAULT_COMMITLOG_FILE_SIZE,
    LONG_MAX,
    autoswitch_transfer_start_offset,
    decode_epoch_file,
    encode_epoch_file,
    epoch_file_crc,
    epoch_for_offset,
    epoch_ranges,
    find_consistent_point,
    slave_resume_offset,
    v4_transfer_start_offset,
)
from .frames import (
    AUTOSWITCH_MAX_BODY_SIZE,
    EPOCH_ENTRY_SIZE,
    EPOCH_TRANSFER_HEADER_SIZE,
    HANDSHAKE_REPLY_5_0_HEADER_SIZE,
    HANDSHAKE_REPLY_HEADER_SIZE,
    MAX_EPOCH_ENTRIES,
    MAX_HANDSHAKE_ADDRESS_LENGTH,
    TRANSFER_HEADER_SIZE,
    V4_MAX_BODY_SIZE,
    EpochEntry,
    EpochTransfer,
    EpochTransferHeader,
    HAConnectionState,
    HAMessage,
    HandshakeReply,
    HAProtocol,
    SlaveHandshake,
    SlaveReport,
    Transfer,
    TransferAck,
    TransferHeader,
    decode_epoch_transfer,
    decode_epoch_transfer_header,
    decode_handshake_reply,
    decode_slave_handshake,
    decode_slave_report,
    decode_transfer,
    decode_transfer_ack,
    decode_transfer_header,
    encode_epoch_transfer,
    encode_epoch_transfer_header,
    encode_ha_message,
    encode_handshake_reply,
    encode_slave_handshake,
    encode_slave_report,
    encode_transfer,
    encode_transfer_ack,
    encode_transfer_header,
)
from .stream import (
    HADirection,
    HAFrame,
    HAStreamDecoder,
    autoswitch_protocol_for_version,
    decode_ha_stream,
    detect_ha_protocol,
    ha_stream_decoder,
)

__all__ = [
    "AUTOSWITCH_MAX_BODY_SIZE",
    "DEFAULT_COMMITLOG_FILE_SIZE",
    "EPOCH_ENTRY_SIZE",
    "EPOCH_TRANSFER_HEADER_SIZE",
    "HANDSHAKE_REPLY_5_0_HEADER_SIZE",
    "HANDSHAKE_REPLY_HEADER_SIZE",
    "LONG_MAX",
    "MAX_EPOCH_ENTRIES",
    "MAX_HANDSHAKE_ADDRESS_LENGTH",
    "TRANSFER_HEADER_SIZE",
    "V4_MAX_BODY_SIZE",
    "EpochEntry",
    "EpochTransfer",
    "EpochTransferHeader",
    "HAConnectionState",
    "HADirection",
    "HAFrame",
    "HAMessage",
    "HAProtocol",
    "HAStreamDecoder",
    "HandshakeReply",
    "SlaveHandshake",
    "SlaveReport",
    "Transfer",
    "TransferAck",
    "TransferHeader",
    "autoswitch_protocol_for_version",
    "autoswitch_transfer_start_offset",
    "decode_epoch_file",
    "decode_epoch_transfer",
    "decode_epoch_transfer_header",
    "decode_ha_stream",
    "decode_handshake_reply",
    "decode_slave_handshake",
    "decode_slave_report",
    "decode_transfer",
    "decode_transfer_ack",
    "decode_transfer_header",
    "detect_ha_protocol",
    "encode_epoch_file",
    "encode_epoch_transfer",
    "encode_epoch_transfer_header",
    "encode_ha_message",
    "encode_handshake_reply",
    "encode_slave_handshake",
    "encode_slave_report",
    "encode_transfer",
    "encode_transfer_ack",
    "encode_transfer_header",
    "epoch_file_crc",
    "epoch_for_offset",
    "epoch_ranges",
    "find_consistent_point",
    "ha_stream_decoder",
    "slave_resume_offset",
    "v4_transfer_start_offset",
]
