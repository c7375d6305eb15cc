import CDRM
import CGaugeLinux
import CPixman
import GaugeRender
import GaugeSystem

/// KMS dumb buffers through libdrm (`--display drm[:/dev/dri/cardN]`).
///
/// Every connected head (see `DRMHeadPlan` for which, at which mode) is a view of its
/// own (`views`, each a `DRMHead`): buffers at its own mode, drawn with a picture laid out
/// for its own size and scale, lit by its own first frame and flipped on its own CRTC.
/// The card itself, as a `Display`, is its first head. Where the card has vblank
/// interrupts, each head's two dumb buffers are flipped with `drmModePageFlip` on vblank;
/// while a head's flip is pending its `beginFrame()` returns nil, so there is never more
/// than one flip per vblank on a CRTC nor a frame queued behind one. The flips'
/// completions arrive on `eventDescriptor`; the daemon calls `handleEvents()`. A back
/// buffer lacks the damage of its head's previous frame (`staleRegion`, buffer age 2).
///
/// Drivers that only update the screen when told (virtio-gpu, udl, command-mode panels)
/// are told with `drmModeDirtyFB` and the damage; drivers answering ENOSYS/EOPNOTSUPP are
/// not asked again. A driver that cannot page flip gets its front buffers drawn in place
/// and marked dirty; a card without vblank (bochs-drm, virtio-gpu, simpledrm, udl) gets
/// one buffer per head: there a flip waits for no scanout, so it keeps nothing from
/// tearing, and only costs a commit in a kernel worker that preempts the daemon, and a
/// completion event to read.
package final class DRMDisplay: DeviceDisplay {
    package let path: String
    package let format: PixelFormat
    package private(set) var summary: String
    /// The card's descriptor: readable when a page flip has finished.
    package let fd: Int32

    package var name: String { "drm \(path) \(driver)" }
    package var kind: DeviceKind { .drm }
    package let driver: String
    package let deviceNumber: DeviceNumber?
    package private(set) var isGone = false
    package var eventDescriptor: Int32? { fd }
    /// A page flip has been queued on some head and not yet finished.
    var isFlipPending: Bool { heads.contains { $0.flipPending } }
    /// False after `release()` until `acquire()`.
    package private(set) var isActive = true

    /// The heads lit, in the card's order; empty once closed or abandoned.
    package private(set) var heads: [DRMHead] = []
    package var views: [any Display] { heads.map { $0 } }
    /// Page flips work; false once the driver refused one, or when it has no vblank (then
    /// one buffer per head, drawn in place).
    private var flipping = true
    /// The card has no vblank interrupts (`drmCrtcGetSequence` is not supported).
    private var noVBlank = false
    /// Worth calling `drmModeDirtyFB`; false once the driver said it has no use for it.
    private var dirtyWanted = true
    private var closed = false
    /// What went wrong where no caller gets an error (a restore), for the log.
    private var problems: [String] = []
    private var skipped: [String] = []

    // The card as one display is its first head (the heads are its `views`).
    package var width: Int { heads.first?.width ?? 0 }
    package var height: Int { heads.first?.height ?? 0 }
    package var physicalSize: (width: Int, height: Int)? { heads.first?.physicalSize }
    package var panelOrientation: Rotation { heads.first?.panelOrientation ?? .none }
    package func beginFrame() -> FrameTarget? { heads.first.flatMap { beginFrame(on: $0) } }
    package func present(damage: Rect) throws(DisplayError) {
        if let head = heads.first { try present(on: head, damage: damage) }
    }

    /// Opens `path` (default `/dev/dri/card0`), becomes DRM master and plans the heads.
    /// Nothing changes on screen until the first frame is presented: that frame sets the
    /// mode, so whatever showed before (the console, or a splash on the framebuffer this
    /// card replaced) goes straight to the splash, without a black frame in between. Fails,
    /// closing everything, when the card has no dumb buffers, no connected connector, or
    /// another process is DRM master.
    package init(path: String = "/dev/dri/card0") throws(DisplayError) {
        self.path = path
        let fd: Int32
        do throws(SystemError) {
            fd = try Syscall.open(path, flags: O_RDWR | O_NONBLOCK)
        } catch {
            throw DisplayError("drm \(path): cannot open: \(errnoText(error.errno))")
        }
        self.fd = fd
        deviceNumber = (try? Syscall.fstat(fd)).map { DeviceNumber(UInt64($0.st_rdev)) }
        var built = false
        var saved: [drmModeCrtcPtr?] = []
        var made: [[DumbBuffer]] = []
        defer {
            if !built {
                for crtc in saved { drmModeFreeCrtc(crtc) }
                for buffer in made.joined() { Self.destroy(buffer, fd: fd) }
                Syscall.close(fd)
            }
        }

        try Self.claim(fd: fd, path: path)
        driver = Self.driverName(fd: fd)

        guard let resources = drmModeGetResources(fd) else {
            throw DisplayError("drm \(path): not a modesetting device (\(errnoText()))")
        }
        defer { drmModeFreeResources(resources) }
        let crtcs = Array(UnsafeBufferPointer(start: resources.pointee.crtcs, count: Int(resources.pointee.count_crtcs)))
        let (connectors, encoders, modeInfos, millimetres) = Self.probe(fd: fd, resources: resources.pointee)

        let plan: DRMHeadPlan
        switch DRMHeadPlan.make(connectors: connectors, encoders: encoders, crtcs: crtcs) {
        case .success(let made): plan = made
        case .failure(let error): throw DisplayError("drm \(path) (\(driver)): \(error.message)")
        }
        for head in plan.heads { saved.append(drmModeGetCrtc(fd, head.crtc)) }
        let modes = plan.heads.map { modeInfos[$0.connector]![$0.modeIndex] }
        noVBlank = Self.lacksVBlank(fd: fd, crtc: plan.heads[0].crtc)
        format = try Self.makeBuffers(fd: fd, path: path, driver: driver, modes: modes, count: noVBlank ? 1 : 2, into: &made)
        summary = ""
        built = true
        skipped = plan.skipped
        if noVBlank { flipping = false }
        for (index, head) in plan.heads.enumerated() {
            let mm = millimetres[head.connector]!
            heads.append(DRMHead(
                card: self, connector: head.connector, name: head.connectorName, crtc: head.crtc,
                mode: modes[index], saved: saved[index], buffers: made[index],
                physicalSize: mm.0 > 0 && mm.1 > 0 ? (mm.0, mm.1) : nil,
                panelOrientation: Self.panelOrientation(fd: fd, connector: head.connector)))
        }
        // Asks once, off screen, whether the driver wants DirtyFB, so the summary says so.
        let spare = heads[0].buffers[heads[0].buffers.count - 1]
        markDirty(spare, Rect(x: 0, y: 0, width: 1, height: 1))
        summary = describe()
    }

    deinit {
        close(retain: false)
    }

    /// XRGB8888 unless the driver prefers 16-bit depth; the other as the fallback.
    package static func formatOrder(preferredDepth: Int) -> [PixelFormat] {
        preferredDepth == 16 ? [.rgb565, .xrgb8888] : [.xrgb8888, .rgb565]
    }

    package static func fourcc(_ format: PixelFormat) -> UInt32? {
        switch format {
        case .xrgb8888: GAUGE_DRM_FORMAT_XRGB8888
        case .rgb565: GAUGE_DRM_FORMAT_RGB565
        default: nil
        }
    }

    // MARK: - Frames

    /// `head`'s buffer for its next frame: nil while its flip is pending or the card is
    /// released. A head that refused its mode still takes frames, which no one sees.
    func beginFrame(on head: DRMHead) -> FrameTarget? {
        guard !closed, isActive, !head.flipPending, !head.buffers.isEmpty else { return nil }
        if !flipping {
            // Until the first frame sets the mode, the one buffer is not scanned out yet.
            return FrameTarget(buffer: head.framebuffer(head.frontIndex, onScreen: head.lit), staleRegion: .zero)
        }
        return FrameTarget(buffer: head.framebuffer(head.damage.back), staleRegion: head.damage.backStale)
    }

    func present(on head: DRMHead, damage changed: Rect) throws(DisplayError) {
        guard !closed, isActive, !head.flipPending, !head.dark else { return }
        let area = changed.intersection(head.damage.screen)
        if !head.lit {
            let first = flipping ? head.damage.back : head.frontIndex
            try light(head, with: head.buffers[first].fb)
            if flipping { head.damage.presented(changed: area) }
            markDirty(head.buffers[first], area)
            return
        }
        if !flipping {
            markDirty(head.buffers[head.frontIndex], area)
            return
        }
        let back = head.damage.back
        let buffer = head.buffers[back]
        let userData = Unmanaged.passUnretained(head).toOpaque()
        if drmModePageFlip(fd, head.crtc, buffer.fb, UInt32(DRM_MODE_PAGE_FLIP_EVENT), userData) == 0 {
            head.flipPending = true
        } else {
            let failure = errno
            switch failure {
            case EINVAL, ENOSYS, EOPNOTSUPP:
                // No page flips here: every head shows its front buffer for good and is
                // drawn in place from now on (this one: the buffer just drawn).
                try setCrtc(head, to: buffer.fb)
                flipping = false
                head.frontOverride = back
                summary = describe()
                markDirty(buffer, head.damage.screen)
                return
            case ENODEV:
                isGone = true
                throw DisplayError("drm \(path): the device is gone")
            default:
                throw DisplayError("drm \(path): page flip failed on \(head.connectorName): \(errnoText(failure))")
            }
        }
        head.damage.presented(changed: area)
        markDirty(buffer, area)
    }

    /// Reads the card's events (page flips done). True when a frame can be started on
    /// every head.
    @discardableResult
    package func handleEvents() -> Bool {
        guard !closed else { return false }
        var context = drmEventContext()
        context.version = 2
        context.page_flip_handler = { _, _, _, _, userData in
            guard let userData else { return }
            let head = Unmanaged<DRMHead>.fromOpaque(userData).takeUnretainedValue()
            if !head.flipPending { head.uncountedCompletions += 1 }
            head.flipPending = false
        }
        // Non-blocking: with nothing to read this returns at once.
        _ = drmHandleEvent(fd, &context)
        for head in heads where head.uncountedCompletions > 0 {
            problems.append("drm \(path): a page flip did not match the count on \(head.connectorName): "
                            + "\(head.uncountedCompletions) completion(s) with none pending")
            head.uncountedCompletions = 0
        }
        return !isFlipPending && isActive
    }

    // MARK: - Release, acquire, close

    package func isPresent() -> Bool {
        guard !closed, !isGone else { return false }
        var capability: UInt64 = 0
        if drmGetCap(fd, UInt64(DRM_CAP_DUMB_BUFFER), &capability) != 0, errno == ENODEV {
            isGone = true
        }
        return !isGone
    }

    package func abandon() {
        guard !closed else { return }
        closed = true
        isGone = true
        for head in heads {
            for buffer in head.buffers {
                if let map = buffer.map { Syscall.unmap(map, length: buffer.size) }
            }
            head.buffers = []
            drmModeFreeCrtc(head.saved)
        }
        heads = []
        Syscall.close(fd)
    }

    /// Puts the saved CRTCs back (normally the text console) and drops DRM master (hide,
    /// VT switched away), so the console or the next master can show itself; frames are
    /// refused until `acquire()`. With `keepingFrame` the CRTCs keep our front buffers,
    /// which live on while the display is open, until the next master sets its own.
    package func release(keepingFrame: Bool) {
        guard !closed, isActive else { return }
        isActive = false
        waitForFlips()
        if !keepingFrame { restoreCrtcs() }
        _ = drmDropMaster(fd)
    }

    /// Takes DRM master back and puts our front buffers on their heads again; the next
    /// frame's `staleRegion` is the whole screen.
    package func acquire() throws(DisplayError) {
        guard !closed else { throw DisplayError("drm \(path): closed") }
        guard !isActive else { return }
        if drmSetMaster(fd) != 0 {
            throw DisplayError("drm \(path): cannot take DRM master back: \(errnoText())")
        }
        isActive = true
        // A flip queued before the release that has not completed yet still counts: its
        // completion must not be taken for the next flip's.
        try showAgain()
    }

    /// Puts our front buffers on their heads again and marks every buffer stale whole:
    /// the kernel's fbdev emulation, registered on this card after we took it, may have
    /// set its own picture or cleared ours when the console moved onto it.
    package func showAgain() throws(DisplayError) {
        guard !closed, isActive else { return }
        waitForFlips()
        for head in heads {
            head.damage.invalidateAll()
            guard head.lit, !head.dark else { continue }
            try setCrtc(head, to: head.buffers[head.frontIndex].fb)
            markDirty(head.buffers[head.frontIndex], head.damage.screen)
        }
    }

    /// Restores what every CRTC showed before (normally the text console's framebuffer),
    /// or with `retain` keeps the last frame on screen: with `DRM_IOCTL_MODE_CLOSEFB`
    /// (Linux 6.8+) our buffers stay on their CRTCs after we exit; and each head's frame
    /// is copied into its saved (console) framebuffer, which the kernel shows again once
    /// we exit on older kernels, and on newer ones when the last client's close restores
    /// the console's mode (at the end of a shutdown, with no one else holding the card);
    /// the console leaves it alone while the VT stays in graphics mode.
    package func close(retain: Bool) {
        guard !closed else { return }
        waitForFlips()
        closed = true
        var kept = Set<UInt32>()
        if isActive {
            if retain {
                for head in heads where head.lit && !head.dark {
                    let front = head.buffers[head.frontIndex]
                    copyFrame(of: head)
                    var closefb = gauge_drm_mode_closefb(fb_id: front.fb, pad: 0)
                    if drmIoctl(fd, GAUGE_DRM_IOCTL_MODE_CLOSEFB, &closefb) == 0 {
                        kept.insert(front.fb)
                    } else {
                        restoreCrtcs(head)
                    }
                }
            } else {
                restoreCrtcs()
            }
        }
        for head in heads {
            for buffer in head.buffers { Self.destroy(buffer, fd: fd, removeFramebuffer: !kept.contains(buffer.fb)) }
            head.buffers = []
            drmModeFreeCrtc(head.saved)
        }
        heads = []
        Syscall.close(fd)
    }

    // MARK: - Helpers

    /// Sets `head`'s mode with its first frame. A head that refuses is left dark (named in
    /// the summary and the error); the display fails, as gone, when no head can show.
    private func light(_ head: DRMHead, with fb: UInt32) throws(DisplayError) {
        var connector = head.connector
        var mode = head.mode
        guard drmModeSetCrtc(fd, head.crtc, fb, 0, 0, &connector, 1, &mode) == 0 else {
            let reason = "cannot set \(Self.modeText(mode)) on \(head.connectorName): \(errnoText())"
            head.dark = true
            skipped.append(reason)
            summary = describe()
            if heads.allSatisfy({ $0.dark }) { isGone = true }
            throw DisplayError("drm \(path) (\(driver)): \(reason)")
        }
        head.lit = true
    }

    private func setCrtc(_ head: DRMHead, to fb: UInt32) throws(DisplayError) {
        var connector = head.connector
        var mode = head.mode
        if drmModeSetCrtc(fd, head.crtc, fb, 0, 0, &connector, 1, &mode) != 0 {
            throw DisplayError("drm \(path): cannot show our buffer on \(head.connectorName): \(errnoText())")
        }
    }

    /// Gives every head we lit (or only `only`) what its CRTC showed before us.
    private func restoreCrtcs(_ only: DRMHead? = nil) {
        for head in heads where head.lit && (only == nil || only === head) {
            guard let saved = head.saved else { continue }
            var connector = head.connector
            var mode = saved.pointee.mode
            let result: Int32
            if saved.pointee.buffer_id != 0, saved.pointee.mode_valid != 0 {
                result = drmModeSetCrtc(fd, saved.pointee.crtc_id, saved.pointee.buffer_id,
                                        saved.pointee.x, saved.pointee.y, &connector, 1, &mode)
            } else {
                result = drmModeSetCrtc(fd, saved.pointee.crtc_id, 0, 0, 0, nil, 0, nil)
            }
            if result != 0 {
                problems.append("drm \(path): cannot give \(head.connectorName) back its console picture: \(errnoText())")
            }
        }
    }

    /// Waits for the flips still pending to complete, about two vblanks at most: a CRTC
    /// set (restore) or a new flip while one is pending would be refused (EBUSY) or draw
    /// into the buffer on screen. A flip that takes longer stays counted, and its
    /// completion is read by `handleEvents()` later.
    private func waitForFlips() {
        guard !closed, isFlipPending else { return }
        let refresh: Int64 = heads.map { Int64($0.mode.vrefresh) }.filter { $0 > 0 }.min() ?? 60
        let vblank: Int64 = (1000 + refresh - 1) / refresh
        let deadline: Int64 = MonotonicClock.milliseconds() + 2 * vblank + 1
        while isFlipPending {
            let left = deadline - MonotonicClock.milliseconds()
            guard left > 0 else { break }
            guard let ready = try? Syscall.poll(fd, events: Int16(POLLIN), timeoutMilliseconds: Int32(left)) else { break }
            if ready != 0 { handleEvents() }
        }
        if isFlipPending {
            problems.append("drm \(path): a page flip did not complete within two vblanks; waiting for it")
        }
    }

    /// What went wrong since last asked where no caller got an error, for the log.
    package func takeProblems() -> [String] {
        defer { problems = [] }
        return problems
    }


    /// Tells the driver which part of `buffer` changed, for drivers that copy to the
    /// screen only when told. Stops asking once the driver says it has no use for it.
    private func markDirty(_ buffer: DumbBuffer, _ area: Rect) {
        guard dirtyWanted, !area.isEmpty else { return }
        var clip = drmModeClip(
            x1: UInt16(clamping: area.x), y1: UInt16(clamping: area.y),
            x2: UInt16(clamping: area.maxX), y2: UInt16(clamping: area.maxY))
        let result = drmModeDirtyFB(fd, buffer.fb, &clip, 1)
        if result != 0 {
            let code = result < 0 ? -result : errno
            if code == ENOSYS || code == EOPNOTSUPP { dirtyWanted = false }
            if code == ENODEV { isGone = true }
        }
    }

    /// Copies `head`'s front frame into the framebuffer its CRTC showed before us (for
    /// `retain` on kernels without CLOSEFB), converting the format with pixman. Best effort.
    private func copyFrame(of head: DRMHead) {
        let source = head.buffers[head.frontIndex]
        guard let saved = head.saved, saved.pointee.buffer_id != 0, let fbInfo = drmModeGetFB(fd, saved.pointee.buffer_id)
        else { return }
        defer { drmModeFreeFB(fbInfo) }
        let info = fbInfo.pointee
        let target: pixman_format_code_t
        switch (info.bpp, info.depth) {
        case (32, 24): target = PIXMAN_x8r8g8b8
        case (16, 16): target = PIXMAN_r5g6b5
        default: return
        }
        guard info.handle != 0 else { return }
        var offset: UInt64 = 0
        guard drmModeMapDumbBuffer(fd, info.handle, &offset) == 0 else { return }
        let size = Int(info.pitch) * Int(info.height)
        guard let map = try? Syscall.mapShared(fd, length: size, offset: Int64(offset)) else { return }
        defer { Syscall.unmap(map, length: size) }
        let src = pixman_image_create_bits(
            format.pixman, Int32(head.width), Int32(head.height),
            source.map!.assumingMemoryBound(to: UInt32.self), Int32(source.pitch))
        let dst = pixman_image_create_bits(
            target, Int32(info.width), Int32(info.height), map.assumingMemoryBound(to: UInt32.self), Int32(info.pitch))
        if let src, let dst {
            pixman_image_composite32(
                PIXMAN_OP_SRC, src, nil, dst, 0, 0, 0, 0, Int32(saved.pointee.x), Int32(saved.pointee.y),
                Int32(min(head.width, Int(info.width))), Int32(min(head.height, Int(info.height))))
        }
        if let src { pixman_image_unref(src) }
        if let dst { pixman_image_unref(dst) }
    }

    /// For the log: each head with its mode, the format and the buffering.
    private func describe() -> String {
        let shown = heads.filter { !$0.dark }.map { "\($0.connectorName) \(Self.modeText($0.mode))" }
        var text = "drm \(path) driver \(driver) \(shown.joined(separator: ", ")) \(format.rawValue) "
        text += flipping ? "double-buffered page flips" : noVBlank ? "single buffer (no vblank)" : "single buffer (no page flip)"
        if dirtyWanted { text += ", dirtyfb" }
        for reason in skipped { text += "; skipped \(reason)" }
        return text
    }
}
