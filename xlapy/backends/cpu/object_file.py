"""What an object file needs from outside: its undefined symbols, read from ELF.

LLVM may call functions the IR never named: soft-float conversions such as
`__truncdfhf2` where the CPU has no instruction for a conversion, `memcpy`
for a large copy, `fmod` for `frem`. A JIT loader that cannot resolve one
leaves the call pointing at address zero and the process dies when the code
runs; reading the list first turns that into a `CompileError` at load time.
Only 64-bit little-endian ELF is read (x86-64 and AArch64 Linux, the
targets xlapy compiles for).
"""

from __future__ import annotations

import struct

_SHT_SYMTAB = 2
_SHN_UNDEF = 0


def undefined_symbols(object_code: bytes) -> list[str]:
    """Names the object references but does not define, in symbol-table order.
    Raises ValueError for anything but a well-formed 64-bit little-endian ELF."""
    data = memoryview(object_code)
    if bytes(data[:4]) != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF object")
    (section_offset,) = struct.unpack_from("<Q", data, 0x28)
    entry_size, count = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, section_offset + i * entry_size)
                for i in range(count)]
    names: list[str] = []
    for _, kind, _, _, offset, size, link, _, _, symbol_size in sections:
        if kind != _SHT_SYMTAB or not symbol_size:
            continue
        strings = sections[link]
        string_start, string_end = strings[4], strings[4] + strings[5]
        for at in range(offset + symbol_size, offset + size, symbol_size):  # entry 0 is null
            name_offset, _, _, index = struct.unpack_from("<IBBH", data, at)
            if index != _SHN_UNDEF or not name_offset:
                continue
            start = string_start + name_offset
            end = bytes(data[start:string_end]).index(b"\0") + start
            names.append(bytes(data[start:end]).decode())
    return names
