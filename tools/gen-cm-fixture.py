#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write tests/data/cm-mads.pcap: one GSI packet (RoCEv2 UD SEND Only to QP1) per CM message
of IBTA Vol. 1 chapter 12, with field values chosen to set as many bits as possible, and
tests/data/cm-mads.expected.tsv: the value of every field written (frame, message, field,
value).

The layout here is written from the specification's tables on its own, as byte offset, bit
offset from the most significant bit and width, without lib/wire: the test compares lib/wire's
decoding with this file and tshark's (tools/gen-golden-cm.sh). Standard library only.
"""

import os
import struct
import sys
import zlib

# (field name as lib/wire names it, byte offset in the class data, bit offset from the msb
# of that byte, width in bits, value); widths that are multiples of 8 at bit 0 span bytes.
# A bytes value is a byte string of that many bytes.


def gid6(text):
    import ipaddress
    return ipaddress.IPv6Address(text).packed


def gid4(text):
    import ipaddress
    return b"\0" * 10 + b"\xff\xff" + ipaddress.IPv4Address(text).packed


def pad(data, n):
    assert len(data) <= n
    return data + b"\0" * (n - len(data))


def cma_hdr6(sport, src, dst):
    return bytes([0x00, 0x60]) + struct.pack(">H", sport) + gid6(src) + gid6(dst)


REQ = [  # 12.6.5, table 106
    ("local_comm_id", 0, 0, 32, 0xA1B2C3D4),
    ("service_id", 8, 0, 64, 0x0000000001064E21),  # TCP port space, port 20001
    ("local_ca_guid", 16, 0, 64, 0x0102030405060708),
    ("local_qkey", 28, 0, 32, 0x11223344),
    ("local_qpn", 32, 0, 24, 0xABCDEF),
    ("responder_resources", 35, 0, 8, 0x10),
    ("local_eecn", 36, 0, 24, 0x123456),
    ("initiator_depth", 39, 0, 8, 0x20),
    ("remote_eecn", 40, 0, 24, 0x654321),
    ("remote_cm_response_timeout", 43, 0, 5, 0x15),
    ("transport_service_type", 43, 5, 2, 1),
    ("end_to_end_flow_control", 43, 7, 1, 1),
    ("starting_psn", 44, 0, 24, 0xFEDCBA),
    ("local_cm_response_timeout", 47, 0, 5, 0x13),
    ("retry_count", 47, 5, 3, 5),
    ("partition_key", 48, 0, 16, 0x8001),
    ("path_mtu", 50, 0, 4, 3),
    ("rdc_exists", 50, 4, 1, 1),
    ("rnr_retry_count", 50, 5, 3, 6),
    ("max_cm_retries", 51, 0, 4, 9),
    ("srq", 51, 4, 1, 1),
    ("extended_transport_type", 51, 5, 3, 0),
    ("primary_local_lid", 52, 0, 16, 0x1234),
    ("primary_remote_lid", 54, 0, 16, 0x5678),
    ("primary_local_gid", 56, 0, 128, gid6("fd00::3")),
    ("primary_remote_gid", 72, 0, 128, gid6("fd00::2")),
    ("primary_flow_label", 88, 0, 20, 0xABCDE),
    ("primary_packet_rate", 91, 2, 6, 0x2A),
    ("primary_traffic_class", 92, 0, 8, 0x28),
    ("primary_hop_limit", 93, 0, 8, 0xFF),
    ("primary_sl", 94, 0, 4, 0xA),
    ("primary_subnet_local", 94, 4, 1, 1),
    ("primary_local_ack_timeout", 95, 0, 5, 0x0E),
    ("alternate_local_lid", 96, 0, 16, 0x9ABC),
    ("alternate_remote_lid", 98, 0, 16, 0xDEF0),
    ("alternate_local_gid", 100, 0, 128, gid6("fd00::13")),
    ("alternate_remote_gid", 116, 0, 128, gid6("fd00::12")),
    ("alternate_flow_label", 132, 0, 20, 0x54321),
    ("alternate_packet_rate", 135, 2, 6, 0x15),
    ("alternate_traffic_class", 136, 0, 8, 0xB8),
    ("alternate_hop_limit", 137, 0, 8, 0x40),
    ("alternate_sl", 138, 0, 4, 0x5),
    ("alternate_subnet_local", 138, 4, 1, 1),
    ("alternate_local_ack_timeout", 139, 0, 5, 0x1F),
    ("private_data", 140, 0, 92 * 8,
     pad(cma_hdr6(0xC123, "fd00::3", "fd00::2") + b"hello from the fixture", 92)),
]

MRA = [  # 12.6.6, table 107
    ("local_comm_id", 0, 0, 32, 0x0BADCAFE),
    ("remote_comm_id", 4, 0, 32, 0xA1B2C3D4),
    ("message_mraed", 8, 0, 2, 1),
    ("service_timeout", 9, 0, 5, 0x1B),
    ("private_data", 10, 0, 222 * 8, pad(b"\x01\x02mra", 222)),
]

REJ_CONSUMER = [  # 12.6.7, table 108
    ("local_comm_id", 0, 0, 32, 0x0BADCAFE),
    ("remote_comm_id", 4, 0, 32, 0xA1B2C3D4),
    ("message_rejected", 8, 0, 2, 0),
    ("rejected_info_length", 9, 0, 7, 0),
    ("reason", 10, 0, 16, 28),
    ("ari", 12, 0, 72 * 8, bytes(72)),
    ("private_data", 84, 0, 148 * 8, pad(b"consumer says no", 148)),
]

REJ_GID = [  # REJ of a REP, reason 12 with the rejected GID as ARI (12.6.7.2)
    ("local_comm_id", 0, 0, 32, 0xA1B2C3D4),
    ("remote_comm_id", 4, 0, 32, 0x0BADCAFE),
    ("message_rejected", 8, 0, 2, 1),
    ("rejected_info_length", 9, 0, 7, 16),
    ("reason", 10, 0, 16, 12),
    ("ari", 12, 0, 72 * 8, pad(gid6("fd00::99"), 72)),
    ("private_data", 84, 0, 148 * 8, bytes(148)),
]

REP = [  # 12.6.8, table 110
    ("local_comm_id", 0, 0, 32, 0x0BADCAFE),
    ("remote_comm_id", 4, 0, 32, 0xA1B2C3D4),
    ("local_qkey", 8, 0, 32, 0x55667788),
    ("local_qpn", 12, 0, 24, 0x00C0DE),
    ("local_eecn", 16, 0, 24, 0x0EEC00),
    ("starting_psn", 20, 0, 24, 0x7FFFFF),
    ("responder_resources", 24, 0, 8, 0x04),
    ("initiator_depth", 25, 0, 8, 0x08),
    ("target_ack_delay", 26, 0, 5, 0x1F),
    ("failover_accepted", 26, 5, 2, 2),
    ("end_to_end_flow_control", 26, 7, 1, 1),
    ("rnr_retry_count", 27, 0, 3, 5),
    ("srq", 27, 3, 1, 1),
    ("local_ca_guid", 28, 0, 64, 0x1112131415161718),
    ("private_data", 36, 0, 196 * 8, pad(b"accepted", 196)),
]

RTU = [  # 12.6.9, table 111
    ("local_comm_id", 0, 0, 32, 0xA1B2C3D4),
    ("remote_comm_id", 4, 0, 32, 0x0BADCAFE),
    ("private_data", 8, 0, 224 * 8, pad(b"ready", 224)),
]

DREQ = [  # 12.6.10, table 112
    ("local_comm_id", 0, 0, 32, 0xA1B2C3D4),
    ("remote_comm_id", 4, 0, 32, 0x0BADCAFE),
    ("remote_qpn_eecn", 8, 0, 24, 0x00C0DE),
    ("private_data", 12, 0, 220 * 8, pad(b"bye", 220)),
]

DREP = [  # 12.6.11, table 113
    ("local_comm_id", 0, 0, 32, 0x0BADCAFE),
    ("remote_comm_id", 4, 0, 32, 0xA1B2C3D4),
    ("private_data", 8, 0, 224 * 8, pad(b"bye too", 224)),
]

SIDR_REQ = [  # 12.11, table 119
    ("request_id", 0, 0, 32, 0x51D00001),
    ("partition_key", 4, 0, 16, 0xFFFF),
    ("service_id", 8, 0, 64, 0x0000000001114E22),  # UDP port space, port 20002
    ("private_data", 16, 0, 216 * 8, pad(cma_hdr6(0xC124, "fd00::3", "fd00::2"), 216)),
]

SIDR_REP = [  # 12.11, table 120
    ("request_id", 0, 0, 32, 0x51D00001),
    ("status", 4, 0, 8, 0),
    ("additional_info_length", 5, 0, 8, 0),
    ("qpn", 8, 0, 24, 0x000123),
    ("service_id", 12, 0, 64, 0x0000000001114E22),
    ("qkey", 20, 0, 32, 0x01234567),
    ("class_port_info", 24, 0, 72 * 8, bytes(72)),
    ("private_data", 96, 0, 136 * 8, pad(b"sidr", 136)),
]

LAP = [  # 12.6.12, table 115
    ("local_comm_id", 0, 0, 32, 0xA1B2C3D4),
    ("remote_comm_id", 4, 0, 32, 0x0BADCAFE),
    ("remote_qpn_eecn", 12, 0, 24, 0x00C0DE),
    ("remote_cm_response_timeout", 15, 0, 5, 0x11),
    ("alternate_local_lid", 20, 0, 16, 0x0102),
    ("alternate_remote_lid", 22, 0, 16, 0x0304),
    ("alternate_local_gid", 24, 0, 128, gid6("fd00::23")),
    ("alternate_remote_gid", 40, 0, 128, gid6("fd00::22")),
    ("alternate_flow_label", 56, 0, 20, 0xFEDCB),
    ("alternate_traffic_class", 59, 0, 8, 0x10),
    ("alternate_hop_limit", 60, 0, 8, 0x20),
    ("alternate_packet_rate", 61, 2, 6, 0x3F),
    ("alternate_sl", 62, 0, 4, 0xF),
    ("alternate_subnet_local", 62, 4, 1, 1),
    ("alternate_local_ack_timeout", 63, 0, 5, 0x10),
    ("private_data", 64, 0, 168 * 8, pad(b"lap", 168)),
]

APR = [  # 12.6.13, table 116: the refusal of the LAP above
    ("local_comm_id", 0, 0, 32, 0x0BADCAFE),
    ("remote_comm_id", 4, 0, 32, 0xA1B2C3D4),
    ("additional_info_length", 8, 0, 8, 0),
    ("ap_status", 9, 0, 8, 2),
    ("additional_info", 12, 0, 72 * 8, bytes(72)),
    ("private_data", 84, 0, 148 * 8, bytes(148)),
]

# (message, attribute ID, fields, sender is the requester)
MESSAGES = [
    ("REQ", 0x10, REQ, True),
    ("MRA", 0x11, MRA, False),
    ("REJ", 0x12, REJ_CONSUMER, False),
    ("REJ", 0x12, REJ_GID, True),
    ("REP", 0x13, REP, False),
    ("RTU", 0x14, RTU, True),
    ("DREQ", 0x15, DREQ, True),
    ("DREP", 0x16, DREP, False),
    ("SIDR_REQ", 0x17, SIDR_REQ, True),
    ("SIDR_REP", 0x18, SIDR_REP, False),
    ("LAP", 0x19, LAP, True),
    ("APR", 0x1A, APR, False),
]

REQUESTER = ("fd00::3", "52:54:00:00:00:03")
RESPONDER = ("fd00::2", "52:54:00:00:00:02")


def put_bits(data, off, bit, width, value):
    """Write @value, @width bits wide, from bit @bit (0 = msb) of byte @off on."""
    for i in range(width):
        pos = off * 8 + bit + i
        b = (value >> (width - 1 - i)) & 1
        mask = 0x80 >> (pos % 8)
        if b:
            data[pos // 8] |= mask
        else:
            data[pos // 8] &= ~mask & 0xFF


def class_data(fields):
    data = bytearray(232)
    for name, off, bit, width, value in fields:
        if isinstance(value, bytes):
            assert bit == 0 and len(value) * 8 == width, name
            data[off:off + len(value)] = value
        else:
            assert 0 <= value < (1 << width), name
            put_bits(data, off, bit, width, value)
    return bytes(data)


def mad(attr, tid, fields):
    hdr = struct.pack(">BBBBHHQHHI", 1, 0x07, 2, 0x03, 0, 0, tid, attr, 0, 0)
    return hdr + class_data(fields)


def icrc(l3):
    """IBTA 7.8.1 / annex A17 for IPv6: CRC-32 of 8 bytes of ones, the IPv6 header with
    traffic class, flow label and hop limit as ones, the UDP header with its checksum as ones,
    the BTH with its resv8a byte as ones, and the rest."""
    m = bytearray(l3)
    m[0] |= 0x0F
    m[1] = m[2] = m[3] = 0xFF
    m[7] = 0xFF
    m[40 + 6] = m[40 + 7] = 0xFF
    m[48 + 4] = 0xFF
    return zlib.crc32(bytes(m), zlib.crc32(b"\xff" * 8)) & 0xFFFFFFFF


def frame(src, dst, psn, payload):
    import ipaddress
    bth = struct.pack(">BBHII", 0x64, 0, 0xFFFF, 1, psn & 0xFFFFFF)
    deth = struct.pack(">II", 0x80010000, 1)
    ib = bth + deth + payload
    udp = struct.pack(">HHHH", 0xC000, 4791, 8 + len(ib) + 4, 0)
    ip6 = struct.pack(">IHBB", 6 << 28, len(udp) + len(ib) + 4, 17, 64)
    ip6 += ipaddress.IPv6Address(src[0]).packed + ipaddress.IPv6Address(dst[0]).packed
    l3 = ip6 + udp + ib
    eth = bytes.fromhex(dst[1].replace(":", "")) + bytes.fromhex(src[1].replace(":", ""))
    return eth + b"\x86\xdd" + l3 + struct.pack("<I", icrc(l3))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")
    frames, expected = [], ["frame\tmessage\tfield\tvalue"]
    for i, (name, attr, fields, from_requester) in enumerate(MESSAGES):
        src, dst = (REQUESTER, RESPONDER) if from_requester else (RESPONDER, REQUESTER)
        # the APR answers the LAP before it with the LAP's transaction ID
        tid = 0x00000000C0FFEE00 + (i - 1 if name == "APR" else i)
        frames.append(frame(src, dst, i, mad(attr, tid, fields)))
        for fname, _, _, _, value in fields:
            v = value.hex() if isinstance(value, bytes) else "0x%x" % value
            expected.append("%d\t%s\t%s\t%s" % (i + 1, name, fname, v))
    with open(os.path.join(out, "cm-mads.pcap"), "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for n, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1795306089 + n, 0, len(fr), len(fr)))
            f.write(fr)
    with open(os.path.join(out, "cm-mads.expected.tsv"), "w") as f:
        f.write("\n".join(expected) + "\n")


if __name__ == "__main__":
    main()
