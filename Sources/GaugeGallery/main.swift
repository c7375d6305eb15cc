import GaugeDisplay
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

let entries: [Entry] = [
    Entry(name: "default", caption: "Default look at 42%", model: progress(42)),
    Entry(name: "flat-blue", caption: "flat = true, fill_color = #2f7fdf", theme: { $0.flat = true; $0.fillColor = Color(parsing: "#2f7fdf")! }, model: progress(67)),
    Entry(name: "label-above", caption: "label_position = above, label_format = Step {value} of {max}",
          theme: { $0.labelPosition = .above; $0.labelFormat = "Step {value} of {max}" }, model: progress(30)),
    Entry(name: "label-right", caption: "label_position = right", theme: { $0.labelPosition = .right }, model: progress(80)),
    Entry(name: "indeterminate", caption: "mode indeterminate: barber pole", model: { m in m.mode = .indeterminate; m.message = "Waiting for the network"; m.title = "Starting" }),
    Entry(name: "circles", caption: "indeterminate_style = circles", theme: { $0.indeterminateStyle = .circles }, model: { m in m.mode = .indeterminate; m.message = "Waiting for the network"; m.title = "Starting" }),
    Entry(name: "ring", caption: "indeterminate_style = ring", time: 0.5, theme: { $0.indeterminateStyle = .ring }, model: { m in m.mode = .indeterminate; m.message = "Checking file systems"; m.title = "Starting" }),
    Entry(name: "box", caption: "style = box, cover_color = #00000099", theme: { $0.style = .box; $0.coverColor = Color.black.withAlpha(0.6); $0.background = Color(parsing: "#334d80")! }, model: progress(30, "Copying files", title: "Updating firmware")),
    Entry(name: "logo", caption: "logo = data/gauge-logo.png", theme: { $0.logo = "data/gauge-logo.png" }, model: progress(42, "Starting services", title: "")),
    Entry(name: "success", caption: "state success", model: { m in m.setTarget(100); m.state = .success; m.message = "Installed"; m.title = "Done" }),
    Entry(name: "failure", caption: "state failure", model: { m in m.setTarget(63); m.state = .failure; m.message = "No space left on device"; m.title = "Update failed" }),
    Entry(name: "cjk", caption: "UTF-8 message with per-glyph font fallback", model: progress(55, "正在安装软件包 · Größe · インストール中")),
    Entry(name: "scale2", caption: "scale 2 (HiDPI) at 1280x720", width: 1280, height: 720, scale: 2, model: progress(42)),
    Entry(name: "rotate90", caption: "--rotate 90 on a 360x640 portrait panel", width: 640, height: 360, rotation: .quarter, model: progress(42)),
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
