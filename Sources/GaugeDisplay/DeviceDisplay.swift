import GaugeSystem

/// A display on a kernel device (DRM card, fbdev): what the daemon does with it beyond
/// drawing frames.
///
/// The daemon's loop, one thread:
/// - watch `eventDescriptor` (when not nil) for input and call `handleEvents()` when it is
///   readable; it returns true once a frame can be started again (a page flip finished);
/// - per frame: `beginFrame()` first, and only when it gives a target, `scene.update`,
///   `scene.draw(into: target.buffer, clip: damage.union(target.staleRegion))`, then
///   `present(damage:)` with what changed (not the stale part). A nil target means "not now": keep the
///   damage for later, do not advance the scene;
/// - on `hide` or a VT switch away: `release()`; on `show` or the switch back: `acquire()`,
///   then redraw everything (`scene.invalidate()`; the buffers are marked stale whole too);
/// - on exit: `close(retain:)`, once; the display is unusable after it;
/// - when the device goes away (its remove event, `isPresent()` false, or `isGone` after a
///   call failed with ENODEV): `abandon()`, once, and never touch it again.
package protocol DeviceDisplay: Display {
    /// For the log: device, driver, mode, format and buffering on one line.
    var summary: String { get }
    var kind: DeviceKind { get }
    /// The node opened (`/dev/dri/card0`, `/dev/fb0`).
    var path: String { get }
    /// What the driver calls itself (`drmGetVersion`'s name, or fbdev's `fix.id`).
    var driver: String { get }
    /// The number of the device opened, to match remove events.
    var deviceNumber: DeviceNumber? { get }
    /// A call on the device failed with ENODEV (the kernel removed it), or the device
    /// cannot show anything (a DRM card none of whose heads took the first mode set).
    var isGone: Bool { get }
    /// Asks the kernel whether the device is still there (one ioctl); false once it was
    /// removed, even if a new device took the same path.
    func isPresent() -> Bool
    /// The device went away: frees the buffers and unmaps them, closes the descriptor
    /// (which drops DRM master), and touches the device no more. The display is unusable
    /// after it.
    func abandon()
    /// A descriptor that becomes readable when `handleEvents()` has work (DRM page-flip
    /// events), or nil when the display never has events (fbdev).
    var eventDescriptor: Int32? { get }
    /// Reads pending events without blocking. True when a frame can be started now.
    @discardableResult func handleEvents() -> Bool
    /// Gives the device up for another user (drops DRM master); frames are refused
    /// until `acquire()`. The screen shows what it showed before us again (the text
    /// console), or with `keepingFrame` our last frame stays until the next user shows
    /// its own (a display manager's hand-over: no black or console between).
    func release(keepingFrame: Bool)
    /// Takes the device back and shows our buffers again; the next frame must be whole.
    func acquire() throws(DisplayError)
    /// Shows our picture again after another client of the device may have changed it (a
    /// DRM card's fbdev emulation arriving after us); the next frame must be whole.
    func showAgain() throws(DisplayError)
    /// Puts the device back as it was found (the saved CRTC, the console's pan offset),
    /// or with `retain` leaves the last frame on the screen where the kernel allows it.
    func close(retain: Bool)
    /// What went wrong since last asked where no call threw (a restore in `release` or
    /// `close`), for the log.
    func takeProblems() -> [String]
}

extension DeviceDisplay {
    package func takeProblems() -> [String] { [] }
    package func showAgain() throws(DisplayError) {}
}
