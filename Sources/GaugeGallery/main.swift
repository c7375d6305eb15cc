import GaugeDisplay
import GaugeProtocol
import GaugeRender

// Renders each look and state into PNGs for the README: swift run GaugeGallery [DIR]

let directory = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "docs/gallery"

struct Entry {
    var name: String
    var caption: String
    var width = 640
    var height = 360
    var scale = 1.0
    var rotation = Rotation.none
    var time = 0.3
    var theme: (inout Theme) -> Void = { _ in }
    var model: (inout ScreenModel) -> Void
}

func progress(_ value: Double, _ message: String = "Installing packages", title: String = "Installing") -> (inout ScreenModel) -> Void {
    { m in
        m.setTarget(value)
        m.message = message
        m.title = title
    }
}

/// Real panel sizes: a 4.3" board panel (480x272), a 7" one (800x480), a 1080p monitor,
/// and a portrait 8" tablet at scale 2; the sample theme's logo wherever there is room.
let logo: (inout Theme) -> Void = { $0.logo = "data/gauge-logo.png" }
func with(_ a: @escaping (inout Theme) -> Void, _ b: @escaping (inout Theme) -> Void) -> (inout Theme) -> Void {
    { a(&$0); b(&$0) }
}
func unknownLength(_ message: String) -> (inout ScreenModel) -> Void {
    { m in m.mode = .indeterminate; m.message = message; m.title = "Starting Gauge OS" }
}

