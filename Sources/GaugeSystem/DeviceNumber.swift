/// A device node's number (major, minor), as `st_rdev` and a uevent's `MAJOR`/`MINOR`
/// give it: the device whatever path it was opened through. The kernel gives a number
/// again once its device is gone (efifb's fb0, 29:0, then the DRM driver's fb0, 29:0).
package struct DeviceNumber: Hashable, Sendable, CustomStringConvertible {
    package var major: UInt32
    package var minor: UInt32

    package init(major: UInt32, minor: UInt32) {
        self.major = major
        self.minor = minor
    }

    /// From glibc's `dev_t` encoding.
    package init(_ rdev: UInt64) {
        major = UInt32(truncatingIfNeeded: ((rdev >> 8) & 0xfff) | ((rdev >> 32) & ~0xfff))
        minor = UInt32(truncatingIfNeeded: (rdev & 0xff) | ((rdev >> 12) & ~0xff))
    }

    package var description: String { "\(major):\(minor)" }
}
