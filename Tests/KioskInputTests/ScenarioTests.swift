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

/// The broker's path: each scenario again, every input line's events fed as two runs cut at
/// each place in turn (`InputFilter.process(_:device:into:promptKeys:)`), so that frames are
/// judged both where they lie in a run and gathered across two: the same output as event by
/// event, line for line.
@Suite struct ScenarioRunTests {
    @Test(arguments: Scenario.all())
    func scenarioFedInRuns(_ scenario: Scenario) throws {
        let longest = scenario.text.split(separator: "\n").map { $0.split(separator: ",").count }.max() ?? 1
        for cut in 0...longest + 1 {
            let (actual, expected) = try scenario.run(cut: cut)
            #expect(
                actual == expected,
                "\(scenario.name), runs cut after \(cut) events\nactual:\n\(actual.joined(separator: "\n"))\nexpected:\n\(expected.joined(separator: "\n"))"
            )
        }
    }
}
