import AuthloadCore
import AuthloadReport
import AuthloadSimulation
import AuthloadStaging
import AuthloadTransport
import Foundation

/// `authload run`: runs a profile against its target and writes the report, whatever happens.
struct RunCommand {
    let options: Command.RunOptions
    let console: Console
    /// A simulation's start, when shards on threads share one (see ``simulateOnThreads(_:profile:staging:)``).
    var simulationStart: Date?
    /// Where a shard of a simulation on threads shows its progress and leaves its result, for the one line and the
    /// one report of all the shards.
    var shards: SimulationShards?

    func execute() async throws(CLIError) -> ExitCode {
        var profile = try LoadedProfile.load(options.profile)
        try applyOverrides(to: &profile.plan)
        if options.simulate { return try await simulate(profile) }
        let plan = profile.plan

        let group: EventLoopGroup
        do { group = try EventLoopGroup() } catch { throw CLIError("cannot start event loops: \(error)", exitCode: .runError) }
        defer { group.shutdown() }

        let (endpoint, targetDescription, server) = try startTarget(plan: plan, staging: profile.staging, group: group)
        defer { server?.close() }
        let transport = SocketTransport(
            group: group, configuration: SocketTransportConfiguration(connections: plan.connections, tls: profile.tls))
        // A certificate that every connection would fail over ends the run before it starts, in one line that names
        // the cause and the profile key to set: a soak should not spend its hours collecting the same TLS error.
        if case .url = plan.target, let failure = await transport.probeTLS(endpoint, timeout: plan.connections.connectTimeout) {
            throw CLIError("TLS to \(endpoint) failed: \(failure) (\(failure.profileAdvice))", exitCode: .runError)
        }
        let verificationOff = endpoint.tls && plan.connections.tls.insecureSkipTLSVerify
        if verificationOff {
            console.err("warning: TLS certificate verification is off for \(endpoint) (insecureSkipTLSVerify)\n")
        }
        let runner = Runner(plan: plan, flows: profile.flows, transport: transport, endpoint: endpoint, clock: ContinuousClock())
        return try await conduct(
            profile, runner: runner, clock: ContinuousClock(), target: targetDescription, tlsVerificationOff: verificationOff,
            group: group
        ) { checkpoints in
            await withTaskGroup(of: RunOutcome?.self) { group in
                group.addTask { await runner.run() }
                group.addTask {
                    await checkpoints.run()
                    return nil
                }
                group.addTask {
                    await FreeMemoryReturner().run()
                    return nil
                }
                var outcome: RunOutcome?
                while outcome == nil, let next = await group.next() { outcome = next }
                group.cancelAll()
                return outcome!
            }
        }
    }

    /// `--simulate`: the same run on virtual time, against the embedded services in this process, on one thread
    /// (see ``SimulatedRun``). No socket is opened unless live metrics are asked for.
    private func simulate(_ profile: LoadedProfile) async throws(CLIError) -> ExitCode {
        let plan = profile.plan
        var staging = profile.staging ?? StagingConfiguration()
        if let path = options.config { staging = try ServeCommand.readConfiguration(path) }
        if let threads = options.threads, threads > 1 { return try await simulateOnThreads(threads, profile: profile, staging: staging) }
        if let shard = plan.shard {
            // Each shard's services are its own: their draws must not repeat the other shards' (shard 0 keeps the seed).
            staging.seed = staging.seed &+ UInt64(shard.index) &* 0x9E37_79B9_7F4A_7C15
        }
        let wanted: String
        switch plan.target {
        case .url(let url): wanted = "instead of \(url)"
        case .embedded: wanted = "in process"
        }
        let models = options.config.map { "models from \($0)" } ?? (profile.staging != nil ? "target.embedded's models" : "default models")
        let simulation = SimulatedRun(plan: plan, flows: profile.flows, staging: staging, startedAt: simulationStart ?? Date())
        let group: EventLoopGroup?
        if options.metricsListen ?? plan.metricsListen != nil {
            do { group = try EventLoopGroup() } catch { throw CLIError("cannot start event loops: \(error)", exitCode: .runError) }
        } else {
            group = nil
        }
        defer { group?.shutdown() }
        return try await conduct(
            profile, runner: simulation.runner, clock: simulation.clock,
            target: "the embedded staging server, simulated \(wanted) on virtual time (\(models))", tlsVerificationOff: false,
            group: group, simulation: simulation
        ) { checkpoints in
            // The heap trims run on wall time beside the simulation's thread, as in a real run: RSS follows what is held.
            let returner = Task { await FreeMemoryReturner().run() }
            defer { returner.cancel() }
            return await simulation.run { await checkpoints.run() }
        }
    }

