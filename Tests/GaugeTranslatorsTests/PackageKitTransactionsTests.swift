import GaugeProtocol
import Testing

@testable import GaugeTranslators

@Suite struct PackageKitTransactionsTests {
    @Test func aPackageWorkedOnIsNamedOnceWithTheWarning() {
        var transactions = PackageKitTransactions()
        #expect(transactions.package(info: 11, id: "gauge-demo-a;1.1;all;local") == .message("Updating gauge-demo-a 1.1. Do not turn off the computer."))
        #expect(transactions.package(info: 11, id: "gauge-demo-a;1.1;all;local") == nil, "the same line is not sent again")
        #expect(transactions.package(info: 12, id: "new-tool;2.0;amd64;") == .message("Installing new-tool 2.0. Do not turn off the computer."))
    }

    @Test func packagesNotWorkedOnAndMalformedIdsNameNothing() {
        var transactions = PackageKitTransactions()
        for info: UInt32 in [0, 1, 2, 5, 8, 18, 99] {
            #expect(transactions.package(info: info, id: "gauge-demo-a;1.1;all;local") == nil, "info \(info)")
        }
        #expect(transactions.package(info: 11, id: "") == nil)
        #expect(transactions.package(info: 11, id: ";1.1;all;") == nil)
        #expect(transactions.package(info: 13, id: "bare") == .message("Removing bare. Do not turn off the computer."))
        #expect(transactions.shown == "Removing bare. Do not turn off the computer.")
    }

    @Test func anErrorIsTheFailureNamingThePackageOnce() {
        var transactions = PackageKitTransactions()
        _ = transactions.package(info: 21, id: "gauge-demo-b;1.1;all;local")
        let details = "dpkg: error processing package gauge-demo-b (--configure):\n  post-installation script returned error exit status 1\u{1b}[0m"
        #expect(
            transactions.error(code: 6, details: details)
                == .state(.failure, message: "The update failed while preparing gauge-demo-b 1.1: dpkg: error processing package gauge-demo-b (--configure): post-installation script returned error exit status 1 [0m"))
        #expect(transactions.failed)
        #expect(transactions.error(code: 6, details: "again") == nil, "the first error is the one shown")
        #expect(transactions.package(info: 11, id: "gauge-demo-c;1.1;all;local") == nil, "the failure keeps the line")
    }

    @Test func anErrorBeforeAnyPackageGivesTheCodeAndLongDetailsAreCut() {
        var empty = PackageKitTransactions()
        #expect(empty.error(code: 30, details: " \n ") == .state(.failure, message: "The update failed: PackageKit's error 30"))
        var long = PackageKitTransactions()
        guard case .state(.failure, let message?) = long.error(code: 1, details: String(repeating: "x", count: 5000)) else {
            Issue.record("no failure")
            return
        }
        #expect(message == "The update failed: " + String(repeating: "x", count: 300) + "…")
    }
}
