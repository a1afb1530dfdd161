import AuthloadCore
import AuthloadWire

/// Follows the status stream of one GCCS authentication (docs/protocols.md, GCCS): which statuses came,
/// when, and how the authentication ended. No I/O and no clock: the flow feeds it arrival instants.
///
/// Each status is timed twice: from the flow's start, and from the previous event (the previous status,
/// or the request that provoked it — `auth/nodes`, `auth/complete`, the cancel). Statuses may repeat
/// (the SDK reports some locally and the server may send them too) and may come in another order; a
/// second, different end (`AuthCanceled` after `AuthCompleted`) is what the server must never send.
struct GCCSStatusTracker<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    enum Event: Sendable, Equatable {
        /// A status seen for the first time.
        case progress(GCCSStatus, sinceStart: Duration, gap: Duration)
        /// A status seen before: tolerated, not timed again.
        case duplicate(GCCSStatus)
        /// A second, different terminal status.
        case conflictingEnd(first: GCCSStatus, then: GCCSStatus)
        /// A status the flow does not time (`RequestAuth`, `StartAuth`, `RequestCancel`).
        case untracked(GCCSStatus)
    }

    /// Statuses that end an authentication.
    static var terminal: GCCSStatusSet { GCCSStatusSet.terminal }

    /// ``GCCSAuthFlow/timedStatuses`` as bits, folded to a constant: no lazy global read at every status.
    static var timed: GCCSStatusSet {
        GCCSStatusSet(.createChannel, .selectNodes, .startVerificationOfNodes, .completeVerificationOfNodes, .authCompleted, .authCanceled)
    }

    let flowStart: Instant
    private(set) var lastEvent: Instant
    private(set) var seen: GCCSStatusSet = []
    private var reportedMissing: GCCSStatusSet = []
    /// The first terminal status, once one came.
    private(set) var end: GCCSStatus?

    init(flowStart: Instant) {
        self.flowStart = flowStart
        self.lastEvent = flowStart
    }

    /// A request the client sent at `instant`: the next status's gap counts from here.
    mutating func sent(at instant: Instant) {
        lastEvent = instant
    }

    /// The verification statuses before `status` in stream order that have not come and were not named
    /// missing before: each missing status is reported once.
    mutating func takeMissing(before status: GCCSStatus) -> [GCCSStatus] {
        guard let position = GCCSStatus.verification.firstIndex(of: status) else { return [] }
        let missing = GCCSStatus.verification[..<position].filter { !seen.contains($0) && !reportedMissing.contains($0) }
        for status in missing { reportedMissing.insert(status) }
        return missing
    }

    mutating func receive(_ status: GCCSStatus, at instant: Instant) -> Event {
        if Self.terminal.contains(status) {
            if let end {
                return end == status ? .duplicate(status) : .conflictingEnd(first: end, then: status)
            }
            end = status
        }
        guard seen.insert(status) else { return .duplicate(status) }
        guard Self.timed.contains(status) else { return .untracked(status) }
        // A status that arrived while the client was sending (its request started later) has no gap to speak of.
        let gap = max(.zero, lastEvent.duration(to: instant))
        lastEvent = max(lastEvent, instant)
        return .progress(status, sinceStart: flowStart.duration(to: instant), gap: gap)
    }
}

/// A set of statuses as bits: the tracker asks it several times for every status that comes, which a `Set`, built anew
/// for the terminal statuses each time and hashing each status, made a tenth of the follower's work.
struct GCCSStatusSet: Sendable, Equatable, ExpressibleByArrayLiteral {
    private var bits: UInt16 = 0

    init(arrayLiteral statuses: GCCSStatus...) {
        for status in statuses { insert(status) }
    }

    /// Statuses that end an authentication, folded to a constant (a set made from a literal builds an array first, and
    /// the tracker asks for these at every status).
    static var terminal: GCCSStatusSet { GCCSStatusSet(.authCompleted, .authCanceled, .authFailed, .authTimeout) }

    /// A set of up to six statuses, without the array a literal's variadic arguments build.
    init(
        _ first: GCCSStatus, _ second: GCCSStatus, _ third: GCCSStatus, _ fourth: GCCSStatus, _ fifth: GCCSStatus? = nil,
        _ sixth: GCCSStatus? = nil
    ) {
        bits =
            Self.bit(first) | Self.bit(second) | Self.bit(third) | Self.bit(fourth) | (fifth.map(Self.bit) ?? 0)
            | (sixth.map(Self.bit) ?? 0)
    }

    func contains(_ status: GCCSStatus) -> Bool { bits & Self.bit(status) != 0 }

    /// Adds `status`; false when it was there already.
    @discardableResult
    mutating func insert(_ status: GCCSStatus) -> Bool {
        let bit = Self.bit(status)
        defer { bits |= bit }
        return bits & bit == 0
    }

    private static func bit(_ status: GCCSStatus) -> UInt16 { 1 << UInt16(status.ordinal) }
}
