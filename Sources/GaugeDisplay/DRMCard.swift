import CDRM
import CGaugeLinux
import GaugeRender
import GaugeSystem

/// What a DRM card offers, read through libdrm with its descriptor: its connectors, modes,
/// encoders and properties, its driver's name, whether it has vblank interrupts, and dumb
/// buffers made and destroyed. `DRMDisplay` plans its heads and its buffers from these.
extension DRMDisplay {
    /// Whether the driver has no vblank events (no page flips to wait for: one buffer
    /// per head, drawn in place).
    static func lacksVBlank(fd: Int32, crtc: UInt32) -> Bool {
        var sequence: UInt64 = 0
        var nanoseconds: UInt64 = 0
        return drmCrtcGetSequence(fd, crtc, &sequence, &nanoseconds) != 0 && errno == EOPNOTSUPP
    }

    /// Checks the card has dumb buffers and makes this process its DRM master.
    static func claim(fd: Int32, path: String) throws(DisplayError) {
        var capability: UInt64 = 0
        guard drmGetCap(fd, UInt64(DRM_CAP_DUMB_BUFFER), &capability) == 0, capability != 0 else {
            throw DisplayError("drm \(path): no dumb buffer support")
        }
        // Root opening a card nobody holds is master already; this fails when someone
        // else (a compositor, X, another splash) is.
        if drmSetMaster(fd) != 0 {
            throw DisplayError("drm \(path): cannot become DRM master (\(errnoText())): the card is in use")
        }
    }

    /// The card's connectors (with their modes and physical sizes) and encoders, as
    /// `DRMHeadPlan` takes them.
    static func probe(fd: Int32, resources: drmModeRes) -> (
        connectors: [DRMHeadPlan.Connector], encoders: [DRMHeadPlan.Encoder], modes: [UInt32: [drmModeModeInfo]],
        millimetres: [UInt32: (Int, Int)]
    ) {
        var connectors: [DRMHeadPlan.Connector] = []
        var modeInfos: [UInt32: [drmModeModeInfo]] = [:]
        var millimetres: [UInt32: (Int, Int)] = [:]
        for index in 0..<Int(resources.count_connectors) {
            guard let connector = Self.connector(fd: fd, id: resources.connectors[index]) else { continue }
            defer { drmModeFreeConnector(connector) }
            let c = connector.pointee
            let modes = Array(UnsafeBufferPointer(start: c.modes, count: Int(c.count_modes)))
            modeInfos[c.connector_id] = modes
            millimetres[c.connector_id] = (Int(c.mmWidth), Int(c.mmHeight))
            let typeName = drmModeGetConnectorTypeName(c.connector_type).map { String(cString: $0) } ?? "Unknown"
            connectors.append(DRMHeadPlan.Connector(
                id: c.connector_id,
                name: "\(typeName)-\(c.connector_type_id)",
                connected: c.connection == DRM_MODE_CONNECTED,
                modes: modes.map {
                    DRMHeadPlan.Mode(
                        width: Int($0.hdisplay), height: Int($0.vdisplay), refresh: Int($0.vrefresh),
                        preferred: $0.type & UInt32(DRM_MODE_TYPE_PREFERRED) != 0,
                        userDefined: $0.type & UInt32(DRM_MODE_TYPE_USERDEF) != 0)
                },
                currentEncoder: c.encoder_id,
                encoders: Array(UnsafeBufferPointer(start: c.encoders, count: Int(c.count_encoders))),
                nonDesktop: Self.isNonDesktop(fd: fd, connector: c.connector_id)))
        }
        var encoders: [DRMHeadPlan.Encoder] = []
        for index in 0..<Int(resources.count_encoders) {
            guard let encoder = drmModeGetEncoder(fd, resources.encoders[index]) else { continue }
            encoders.append(DRMHeadPlan.Encoder(
                id: encoder.pointee.encoder_id, crtc: encoder.pointee.crtc_id,
                possibleCrtcs: encoder.pointee.possible_crtcs))
            drmModeFreeEncoder(encoder)
        }
        return (connectors, encoders, modeInfos, millimetres)
    }

    /// `count` buffers for each mode, in the first pixel format the card takes (its
    /// preferred depth first); the format.
    static func makeBuffers(
        fd: Int32, path: String, driver: String, modes: [drmModeModeInfo], count bufferCount: Int, into made: inout [[DumbBuffer]]
    ) throws(DisplayError) -> PixelFormat {
        var preferredDepth: UInt64 = 0
        _ = drmGetCap(fd, UInt64(DRM_CAP_DUMB_PREFERRED_DEPTH), &preferredDepth)
        var chosen: PixelFormat?
        var refusals: [String] = []
        for candidate in formatOrder(preferredDepth: Int(preferredDepth)) {
            do throws(DisplayError) {
                for mode in modes {
                    made.append(try (0..<bufferCount).map { _ throws(DisplayError) in
                        try makeBuffer(fd: fd, width: Int(mode.hdisplay), height: Int(mode.vdisplay), format: candidate)
                    })
                }
                chosen = candidate
                break
            } catch {
                for buffer in made.joined() { destroy(buffer, fd: fd) }
                made = []
                refusals.append(error.message)
            }
        }
        guard let chosen else {
            throw DisplayError("drm \(path) (\(driver)): no dumb framebuffer: \(refusals.joined(separator: "; "))")
        }
        return chosen
    }

