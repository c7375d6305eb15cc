import GaugeSystem

/// The kernel's ID of this boot, as the journal names it: 32 hex digits, no dashes
/// (`journalctl --list-boots` lists it so, `journalctl -b ID` takes it). The same in the
/// initramfs and the real root: the kernel keeps it until the machine restarts.
enum BootID {
    /// Read at each failure screen (a rare event); "" where /proc has none of 32 digits.
    static func read() -> String {
        var digits: [UInt8] = []
        for byte in (Syscall.kernelText("/proc/sys/kernel/random/boot_id", maxBytes: 64) ?? "").utf8 where byte != UInt8(ascii: "-") {
            digits.append(byte)
        }
        return digits.count == 32 ? String(decoding: digits, as: UTF8.self) : ""
    }
}
