import CGaugeLinux
import Foundation
import GaugeProtocol
import GaugeRender
import Glibc
import Testing
import GaugeTestSupport

// The access policy (README "Access") against the real daemon, with a real member of its
// group (`nobody` with the supplementary group `users`, through setpriv): a member never
// gets a file created, overwritten, deleted or read with the daemon's (root's) rights.

private let member = ["--reuid=nobody", "--regid=nogroup", "--groups=users"]

/// A daemon serving `users`, in a 0755 directory, with a root-only directory (`etc`,
/// 0700, holding `secret`) and one the member owns (`home`), and gaugectl where nobody
/// can run it.
private struct MemberSetup {
    let daemon: GaugedProcess
    let client: String
    let rootOnly: String
    let home: String
    let nobody: uid_t

    init() throws {
        daemon = try GaugedProcess(["--group", "users"])
        chmod(daemon.directory.path, 0o755)
        client = try reachableGaugectl(in: daemon.directory)
        rootOnly = daemon.directory.appending("etc")
        mkdir(rootOnly, 0o700)
        try Data("root's secret".utf8).write(to: URL(fileURLWithPath: rootOnly + "/secret"))
        home = daemon.directory.appending("home")
        nobody = getpwnam("nobody").pointee.pw_uid
        mkdir(home, 0o755)
        chown(home, nobody, gid_t.max)
    }

    func asMember(_ arguments: [String]) throws -> ProgramRun {
        try gaugectl(["--socket", daemon.socketPath, "--timeout", "3"] + arguments, asUser: member, binary: client)
    }
}

private func exists(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0
}

private func contents(_ path: String) -> String? {
    FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
}

extension LineConnection {
    /// Sends `line` with `descriptor` attached (SCM_RIGHTS) and reads the reply.
    func request(_ line: String, passing descriptor: Int32) throws -> String {
        let bytes = Array((line + "\n").utf8)
        let sent = bytes.withUnsafeBytes { CGL_send_with_descriptor(fd, $0.baseAddress, $0.count, descriptor) }
        try #require(sent == bytes.count, "sendmsg: errno \(errno)")
        return try #require(try readLine())
    }
}

@Suite struct GaugedAccessTests {
    @Test(.enabled(if: geteuid() == 0, "runs gaugectl as nobody through setpriv"))
    func aMemberGetsSnapshotsOnlyWhereItMayWriteItself() throws {
        let setup = try MemberSetup()

        // gaugectl opens the file as the member: a root-only directory stays untouched.
        var run = try setup.asMember(["snapshot", setup.rootOnly + "/new.png"])
        #expect(run.status == 1 && run.stderr.contains("Permission denied"), "\(run.stderr)")
        #expect(!exists(setup.rootOnly + "/new.png"))

        // Naming the path to the daemon is refused before anything is opened.
        run = try setup.asMember(["send", "snapshot", setup.rootOnly + "/new.png"])
        #expect(run.status == 1 && run.stderr.hasPrefix("gaugectl: denied: "), "\(run.stderr)")
        #expect(!exists(setup.rootOnly + "/new.png"), "no root-owned file created")
        run = try setup.asMember(["send", "snapshot", setup.rootOnly + "/secret"])
        #expect(run.status == 1 && run.stderr.hasPrefix("gaugectl: denied: "), "\(run.stderr)")
        #expect(contents(setup.rootOnly + "/secret") == "root's secret", "neither overwritten nor deleted")

        // A device the member may write (like /dev/full) is passed, refused, and kept.
        let full = setup.home + "/full"
        try #require(mknod(full, S_IFCHR | 0o666, fullDevice) == 0)
        chmod(full, 0o666)
        run = try setup.asMember(["snapshot", full])
        #expect(run.status == 1 && run.stderr.contains("not a regular file"), "\(run.stderr)")
        #expect(exists(full))

        // Where the member may write, it gets its snapshot, owned by itself.
        let shot = setup.home + "/shot.png"
        run = try setup.asMember(["snapshot", shot])
        #expect(run.status == 0, "\(run.stderr)")
        var info = stat()
        try #require(stat(shot, &info) == 0)
        #expect(info.st_uid == setup.nobody, "the file is the member's, not root's")
        let image = try PNG.read(shot)
        #expect(image.width == 320 && image.height == 240)
        #expect(setup.daemon.log.contains("refused"), "\(setup.daemon.log)")
    }

