import CGaugeLinux
import GaugeRender
import GaugeSystem

/// The Linux framebuffer device (`--display fbdev[:/dev/fbN]`), mapped.
///
/// Any truecolor layout `FBPixelLayout` knows, stride from `line_length`. Two ways to
/// show a frame:
/// - pan-flipping, when the virtual screen holds two pages (`yres_virtual >= 2 * yres`)
///   and `FBIOPAN_DISPLAY` works: frames alternate between the pages, drawn in place, and
///   the hidden page lacks the previous frame's damage (`staleRegion`, as on DRM);
/// - otherwise a shadow buffer in ordinary memory, in the same format, takes the frame
///   and only the damage is copied into the mapping, at the page on screen (the console
///   may have panned). Drawing composites read the destination back, and reading video
///   memory is slow; copying is a plain write. A pan that fails later (the console
///   changed the mode while it had the screen) falls back to the shadow.
package final class FBDevDisplay: DeviceDisplay {
    package let path: String
    package let width: Int
    package let height: Int
    package let format: PixelFormat
    package let physicalSize: (width: Int, height: Int)?
    package var summary: String {
        "fbdev \(path) driver \(driver) \(width)x\(height) \(format.rawValue) stride \(stride) "
            + (isPanFlipping ? "double-buffered pan flips" : "shadow buffer, damage copied")
    }
    /// Bytes from one row to the next in the mapping (`line_length`).
    package let stride: Int
    /// True when frames are shown by panning between two pages.
    var isPanFlipping: Bool { shadow == nil }

    package var name: String { "fbdev \(path) \(driver)" }
    package var kind: DeviceKind { .fbdev }
    package let driver: String
    package let deviceNumber: DeviceNumber?
    package private(set) var isGone = false
    package var eventDescriptor: Int32? { nil }
    package private(set) var isActive = true

    private let fd: Int32
    private let map: UnsafeMutableRawPointer
    private let mapSize: Int
    private let savedVar: fb_var_screeninfo
    private var shadow: UnsafeMutableRawPointer?
    private var shadowStride = 0
    /// Where the screen starts in the mapping, for shadow copies.
    private var visibleOffset = 0
    private var pages: BufferDamage
    private var closed = false

    /// What the driver says of a framebuffer, checked to be a packed truecolor layout Gauge
    /// draws: its settings, name, format, size and how much of its memory to map.
    private struct Geometry {
        var variable: fb_var_screeninfo
        var fixed: fb_fix_screeninfo
        var driver: String
        var format: PixelFormat
        var width: Int
        var height: Int
        var stride: Int
        var mapSize: Int
    }

    private static func geometry(of fd: Int32, path: String) throws(DisplayError) -> Geometry {
        var variable = fb_var_screeninfo()
        var fixed = fb_fix_screeninfo()
        do throws(SystemError) {
            try Syscall.ioctl(fd, CGL_FBIOGET_VSCREENINFO, &variable, "FBIOGET_VSCREENINFO")
            try Syscall.ioctl(fd, CGL_FBIOGET_FSCREENINFO, &fixed, "FBIOGET_FSCREENINFO")
        } catch {
            throw DisplayError("fbdev \(path): not a framebuffer (\(errnoText(error.errno)))")
        }
        let driver = framebufferID(fixed)
        guard fixed.type == FB_TYPE_PACKED_PIXELS,
              fixed.visual == FB_VISUAL_TRUECOLOR || fixed.visual == FB_VISUAL_DIRECTCOLOR else {
            throw DisplayError("fbdev \(path) (\(driver)): not a packed truecolor framebuffer (type \(fixed.type), visual \(fixed.visual))")
        }
        let layout = FBPixelLayout(variable)
        guard let format = layout.pixelFormat else {
            throw DisplayError("fbdev \(path) (\(driver)): pixel layout \(layout.description) not supported")
        }
        let width = Int(variable.xres), height = Int(variable.yres)
        let stride = Int(fixed.line_length)
        guard width > 0, height > 0, stride >= width * format.bytesPerPixel else {
            throw DisplayError("fbdev \(path) (\(driver)): bad geometry \(width)x\(height) stride \(stride)")
        }
        let visibleBytes = stride * Int(variable.yres_virtual)
        let mapSize = min(Int(fixed.smem_len), max(visibleBytes, stride * height))
        guard mapSize >= stride * height else {
            throw DisplayError("fbdev \(path) (\(driver)): \(fixed.smem_len) bytes of memory hold no \(width)x\(height) frame")
        }
        return Geometry(
            variable: variable, fixed: fixed, driver: driver, format: format, width: width, height: height,
            stride: stride, mapSize: mapSize)
    }

    /// Opens and maps `path`, unblanks it, and decides how to flip. Fails for a device
    /// that is not truecolor or has a layout Gauge cannot draw.
    package init(path: String = "/dev/fb0") throws(DisplayError) {
        self.path = path
        let fd: Int32
        do throws(SystemError) {
            fd = try Syscall.open(path, flags: O_RDWR)
        } catch {
            throw DisplayError("fbdev \(path): cannot open: \(errnoText(error.errno))")
        }
        var mapped = false
        defer { if !mapped { Syscall.close(fd) } }
        let geometry = try Self.geometry(of: fd, path: path)
        let (variable, fixed, driver) = (geometry.variable, geometry.fixed, geometry.driver)
        let (width, height, stride, mapSize) = (geometry.width, geometry.height, geometry.stride, geometry.mapSize)
        self.driver = driver
        let map: UnsafeMutableRawPointer
        do throws(SystemError) {
            map = try Syscall.mapShared(fd, length: mapSize)
        } catch {
            throw DisplayError("fbdev \(path) (\(driver)): cannot map \(mapSize) bytes: \(errnoText(error.errno))")
        }
        mapped = true
        self.fd = fd
        deviceNumber = (try? Syscall.fstat(fd)).map { DeviceNumber(UInt64($0.st_rdev)) }
        self.map = map
        self.mapSize = mapSize
        self.width = width
        self.height = height
        self.format = geometry.format
        self.stride = stride
        savedVar = variable
        let mm = (Int(Int32(bitPattern: variable.width)), Int(Int32(bitPattern: variable.height)))
        physicalSize = mm.0 > 0 && mm.1 > 0 ? mm : nil

        // Two pages, and the driver pans: flip between them. Probe by panning to where the
        // screen already is, which changes nothing on screen.
        var probe = variable
        let twoPages = Int(variable.yres_virtual) >= 2 * height && mapSize >= 2 * height * stride
        let pans = twoPages && fixed.ypanstep != 0
            && (try? Syscall.ioctl(fd, CGL_FBIOPAN_DISPLAY, &probe, "FBIOPAN_DISPLAY")) != nil
        let screen = Rect(x: 0, y: 0, width: width, height: height)
        pages = BufferDamage(count: pans ? 2 : 1, screen: screen)
        if pans {
            // Page 0 is shown now if yoffset is 0; then draw into page 1 first.
            if variable.yoffset == 0 { pages.presented(changed: .zero) }
        } else {
            startShadow(copying: nil)
        }
        try? Syscall.ioctl(fd, CGL_FBIOBLANK, value: UInt(CGL_FB_BLANK_UNBLANK), "FBIOBLANK")
    }

    deinit {
        close(retain: false)
    }

    // MARK: - Frames

    package func beginFrame() -> FrameTarget? {
        // The mapping outlives the device: once the kernel unregistered the framebuffer
        // (a DRM driver took the hardware over), it points into memory that driver owns.
        // One ioctl per frame makes sure nothing is drawn through it then.
        guard !closed, isActive, isPresent() else { return nil }
        if let shadow {
            // The shadow always holds the last frame whole; what the mapping lacks is
            // copied in `present`.
            return FrameTarget(
                buffer: Framebuffer(base: shadow, width: width, height: height, stride: shadowStride, format: format),
                staleRegion: .zero)
        }
        // With one page (no panning) the page drawn is the one on screen.
        return FrameTarget(
            buffer: Framebuffer(
                base: map + pageOffset(pages.back), width: width, height: height, stride: stride, format: format,
                isOnScreen: pages.count == 1),
            staleRegion: pages.backStale)
    }

    package func present(damage changed: Rect) throws(DisplayError) {
        guard !closed, isActive else { return }
        let area = changed.intersection(pages.screen)
        if let shadow {
            // After an acquire the mapping lacks everything the shadow has.
            copy(area.union(pages.backStale), from: shadow)
            pages.presented(changed: area)
            return
        }
        let drawnPage = pages.back
        if !pan(to: drawnPage) {
            if isGone { throw DisplayError("fbdev \(path): the device is gone") }
            // The page just drawn holds the whole frame: it becomes the shadow.
            startShadow(copying: map + pageOffset(drawnPage))
            copy(pages.screen, from: shadow!)
            pages.presented(changed: pages.screen)
            return
        }
        pages.presented(changed: area)
    }

    /// No events on fbdev; a frame can always be started while active.
    @discardableResult
    package func handleEvents() -> Bool { isActive }

    /// Stops drawing (hide, VT switched away: the console owns the framebuffer then; a
    /// frame is kept either way, the framebuffer holds what was drawn last).
    package func release(keepingFrame: Bool) {
        isActive = false
    }

    /// Draws again; the whole screen is redrawn since the console has drawn over it.
    package func acquire() throws(DisplayError) {
        guard !closed else { throw DisplayError("fbdev \(path): closed") }
        guard isPresent() else { throw DisplayError("fbdev \(path): the device is gone") }
        isActive = true
        pages.invalidateAll()
        if shadow == nil {
            let front = (pages.back + 1) % pages.count
            if !pan(to: front) {
                if isGone { throw DisplayError("fbdev \(path): the device is gone") }
                startShadow(copying: map + pageOffset(front))
            }
        } else {
            // The console may have panned while it had the screen.
            visibleOffset = currentOffset()
        }
        try? Syscall.ioctl(fd, CGL_FBIOBLANK, value: UInt(CGL_FB_BLANK_UNBLANK), "FBIOBLANK")
    }

    package func isPresent() -> Bool {
        guard !closed, !isGone else { return false }
        var fixed = fb_fix_screeninfo()
        do throws(SystemError) {
            try Syscall.ioctl(fd, CGL_FBIOGET_FSCREENINFO, &fixed, "FBIOGET_FSCREENINFO")
        } catch {
            if error.errno == ENODEV { isGone = true }
        }
        return !isGone
    }

    package func abandon() {
        guard !closed else { return }
        closed = true
        isGone = true
        Syscall.unmap(map, length: mapSize)
        shadow?.deallocate()
        shadow = nil
        Syscall.close(fd)
    }

    /// Pans back to where the console had the screen (unless `retain` and a frame is on
    /// another page: then that page stays) and unmaps. The pixels are left as they are;
    /// the console repaints when the VT returns to text mode.
    package func close(retain: Bool) {
        guard !closed else { return }
        closed = true
        if pages.count == 2, !retain {
            var pan = savedVar
            try? Syscall.ioctl(fd, CGL_FBIOPAN_DISPLAY, &pan, "FBIOPAN_DISPLAY")
        }
        Syscall.unmap(map, length: mapSize)
        shadow?.deallocate()
        shadow = nil
        Syscall.close(fd)
    }

    // MARK: - Helpers

    private func pageOffset(_ page: Int) -> Int { page * height * stride }

    private func pan(to page: Int) -> Bool {
        var pan = savedVar
        pan.xoffset = 0
        pan.yoffset = UInt32(page * height)
        do throws(SystemError) {
            try Syscall.ioctl(fd, CGL_FBIOPAN_DISPLAY, &pan, "FBIOPAN_DISPLAY")
            return true
        } catch {
            if error.errno == ENODEV { isGone = true }
            return false
        }
    }

    /// The byte offset of the screen's first pixel in the mapping, from the driver's
    /// current pan offsets (0 if they cannot be read or lie outside the mapping).
    private func currentOffset() -> Int {
        var variable = fb_var_screeninfo()
        guard (try? Syscall.ioctl(fd, CGL_FBIOGET_VSCREENINFO, &variable, "FBIOGET_VSCREENINFO")) != nil else { return 0 }
        let offset = Int(variable.yoffset) * stride + Int(variable.xoffset) * format.bytesPerPixel
        return offset + height * stride <= mapSize ? offset : 0
    }

    /// Switches to drawing into a shadow buffer (at open without pan-flipping, or when a
    /// pan fails), filled from `frame` (a page of the mapping) or black.
    private func startShadow(copying frame: UnsafeMutableRawPointer?) {
        shadowStride = MemoryDisplay.packedStride(width: width, format: format)
        let shadow = UnsafeMutableRawPointer.allocate(byteCount: shadowStride * height, alignment: 64)
        memset(shadow, 0, shadowStride * height)
        if let frame {
            let row = width * format.bytesPerPixel
            for y in 0..<height { memcpy(shadow + y * shadowStride, frame + y * stride, row) }
        }
        self.shadow = shadow
        visibleOffset = currentOffset()
        pages = BufferDamage(count: 1, screen: pages.screen)
    }

    /// Copies `area` of the shadow into the mapping, row by row.
    private func copy(_ area: Rect, from shadow: UnsafeMutableRawPointer) {
        let area = area.intersection(pages.screen)
        guard !area.isEmpty else { return }
        let bpp = format.bytesPerPixel
        let bytes = area.width * bpp
        for y in area.y..<area.maxY {
            memcpy(map + visibleOffset + y * stride + area.x * bpp, shadow + y * shadowStride + area.x * bpp, bytes)
        }
    }
}

extension FBPixelLayout {
    init(_ variable: fb_var_screeninfo) {
        func field(_ f: fb_bitfield) -> Field {
            Field(offset: Int(f.offset), length: Int(f.length), msbRight: f.msb_right != 0)
        }
        self.init(
            bitsPerPixel: Int(variable.bits_per_pixel), red: field(variable.red), green: field(variable.green),
            blue: field(variable.blue), transp: field(variable.transp))
    }
}
