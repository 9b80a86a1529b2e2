import Foundation
import KioskTestSupport
import Testing

/// Every suite that runs only in the VM (`.enabled(if: VM.isEnabled, …)`) is in the Makefile's
/// `VM_TEST_FILTER`, which `make test-vm` (and CI) runs: a suite left out would be skipped
/// everywhere, and nothing would say so.
@Suite struct VMSuiteListTests {
    @Test func everyVMSuiteIsInTheFilterMakeTestVMRuns() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let makefile = try String(contentsOf: root.appendingPathComponent("Makefile"), encoding: .utf8)
        let line = try #require(makefile.split(separator: "\n").first { $0.hasPrefix("VM_TEST_FILTER ?= ") })
        let filter = line.dropFirst("VM_TEST_FILTER ?= ".count).split(separator: "|").map(String.init)
        var suites: [(target: String, name: String)] = []
        for target in ["KioskdEnforcementTests", "LinuxInputTests"] {
            let directory = root.appendingPathComponent("Tests").appendingPathComponent(target)
            for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".swift") {
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                guard text.contains("VM.isEnabled") else { continue }
                // The struct the VM-only @Suite attribute belongs to.
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
                for (index, line) in lines.enumerated() where line.contains("VM.isEnabled") {
                    if let declaration = lines[index...].first(where: { $0.hasPrefix("struct ") }) {
                        let name = declaration.dropFirst("struct ".count).prefix { $0.isLetter || $0.isNumber }
                        suites.append((target, String(name)))
                    }
                }
            }
        }
        #expect(suites.count >= 10, "\(suites)")
        for suite in suites {
            let covered = filter.contains(suite.target) || filter.contains("\(suite.target).\(suite.name)")
            #expect(covered, "\(suite.target).\(suite.name) runs only in the VM but is not in VM_TEST_FILTER")
        }
    }
}
