/// One of N copies of a run started by a scheduler with an index (a Kubernetes Indexed Job, a CI matrix):
/// shard `index` of `count` takes its exact share of the profile's load.
///
/// Users and arrivals keep their global numbers, so `{n}` templates and `unique` CSV rows never collide across
/// shards: closed-model user n and open-model arrival k belong to shard `n mod count` (`k mod count`). Every
/// schedule is the profile's own, so N shards together are the profile, none lost or doubled.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    public var index: Int
    public var count: Int

    public init?(index: Int, count: Int) {
        guard count >= 1, (0..<count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    /// Reads `I/N`, e.g. `2/4`.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else { return nil }
        self.init(index: index, count: count)
    }

    /// Whether user or arrival number `n` is this shard's.
    public func owns(_ n: Int) -> Bool { n % count == index }

    /// This shard's share of a cap of `total` (open model `maxUsers`): the shares add up to `total`.
    public func share(of total: Int) -> Int { total / count + (index < total % count ? 1 : 0) }

    public var description: String { "\(index)/\(count)" }
}