    @Test(.enabled(if: geteuid() == 0, "runs gaugectl as nobody through setpriv"))
    func aPlantedSymlinkIsNotFollowedWithRootsRights() throws {
        let setup = try MemberSetup()
        let link = setup.home + "/link.png"
        let target = setup.rootOnly + "/target.png"
        symlink(target, link)
        lchown(link, setup.nobody, gid_t.max)

        var run = try setup.asMember(["snapshot", link])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(!exists(target), "the member's gaugectl cannot reach the root-only directory")

        // Symlinked onto an existing root-only file: still neither written nor removed.
        let onSecret = setup.home + "/secret.png"
        symlink(setup.rootOnly + "/secret", onSecret)
        lchown(onSecret, setup.nobody, gid_t.max)
        run = try setup.asMember(["snapshot", onSecret])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(contents(setup.rootOnly + "/secret") == "root's secret")
        #expect(exists(onSecret), "the link the member named is left alone")

        // Even root's own request does not follow a link in the last component.
        let reply = try setup.daemon.request("snapshot \(link)")
        #expect(reply.hasPrefix("err io ") && reply.contains("symbolic links"), "\(reply)")
        #expect(!exists(target))
    }

    /// Nothing the daemon is given to write into makes it block, and a failure leaves
    /// every file where it was.
    @Test func snapshotFailuresNeverBlockNorDelete() throws {
        let daemon = try GaugedProcess()
        let connection = try daemon.connect(timeout: 3)

        // A FIFO named by root: refused at once, with or without a reader, and kept.
        let fifo = daemon.directory.appending("fifo")
        try #require(mkfifo(fifo, 0o644) == 0)
        var reply = try connection.request("snapshot \(fifo)")
        #expect(reply.hasPrefix("err io "), "\(reply)")
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        defer { close(reader) }
        reply = try connection.request("snapshot \(fifo)")
        #expect(reply.hasPrefix("err io ") && reply.contains("not a regular file"), "\(reply)")
        #expect(exists(fifo))

        // A device whose writes fail (a copy of /dev/full): refused, and still there.
        let full = daemon.directory.appending("full")
        try #require(mknod(full, S_IFCHR | 0o666, fullDevice) == 0)
        reply = try connection.request("snapshot \(full)")
        #expect(reply.hasPrefix("err io ") && reply.contains("not a regular file"), "\(reply)")
        #expect(exists(full), "a failed snapshot removes nothing")

        // A FIFO passed as a descriptor: refused.
        let writer = open(fifo, O_WRONLY | O_NONBLOCK)
        defer { close(writer) }
        reply = try connection.request("snapshot -", passing: writer)
        #expect(reply.hasPrefix("err io ") && reply.contains("not a regular file"), "\(reply)")

        // A file passed open for reading only: refused, its bytes unchanged.
        let existing = daemon.directory.appending("existing.png")
        try Data("old bytes".utf8).write(to: URL(fileURLWithPath: existing))
        let readOnly = open(existing, O_RDONLY)
        defer { close(readOnly) }
        reply = try connection.request("snapshot -", passing: readOnly)
        #expect(reply.hasPrefix("err io ") && reply.contains("not open for writing"), "\(reply)")
        #expect(contents(existing) == "old bytes")

        // `snapshot -` without a descriptor.
        reply = try connection.request("snapshot -")
        #expect(reply.hasPrefix("err syntax "), "\(reply)")

        // A writable descriptor gets the PNG, replacing what the file held.
        let writable = open(existing, O_WRONLY)
        defer { close(writable) }
        reply = try connection.request("snapshot -", passing: writable)
        #expect(reply == "ok")
        #expect(try PNG.read(existing).width == 320)
        #expect(try connection.request("ping") == "ok")
    }

