import GaugeDisplay
import GaugeRender
import Testing

@Suite("Questions on screen")
struct EntryTests {
    private func asking(_ field: ScreenModel.Entry.Field, prompt: String) -> ScreenModel {
        var m = model(42, message: "Unlocking disks", title: "Gauge")
        m.entry = ScreenModel.Entry(prompt: prompt, field: field)
        return m
    }

    @Test("a password: the prompt above a field with one bullet per character, above the title; bar and message stay")
    func password() throws {
        let screen = try Screen(width: 800, height: 480)
        screen.render(asking(.hidden(count: 6), prompt: "Passphrase for disk root"))
        try expectGolden(screen.image, "800x480-password")
    }

    @Test("a question: the answer echoed in the field, in the middle of the screen above the title")
    func question() throws {
        let screen = try Screen(width: 1024, height: 768)
        screen.render(asking(.shown("yes please"), prompt: "Continue the update?"))
        let entry = screen.scene.entryRect
        #expect(entry.maxY <= screen.scene.titleRect.y && entry.y < 384 && entry.maxY > 384, "\(entry)")
        try expectGolden(screen.image, "1024x768-question")
    }

    @Test("the box style: the question under the panel")
    func box() throws {
        var theme = Theme()
        theme.style = .box
        let screen = try Screen(width: 800, height: 480, theme: theme)
        screen.render(asking(.hidden(count: 3), prompt: "Passphrase"))
        #expect(screen.scene.entryRect.y > screen.scene.messageRect.maxY)
        try expectGolden(screen.image, "800x480-box-password")
    }

    @Test("typing redraws the field alone; answering restores the frame without a question")
    func damage() throws {
        let screen = try Screen(width: 800, height: 480)
        let plain = model(42, message: "Unlocking disks", title: "Gauge")
        screen.render(plain)
        let before = screen.image
        let damage = screen.render(asking(.hidden(count: 1), prompt: "Passphrase"))
        let entry = screen.scene.entryRect
        #expect(!entry.isEmpty)
        for other in [screen.scene.messageRect, screen.scene.barRect, screen.scene.titleRect] {
            #expect(!entry.intersects(other), "the question covers nothing of the screen's")
        }
        #expect(damage == entry)
        let typed = screen.render(asking(.hidden(count: 2), prompt: "Passphrase"))
        #expect(!typed.isEmpty && entry.contains(x: typed.x, y: typed.y) && typed.maxY <= entry.maxY)
        screen.render(plain)
        #expect(screen.scene.entryRect.isEmpty)
        #expect(difference(screen.image, before, tolerance: 0).count == 0)
    }

    @Test("Caps Lock during a password: a notice under the field, in the fill's colour; none for an echoed answer")
    func capsLock() throws {
        let screen = try Screen(width: 1280, height: 1024)
        var plain = asking(.hidden(count: 4), prompt: "Please unlock disk cryptroot")
        screen.render(plain)
        let without = screen.image
        let field = screen.scene.entryRect
        plain.entry?.capsLock = true
        screen.render(plain)
        let with = screen.image
        let notice = screen.scene.entryRect
        #expect(notice.y == field.y && notice.maxY > field.maxY, "the notice goes under the field")
        for other in [screen.scene.messageRect, screen.scene.barRect, screen.scene.titleRect] {
            #expect(!notice.intersects(other), "the notice covers nothing of the screen's")
        }
        let changed = difference(with, without, tolerance: 0)
        #expect(changed.count > 200 && changed.box.y >= field.maxY, "only below the field: \(changed)")
        // Lit in the fill's colour (orange: red well above blue).
        var orange = 0
        for y in changed.box.y..<changed.box.maxY {
            for x in changed.box.x..<changed.box.maxX {
                let p = with.pixel(x: x, y: y)
                if p.r > 150, Int(p.r) > Int(p.b) + 80 { orange += 1 }
            }
        }
        #expect(orange > 50, "the notice is drawn in the fill's colour")
        try expectGolden(with, "1280x1024-password-caps-lock")
        var question = asking(.shown("yes"), prompt: "Continue?")
        screen.render(question)
        let echoed = screen.image
        question.entry?.capsLock = true
        screen.render(question)
        #expect(difference(screen.image, echoed, tolerance: 0).count == 0, "an echoed answer shows what is typed already")
    }
}
