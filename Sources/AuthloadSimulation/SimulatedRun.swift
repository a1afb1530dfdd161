import AuthloadCore
import AuthloadStaging
import Foundation

/// A run rehearsed on virtual time: the profile's runner, users and flows against the embedded staging services in
/// this process, every job on one ``SimulationExecutor`` thread, the ``SimulationClock`` jumping to the next due event
/// whenever every user waits. A 24-hour soak then takes as long as its events take to compute.
///
/// Deterministic: with the plan's seed and the services' seed fixed, two simulations make the same requests in the
/// same order and measure the same latencies. The services' wall clock (token `iat`/`exp`, `Date`) is the run's
/// start rounded down to a whole second plus virtual time, so an expiry that counts in whole seconds falls at the
/// same virtual instant whenever the run is started.
///
/// ```swift
/// let simulation = SimulatedRun(plan: plan, flows: flows, staging: staging)
/// let outcome = await simulation.run()
/// ```
public final class SimulatedRun: Sendable {
    public let clock: SimulationClock
    public let executor: SimulationExecutor
    public let runner: Runner<SimulationClock>
    /// The embedded services, with no access log (``StagingServer/init(configuration:logsAccess:now:)``).
    public let server: StagingServer
    /// When the simulation says it started: the wall clock's second when it was set up.
    public let startedAt: Date

    /// - Parameter startedAt: the wall-clock start the report shows; by default now, rounded down to a whole second.
    public init(plan: RunPlan, flows: [any Flow], staging: StagingConfiguration, startedAt: Date = Date()) {
        let clock = SimulationClock()
        let executor = SimulationExecutor()
        let start = startedAt.timeIntervalSince1970.rounded(.down)
        let epoch = Duration.seconds(Int64(start))
        self.startedAt = Date(timeIntervalSince1970: start)
        self.clock = clock
        self.executor = executor
        self.server = StagingServer(configuration: staging, logsAccess: false) { epoch + clock.now.offset }
        let transport = SimulationTransport(
            clock: clock, executor: executor, service: server.service(configuration: staging, clock: clock))
        // The endpoint only names the target in requests' Host headers: nothing resolves or connects to it.
        let endpoint = Endpoint(host: "127.0.0.1", port: 8080)
        self.runner = Runner(plan: plan, flows: flows, transport: transport, endpoint: endpoint, clock: clock)
    }

    /// Runs the load to its end (or until stopped), with `beside` running on virtual time alongside it (the
    /// checkpoints) and cancelled once the load has ended.
    public func run(beside: (@Sendable () async -> Void)? = nil) async -> RunOutcome {
        let runner = self.runner
        return await executor.run(clock: clock) {
            await withTaskGroup(of: RunOutcome?.self) { group in
                group.addTask { await runner.run() }
                if let beside {
                    group.addTask {
                        await beside()
                        return nil
                    }
                }
                var outcome: RunOutcome?
                while outcome == nil, let next = await group.next() { outcome = next }
                group.cancelAll()
                return outcome!
            }
        }
    }
}
