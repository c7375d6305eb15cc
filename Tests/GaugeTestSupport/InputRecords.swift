/// `struct input_event` records as the kernel writes them on a 64-bit machine (24 bytes:
/// the time, 16, then type, code and value, little-endian).
package func inputRecord(type: UInt16 = 1, code: UInt16, value: Int32) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: 16)
    bytes += [UInt8(type & 0xFF), UInt8(type >> 8), UInt8(code & 0xFF), UInt8(code >> 8)]
    let v = UInt32(bitPattern: value)
    bytes += [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8(v >> 24)]
    return bytes
}

/// A key pressed and released, with the report (EV_SYN) the kernel sends after each.
package func tap(_ code: UInt16) -> [UInt8] {
    inputRecord(code: code, value: 1) + inputRecord(type: 0, code: 0, value: 0) + inputRecord(code: code, value: 0) + inputRecord(type: 0, code: 0, value: 0)
}
