import KioskAPI
import KioskCore

/// One web app's restriction states as the bridge last heard them from kioskd, in its
/// manifest's order, and the events that tell a page about them (docs/browsers.md § The bridge).
///
/// A state is `nil` until kioskd has said it (kioskd is not running, or does not know the app):
/// pages treat that as `deny`.
///
/// kioskd numbers nothing: its rule for each change exactly once is to compare a snapshot with
/// what was last seen (docs/dbus-api.md § Each change exactly once). The bridge hands that rule
/// to the page: an event's id *is* the states the page has seen once it has the event, in the
/// manifest's order, so after any restart — the bridge's, kioskd's or the browser's — the page's
/// `Last-Event-ID` says what it knows, and the bridge sends exactly what differs.
public struct AppMirror: Sendable, Equatable {
    public let manifest: WebAppManifest
    /// The states, one per manifest restriction, in its order.
    public private(set) var states: [RestrictionState?]
    /// The manifest's restriction ids to their index.
    private let index: [String: Int]
    /// The fingerprint of the app and its restriction ids, the first part of every event id: an
    /// id written for another list of restrictions is never read as this one's.
    public let fingerprint: String

    public init(manifest: WebAppManifest) {
        self.manifest = manifest
        states = Array(repeating: nil, count: manifest.restrictions.count)
        index = Dictionary(
            manifest.restrictions.enumerated().map { ($0.element.id.rawValue, $0.offset) },
            uniquingKeysWith: { a, _ in a })
        fingerprint = Self.fingerprint(app: manifest.app.rawValue, ids: manifest.restrictions.map(\.id.rawValue))
    }

    /// The mirror of `manifest`, a new version of this app's manifest (the bridge read the
    /// manifests again): each restriction both list keeps the state last heard, a new one is
    /// unknown until kioskd is read.
    public func carried(to manifest: WebAppManifest) -> AppMirror {
        var mirror = AppMirror(manifest: manifest)
        for (i, restriction) in manifest.restrictions.enumerated() {
            if let old = index[restriction.id.rawValue] { mirror.states[i] = states[old] }
        }
        return mirror
    }

    /// One restriction's new state.
    public struct Change: Sendable, Equatable {
        public var restriction: String
        public var state: RestrictionState?

        public init(restriction: String, state: RestrictionState?) {
            self.restriction = restriction
            self.state = state
        }
    }

    /// A `RestrictionStateChanged` of this app: the change when it is one (a restriction the
    /// manifest lists, with a state other than the one kept), else nil.
    public mutating func apply(restriction: String, state: RestrictionState?) -> Change? {
        guard let i = index[restriction], states[i] != state else { return nil }
        states[i] = state
        return Change(restriction: restriction, state: state)
    }

    /// A snapshot (kioskd's `ListRestrictions`, or nil when kioskd does not know the app): the
    /// changes it makes, in the manifest's order. A restriction kioskd does not list is unknown.
    public mutating func apply(snapshot: [String: RestrictionState]?) -> [Change] {
        manifest.restrictions.compactMap { apply(restriction: $0.id.rawValue, state: snapshot?[$0.id.rawValue]) }
    }

    // MARK: event ids

    /// The id of an event after which the page has seen `states`: `v1.FINGERPRINT.STATES`,
    /// one letter per restriction — `a` allow, `d` deny, `u` not known.
    public func eventID(_ states: [RestrictionState?]? = nil) -> String {
        "v1.\(fingerprint)." + String((states ?? self.states).map(Self.letter))
    }

    /// The states a `Last-Event-ID` says the page has seen, or nil when it is not this app's
    /// (another version, another manifest, or not one of ours).
    public func states(seenIn lastEventID: String) -> [RestrictionState?]? {
        let parts = lastEventID.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "v1", parts[1] == fingerprint, parts[2].count == states.count else {
            return nil
        }
        var seen: [RestrictionState?] = []
        for letter in parts[2] {
            switch letter {
            case "a": seen.append(.allow)
            case "d": seen.append(.deny)
            case "u": seen.append(nil)
            default: return nil
            }
        }
        return seen
    }

    private static func letter(_ state: RestrictionState?) -> Character {
        switch state {
        case .allow: "a"
        case .deny: "d"
        case nil: "u"
        }
    }

    /// FNV-1a (32 bits) of the app id and the restriction ids, as 8 hex digits.
    static func fingerprint(app: String, ids: [String]) -> String {
        var hash: UInt32 = 0x811C_9DC5
        for byte in ([app] + ids).joined(separator: "\n").utf8 {
            hash = (hash ^ UInt32(byte)) &* 0x0100_0193
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }

    // MARK: events

    /// What a new stream is sent first: the retry delay, then either the changes since
    /// `lastEventID` (when it is this app's) or a snapshot (`reset` when a `Last-Event-ID` was
    /// given but could not be used).
    public func opening(lastEventID: String?) -> String {
        let retry = "retry: \(BridgeWire.retryMilliseconds)\n\n"
        if let lastEventID, var seen = states(seenIn: lastEventID) {
            var out = retry
            for (i, restriction) in manifest.restrictions.enumerated() where seen[i] != states[i] {
                seen[i] = states[i]
                out += changeEvent(Change(restriction: restriction.id.rawValue, state: states[i]), id: eventID(seen))
            }
            return out
        }
        return retry + snapshotEvent(reset: lastEventID != nil)
    }

    /// The `snapshot` event: every restriction with its title, detail and state.
    public func snapshotEvent(reset: Bool) -> String {
        event(BridgeWire.snapshotEvent, id: eventID(), data: snapshotJSON(reset: reset))
    }

    /// The `change` event of `change`, after which the page has seen `id` (the current states
    /// unless given).
    public func changeEvent(_ change: Change, id: String? = nil) -> String {
        let data = JSONValue.object([
            .init("app", .string(manifest.app.rawValue)), .init("restriction", .string(change.restriction)),
            .init("state", Self.json(change.state)),
        ])
        return event(BridgeWire.changeEvent, id: id ?? eventID(), data: data.description)
    }

    /// The states as one JSON document (`GET /v1/apps/ID/state`, and a snapshot event's data).
    public func snapshotJSON(reset: Bool? = nil) -> String {
        let restrictions = manifest.restrictions.enumerated().map { i, r in
            JSONValue.object([
                .init("id", .string(r.id.rawValue)), .init("title", .string(r.title)),
                .init("detail", .string(r.detail)), .init("state", Self.json(states[i])),
            ])
        }
        var members: [JSONValue.Member] = [
            .init("app", .string(manifest.app.rawValue)), .init("id", .string(eventID())),
        ]
        if let reset { members.append(.init("reset", .bool(reset))) }
        members.append(.init("restrictions", .array(restrictions)))
        return JSONValue.object(members).description
    }

    private static func json(_ state: RestrictionState?) -> JSONValue {
        state.map { .string($0.rawValue) } ?? .null
    }

    private func event(_ name: String, id: String, data: String) -> String {
        "event: \(name)\nid: \(id)\ndata: \(data)\n\n"
    }
}
