import GaugeSystem

/// The boot's identifier: the first 8 hex digits of the kernel's boot ID, under which the
/// journal files the boot (`journalctl --list-boots | grep ID` finds it). The same in the
/// initramfs and the real root: the kernel keeps it until the machine restarts.
enum BootID {
    /// Read at each failure screen (a rare event); "" where /proc has none of the kernel's form.
    static func read() -> String {
        var digits: [UInt8] = []
        for byte in (Syscall.kernelText("/proc/sys/kernel/random/boot_id", maxBytes: 64) ?? "").utf8 {
            guard byte != UInt8(ascii: "-") else { break }
            digits.append(byte)
        }
        return digits.count == 8 ? String(decoding: digits, as: UTF8.self) : ""
    }
}