let entries: [Entry] = [
    Entry(name: "default", caption: "1920x1080, default look at 42%, with a logo", width: 1920, height: 1080, theme: logo,
          model: progress(42, "Unpacking base system", title: "Installing Gauge OS")),
    Entry(name: "flat-blue", caption: "800x480, flat = true, fill_color = #2f7fdf", width: 800, height: 480,
          theme: with(logo, { $0.flat = true; $0.fillColor = Color(parsing: "#2f7fdf")! }), model: progress(67, "Configuring packages", title: "Installing Gauge OS")),
    Entry(name: "label-above", caption: "800x480, label_position = above, label_format = Step {value} of {max}", width: 800, height: 480,
          theme: with(logo, { $0.labelPosition = .above; $0.labelFormat = "Step {value} of {max}" }), model: progress(30, "Copying files", title: "Updating")),
    Entry(name: "label-right", caption: "480x272, label_position = right", width: 480, height: 272,
          theme: with(logo, { $0.labelPosition = .right }), model: progress(80, "Writing the new system", title: "Updating")),
    Entry(name: "indeterminate", caption: "800x480, mode indeterminate: barber pole", width: 800, height: 480, theme: logo,
          model: unknownLength("Waiting for the network")),
    Entry(name: "circles", caption: "480x272, indeterminate_style = circles", width: 480, height: 272, time: 0.5,
          theme: with(logo, { $0.indeterminateStyle = .circles }), model: unknownLength("Waiting for the network")),
    Entry(name: "ring", caption: "1920x1080, indeterminate_style = ring", width: 1920, height: 1080, time: 0.35,
          theme: with(logo, { $0.indeterminateStyle = .ring }), model: unknownLength("Checking file systems")),
    Entry(name: "box", caption: "800x480, style = box, cover_color = #00000099", width: 800, height: 480,
          theme: with(logo, { $0.style = .box; $0.coverColor = Color.black.withAlpha(0.6); $0.background = Color(parsing: "#334d80")! }),
          model: progress(30, "Copying files\u{2028}firmware.bin, 12 of 40 MB", title: "Updating firmware")),
    Entry(name: "logo", caption: "480x272, a logo above the bar", width: 480, height: 272, theme: logo,
          model: progress(42, "Starting services", title: "")),
    Entry(name: "question", caption: "800x480, a passphrase asked (plymouth ask-for-password)", width: 800, height: 480, theme: logo,
          model: { m in
              m.setTarget(20); m.title = "Starting Gauge OS"; m.message = "Unlocking disks"
              m.entry = ScreenModel.Entry(prompt: "Passphrase for /dev/nvme0n1p3:", field: .hidden(count: 9))
          }),
    Entry(name: "success", caption: "1920x1080, state success", width: 1920, height: 1080, theme: logo,
          model: { m in m.setTarget(100); m.state = .success; m.message = "Installed"; m.title = "Gauge OS is ready" }),
    Entry(name: "failure", caption: "800x480, state failure", width: 800, height: 480, theme: logo,
          model: { m in m.setTarget(63); m.state = .failure; m.message = "No space left on device"; m.title = "Update failed" }),
    Entry(name: "failure-screen", caption: "800x480, gaugectl failure with an installer's log", width: 800, height: 480, theme: logo,
          model: { m in
              m.setTarget(63); m.state = .failure; m.message = "Installing updates"; m.title = "Gauge OS"
              var report = FailureReport(title: "Update failed")
              report.summary = "dpkg could not configure linux-image-6.1.0-28-amd64"
              for line in [
                  "Setting up linux-image-6.1.0-28-amd64 (6.1.119-1) ...", "update-initramfs: Generating /boot/initrd.img-6.1.0-28-amd64",
                  "cp: error writing '/boot/initrd.img-6.1.0-28-amd64.new': No space left on device",
                  "E: mkinitramfs failure cpio 141 gzip 1", "update-initramfs: failed for /boot/initrd.img-6.1.0-28-amd64 with 1.",
                  "dpkg: error processing package linux-image-6.1.0-28-amd64 (--configure):",
                  " installed linux-image-6.1.0-28-amd64 package post-installation script subprocess returned error exit status 1",
                  "E: Sub-process /usr/bin/dpkg returned an error code (1)",
              ] { report.append(line) }
              m.failure = report
          }),
    Entry(name: "boot-failed", caption: "1280x800, a failed boot: what failed, the journal, and a QR code of it", width: 1280,
          height: 800, theme: logo,
          model: { m in
              m.setTarget(58); m.state = .failure; m.message = "Press Enter for a maintenance shell, or R to restart"
              var report = FailureReport(title: "This system could not start")
              report.summary = "Local File Systems \u{2190} /data \u{2190} /dev/disk/by-uuid/158f35fd-150d-40cd-a785-e33d5518e11a"
              report.bootID = "6d1f0c9e"
              for line in [
                  "[3.412] kernel: amd_pstate: the _CPC object is not present in SBIOS or ACPI disabled",
                  "[15.381] systemd[1]: Timed out waiting for device dev-disk-by\\x2duuid-158f35fd\\x2d150d\\x2d40cd\\x2da785\\x2de33d5518e11a.device - /dev/disk/by-uuid/158f35fd-150d-40cd-a785-e33d5518e11a.",
                  "[15.402] systemd[1]: Dependency failed for systemd-fsck@dev-disk-by\\x2duuid-158f35fd\\x2d150d\\x2d40cd\\x2da785\\x2de33d5518e11a.service - File System Check on /dev/disk/by-uuid/158f35fd-150d-40cd-a785-e33d5518e11a.",
                  "[15.471] systemd[1]: Dependency failed for data.mount - /data.",
                  "[15.521] systemd[1]: Dependency failed for local-fs.target - Local File Systems.",
              ] { report.append(line) }
              m.failure = report
          }),
    Entry(name: "cjk", caption: "800x480, UTF-8 message with per-glyph font fallback", width: 800, height: 480, theme: logo,
          model: progress(55, "正在安装软件包 · Größe · インストール中")),
    Entry(name: "scale2", caption: "1200x1920 portrait tablet at scale 2 (HiDPI)", width: 1200, height: 1920, scale: 2, theme: logo,
          model: progress(42, "Unpacking base system", title: "Installing Gauge OS")),
    Entry(name: "rotate90", caption: "--rotate 90 on a 272x480 panel mounted sideways", width: 480, height: 272, rotation: .quarter, theme: logo,
          model: progress(42, "Starting services", title: "Booting")),
]

var failed = false
for entry in entries {
    var theme = Theme()
    entry.theme(&theme)
    var model = ScreenModel()
    entry.model(&model)
    let sideways = entry.rotation == .quarter || entry.rotation == .threeQuarters
    do {
        let panel = try MemoryDisplay(width: sideways ? entry.height : entry.width, height: sideways ? entry.width : entry.height)
        let display: any Display = entry.rotation == .none ? panel : try RotatedDisplay(panel, rotation: entry.rotation)
        let scene = Scene(theme: theme, width: display.width, height: display.height, scale: entry.scale)
        guard let target = display.beginFrame() else { continue }
        scene.update(model, at: entry.time)
        scene.draw(into: target.buffer, clip: target.buffer.bounds)
        try display.present(damage: target.buffer.bounds)
        let path = "\(directory)/\(entry.name).png"
        try PNG.write(panel.framebuffer, to: path)
        print("\(path)\t\(entry.caption)")
    } catch {
        print("\(entry.name): \(error)")
        failed = true
    }
}
if failed { fatalError("gallery incomplete") }
