import KioskDaemon
import Synchronization
import SystemdKit

/// An `Authorizing` that answers what the test says, at once, and remembers what it was asked.
public final class ScriptedAuthorizer: Authorizing, Sendable {
    public enum Answer: Sendable {
        case result(PolkitAuthority.Result)
        /// polkit could not be asked.
        case failure(String)
    }

    private let answer: Mutex<Answer>
    private let asked = Mutex<[String]>([])
    private let journal: CallJournal?

    public init(_ answer: Answer = .result(.allowed), journal: CallJournal? = nil) {
        self.answer = Mutex(answer)
        self.journal = journal
    }

    public func answer(_ next: Answer) { answer.withLock { $0 = next } }

    /// The actions asked about, in order.
    public var askedActions: [String] { asked.withLock { $0 } }

    public func authorize(
        action: String, busName: String,
        completion: @escaping (Swift.Result<PolkitAuthority.Result, any Error>) -> Void
    ) throws {
        asked.withLock { $0.append(action) }
        journal?.note("authorize \(action)")
        switch answer.withLock({ $0 }) {
        case .result(let result): completion(.success(result))
        case .failure(let message): completion(.failure(BusError(name: BusError.failed, message: message)))
        }
    }
}

/// A `CallerIdentifying` that says every caller is `uid`.
public final class FixedIdentity: CallerIdentifying, Sendable {
    private let uid: Mutex<UInt32>
    private let journal: CallJournal?

    public init(uid: UInt32, journal: CallJournal? = nil) {
        self.uid = Mutex(uid)
        self.journal = journal
    }

    public func become(_ next: UInt32) { uid.withLock { $0 = next } }

    public func unixUser(ofName name: String, completion: @escaping (Result<UInt32, any Error>) -> Void) throws {
        journal?.note("identify")
        completion(.success(uid.withLock { $0 }))
    }
}
