import GaugeDisplay
import Testing
import GaugeSystem

/// A kernel uevent datagram as the netlink socket delivers it.
func kernelUevent(_ header: String, _ fields: [String]) -> [UInt8] {
    ([header] + fields).flatMap { Array($0.utf8) + [UInt8(0)] }
}

@Suite("Device events")
struct DeviceEventTests {
    private func parse(_ bytes: [UInt8]) -> DeviceEvent? {
        bytes.withUnsafeBytes { DeviceEvent.parseKernelUevent($0) }
    }

    @Test func aDRMCardArriving() {
        let event = parse(kernelUevent("add@/devices/pci0000:00/0000:00:02.0/drm/card0", [
            "ACTION=add", "DEVPATH=/devices/pci0000:00/0000:00:02.0/drm/card0", "SUBSYSTEM=drm",
            "MAJOR=226", "MINOR=0", "DEVNAME=dri/card0", "DEVTYPE=drm_minor", "SEQNUM=1612",
        ]))
        #expect(event == DeviceEvent(action: .add, subsystem: "drm", devname: "dri/card0", number: DeviceNumber(major: 226, minor: 0)))
        #expect(event?.path == "/dev/dri/card0")
        #expect(event?.isDisplayDevice == true)
    }

    @Test func efifbGoing() {
        let event = parse(kernelUevent("remove@/devices/platform/efi-framebuffer.0/graphics/fb0", [
            "ACTION=remove", "DEVPATH=/devices/platform/efi-framebuffer.0/graphics/fb0", "SUBSYSTEM=graphics",
            "MAJOR=29", "MINOR=0", "DEVNAME=fb0", "SEQNUM=1609",
        ]))
        #expect(event == DeviceEvent(action: .remove, subsystem: "graphics", devname: "fb0", number: DeviceNumber(major: 29, minor: 0)))
        #expect(event?.isDisplayDevice == true)
    }

    @Test func connectorsRenderNodesAndOtherSubsystemsAreNotDisplays() {
        let connector = parse(kernelUevent("add@/devices/pci0000:00/0000:00:02.0/drm/card0/card0-Virtual-1", [
            "ACTION=add", "SUBSYSTEM=drm", "SEQNUM=1613",
        ]))
        #expect(connector != nil && connector?.isDisplayDevice == false)
        let render = parse(kernelUevent("add@/devices/x/drm/renderD128", ["ACTION=add", "SUBSYSTEM=drm", "DEVNAME=dri/renderD128"]))
        #expect(render?.isDisplayDevice == false)
        let input = parse(kernelUevent("add@/devices/x/input/input3/event3", ["ACTION=add", "SUBSYSTEM=input", "DEVNAME=input/event3"]))
        #expect(input?.isDisplayDevice == false)
        let bind = parse(kernelUevent("bind@/devices/pci0000:00/0000:00:02.0", ["ACTION=bind", "SUBSYSTEM=pci"]))
        #expect(bind?.action == .other)
    }

    @Test func garbageAndUdevsOwnMessagesAreNotKernelEvents() {
        #expect(parse([]) == nil)
        #expect(parse(Array("libudev".utf8) + [0, 0xfe, 0xed, 0xca, 0xfe]) == nil)
        #expect(parse(kernelUevent("ACTION=add", ["SUBSYSTEM=drm"])) == nil)
        #expect(parse(kernelUevent("add@/devices/x", [])) == nil)          // no ACTION or SUBSYSTEM
        #expect(parse([UInt8](repeating: 0xff, count: 5000)) == nil)
        // Invalid UTF-8 and a missing final NUL are read, not trusted.
        let odd = Array("change@/x\0ACTION=change\0SUBSYSTEM=graphics\0DEVNAME=fb\u{1}".utf8) + [0xc3]
        #expect(parse(odd)?.devname == "fb\u{1}\u{FFFD}")
    }

    @Test func onlyTheFirstMaximumLengthBytesAreRead() {
        let fields = ["ACTION=add", "SUBSYSTEM=drm", "DEVNAME=dri/card0"]
        let padding = "X=" + String(repeating: "y", count: DeviceEvent.maximumLength)
        #expect(parse(kernelUevent("add@/x", fields + [padding]))?.devname == "dri/card0")
        // A field past the limit is not seen.
        #expect(parse(kernelUevent("add@/x", ["ACTION=add", "SUBSYSTEM=drm", padding, "DEVNAME=dri/card0"]))?.devname == nil)
    }

