import GaugeDisplay
import GaugeRender
import Testing

@Suite("Rotation")
struct RotationTests {
    @Test("a turned panel shows the upright frame turned, pixel for pixel, damage included",
          arguments: [Rotation.none, .quarter, .half, .threeQuarters])
    func rotated(rotation: Rotation) throws {
        let upright = try Screen(width: 320, height: 200, format: .rgb565)
        let sideways = rotation == .quarter || rotation == .threeQuarters
        let panel = try MemoryDisplay(width: sideways ? 200 : 320, height: sideways ? 320 : 200, format: .rgb565)
        let turned = try RotatedDisplay(panel, rotation: rotation)
        #expect(turned.width == 320 && turned.height == 200)
        let scene = Scene(theme: Theme(), width: 320, height: 200)
        var m = model(35, message: "Turned")
        for (i, t) in [0.0, 0.2, 0.45].enumerated() {
            if i == 2 { m.setTarget(70) }
            upright.render(m, at: t)
            let target = try #require(turned.beginFrame())
            let damage = scene.update(m, at: t)
            scene.draw(into: target.buffer, clip: damage)
            try turned.present(damage: damage)
            #expect(panel.lastDamage == turned.panelRect(damage))
            var mismatches = 0
            for y in 0..<200 {
                for x in 0..<320 {
                    let (px, py): (Int, Int) = switch rotation {
                    case .none: (x, y)
                    case .quarter: (199 - y, x)
                    case .half: (319 - x, 199 - y)
                    case .threeQuarters: (y, 319 - x)
                    }
                    if upright.display.pixel(x: x, y: y) != panel.pixel(x: px, y: py) { mismatches += 1 }
                }
            }
            #expect(mismatches == 0, "\(rotation) frame \(i): \(mismatches) pixels differ")
        }
    }
}
