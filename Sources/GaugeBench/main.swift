import GaugeRender
import Glibc

let w = 1920, h = 1080
let stride = w * 4
let mem = UnsafeMutableRawPointer.allocate(byteCount: stride * h, alignment: 64)
let fb = Framebuffer(base: mem, width: w, height: h, stride: stride, format: .xrgb8888)
let scene = Scene(theme: Theme(), width: w, height: h)
var model = ScreenModel()
model.setTarget(42)
model.title = "Installing Gauge"
model.message = "Unpacking base system — größe ç 日本語テキスト \u{10FFFF}"
scene.render(model, at: 0, into: fb)
try PNG.write(fb, to: CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "/tmp/gauge.png")
