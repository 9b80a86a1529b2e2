import Foundation
import KioskAPI
import Testing

/// The state words a client reads off the bus: a newer kioskd's value it does not know is
/// `.unknown`, while the state file, which only kioskd writes, never holds one.
@Suite struct StateWireTests {
    @Test func knownSessionStatesDecodeAsThemselves() {
        for state in ["inactive", "active", "expired"] {
            #expect(SessionState(wire: state).rawValue == state)
        }
        for state in ["closed", "open", "checking"] {
            #expect(PromptState(wire: state).rawValue == state)
        }
    }

    @Test(arguments: ["paused", "", "Active", "cleaning", "unknown"])
    func aValueThisBuildDoesNotKnowIsUnknown(_ text: String) {
        #expect(SessionState(wire: text) == .unknown)
        #expect(PromptState(wire: text) == .unknown)
    }

    /// The state file decodes every state kioskd keeps, and refuses `unknown` and any other
    /// word, as it refused any word it did not know before there was an `unknown`.
    @Test func theStateFileKeepsOnlyKioskdsStates() throws {
        let decoder = JSONDecoder()
        for state in ["inactive", "active", "expired"] {
            #expect(try decoder.decode([SessionState].self, from: Data(#"["\#(state)"]"#.utf8)) == [SessionState(wire: state)])
        }
        for word in ["unknown", "paused"] {
            #expect(throws: DecodingError.self) {
                try decoder.decode([SessionState].self, from: Data(#"["\#(word)"]"#.utf8))
            }
        }
        let encoded = try JSONEncoder().encode([SessionState.expired])
        #expect(String(decoding: encoded, as: UTF8.self) == #"["expired"]"#)
    }
}