    static func makeBuffer(fd: Int32, width: Int, height: Int, format: PixelFormat) throws(DisplayError) -> DumbBuffer {
        guard let fourcc = fourcc(format) else { throw DisplayError("\(format.rawValue) has no DRM format") }
        var buffer = DumbBuffer()
        var pitch: UInt32 = 0
        var size: UInt64 = 0
        guard drmModeCreateDumbBuffer(
            fd, UInt32(width), UInt32(height), UInt32(format.bytesPerPixel * 8), 0, &buffer.handle, &pitch, &size) == 0
        else { throw DisplayError("\(format.rawValue) dumb buffer: \(errnoText())") }
        buffer.pitch = Int(pitch)
        // The kernel's 64-bit size, into a 32-bit Int on armv7: refused, not trapped on.
        guard let bytes = Int(exactly: size) else {
            destroy(buffer, fd: fd)
            throw DisplayError("\(format.rawValue) dumb buffer of \(size) bytes: more than this process can map")
        }
        buffer.size = bytes
        let handles: [UInt32] = [buffer.handle, 0, 0, 0]
        let pitches: [UInt32] = [pitch, 0, 0, 0]
        let offsets: [UInt32] = [0, 0, 0, 0]
        guard drmModeAddFB2(fd, UInt32(width), UInt32(height), fourcc, handles, pitches, offsets, &buffer.fb, 0) == 0 else {
            let why = errnoText()
            destroy(buffer, fd: fd)
            throw DisplayError("\(format.rawValue) framebuffer: \(why)")
        }
        var offset: UInt64 = 0
        guard drmModeMapDumbBuffer(fd, buffer.handle, &offset) == 0 else {
            let why = errnoText()
            destroy(buffer, fd: fd)
            throw DisplayError("\(format.rawValue) buffer map: \(why)")
        }
        let map: UnsafeMutableRawPointer
        do throws(SystemError) {
            map = try Syscall.mapShared(fd, length: buffer.size, offset: Int64(offset))
        } catch {
            destroy(buffer, fd: fd)
            throw DisplayError("\(format.rawValue) buffer map: \(errnoText(error.errno))")
        }
        // Not cleared: no buffer is shown before a frame has drawn all of it (the first
        // frame sets the mode, and every buffer starts stale over the whole screen).
        buffer.map = map
        return buffer
    }

    /// The connector as the kernel last probed it when that says connected with modes,
    /// which costs no probe (the fbdev emulation probed it when the driver came up);
    /// otherwise a full probe, so a screen is never missed for want of one.
    static func connector(fd: Int32, id: UInt32) -> drmModeConnectorPtr? {
        if let current = drmModeGetConnectorCurrent(fd, id) {
            let c = current.pointee
            if c.connection == DRM_MODE_CONNECTED, c.count_modes > 0 { return current }
            drmModeFreeConnector(current)
        }
        return drmModeGetConnector(fd, id)
    }

    static func destroy(_ buffer: DumbBuffer, fd: Int32, removeFramebuffer: Bool = true) {
        if let map = buffer.map { Syscall.unmap(map, length: buffer.size) }
        if buffer.fb != 0, removeFramebuffer { _ = drmModeRmFB(fd, buffer.fb) }
        if buffer.handle != 0 { _ = drmModeDestroyDumbBuffer(fd, buffer.handle) }
    }

    /// The connector's "panel orientation" property (set by the kernel from firmware quirks
    /// or `video=CONNECTOR:panel_orientation=...`), as the turn that shows the picture upright.
    static func panelOrientation(fd: Int32, connector: UInt32) -> Rotation {
        guard let (prop, value) = property(fd: fd, connector: connector, named: "panel orientation") else { return .none }
        defer { drmModeFreeProperty(prop) }
        for e in 0..<Int(prop.pointee.count_enums) where prop.pointee.enums[e].value == value {
            let label = withUnsafeBytes(of: prop.pointee.enums[e].name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            return Rotation(panelOrientation: label) ?? .none
        }
        return .none
    }

    /// The connector's "non-desktop" property is set: a VR headset, which a desktop leaves alone.
    static func isNonDesktop(fd: Int32, connector: UInt32) -> Bool {
        guard let (prop, value) = property(fd: fd, connector: connector, named: "non-desktop") else { return false }
        drmModeFreeProperty(prop)
        return value != 0
    }

    /// The connector's property called `name` with its value; the caller frees it.
    static func property(fd: Int32, connector: UInt32, named name: String) -> (drmModePropertyPtr, UInt64)? {
        guard let props = drmModeObjectGetProperties(fd, connector, UInt32(DRM_MODE_OBJECT_CONNECTOR)) else { return nil }
        defer { drmModeFreeObjectProperties(props) }
        for index in 0..<Int(props.pointee.count_props) {
            guard let prop = drmModeGetProperty(fd, props.pointee.props[index]) else { continue }
            let label = withUnsafeBytes(of: prop.pointee.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if label == name { return (prop, props.pointee.prop_values[index]) }
            drmModeFreeProperty(prop)
        }
        return nil
    }

    static func driverName(fd: Int32) -> String {
        guard let version = drmGetVersion(fd) else { return "unknown" }
        defer { drmFreeVersion(version) }
        guard let name = version.pointee.name else { return "unknown" }
        return String(cString: name)
    }

    static func modeText(_ mode: drmModeModeInfo) -> String {
        "\(mode.hdisplay)x\(mode.vdisplay)@\(mode.vrefresh)"
    }
}
