import AuthloadCore

/// The embedded server's fault-injection mode: per-request probabilities of breaking an answer on the
/// wire (`target.embedded.faults`), for proving that every fault is classified and survived.
///
/// ```json
/// {"faults": {"reset": 0.05, "trickle": 0.05, "tlsHandshake": 0.05, "paths": ["/health"]}}
/// ```
public struct FaultInjection: Sendable, Equatable {
    /// Each fault's probability per request (per connection for `tlsHandshake`).
    public var rates: [WireFault: Double] = [:]
    /// Path prefixes whose requests may be broken; empty means every path.
    public var paths: [String] = []

    public init(rates: [WireFault: Double] = [:], paths: [String] = []) {
        self.rates = rates
        self.paths = paths
    }

    /// The fault for one request to `path`, drawn from one uniform number so the shares add up.
    func draw(path: String, using random: inout SplitMix64) -> WireFault? {
        guard paths.isEmpty || paths.contains(where: { path.hasPrefix($0) }) else { return nil }
        return pick(from: WireFault.allCases.filter { $0 != .tlsHandshake }, using: &random)
    }

    /// Whether one new connection's TLS handshake fails.
    func drawHandshake(using random: inout SplitMix64) -> Bool {
        pick(from: [.tlsHandshake], using: &random) != nil
    }

    private func pick(from faults: [WireFault], using random: inout SplitMix64) -> WireFault? {
        let point = Double.random(in: 0..<1, using: &random)
        var total = 0.0
        for fault in faults {
            total += rates[fault] ?? 0
            if point < total { return fault }
        }
        return nil
    }

    static func read(_ reader: ProfileReader) throws(ProfileError) -> FaultInjection {
        let names = WireFault.allCases.map(\.rawValue)
        try reader.rejectUnknownKeys(allowed: Set(names + ["paths"]))
        var faults = FaultInjection()
        for fault in WireFault.allCases {
            if let r = try reader.optional(fault.rawValue) { faults.rates[fault] = try r.fraction() }
        }
        let total = faults.rates.filter { $0.key != .tlsHandshake }.values.reduce(0, +)
        guard total <= 1 else { throw reader.error("the request faults add up to \(total); together they must not pass 1") }
        if let r = try reader.optional("paths") {
            faults.paths = try r.elements().map { element throws(ProfileError) in
                let path = try element.string()
                guard path.hasPrefix("/") else { throw element.error("must start with '/'") }
                return path
            }
        }
        return faults
    }
}
