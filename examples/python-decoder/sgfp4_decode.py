#!/usr/bin/env python3
"""A small, independent SGFP4 decoder (v1 .fp4 and v2 .sgfp4), Python 3 standard library only.

It follows the normative spec (chapter 22) and the conformance profile (DECISIONS.md), and
speaks the external-backend protocol of the conformance runner:

    python3 sgfp4_decode.py CONTAINER PROFILE ROWS COLS OUTPUT

    exit 0  OUTPUT holds ROWS*COLS little-endian float32, row-major
    exit 3  the stream is rejected: one line `error: CODE: detail` on stderr, no OUTPUT
    exit 2  the call itself is wrong (arguments, unreadable file)

Arithmetic (DECISIONS.md section 2): w = S * code + Bias, rounded once to float32.
FP16 S and Bias are integer multiples of 2^-24 with |S|, |Bias| <= 65504 < 2^16, and
|code| <= 8, so S * code and S * code + Bias are integer multiples of 2^-24 of magnitude
below 2^20: integers below 2^44 times 2^-24. A float64 holds 53-bit integers times a power
of two exactly, so the float64 sum is exact and its single conversion to float32 (round to
nearest even, done by struct/array 'f') is the one rounding the spec asks for. IEEE signed
zero rules are the same in both widths, so (+0) + (-0) = +0 and (-0) + (-0) = -0 carry over.
"""

import math
import struct
import sys
from array import array

MACROBLOCK = 64
V1_PAYLOAD = 2048
MODE_FP4 = 0
MODE_T158 = 1
UNIFORM_LEAF_SIZE = {0: 64, 1: 32, 2: 16, 3: 8, 5: 4}
LAYOUT_MIXED = 4
MAX_OUTPUT_BYTES = 2 ** 31  # DECISIONS.md section 5 default

EXIT_REJECTED = 3
EXIT_USAGE = 2


class Rejected(Exception):
    """A stream fault: carries a DECISIONS.md section 3 code."""

    def __init__(self, code, detail):
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


def align16(n):
    return (n + 15) & ~15


def u32(data, at):
    return struct.unpack_from("<I", data, at)[0]


def half_is_nonfinite(h):
    return (h & 0x7C00) == 0x7C00


def half_to_float(h):
    """Exact value of an FP16 bit pattern (finite only), with integer operations."""
    sign = -1.0 if h & 0x8000 else 1.0
    exp = (h >> 10) & 0x1F
    mant = h & 0x3FF
    if exp == 0:
        # subnormal or zero: mant * 2^-24, kept exactly (no flush); copysign keeps -0
        return math.copysign(math.ldexp(mant, -24), sign)
    return math.copysign(math.ldexp(1024 + mant, exp - 25), sign)


