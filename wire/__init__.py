# Licensed under the Apache License, Version 2.0. See LICENSE.
"""wire: Apache RocketMQ's wire protocol as bytes in, objects out. Sans-IO.

The public API lives here; callers never import construct objects or submodules' internals.
"""

from __future__ import annotations

from .codes import (
    LanguageCode,
    MQVersion,
    RequestCode,
    ResponseCode,
    SerializeType,
    language_code,
    request_code,
    response_code,
    version_name,
)
from .errors import (
    DecodeError,
    EncodeError,
    FrameTooLarge,
    HeaderLengthOutOfRange,
    TrailingBytes,
    Truncated,
    UnknownSerializeType,
    WireError,
)
from .framing import DEFAULT_MAX_FRAME_LENGTH, MAX_TOTAL_LENGTH, Frame, FrameBuffer, split_frame
from .remoting import (
    DEFAULT_VERSION,
    FLAG_ONEWAY,
    FLAG_RESPONSE,
    RemotingCommand,
    decode_command,
    decode_frame,
    decode_header,
    encode_command,
    encode_header,
)

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MAX_FRAME_LENGTH",
    "DEFAULT_VERSION",
    "FLAG_ONEWAY",
    "FLAG_RESPONSE",
    "MAX_TOTAL_LENGTH",
    "DecodeError",
    "EncodeError",
    "Frame",
    "FrameBuffer",
    "FrameTooLarge",
    "HeaderLengthOutOfRange",
    "LanguageCode",
    "MQVersion",
    "RemotingCommand",
    "RequestCode",
    "ResponseCode",
    "SerializeType",
    "TrailingBytes",
    "Truncated",
    "UnknownSerializeType",
    "WireError",
    "decode_command",
    "decode_frame",
    "decode_header",
    "encode_command",
    "encode_header",
    "language_code",
    "request_code",
    "response_code",
    "split_frame",
    "version_name",
]