    /// Everything around the run itself, the same for a real run and a simulation: the first line, signals,
    /// `--start-at`, live metrics, progress, checkpoints, the report and the exit status.
    ///
    /// - Parameter measure: runs the load (with the checkpoints beside it) and returns what it measured.
    private func conduct<C: Clock>(
        _ profile: LoadedProfile, runner: Runner<C>, clock: C, target targetDescription: String, tlsVerificationOff verificationOff: Bool,
        group: EventLoopGroup?, simulation: SimulatedRun? = nil, measure: (Checkpointer<C>) async -> RunOutcome
    ) async throws(CLIError) -> ExitCode where C.Duration == Duration {
        let plan = profile.plan
        let simulated = simulation != nil
        // Signals are caught before the first line, so a Ctrl-C right after it still drains and reports.
        let signals = await SignalRelay.armed { count in
            if count == 1 {
                console.line(
                    "stopping: no new flows; in-flight flows have \(DurationText.format(plan.load.gracefulStop)) to finish (Ctrl-C again to cancel them)"
                )
            } else {
                console.line("cancelling in-flight flows")
            }
            runner.control.requestStop()
        }
        defer { signals.cancel() }
        if !options.quiet {
            let shard = plan.shard.map { ", shard \($0): its users and arrivals n with n mod \($0.count) = \($0.index)" } ?? ""
            console.line(
                "authload \(HelpText.version): \(plan.name) — \(Self.describeLoad(plan.load))\(shard) against \(targetDescription)")
        }

        let commonStart = try options.startAt.map { text throws(CLIError) in
            guard let at = StartTime.parse(text, now: Date()) else {
                throw CLIError.usage("--start-at \"\(text)\": \(StartTime.expected)", command: "run")
            }
            return at
        }
        let startLate = await waitForStart(commonStart, plan: plan, control: runner.control)
        guard let startLate else { return .interrupted }
        let startedAt = simulation?.startedAt ?? Date()
        let record = PlanRecord(
            profileDigest: profile.digest, overrides: overrides, seed: plan.seed, windowsFromSeconds: plan.load.steadyFrom.seconds,
            windowsUntilSeconds: plan.load.duration.seconds,
            commonStartEpochSeconds: (commonStart ?? simulationStart)?.timeIntervalSince1970,
            startedAtEpochSeconds: startedAt.timeIntervalSince1970, load: PlannedLoad(plan.load))
        let directory = options.output ?? Self.defaultDirectory(for: plan.name, at: startedAt)
        let cpuAtStart = ProcessCPU.seconds()
        let wallStart = ContinuousClock.now
        let metrics =
            try group.map { group throws(CLIError) in
                try startMetrics(
                    plan: plan, flows: profile.flows, collector: runner.collector, group: group, cpuAtStart: cpuAtStart,
                    simulated: simulated)
            } ?? nil
        defer { metrics?.close() }
        let progress = options.quiet ? nil : ProgressReporter(console: console, plan: plan, runner: runner, simulated: simulated).start()
        if let shards, let shard = plan.shard { shards.show(shard.index) { ProgressFigures(runner) } }
        let checkpoints = Checkpointer(
            runner: runner, clock: clock, plan: plan, record: record, directory: directory, startedAt: startedAt,
            target: targetDescription, tlsVerificationOff: verificationOff,
            console: console, simulated: simulated, logs: !options.quiet && !console.isTerminal)
        var outcome = await measure(checkpoints)
        progress?.cancel()
        let wall = wallStart.duration(to: ContinuousClock.now).seconds
        // A simulation's end is its start plus the virtual time it ran, so its times read as the night it rehearsed.
        let endedAt = simulated ? startedAt.addingTimeInterval(outcome.elapsed.seconds) : Date()
        let cpu = ProcessCPU.seconds() - cpuAtStart
        outcome.generator.cpuSeconds = cpu
        let cores = wall * Double(ProcessInfo.processInfo.activeProcessorCount)
        outcome.generator.cpuShare = cores > 0 ? min(1, cpu / cores) : nil
        var result = RunResultBuilder.build(
            plan: plan, record: record, outcome: outcome, startedAt: startedAt, endedAt: endedAt, target: targetDescription,
            tlsVerificationOff: verificationOff, simulated: simulated)
        if commonStart != nil { result.environment.startLateSeconds = startLate }

        let files: ReportFiles
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            // Rows the checkpoints appended stay as written: at full resolution where a long run kept merged ones.
            let written = try ReportWriter.written(
                result, to: directory, checkpointed: checkpoints.written.withLock { $0 }, sideBySide: false)
            files = written.files
            if let shards, let shard = plan.shard { shards.finished(shard.index, written.result) }
        } catch {
            throw CLIError("cannot write the report to \(directory): \(error)", exitCode: .runError)
        }
        if !options.quiet { console.summary(result) }
        if simulated, !options.quiet {
            let ratio = wall > 0 ? outcome.elapsed.seconds / wall : 0
            console.line(
                "simulated \(DurationText.format(.seconds(Int64(outcome.elapsed.seconds)))) of virtual time in "
                    + "\(String(format: "%.1f", wall)) s (×\(TerminalFormat.count(Int(ratio.rounded())))), no socket opened to a target")
        }
        console.line("report: \(files.html)")
        if metrics != nil, plan.metricsLinger > .zero {
            // The last scrapes must see the final figures: the collector holds them now.
            if !options.quiet { console.line("metrics: final figures served for \(DurationText.format(plan.metricsLinger))") }
            try? await ContinuousClock().sleep(for: plan.metricsLinger)
        }
        return Self.exitCode(for: result, console: console)
    }

    /// Waits for `--start-at`, saying so, so that every shard's intervals start on one wall-clock grid.
    ///
    /// - Returns: how late the start is (0 without `--start-at`), or nil when a signal came first.
    private func waitForStart(_ at: Date?, plan: RunPlan, control: RunControl) async -> Double? {
        guard let at, let text = options.startAt else { return 0 }
        let shard = plan.shard.map { " (shard \($0))" } ?? ""
        var announced = false
        while case let remaining = at.timeIntervalSinceNow, remaining > 0 {
            if control.wasStopRequested {
                console.line("stopped before the start: nothing was measured")
                return nil
            }
            if !announced && !options.quiet {
                console.line("waiting until \(ISO8601DateFormatter().string(from: at)) to start\(shard): \(Int(remaining.rounded(.up))) s")
                announced = true
            }
            try? await Task.sleep(for: .seconds(min(remaining, 0.5)))
        }
        let late = -at.timeIntervalSinceNow
        if late > 1 { console.err("warning: started \(String(format: "%.1f", late)) s after --start-at \(text)\(shard)\n") }
        return late
    }

    /// Serves live metrics when the profile or `--metrics-listen` asks for them.
    private func startMetrics(
        plan: RunPlan, flows: [any Flow], collector: Collector, group: EventLoopGroup, cpuAtStart: Double, simulated: Bool
    ) throws(CLIError) -> MetricsEndpoint? {
        guard let text = options.metricsListen ?? plan.metricsListen, let address = ListenAddress(text) else { return nil }
        let gauges = zip(plan.flows, flows).flatMap { plan, flow in flow.gauges.map { (plan.name, $0.key, $0.value) } }
        let profile = plan.name
        let shard = plan.shard?.description ?? ""
        let endpoint = MetricsEndpoint(collector: collector) {
            var info = MetricsExposition.RunInfo(
                profile: profile, version: HelpText.version, shard: shard, cpuSeconds: ProcessCPU.seconds() - cpuAtStart,
                gauges: gauges.map { (flow: $0.0, name: $0.1, value: $0.2.current) },
                openConnections: OpenSockets.httpConnections, openWebSockets: OpenSockets.webSocketConnections)
            info.simulated = simulated
            return info
        }
        let url = try endpoint.start(at: address, group: group)
        if !address.isLoopback {
            console.err("warning: live metrics are served beyond this machine at \(url) (metrics.listen / --metrics-listen)\n")
        }
        if !options.quiet { console.line("metrics: \(url) (Prometheus text format; OpenMetrics on request)") }
        return endpoint
    }

    /// The load in words, e.g. `500 users, ramp-up 1m, duration 10m` or `open model, 100 arrivals/s (at most 10,000 users), duration 1m`.
    static func describeLoad(_ load: LoadPlan) -> String {
        let length = "duration " + DurationText.format(load.duration)
        switch (load.model, load.stages.isEmpty) {
        case (.closed, true):
            return "\(load.users) users, ramp-up \(DurationText.format(load.rampUp)), \(length)"
        case (.closed, false):
            return "\(load.stages.count) stages up to \(load.users) users, \(length)"
        case (.open, true):
            return "open model, \(rate(load.arrivalRate)) arrivals/s (at most \(TerminalFormat.count(load.users)) users), \(length)"
        case (.open, false):
            return "open model, \(load.stages.count) stages up to \(rate(load.schedule.peak)) arrivals/s "
                + "(at most \(TerminalFormat.count(load.users)) users), \(length)"
        }
    }

    private static func rate(_ value: Double) -> String {
        value == value.rounded() && value < 1e15 ? String(Int(value)) : String(value)
    }

    /// The options that changed the plan, as a merge compares them across shards.
    private var overrides: [String] {
        (options.users.map { ["--users", String($0)] } ?? []) + (options.duration.map { ["--duration", DurationText.format($0)] } ?? [])
    }

    private func applyOverrides(to plan: inout RunPlan) throws(CLIError) {
        if options.shardFromEnvironment {
            guard options.shard == nil else { throw CLIError.usage("give --shard or --shard-from-env, not both", command: "run") }
            plan.shard = try StartTime.shard(fromEnvironment: ProcessInfo.processInfo.environment)
        } else if let shard = options.shard {
            plan.shard = shard
        }
        if let users = options.users {
            guard plan.load.model == .closed, plan.load.stages.isEmpty else {
                throw CLIError.usage(
                    "--users: this profile's load has \(plan.load.model == .open ? "no fixed population (open model; set load.maxUsers)" : "stages, which set the users")",
                    command: "run")
            }
            plan.load.users = users
        }
        if let duration = options.duration {
            guard plan.load.stages.isEmpty else {
                throw CLIError.usage("--duration: this profile's load.stages set its length", command: "run")
            }
            guard plan.load.rampUp <= duration else {
                throw CLIError.usage(
                    "--duration \(DurationText.format(duration)) is shorter than load.rampUp (\(DurationText.format(plan.load.rampUp)))",
                    command: "run")
            }
            plan.load.duration = duration
        }
    }

    private func startTarget(plan: RunPlan, staging: StagingConfiguration?, group: EventLoopGroup) throws(CLIError) -> (
        Endpoint, String, HTTPServer?
    ) {
        switch plan.target {
        case .url(let url):
            return (url.endpoint, url.description, nil)
        case .embedded:
            let staging = staging ?? StagingConfiguration()
            let server: HTTPServer
            do {
                // A certificate of its own for every run; clients trust it only with insecureSkipTLSVerify.
                let tls =
                    staging.tls
                    ? try TLSServerContext(identity: TLSIdentity.selfSigned(hostnames: ["localhost"], ipAddresses: ["127.0.0.1"]))
                    : nil
                server = try HTTPServer(
                    group: group, port: 0, service: StagingServer.service(configuration: staging, clock: ContinuousClock()), tls: tls)
            } catch {
                throw CLIError("cannot start the embedded staging server: \(error)", exitCode: .runError)
            }
            let endpoint = Endpoint(host: server.host, port: server.port, tls: staging.tls)
            return (endpoint, "the embedded staging server at \(endpoint)", server)
        }
    }

    static func defaultDirectory(for name: String, at date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return "Reports/\(name)-\(formatter.string(from: date))"
    }

    /// The exit status a run's result implies (a merged run's too): how it ended, then whether anything
    /// succeeded, then the generator's health, then the thresholds.
    static func exitCode(for result: RunResult, console: Console) -> ExitCode {
        if result.status == .interrupted { return .interrupted }
        if result.status == .failed {
            // The run could not go on (the target did not answer): its first note says why, in one line.
            console.error(result.notes.first ?? "the run could not go on")
            return .runError
        }
        if result.status == .aborted {
            let threshold = result.thresholds.first(where: \.abortedRun)
            console.error("threshold failed, run aborted: " + (threshold.map { "\($0.name) (\($0.path))" } ?? "abortOnFail"))
            return .thresholdFailed
        }
        let flows = result.metrics.filter { $0.id.step == nil }
        let attempted = flows.reduce(0) { $0 + $1.count }
        let succeeded = flows.reduce(0) { $0 + $1.count - $1.errors }
        if attempted > 0 && succeeded == 0 {
            // A step's error says more than its flow's, which repeats it with the same count.
            let common =
                result.errors.max { ($0.count, $0.id.step == nil ? 0 : 1) < ($1.count, $1.id.step == nil ? 0 : 1) }.map {
                    "; most often at \($0.id): \($0.kind.rawValue) (\($0.detail))"
                } ?? ""
            console.error("no flow succeeded (\(attempted) attempted)\(common); see errors.csv for why")
            return .runError
        }
        // After "nothing succeeded" (a broken target is the news, whatever the generator did) and before the
        // thresholds: when the generator fell behind, no figure of the run, passing or failing, is about the server.
        if let generator = result.generator, !generator.keptSchedule {
            console.error("the generator could not keep its schedule: " + generator.problems.joined(separator: "; "))
            return .generatorOverloaded
        }
        let failed = result.thresholds.filter { !$0.passed }
        if !failed.isEmpty {
            console.error(
                "\(failed.count) of \(result.thresholds.count) thresholds failed: "
                    + failed.map { "\($0.name) measured \($0.measuredText)\($0.samplesText)" }.joined(separator: "; "))
            return .thresholdFailed
        }
        return .success
    }
}

