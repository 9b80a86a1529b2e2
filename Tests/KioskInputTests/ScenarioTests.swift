import Testing

@testable import KioskInput

@Suite struct ScenarioTests {
    @Test func scenariosExist() {
        #expect(Scenario.all().count >= 10)
    }

    @Test(arguments: Scenario.all())
    func scenario(_ scenario: Scenario) throws {
        let (actual, expected) = try scenario.run()
        #expect(!expected.isEmpty || scenario.text.contains("--- output"), "scenario has no output section")
        #expect(
            actual == expected,
            "\(scenario.name)\nactual:\n\(actual.joined(separator: "\n"))\nexpected:\n\(expected.joined(separator: "\n"))"
        )
    }
}