def to_f32(x):
    """Round a float64 to the nearest float32 (ties to even), returned as a Python float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def check_params(scale_bits, bias_bits, where):
    if half_is_nonfinite(scale_bits):
        raise Rejected("NONFINITE_PARAMETER", f"scale 0x{scale_bits:04x} is Inf or NaN ({where})")
    if half_is_nonfinite(bias_bits):
        raise Rejected("NONFINITE_PARAMETER", f"bias 0x{bias_bits:04x} is Inf or NaN ({where})")


# A leaf: (block, y, x, size, mode, scale_bits, bias_bits, payload_offset)


def parse_v1(data, blocks):
    expected = 8 * blocks + V1_PAYLOAD * blocks
    if len(data) != expected:
        raise Rejected("SIZE_MISMATCH", f"v1 stream of {len(data)} bytes, expected 8*B + 2048*B = {expected} (B = {blocks})")
    blob_base = 8 * blocks
    blob_len = V1_PAYLOAD * blocks
    leaves = []
    for b in range(blocks):
        header = u32(data, 4 * b)
        offset_word = u32(data, 4 * blocks + 4 * b)
        flags = offset_word & 0xF
        base = offset_word & ~0xF
        if flags & 0xC:
            raise Rejected("RESERVED_BITS", f"block {b}: offset flag bits 2-3 set (flags 0x{flags:x})")
        if base + V1_PAYLOAD > blob_len:
            raise Rejected("OFFSET_OUT_OF_RANGE", f"block {b}: payload base {base} + 2048 exceeds the {blob_len}-byte blob")
        scale_bits, bias_bits = header >> 16, header & 0xFFFF
        check_params(scale_bits, bias_bits, f"block {b}")
        mode = flags & 1  # bit 1 (ERROR_HINT) is informational
        payload = blob_base + base
        if mode == MODE_T158 and any(data[payload + 1024 : payload + V1_PAYLOAD]):
            raise Rejected("NONZERO_PADDING", f"block {b}: T158 payload words 256..511 are not zero")
        leaves.append((b, 0, 0, 64, mode, scale_bits, bias_bits, payload))
    return leaves


def walk_split_map(words):
    """Leaf geometry (y, x, size) of a MIXED record in pre-order DFS (TL, TR, BL, BR) and the bits used."""
    out = []
    used = 0

    def bit(k):
        return (words[k >> 5] >> (k & 31)) & 1

    def visit(y, x, size):
        nonlocal used
        if size > 4:
            k = used
            used += 1
            if bit(k):
                h = size // 2
                visit(y, x, h)
                visit(y, x + h, h)
                visit(y + h, x, h)
                visit(y + h, x + h, h)
                return
        out.append((y, x, size))

    visit(0, 0, MACROBLOCK)
    return out, used


def require_zero(data, start, end, what):
    if any(data[start:end]):
        raise Rejected("NONZERO_PADDING", f"nonzero byte in {what}")


def parse_record(data, b, start, leaves):
    n_bytes = len(data)
    if start + 4 > n_bytes:
        raise Rejected("TRUNCATED", f"record {b}: stream ends inside the sb_header")
    sb = u32(data, start)
    if sb >> 3:
        raise Rejected("RESERVED_BITS", f"record {b}: sb_header bits 3-31 set (0x{sb:x})")
    layout = sb & 7
    if layout in (6, 7):
        raise Rejected("UNKNOWN_LAYOUT", f"record {b}: layout {layout}")
    if layout == LAYOUT_MIXED:
        if start + 16 > n_bytes:
            raise Rejected("TRUNCATED", f"record {b}: stream ends inside the split map")
        words = [u32(data, start + 4 + 4 * i) for i in range(3)]
        geometry, used = walk_split_map(words)
        for k in range(used, 96):
            if (words[k >> 5] >> (k & 31)) & 1:
                raise Rejected("NONZERO_PADDING", f"record {b}: split-map bit {k} set past the {used} bits the walk consumed")
        headers_at = start + 16
    else:
        size = UNIFORM_LEAF_SIZE[layout]
        geometry = [(y, x, size) for y in range(0, MACROBLOCK, size) for x in range(0, MACROBLOCK, size)]
        headers_at = start + 4
    headers_end = headers_at + 4 * len(geometry)
    if headers_end > n_bytes:
        raise Rejected("TRUNCATED", f"record {b}: stream ends inside the {len(geometry)} leaf headers")
    pos = align16(headers_end)
    if pos > n_bytes:
        raise Rejected("TRUNCATED", f"record {b}: stream ends inside the leaf-header pad")
    require_zero(data, headers_end, pos, f"record {b}'s header pad")
    params = []
    for i, (y, x, size) in enumerate(geometry):
        header = u32(data, headers_at + 4 * i)
        flags = header & 0xF
        if flags & 0xE:
            raise Rejected("RESERVED_BITS", f"record {b} leaf {i}: flag bits 1-3 set (0x{flags:x})")
        mode = flags & 1
        used = size * size // 2 if mode == MODE_FP4 else size * size // 4
        padded = align16(used)
        if pos + padded > n_bytes:
            raise Rejected("TRUNCATED", f"record {b} leaf {i}: stream ends inside the payload")
        require_zero(data, pos + used, pos + padded, f"record {b} leaf {i}'s payload padding")
        scale_bits, bias_bits = header >> 16, header & 0xFFF0  # v2 bias: flags masked off
        params.append((scale_bits, bias_bits, f"record {b} leaf {i}"))
        leaves.append((b, y, x, size, mode, scale_bits, bias_bits, pos))
        pos += padded
    for scale_bits, bias_bits, where in params:
        check_params(scale_bits, bias_bits, where)


def parse_v2(data, blocks):
    n_bytes = len(data)
    magic = b"SGF4"
    for i in range(4):
        if i >= n_bytes:
            raise Rejected("TRUNCATED", f"stream of {n_bytes} bytes ends inside the magic")
        if data[i] != magic[i]:
            raise Rejected("BAD_MAGIC", "stream does not start with 'SGF4'")
    if n_bytes < 5:
        raise Rejected("TRUNCATED", "stream ends before the version byte")
    if data[4] != 0x02:
        raise Rejected("BAD_VERSION", f"version byte 0x{data[4]:02x}, expected 0x02")
    if n_bytes < 16:
        raise Rejected("TRUNCATED", "stream ends inside the 16-byte fixed header")
    count = u32(data, 5)
    if count != blocks:
        raise Rejected("RECORD_COUNT_MISMATCH", f"stream declares {count} records, the shape needs {blocks}")
    require_zero(data, 9, 16, "the fixed-header pad")
    table_end = 16 + 4 * blocks
    base = align16(table_end)  # record_region_base = align16(16 + 4*B), DECISIONS.md 1
    if n_bytes < table_end:
        raise Rejected("TRUNCATED", "stream ends inside the record offset table")
    if n_bytes < base:
        raise Rejected("TRUNCATED", "stream ends inside the offset-table pad")
    require_zero(data, table_end, base, "the offset-table pad")
    leaves = []
    previous = -1
    for b in range(blocks):
        rel = u32(data, 16 + 4 * b)
        if rel % 16:
            raise Rejected("MISALIGNED_OFFSET", f"record {b}: offset {rel} is not a multiple of 16")
        if rel <= previous:
            raise Rejected("NONMONOTONIC_OFFSET", f"record {b}: offset {rel} is not greater than {previous}")
        previous = rel
        start = base + rel
        if start >= n_bytes:
            raise Rejected("OFFSET_OUT_OF_RANGE", f"record {b}: starts at byte {start}, past the {n_bytes}-byte stream")
        # Each record is read where its offset points (gaps and overlaps are not faults).
        parse_record(data, b, start, leaves)
    return leaves


def code_values(mode, scale, bias):
    """float32 value of every code: FP4 indexed by nibble 0..15, T158 by symbol 0..3."""
    if mode == MODE_FP4:
        return [to_f32(scale * (n - 16 if n >= 8 else n) + bias) for n in range(16)]
    symbol_code = (0, 1, -1, 0)  # symbol 11 is reserved and decodes as 0
    return [to_f32(scale * symbol_code[s] + bias) for s in range(4)]


def unpack_row(row, mode, values):
    """Codes are packed LSB-first: FP4 two per byte, T158 four per byte."""
    if mode == MODE_FP4:
        return [values[n] for byte in row for n in (byte & 15, byte >> 4)]
    return [values[s] for byte in row for s in (byte & 3, (byte >> 2) & 3, (byte >> 4) & 3, byte >> 6)]


def decode(data, profile, rows, cols):
    tiles_y = -(-rows // MACROBLOCK)
    tiles_x = -(-cols // MACROBLOCK)
    blocks = tiles_y * tiles_x
    # Every fault is found before the output is allocated, so a rejected stream produces nothing.
    leaves = parse_v1(data, blocks) if profile == "v1" else parse_v2(data, blocks)
    out = array("f", bytes(4 * rows * cols))
    for b, y, x, size, mode, scale_bits, bias_bits, payload in leaves:
        values_of = code_values(mode, half_to_float(scale_bits), half_to_float(bias_bits))
        codes_per_byte = 2 if mode == MODE_FP4 else 4
        row_bytes = size // codes_per_byte
        top = (b // tiles_x) * MACROBLOCK + y
        left = (b % tiles_x) * MACROBLOCK + x
        keep = min(size, cols - left)  # crop the zero-padded grid to (rows, cols)
        if keep <= 0:
            continue
        for i in range(min(size, rows - top)):
            at = payload + i * row_bytes
            values = unpack_row(data[at : at + row_bytes], mode, values_of)
            start = (top + i) * cols + left
            out[start : start + keep] = array("f", values[:keep])
    if sys.byteorder != "little":
        out.byteswap()
    return out


def main(argv):
    if len(argv) != 6:
        print("usage: sgfp4_decode.py CONTAINER PROFILE ROWS COLS OUTPUT", file=sys.stderr)
        return EXIT_USAGE
    container, profile, rows_arg, cols_arg, output = argv[1:]
    try:
        rows, cols = int(rows_arg), int(cols_arg)
    except ValueError:
        print(f"usage: ROWS and COLS must be integers, got {rows_arg!r} {cols_arg!r}", file=sys.stderr)
        return EXIT_USAGE
    if profile not in ("v1", "v2") or rows < 1 or cols < 1:
        print("usage: PROFILE must be v1 or v2, ROWS and COLS >= 1", file=sys.stderr)
        return EXIT_USAGE
    if rows * cols * 4 > MAX_OUTPUT_BYTES:
        # DECISIONS.md section 5: refuse before allocating
        print(f"error: LIMIT_EXCEEDED: output of {rows}x{cols} float32 is over {MAX_OUTPUT_BYTES} bytes", file=sys.stderr)
        return EXIT_REJECTED
    try:
        with open(container, "rb") as f:
            data = f.read()
    except OSError as e:
        print(f"cannot read {container}: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        out = decode(data, profile, rows, cols)
    except Rejected as r:
        print(f"error: {r.code}: {r.detail}", file=sys.stderr)
        return EXIT_REJECTED
    with open(output, "wb") as f:
        out.tofile(f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