    @Test func udevPropertiesGiveTheSameEvent() {
        let event = DeviceEvent.make([
            "ACTION": "add", "SUBSYSTEM": "drm", "DEVNAME": "/dev/dri/card1", "MAJOR": "226", "MINOR": "1",
        ])
        #expect(event == DeviceEvent(action: .add, subsystem: "drm", devname: "dri/card1", number: DeviceNumber(major: 226, minor: 1)))
        #expect(DeviceEvent.make(["SUBSYSTEM": "drm"]) == nil)
        #expect(DeviceEvent.make(["ACTION": "add", "SUBSYSTEM": "drm", "MAJOR": "x", "MINOR": "1"])?.number == nil)
    }

    @Test func deviceNumbersDecodeGlibcsEncoding() {
        // makedev(226, 0) and makedev(29, 3), makedev(4095, 1048575)
        #expect(DeviceNumber(0xE200) == DeviceNumber(major: 226, minor: 0))
        #expect(DeviceNumber(0x1D03) == DeviceNumber(major: 29, minor: 3))
        #expect(DeviceNumber(0xFFFF_FFFF) == DeviceNumber(major: 4095, minor: 0xFFFFF))
    }
}

@Suite("Device event bursts")
struct DeviceEventSummaryTests {
    let fb0 = DeviceNumber(major: 29, minor: 0)
    let card0 = DeviceNumber(major: 226, minor: 0)

    @Test func efifbHandedOverToADRMDriverIsOneChangeAndTheCurrentDeviceRemoved() {
        // What bochs-drm loading under UEFI sends, in order.
        let burst = [
            DeviceEvent(action: .remove, subsystem: "graphics", devname: "fb0", number: fb0),
            DeviceEvent(action: .add, subsystem: "drm", devname: "dri/card0", number: card0),
            DeviceEvent(action: .add, subsystem: "drm", devname: nil),
            DeviceEvent(action: .add, subsystem: "graphics", devname: "fb0", number: fb0),
        ]
        #expect(DeviceEventSummary.of(burst, currentPath: "/dev/fb0", currentNumber: fb0)
            == DeviceEventSummary(displaysChanged: true, currentRemoved: true, framebufferAdded: true))
        // In the other order (the card first), the same.
        #expect(DeviceEventSummary.of(Array(burst.reversed()), currentPath: "/dev/fb0", currentNumber: fb0)
            == DeviceEventSummary(displaysChanged: true, currentRemoved: true, framebufferAdded: true))
        // On the card, the framebuffer's comings and goings are a change, and its own fbdev
        // an added framebuffer (the card shows its picture again); a card added is not.
        #expect(DeviceEventSummary.of(burst, currentPath: "/dev/dri/card0", currentNumber: card0)
            == DeviceEventSummary(displaysChanged: true, currentRemoved: false, framebufferAdded: true))
        #expect(!DeviceEventSummary.of(Array(burst.prefix(3)), currentPath: "/dev/fb0", currentNumber: fb0).framebufferAdded)
    }

    @Test func theNumberDecidesWhenBothAreKnownThePathOtherwise() {
        let otherFB0 = DeviceEvent(action: .remove, subsystem: "graphics", devname: "fb0", number: DeviceNumber(major: 29, minor: 1))
        #expect(!DeviceEventSummary.of([otherFB0], currentPath: "/dev/fb0", currentNumber: fb0).currentRemoved)
        let noNumber = DeviceEvent(action: .remove, subsystem: "graphics", devname: "fb0")
        #expect(DeviceEventSummary.of([noNumber], currentPath: "/dev/fb0", currentNumber: fb0).currentRemoved)
        #expect(!DeviceEventSummary.of([noNumber], currentPath: "/dev/fb1", currentNumber: nil).currentRemoved)
        #expect(!DeviceEventSummary.of([noNumber], currentPath: nil, currentNumber: nil).currentRemoved)
    }

    @Test func eventsOfOtherDevicesChangeNothing() {
        let events = [
            DeviceEvent(action: .add, subsystem: "input", devname: "input/event3"),
            DeviceEvent(action: .remove, subsystem: "drm", devname: "dri/renderD128"),
            DeviceEvent(action: .other, subsystem: "drm", devname: "dri/card0", number: card0),
        ]
        #expect(DeviceEventSummary.of(events, currentPath: "/dev/dri/card0", currentNumber: card0) == DeviceEventSummary())
        #expect(DeviceEventSummary.of([], currentPath: nil, currentNumber: nil) == DeviceEventSummary())
        let change = DeviceEvent(action: .change, subsystem: "drm", devname: "dri/card0", number: card0)
        #expect(DeviceEventSummary.of([change], currentPath: "/dev/dri/card0", currentNumber: card0)
            == DeviceEventSummary(displaysChanged: true, currentRemoved: false))
    }
}