/// Puts names, times and the environment around what the runner measured.
enum RunResultBuilder {
    static func build(
        plan: RunPlan, record: PlanRecord? = nil, outcome: RunOutcome, startedAt: Date, endedAt: Date, target: String,
        tlsVerificationOff: Bool = false, simulated: Bool = false
    ) -> RunResult {
        var notes: [String] = []
        if simulated {
            notes.append(
                "Simulated: virtual time against a model of the service in this process (its latency, error and capacity models). "
                    + "It rehearses the profile — schedule, thresholds, refreshes, checkpoints — but says nothing about the real "
                    + "network or the real server.")
        }
        if tlsVerificationOff {
            notes.append("TLS certificate verification was off (target.insecureSkipTLSVerify): the server's identity was not checked.")
        }
        if outcome.stoppedEarly {
            notes.append(
                "Stopped early by a signal after \(DurationText.format(.seconds(Int64(outcome.elapsed.seconds)))): this report is partial.")
        }
        if let unreachable = outcome.unreachable {
            // First: junit.xml's failure message and the exit's one line are this note.
            notes.insert("\(unreachable.line(target: target)); the run stopped (generator.unreachableAfter)", at: 0)
        }
        if let threshold = outcome.abortedBy {
            notes.append(
                "Aborted after \(DurationText.format(.seconds(Int64(outcome.elapsed.seconds)))) because \(threshold.name) failed (abortOnFail): this report is partial."
            )
        }
        if !outcome.generator.keptSchedule {
            notes.append(
                "The load generator could not keep its schedule (" + outcome.generator.problems.joined(separator: "; ")
                    + "): the run says nothing reliable about the server.")
        }
        let late = outcome.measured.late
        if late.total > 0 {
            let series = late.bySeries.prefix(3).map { "\($0.0) \(TerminalFormat.count($0.1))" }.joined(separator: ", ")
            notes.append(
                "\(TerminalFormat.count(late.total)) samples lasted past the \(DurationText.format(late.wait)) the time series waits "
                    + "after an interval (\(series)\(late.bySeries.count > 3 ? ", …" : "")): they count in the run's totals, "
                    + "percentiles, threshold windows and capacity stages, not in the per-interval rows. Expected for flows "
                    + "that hold a session longer than that.")
        }
        let iso = ISO8601DateFormatter()
        var result = RunResult(
            profileName: plan.name,
            environment: RunEnvironment(
                authloadVersion: HelpText.version, hostname: ProcessInfo.processInfo.hostName,
                cores: ProcessInfo.processInfo.activeProcessorCount, target: target, shard: plan.shard?.description),
            startedAt: iso.string(from: startedAt), endedAt: iso.string(from: endedAt),
            durationSeconds: outcome.elapsed.seconds, intervalSeconds: plan.interval.seconds,
            status: outcome.stoppedEarly
                ? .interrupted : outcome.abortedBy != nil ? .aborted : outcome.unreachable != nil ? .failed : .completed,
            metrics: outcome.measured.metrics, timeseries: outcome.measured.timeseries,
            errors: outcome.measured.errors, notes: notes, thresholds: outcome.measured.thresholds,
            generator: outcome.generator, capacity: outcome.measured.capacity, peaks: outcome.peaks)
        result.plan = record
        if simulated { result.environment.simulated = true }
        return result
    }
}
