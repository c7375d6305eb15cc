import Testing

@testable import GaugeSystem

/// The one reader of digits-only fields.
@Suite struct DecimalDigitsTests {
    @Test func readsWholeNumbersOnly() {
        #expect(DecimalDigits.value("0") == 0)
        #expect(DecimalDigits.value("007") == 7)
        #expect(DecimalDigits.value("999999999999999999") == 999_999_999_999_999_999)
        #expect(DecimalDigits.value("100", maxDigits: 3) == 100)
        for text in ["", "+1", "-1", "1.0", " 1", "1 ", "1e3", "0x1", "٣", "1000"] {
            #expect(DecimalDigits.value(text, maxDigits: 3) == nil, "\(text)")
        }
        // 19 digits may not fit an Int64: never read, whatever maxDigits says.
        #expect(DecimalDigits.value("9999999999999999999", maxDigits: 30) == nil)
    }

    @Test func aPidFilesTextIsItsDigitsBeforeTheNewline() {
        #expect(PIDFile.parsePID(Array("1234\n".utf8)) == 1234)
        #expect(PIDFile.parsePID(Array("2147483647".utf8)) == Int32.max)
        for text in ["", "\n", "0\n", "-1\n", "12a\n", " 12", "2147483648\n", "12345678901"] {
            #expect(PIDFile.parsePID(Array(text.utf8)) == nil, "\(text)")
        }
    }
}