    @Test(.enabled(if: geteuid() == 0, "runs gaugectl as nobody through setpriv"))
    func onlyRootPointsTheThemeAtFiles() throws {
        let setup = try MemberSetup()
        let logo = setup.daemon.directory.appending("logo.png")
        try PNG.write(PNG.Image(width: 8, height: 8, rgba: [UInt8](repeating: 255, count: 256)), to: logo)
        chmod(setup.rootOnly, 0o755)
        chmod(setup.rootOnly + "/secret", 0o600)

        for setting in ["logo=\(setup.rootOnly)/secret", "logo=\(logo)", "font=\(logo)", "bold_font=\(logo)", "fallback_fonts=\(logo)"] {
            let run = try setup.asMember(["theme", setting])
            #expect(run.status == 1 && run.stderr.hasPrefix("gaugectl: denied: only root"), "\(setting): \(run.stderr)")
        }
        // The refusal does not depend on the path existing.
        let missing = try setup.asMember(["theme", "logo=/nonexistent/x.png"])
        #expect(missing.stderr.hasPrefix("gaugectl: denied: only root"), "\(missing.stderr)")
        var run = try setup.asMember(["theme", "fill_color=#ff0000"])
        #expect(run.status == 0, "keys that name no file are the member's to set: \(run.stderr)")

        run = try gaugectl(["--socket", setup.daemon.socketPath, "theme", "logo=\(logo)"])
        #expect(run.status == 0, "root may: \(run.stderr)")
    }

    /// A logo or font that is a device, a FIFO, missing, not a PNG or too large: `err io`
    /// at once with the reason, and the daemon goes on.
    @Test func themeFilesThatCannotBeLoadedAreRefusedAtOnce() throws {
        let daemon = try GaugedProcess()
        let connection = try daemon.connect(timeout: 3)
        let fifo = daemon.directory.appending("fifo")
        try #require(mkfifo(fifo, 0o644) == 0)
        let notPNG = daemon.directory.appending("text.png")
        try Data("not a picture".utf8).write(to: URL(fileURLWithPath: notPNG))
        let huge = daemon.directory.appending("huge.png")
        try Data(pngHeaderOnly(width: 8192, height: 8192)).write(to: URL(fileURLWithPath: huge))

        let cases: [(String, String)] = [
            ("logo=/dev/ptmx", "not a regular file"),
            ("logo=\(fifo)", "not a regular file"),
            ("font=\(fifo)", "not a regular file"),
            ("fallback_fonts=\(fifo)", "not a regular file"),
            ("logo=/nonexistent/logo.png", "No such file"),
            ("logo=\(notPNG)", "PNG"),
            ("font=\(notPNG)", "not a font"),
            ("logo=\(huge)", "8192x8192, larger than 4096x4096"),
        ]
        for (setting, reason) in cases {
            let reply = try connection.request("theme \(setting)")
            #expect(reply.hasPrefix("err io ") && reply.contains(reason), "\(setting): \(reply)")
        }
        #expect(try connection.request("ping") == "ok")
        #expect(try daemon.status().target == 0, "nothing was applied")
    }
}

/// A PNG file that is only a signature, an IHDR for `width`x`height` (8-bit RGBA), a
/// stub IDAT and IEND: enough for a reader to learn the size, nothing to decode.
func pngHeaderOnly(width: UInt32, height: UInt32) -> [UInt8] {
    func bigEndian(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8((value >> $0) & 0xff) } }
    func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        var crc: UInt32 = 0xffff_ffff
        for byte in body {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? 0xedb8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return bigEndian(UInt32(data.count)) + body + bigEndian(~crc)
    }
    let header = bigEndian(width) + bigEndian(height) + [8, 6, 0, 0, 0]
    return [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] + chunk("IHDR", header) + chunk("IDAT", [0x78, 0x9c, 3, 0])
        + chunk("IEND", [])
}

/// The device number of /dev/full (major 1, minor 7), whose writes fail with ENOSPC.
private let fullDevice = dev_t(1 << 8 | 7)
