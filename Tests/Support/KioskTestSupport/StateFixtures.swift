import KioskCore

/// States built the same way every time, for tests and benchmarks.
public enum StateFixtures {
    /// A registry of `apps` apps with `restrictions` restrictions each, every third denied.
    public static func registry(apps: Int, restrictions: Int) -> Registry {
        var registry = Registry()
        for a in 0..<apps {
            let app = try! AppID("org.example.App\(a)")
            let declarations = (0..<restrictions).map { r in
                try! RestrictionDeclaration(
                    id: "org.example.App\(a).restriction\(r)",
                    title: "Restriction \(r) of app \(a)",
                    detail: "What restriction \(r) of app \(a) guards, in a sentence or two of detail text.")
            }
            // Owned by seven uids, as a state file may hold them (an admin registered them on their
            // behalf: a uid registering its own apps stops at 32).
            try! registry.declare(app, restrictions: declarations, uid: UInt32(1000 + a % 7), isAdmin: true)
            for r in stride(from: 0, to: restrictions, by: 3) {
                try! registry.setState(.deny, of: RestrictionID("org.example.App\(a).restriction\(r)"), in: app)
            }
        }
        return registry
    }

    /// The `sequence`-th state of the crash test: its size and contents change with the
    /// number, so a torn or mixed write cannot pass for any of them.
    public static func state(sequence: Int) -> KioskState {
        var state = KioskState()
        state.registry = registry(apps: 1 + sequence % 5, restrictions: 1 + (sequence * 7) % 40)
        let app = try! AppID("org.example.Sequence")
        try! state.registry.declare(
            app,
            restrictions: [
                try! RestrictionDeclaration(
                    id: "org.example.Sequence.n\(sequence)", title: "Sequence \(sequence)",
                    detail: String(repeating: "x", count: sequence % 300))
            ], uid: 0)
        for _ in 0..<(sequence % 9) {
            state.throttles.recordFailure(from: .uid(0), at: Timestamp(microseconds: Int64(sequence)))
        }
        return state
    }

    /// The sequence number `state` was built from, if it is one of ``state(sequence:)``.
    public static func sequence(of state: KioskState) -> Int? {
        guard let restrictions = try? state.registry.restrictions(of: AppID("org.example.Sequence")),
            let id = restrictions.first?.id.rawValue, let n = Int(id.dropFirst("org.example.Sequence.n".count))
        else {
            return nil
        }
        return self.state(sequence: n) == state ? n : nil
    }
}
