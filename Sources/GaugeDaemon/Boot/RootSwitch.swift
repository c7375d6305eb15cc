import CGaugeLinux
import GaugeProtocol
import GaugeSystem

/// The daemon's way through the boot: one instance from the initramfs to the real root.
///
/// - initramfs-tools: processes survive `run-init`, and `/run` is moved into the real
///   root, but a process's root directory stays the dead initramfs. Its init-bottom
///   script sends `newroot /root` (or Plymouth's `R`), and `enter(_:)` moves the
///   daemon's root and working directory there, as plymouthd does.
/// - systemd in an initrd (dracut): at switch-root systemd signals every process left
///   but those whose `argv[0]` starts with `@` (its "root storage daemons" convention).
///   `markArgv0InInitrd()` sets that mark when `/etc/initrd-release` exists;
///   gauged-switch-root.service sends `newroot /sysroot` before the switch.
enum RootSwitch {
    /// systemd's and dracut's sign that this is an initrd.
    static let initrdReleasePath = "/etc/initrd-release"

    /// In an initrd, writes `@` over the first byte of argv[0]; the log line says so.
    static func markArgv0InInitrd(releaseFile: String = initrdReleasePath, log: Log) {
        guard (try? Syscall.fileStatus(releaseFile)) != nil else { return }
        // argv as the kernel laid it out: /proc/PID/cmdline shows these very bytes.
        if CGL_argc() > 0, let argv = CGL_argv(), let first = argv[0], first[0] != 0 {
            first[0] = CChar(UInt8(ascii: "@"))
            log.info("in an initrd: argv[0] marked '@', so systemd leaves the daemon running at switch-root")
        } else {
            log.info("in an initrd, but argv[0] cannot be marked: systemd may stop the daemon at switch-root")
        }
    }

    /// Makes `path` the daemon's root and working directory.
    static func enter(_ path: String) throws(SystemError) {
        try Syscall.chdir(path)
        try Syscall.chroot(".")
        try Syscall.chdir("/")
    }

    /// `newroot PATH`: `enter`, its outcome logged; the error to answer, if any.
    static func move(to path: String, log: Log) -> ProtocolError? {
        do throws(SystemError) {
            try enter(path)
        } catch {
            log.info("cannot move into the new root: \(error)")
            return ProtocolError(.io, error.description)
        }
        log.info("moved into the new root \(path)")
        return nil
    }
}
