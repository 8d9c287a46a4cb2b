# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A classic BPF program for ``tcp and (port P or port Q ...)`` on Ethernet frames, without tcpdump.

``mqctl pcap record`` attaches it to its packet socket, so that the kernel drops every other frame
before it reaches the socket's buffer: on a busy loopback (other programs' traffic) a Python reader
that filtered only in user space fell behind and the kernel dropped frames it wanted. The program
is the one ``tcpdump -dd`` compiles for that expression: IPv4 (not a later fragment; the TCP
header found from the IP header length) and IPv6 (TCP as the next header, without extension
headers), source or destination port. No ports: every TCP frame.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["SNAP", "Instruction", "run", "tcp_ports"]

#: what an accepting program returns: the bytes of a frame kept (more than any loopback frame)
SNAP = 262144

Instruction = tuple[int, int, int, int]  # (code, jump if true, jump if false, k): struct sock_filter

_LDH_ABS, _LDB_ABS, _LDH_IND, _LDXB_MSH = 0x28, 0x30, 0x48, 0xB1
_JEQ, _JSET, _RET = 0x15, 0x45, 0x06


def tcp_ports(ports: Iterable[int]) -> list[Instruction]:
    """The program keeping the TCP frames with a source or destination port in ``ports``."""
    wanted = sorted({int(p) for p in ports})
    if any(not 0 < p < 65536 for p in wanted):
        raise ValueError(f"not a port number: {[p for p in wanted if not 0 < p < 65536]}")
    # built with symbolic targets ("accept", "drop", "ip6"), resolved into relative jumps at the end
    prog: list[tuple[int, int | str, int | str, int]] = []

    def port_checks(load: tuple[int, int | str, int | str, int], last: bool) -> None:
        prog.append(load)
        if not wanted:
            prog.append((_RET, 0, 0, SNAP))
            return
        for i, p in enumerate(wanted):
            final = i == len(wanted) - 1
            prog.append((_JEQ, "accept", "drop" if final and last else 0, p))

    prog.append((_LDH_ABS, 0, 0, 12))  # EtherType
    prog.append((_JEQ, 0, "ip6", 0x0800))
    prog.append((_LDB_ABS, 0, 0, 23))  # IPv4 protocol
    prog.append((_JEQ, 0, "drop", 6))
    prog.append((_LDH_ABS, 0, 0, 20))  # flags and fragment offset
    prog.append((_JSET, "drop", 0, 0x1FFF))
    prog.append((_LDXB_MSH, 0, 0, 14))  # X = IP header length
    port_checks((_LDH_IND, 0, 0, 14), last=False)  # source port
    port_checks((_LDH_IND, 0, 0, 16), last=True)  # destination port
    ip6 = len(prog)
    prog.append((_JEQ, 0, "drop", 0x86DD))  # A still holds the EtherType
    prog.append((_LDB_ABS, 0, 0, 20))  # IPv6 next header
    prog.append((_JEQ, 0, "drop", 6))
    port_checks((_LDH_ABS, 0, 0, 54), last=False)
    port_checks((_LDH_ABS, 0, 0, 56), last=True)
    accept = len(prog)
    prog.append((_RET, 0, 0, SNAP))
    drop = len(prog)
    prog.append((_RET, 0, 0, 0))
    where = {"accept": accept, "drop": drop, "ip6": ip6}

    out: list[Instruction] = []
    for pc, (code, jt, jf, k) in enumerate(prog):
        if code in (_JEQ, _JSET):
            jt = where[jt] - pc - 1 if isinstance(jt, str) else jt
            jf = where[jf] - pc - 1 if isinstance(jf, str) else jf
            if not (0 <= jt < 256 and 0 <= jf < 256):
                raise ValueError(f"too many ports for one BPF program ({len(wanted)})")
        out.append((code, int(jt), int(jf), k))
    return out


def run(program: list[Instruction], frame: bytes) -> int:
    """Run ``program`` over ``frame`` as the kernel does (the instructions :func:`tcp_ports` uses):
    the bytes kept, 0 for a frame dropped (also when a load reads past its end)."""
    a = x = pc = 0
    while True:
        code, jt, jf, k = program[pc]
        pc += 1
        if code in (_LDH_ABS, _LDH_IND):
            at = k + (x if code == _LDH_IND else 0)
            if at + 2 > len(frame):
                return 0
            a = int.from_bytes(frame[at : at + 2], "big")
        elif code == _LDB_ABS:
            if k >= len(frame):
                return 0
            a = frame[k]
        elif code == _LDXB_MSH:
            if k >= len(frame):
                return 0
            x = (frame[k] & 0x0F) * 4
        elif code == _JEQ:
            pc += jt if a == k else jf
        elif code == _JSET:
            pc += jt if a & k else jf
        elif code == _RET:
            return k
        else:
            raise ValueError(f"instruction {code:#x} is not one this module writes")
