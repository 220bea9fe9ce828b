#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write one libFuzzer seed file per RoCEv2 (UDP port 4791) frame of classic pcap captures.

Each seed is the fuzz target's 4-byte settings prefix followed by the frame
(see fuzz_wire_parse.c). Standard library only: reads classic pcap files
(microsecond or nanosecond magic, either byte order) of Ethernet captures.
"""

import argparse
import os
import struct
import sys

ROCEV2_PORT = 4791
LINKTYPE_ETHERNET = 1
ETHERTYPE_IPV4 = 0x0800
ETHERTYPE_IPV6 = 0x86DD
ETHERTYPE_VLAN = 0x8100
IPPROTO_UDP = 17

# magic as read little-endian -> (byte order of the file, timestamp unit)
MAGICS = {
    0xA1B2C3D4: ("<", "us"),
    0xA1B23C4D: ("<", "ns"),
    0xD4C3B2A1: (">", "us"),
    0x4D3CB2A1: (">", "ns"),
}


def udp_dport(frame):
    """Destination port of an Ethernet[/802.1Q]/IPv4|IPv6/UDP frame, or None."""
    if len(frame) < 14:
        return None
    off = 12
    (etype,) = struct.unpack_from("!H", frame, off)
    off += 2
    if etype == ETHERTYPE_VLAN:
        if len(frame) < off + 4:
            return None
        (etype,) = struct.unpack_from("!H", frame, off + 2)
        off += 4
    if etype == ETHERTYPE_IPV4:
        if len(frame) < off + 20 or frame[off] >> 4 != 4 or frame[off + 9] != IPPROTO_UDP:
            return None
        off += (frame[off] & 0x0F) * 4
    elif etype == ETHERTYPE_IPV6:
        if len(frame) < off + 40 or frame[off] >> 4 != 6 or frame[off + 6] != IPPROTO_UDP:
            return None
        off += 40
    else:
        return None
    if len(frame) < off + 8:
        return None
    (dport,) = struct.unpack_from("!H", frame, off + 2)
    return dport


def pcap_frames(path):
    """Yield the captured bytes of every record of a classic pcap file."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError(f"{path}: too short for a pcap header")
    (magic,) = struct.unpack_from("<I", data, 0)
    if magic not in MAGICS:
        raise ValueError(f"{path}: not a classic pcap file (magic {magic:#010x})")
    order, _unit = MAGICS[magic]
    _vmaj, _vmin, _zone, _sigfigs, _snaplen, linktype = struct.unpack_from(
        order + "HHiIII", data, 4)
    if linktype & 0x0FFFFFFF != LINKTYPE_ETHERNET:
        raise ValueError(f"{path}: link type {linktype} is not Ethernet")
    off = 24
    while off + 16 <= len(data):
        _sec, _frac, caplen, _origlen = struct.unpack_from(order + "IIII", data, off)
        off += 16
        if off + caplen > len(data):
            raise ValueError(f"{path}: record at byte {off - 16} runs past the end of the file")
        yield data[off:off + caplen]
        off += caplen
    if off != len(data):
        raise ValueError(f"{path}: {len(data) - off} stray bytes at the end")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("outdir", help="directory to write the seeds into (created)")
    ap.add_argument("pcaps", nargs="+", help="classic pcap files")
    ap.add_argument("--prefix", default="0f400000",
                    help="hex settings prefix put before each frame (default %(default)s)")
    args = ap.parse_args()

    prefix = bytes.fromhex(args.prefix)
    os.makedirs(args.outdir, exist_ok=True)
    total = 0
    for path in args.pcaps:
        stem = os.path.splitext(os.path.basename(path))[0]
        n = 0
        for index, frame in enumerate(pcap_frames(path), start=1):
            if udp_dport(frame) != ROCEV2_PORT:
                continue
            with open(os.path.join(args.outdir, f"{stem}-{index:05d}"), "wb") as out:
                out.write(prefix + frame)
            n += 1
        if n == 0:
            print(f"pcap_seeds: {path}: no RoCEv2 frame", file=sys.stderr)
        total += n
    print(f"pcap_seeds: {total} RoCEv2 frames from {len(args.pcaps)} captures in {args.outdir}")
    return 0 if total > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
