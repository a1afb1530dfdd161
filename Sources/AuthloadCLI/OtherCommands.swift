import AuthloadCore
import AuthloadReport
import AuthloadStaging
import AuthloadTransport
import Foundation

/// `authload validate`: everything `run` checks, without traffic.
struct ValidateCommand {
    let profile: String
    let console: Console

    func execute() throws(CLIError) -> ExitCode {
        let loaded = try LoadedProfile.load(profile)
        let plan = loaded.plan
        let target: String
        switch plan.target {
        case .url(let url): target = url.description
        case .embedded: target = loaded.staging?.tls == true ? "the embedded staging server over HTTPS" : "the embedded staging server"
        }
        let flows = plan.flows.map { "\($0.name) (\($0.kind), weight \(TerminalFormat.count(Int($0.weight))))" }.joined(separator: ", ")
        let load = plan.load.model == .closed ? "closed model, " + RunCommand.describeLoad(plan.load) : RunCommand.describeLoad(plan.load)
        console.line("\(profile): OK — \(load), target \(target); flows: \(flows)")
        for warning in loaded.warnings { console.err("warning: \(warning)\n") }
        return .success
    }
}

/// `authload serve`: the embedded staging server in the foreground until a signal.
struct ServeCommand {
    let options: Command.ServeOptions
    let console: Console

    func execute() async throws(CLIError) -> ExitCode {
        let configuration = try options.config.map(Self.readConfiguration) ?? StagingConfiguration()
        let tls = options.tls || configuration.tls
        let identity = tls ? try makeIdentity() : nil
        let server: HTTPServer
        let group: EventLoopGroup
        let staging = StagingServer(configuration: configuration)
        do {
            group = try EventLoopGroup()
        } catch {
            throw CLIError("cannot start the staging server: \(error)", exitCode: .runError)
        }
        do {
            server = try HTTPServer(
                group: group, host: options.host, port: options.port,
                service: staging.service(configuration: configuration, clock: ContinuousClock()),
                tls: identity.map { identity throws(TransportError) in try TLSServerContext(identity: identity) })
        } catch {
            // The loops' threads run until they are stopped: a group dropped running would end in a crash, not this error.
            group.shutdown()
            throw CLIError("cannot start the staging server: \(error)", exitCode: .runError)
        }
        console.line("authload staging server listening on \(Endpoint(host: server.host, port: server.port, tls: tls)) (Ctrl-C to stop)")
        console.line("accepting \(server.acceptedProtocols)")
        if let identity {
            let fingerprint = (try? identity.sha256Fingerprint()) ?? "unavailable"
            console.line("self-signed TLS certificate, valid for 1 day; SHA-256 fingerprint \(fingerprint)")
            if let path = options.certificateOutput {
                console.line(
                    "certificate written to \(path) (trust it with a profile's \"target\": {\"tls\": {\"caFile\": \"\(path)\"}}, "
                        + "or curl --cacert \(path) https://localhost:\(server.port)/...)")
            }
        }
        let stopped = AsyncFlag()
        let signals = await SignalRelay.armed { _ in stopped.set() }
        // A staging server serves whole soaks: its RSS, too, should follow what it holds.
        let returner = Task { await FreeMemoryReturner().run() }
        await stopped.wait()
        returner.cancel()
        signals.cancel()
        server.close()
        group.shutdown()
        // The access log's totals, to set beside what the load generator says it sent.
        let log = staging.accessLog
        console.line("stopped after \(log.total) requests")
        for (route, count) in log.byRoute.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }) {
            console.line("  \(String(count).leftPadding(9))  \(route)")
        }
        return .success
    }

    /// The staging server's models from a `--config` file (the same JSON as a profile's `target.embedded`).
    static func readConfiguration(_ path: String) throws(CLIError) -> StagingConfiguration {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw CLIError("cannot read \(path)", exitCode: .usage)
        }
        do {
            return try StagingConfiguration.read(ProfileReader(path: "", value: JSONValue.parse(text)))
        } catch let error as JSONParseError {
            throw CLIError("\(path): \(error)", exitCode: .usage)
        } catch {
            throw CLIError("\(path): \(error)", exitCode: .usage)
        }
    }

    /// A certificate for the names a client on this machine uses, and the address listened on; written
    /// out before the server starts, so a client can trust it as soon as it connects.
    private func makeIdentity() throws(CLIError) -> TLSIdentity {
        let wildcard = ["0.0.0.0", "::"].contains(options.host)
        var addresses = ["127.0.0.1", "::1"]
        if !wildcard && !addresses.contains(options.host) { addresses.append(options.host) }
        let identity: TLSIdentity
        do {
            identity = try TLSIdentity.selfSigned(hostnames: ["localhost"], ipAddresses: addresses)
        } catch {
            throw CLIError("cannot make a TLS certificate: \(error)", exitCode: .runError)
        }
        if let path = options.certificateOutput {
            do {
                try identity.certificatePEM.write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                throw CLIError("cannot write the certificate to \(path): \(error.localizedDescription)", exitCode: .runError)
            }
        }
        return identity
    }
}

/// `authload report`: rebuilds the report files from a result.json.
struct ReportCommand {
    let path: String
    let console: Console

    func execute() throws(CLIError) -> ExitCode {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        let json = isDirectory.boolValue ? (path as NSString).appendingPathComponent("result.json") : path
        guard exists else { throw CLIError("\(path): no such file or directory", exitCode: .usage) }
        do {
            let loaded = try ReportWriter.load(resultJSON: json)
            // A checkpoint on its own means the run never finished: it was interrupted at its last checkpoint.
            let result = loaded.interruptedAtLastCheckpoint()
            let files = try ReportWriter.write(result, to: (json as NSString).deletingLastPathComponent, keepingTimeseriesCSV: true)
            if loaded.status == .running {
                console.line(
                    "note: rebuilt from a checkpoint: the run ended without its final report; "
                        + "\(result.timeseries.count) intervals (\(Int(result.durationSeconds)) s) were saved, the last at \(result.endedAt)"
                )
            }
            console.line("report: \(files.html)")
            // The status the run's own exit would have had, as the header and junit.xml say it.
            return RunCommand.exitCode(for: result, console: console)
        } catch {
            throw CLIError("\(error)", exitCode: .usage)
        }
    }
}
